/* train_step.c: see train_step.h. */
#include <math.h>
#include <stdio.h>

#include "train_step.h"
#include "train_graph.h"
#include "../dist/comm.h"
#include "../../core/check.h"
#include "../../core/banned.h"

static enum tipc_status eager_step(struct net *net, struct dp *dp, struct train_step *s)
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
    s->skipped = false, s->loss_scale = 0, s->skipped_total = 0;
    float st[AMP_STATE_FLOATS];
    if ((s->amp_report || net_host_memory(net)) && net_amp_read(net, st)) {
        s->skipped = st[AMP_FOUND_INF] != 0;
        s->loss_scale = st[AMP_SCALE];
        s->skipped_total = (long)st[AMP_SKIPPED];
    }
    if (dp) TRY(dp->s->updated(dp, net, s->step + 1));
    return TIPC_OK;
}

/* A strategy whose collectives are only enqueued on the backend's stream (the overlapped NCCL
 * buckets: comm_async's stream path), so a capture records them as a fork/join of streams. */
static bool dp_capturable(const struct dp *dp) { return dp->async && comm_async_on_stream(dp->async); }

enum tipc_status net_train_step_staged(struct net *net, struct dp *dp, int n, const struct train_step *s)
{
    net->train = true;
    net_set_input_staged(net, n);
    net_forward(net, n);
    net_loss_staged(net, n, s->label_smoothing);
    net_zero_grad(net);
    if (dp && dp->s->backward_begin) TRY(dp->s->backward_begin(dp, net, 0, s->step));
    net_backward(net, n, s->label_smoothing);
    if (dp) TRY(dp->s->grads_ready(dp, net, 0));
    if (dp) TRY(dp->s->reduce(dp, net, s->step));
    net_sgd_update_staged(net, s->momentum, s->weight_decay);
    return TIPC_OK;
}

enum tipc_status net_train_step(struct net *net, struct dp *dp, struct train_step *s)
{
    /* the staged step is one micro-batch from host images, with no strategy or one whose
     * collectives can be captured */
    bool staged = s->mode != STEP_EAGER && s->mb[0].images && (!dp || (dp->micro == 1 && (!dp->o.comm || dp_capturable(dp))));
    return staged ? train_graph_step(net, dp, s) : eager_step(net, dp, s);
}

enum step_mode train_step_mode(const struct net *net, const struct dp *dp, bool want_graph, char *why, size_t n)
{
    const char *be = net->be.ops ? net->be.ops->name : "(none)";
    if (!want_graph) {
        snprintf(why, n, "eager (--cuda-graph off)");
    } else if (!backend_has_graphs(&net->be)) {
        snprintf(why, n, "eager (the %s backend has no graphs)", be);
    } else if (net->amp.prec != PREC_FP32) {
        snprintf(why, n, "eager (%s mixed precision: the staged step has no AMP update yet)",
                 precision_name(net->amp.prec));
    } else if (dp && dp->micro > 1) {
        snprintf(why, n, "eager (simulated ranks add their gradients on the host)");
    } else if (dp && dp->o.comm && !dp_capturable(dp)) {
        snprintf(why, n, "eager (data parallel: the %s collectives %s, so the step cannot be captured)",
                 comm_backend_name(dp->o.comm), dp->async ? "run on a thread" : "wait on the host");
    } else {
        snprintf(why, n, "CUDA Graph (inputs staged in 2 slots on a side stream; each slot's step captured after "
                         "%d warm-up step and replayed%s)", TRAIN_GRAPH_WARMUP,
                 dp && dp->o.comm ? ", its gradient buckets' allreduce on the communication stream with it" : "");
        return STEP_GRAPH;
    }
    return STEP_EAGER;
}
