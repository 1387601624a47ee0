/* net_walk.c: net_forward / net_backward (one switch over layer kinds each), the loss, and
 * parameter initialisation. Every op goes through struct backend_ops. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "net.h"
#include "../../core/check.h"
#include "../../core/rng.h"
#include "../../core/banned.h"

static struct conv2d_desc conv_desc(const struct net *net, const struct layer *l, int n)
{
    const struct slot *si = &net->slots[l->in];
    struct conv2d_desc d;
    conv2d_desc_init(&d, n, si->H, si->W, si->C, l->Co, l->K, l->stride, (l->K - 1) / 2, l->groups);
    d.prec = net->amp.prec;
    return d;
}

static struct bn_desc bn_desc(const struct net *net, const struct layer *l, int n)
{
    const struct slot *si = &net->slots[l->in];
    return (struct bn_desc){.M = n * si->H * si->W, .C = si->C, .eps = l->eps, .momentum = l->momentum,
                            .train = net->train};
}

/* AMP: slot s of buffer B (acts or dacts) rounded in place to the net's precision (a value stored
 * in bf16/fp16 at the op boundary: precision.h) */
static void amp_round_slot(struct net *net, float *B, int s, int n)
{
    if (net->amp.prec != PREC_FP32)
        net->be.ops->amp_round(net->be.ctx, B + net->slots[s].off, B + net->slots[s].off, net_slot_size(net, s, n),
                               net->amp.prec);
}

void net_forward(struct net *net, int n)
{
    const struct backend_ops *o = net->be.ops;
    struct backend_ctx *cx = net->be.ctx;
    CHECK(n > 0 && n <= net->N, "batch %d of planned %d", n, net->N);
    float *A = net->acts, *P = net->params;
    bool amp = net->amp.prec != PREC_FP32;
    if (amp) { /* the GEMM/conv weights of this pass, and the input, in the policy's precision */
        o->amp_round(cx, net->params_lp, net->params, net->nparams, net->amp.prec);
        amp_round_slot(net, A, 0, n);
    }
    for (int i = 0; i < net->nlayers; i++) {
        const struct layer *l = &net->layers[i];
        const struct slot *si = &net->slots[l->in], *so = &net->slots[l->out];
        float *x = A + si->off, *y = A + so->off, *w = P + l->param_off;
        if (amp && (l->kind == LAYER_CONV || l->kind == LAYER_LINEAR)) w = net->params_lp + l->param_off;
        int HW = si->H * si->W;
        switch (l->kind) {
        case LAYER_CONV: {
            struct conv2d_desc d = conv_desc(net, l, n);
            o->conv2d_forward(cx, y, x, w, &d, net->scratch);
            break;
        }
        case LAYER_BN: {
            struct bn_desc d = bn_desc(net, l, n);
            float *rm = net->stats + l->stat_off, *sm = A + l->aux_off;
            if (l->fuse_act) { /* writes the ACT's output; the BN output slot stays untouched */
                const struct layer *a = &net->layers[i + 1];
                o->batchnorm_act_forward(cx, A + net->slots[a->out].off, sm, sm + si->C, x, w, w + si->C, rm,
                                         rm + si->C, &d, a->act);
            } else {
                o->batchnorm_forward(cx, y, sm, sm + si->C, x, w, w + si->C, rm, rm + si->C, &d);
            }
            break;
        }
        case LAYER_ACT:
            if (!l->fused) o->act_forward(cx, y, x, net_slot_size(net, l->in, n), l->act);
            break;
        case LAYER_POOL: o->avgpool_forward(cx, y, x, n, HW, si->C); break;
        case LAYER_LINEAR:
            o->linear_forward(cx, y, x, w, l->bias ? w + (size_t)l->Co * si->C : NULL, n, si->C, l->Co);
            break;
        case LAYER_SCALE: o->scale_forward(cx, y, x, A + net->slots[l->in2].off, n, HW, si->C); break;
        case LAYER_ADD:
            o->add_forward(cx, y, x, A + net->slots[l->in2].off, net_slot_size(net, l->in, n));
            break;
        case LAYER_DROPOUT: {
            size_t cnt = net_slot_size(net, l->in, n);
            if (net->train && l->p > 0 && net->staged)
                o->dropout_forward_dev(cx, y, A + l->aux_off, x, cnt, l->p, &net->staged->sc->dropout_seed, (uint64_t)i);
            else if (net->train && l->p > 0)
                o->dropout_forward(cx, y, A + l->aux_off, x, cnt, l->p, net->dropout_seed + (uint64_t)i);
            else
                o->act_forward(cx, y, x, cnt, ACT_NONE);
            break;
        }
        case LAYER_KIND_COUNT: BUG("layer kind");
        }
        if (amp && !(l->kind == LAYER_ACT && l->fused)) /* a fused BN wrote its ACT's output */
            amp_round_slot(net, A, l->fuse_act ? net->layers[i + 1].out : l->out, n);
    }
}

