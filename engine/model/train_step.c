/* train_step.c: see train_step.h. */
#include <math.h>

#include "train_step.h"
#include "../../core/check.h"
#include "../../core/banned.h"

enum tipc_status net_train_step(struct net *net, struct dp *dp, struct train_step *s)
{
    int micro = dp ? dp->micro : 1;
    net->train = true;
    for (int k = 0; k < micro; k++) {
        const struct micro_batch *b = &s->mb[k];
        net->dropout_seed = b->dropout_seed;
        if (b->images) net_set_input_u8(net, b->images, b->n);
        net_forward(net, b->n);
        float loss = net_loss(net, b->labels, b->n, s->label_smoothing);
        if (k == 0 || !isfinite(loss)) s->loss = loss;
        if (!isfinite(loss)) return TIPC_ENUMERIC;
        net_zero_grad(net);
        if (dp && dp->s->backward_begin) TRY(dp->s->backward_begin(dp, net, k, s->step));
        net_backward(net, b->n, s->label_smoothing);
        if (k == 0 && s->logits_host)
            net_to_host(net, s->logits_host, net_logits(net), (size_t)b->n * net_num_classes(net));
        if (dp) TRY(dp->s->grads_ready(dp, net, k));
    }
    if (dp) TRY(dp->s->reduce(dp, net, s->step));
    net_sgd_update(net, s->lr, s->momentum, s->weight_decay);
    if (dp) TRY(dp->s->updated(dp, net, s->step + 1));
    return TIPC_OK;
}