float net_loss(struct net *net, const int32_t *labels, int n, float label_smoothing)
{
    int K = net_num_classes(net);
    memcpy(net->labels_dev, labels, sizeof(int32_t) * (size_t)n);
    return net->be.ops->xent_forward(net->be.ctx, net->probs, net_logits(net), net->labels_dev, n, K,
                                     label_smoothing);
}

void net_backward(struct net *net, int n, float label_smoothing)
{
    const struct backend_ops *o = net->be.ops;
    struct backend_ctx *cx = net->be.ctx;
    float *A = net->acts, *D = net->dacts, *P = net->params, *G = net->grads;
    int last = net->nslots - 1;
    bool amp = net->amp.prec != PREC_FP32;
    (net->staged ? o->xent_backward_dev : o->xent_backward)(cx, D + net->slots[last].off, net->probs,
                                                          net->staged ? net->staged->labels : net->labels_dev, n,
                                                          net_num_classes(net), label_smoothing);
    if (amp) /* backward runs on the scaled loss (parameter gradients are unscaled before the update) */
        o->amp_scale(cx, D + net->slots[last].off, net_slot_size(net, last, n), net->amp_state, net->amp.prec);
    for (int i = net->nlayers - 1; i >= 0; i--) {
        const struct layer *l = &net->layers[i];
        const struct slot *si = &net->slots[l->in], *so = &net->slots[l->out];
        float *x = A + si->off, *dx = l->in == 0 ? NULL : D + si->off, *dy = D + so->off;
        float *w = P + l->param_off, *dw = G + l->param_off;
        if (amp && (l->kind == LAYER_CONV || l->kind == LAYER_LINEAR)) w = net->params_lp + l->param_off;
        int HW = si->H * si->W;
        switch (l->kind) {
        case LAYER_CONV: {
            struct conv2d_desc d = conv_desc(net, l, n);
            o->conv2d_backward(cx, dx, dw, dy, x, w, &d, net->scratch, l->acc_in);
            break;
        }
        case LAYER_BN: {
            struct bn_desc d = bn_desc(net, l, n);
            float *rm = net->stats + l->stat_off, *sm = A + l->aux_off;
            if (l->fuse_act) { /* from the gradient of the ACT's output */
                const struct layer *a = &net->layers[i + 1];
                o->batchnorm_act_backward(cx, dx, dw, dw + si->C, D + net->slots[a->out].off, x,
                                          net->train ? sm : rm, sm + si->C, w, w + si->C, rm + si->C, &d,
                                          l->acc_in, a->act);
            } else {
                o->batchnorm_backward(cx, dx, dw, dw + si->C, dy, x, net->train ? sm : rm, sm + si->C, w,
                                      rm + si->C, &d, l->acc_in);
            }
            break;
        }
        case LAYER_ACT:
            if (!l->fused) o->act_backward(cx, dx, dy, x, net_slot_size(net, l->in, n), l->act, l->acc_in);
            break;
        case LAYER_POOL: o->avgpool_backward(cx, dx, dy, n, HW, si->C, l->acc_in); break;
        case LAYER_LINEAR: {
            size_t wn = (size_t)l->Co * si->C;
            o->linear_backward(cx, dx, dw, l->bias ? dw + wn : NULL, dy, x, w, n, si->C, l->Co, l->acc_in);
            break;
        }
        case LAYER_SCALE: {
            const struct slot *sg = &net->slots[l->in2];
            o->scale_backward(cx, dx, D + sg->off, dy, x, A + sg->off, n, HW, si->C, l->acc_in, l->acc_in2);
            break;
        }
        case LAYER_ADD:
            o->add_backward(cx, dx, D + net->slots[l->in2].off, dy, net_slot_size(net, l->in, n), l->acc_in,
                            l->acc_in2);
            break;
        case LAYER_DROPOUT: {
            size_t cnt = net_slot_size(net, l->in, n);
            if (net->train && l->p > 0)
                o->dropout_backward(cx, dx, dy, A + l->aux_off, cnt, l->acc_in);
            else
                o->act_backward(cx, dx, dy, x, cnt, ACT_NONE, l->acc_in);
            break;
        }
        case LAYER_KIND_COUNT: BUG("layer kind");
        }
        if (amp && dx && !(l->kind == LAYER_ACT && l->fused)) { /* input gradients stored in the policy's dtype */
            amp_round_slot(net, D, l->in, n);
            if (l->kind == LAYER_SCALE || l->kind == LAYER_ADD) amp_round_slot(net, D, l->in2, n);
        }
        if (net->grads_done) net->grads_done(net->grads_done_ud, i);
    }
}

/* Activation gradients need no zeroing: see plan_grad_writes. */
void net_zero_grad(struct net *net) { net->be.ops->zero(net->be.ctx, net->grads, net->nparams); }

void net_sgd_update(struct net *net, float lr, float momentum, float weight_decay)
{
    const struct backend_ops *o = net->be.ops;
    struct backend_ctx *cx = net->be.ctx;
    if (net->amp.prec == PREC_FP32) {
        o->sgd_step(cx, net->params, net->mom, net->grads, net->nparams, lr, momentum, weight_decay);
        return;
    }
    /* AMP, all on the backend's stream: unscale + finite check, the update unless a gradient was
     * not finite, then the scale's backoff or growth */
    o->amp_unscale_check(cx, net->grads, net->nparams, net->amp_state);
    o->sgd_step_amp(cx, net->params, net->mom, net->grads, net->nparams, lr, momentum, weight_decay, net->amp_state);
    o->amp_update(cx, net->amp_state, &net->amp.ls);
}

void net_loss_staged(struct net *net, int n, float label_smoothing)
{
    const struct step_inputs *in = net->staged;
    CHECK(in, "no staged step");
    net->be.ops->xent_forward_dev(net->be.ctx, net->probs, in->loss, net_logits(net), in->labels, n,
                                  net_num_classes(net), label_smoothing);
}

void net_sgd_update_staged(struct net *net, float momentum, float weight_decay)
{
    const struct step_inputs *in = net->staged;
    CHECK(in, "no staged step");
    net->be.ops->sgd_step_dev(net->be.ctx, net->params, net->mom, net->grads, net->nparams, &in->sc->lr, momentum,
                              weight_decay, in->loss);
}

/* Host-side init, then one upload per buffer. */
void net_init_params(struct net *net, uint64_t seed)
{
    struct rng r;
    rng_seed(&r, seed);
    float *p = xcalloc(net->nparams ? net->nparams : 1, sizeof(float));
    float *s = xcalloc(net->nstats ? net->nstats : 1, sizeof(float));
    for (int i = 0; i < net->nlayers; i++) {
        const struct layer *l = &net->layers[i];
        const struct slot *si = &net->slots[l->in];
        float *w = p + l->param_off;
        if (l->kind == LAYER_CONV || (l->kind == LAYER_LINEAR && l->kaiming)) {
            int K = l->kind == LAYER_CONV ? l->K : 1;
            double sd = sqrt(2.0 / ((double)l->Co * K * K)); /* kaiming_normal_, mode fan_out */
            size_t wn = (size_t)l->Co * (si->C / (l->kind == LAYER_CONV ? l->groups : 1)) * K * K;
            for (size_t j = 0; j < wn; j++) w[j] = (float)(sd * rng_normal(&r));
        } else if (l->kind == LAYER_LINEAR) {
            for (size_t j = 0; j < (size_t)l->Co * si->C; j++) w[j] = (float)(0.01 * rng_normal(&r));
        } else if (l->kind == LAYER_BN) {
            for (int c = 0; c < si->C; c++) {
                w[c] = 1.0f;
                s[l->stat_off + si->C + c] = 1.0f; /* running var */
            }
        }
    }
    net->be.ops->upload(net->be.ctx, net->params, p, net->nparams);
    net->be.ops->upload(net->be.ctx, net->stats, s, net->nstats);
    net->be.ops->zero(net->be.ctx, net->mom, net->nparams);
    free(p);
    free(s);
}
