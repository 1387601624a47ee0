/* net.c: the layer list, its plan pass (shapes and offsets), and the forward/backward walker:
 * one switch over layer kinds each way, every op called through struct backend_ops.
 * Not here: which layers MobileNetV3 has (mobilenet_v3.c). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "net.h"
#include "train_graph.h"
#include "../../core/check.h"
#include "../../core/rng.h"
#include "../../core/banned.h"

static size_t align16(size_t n) { return (n + 15) & ~(size_t)15; }

static int add_slot(struct net *net, int H, int W, int C)
{
    net->slots = xgrow(net->slots, sizeof *net->slots, (size_t)net->nslots + 1, &net->cap_slots);
    struct slot *s = &net->slots[net->nslots];
    *s = (struct slot){.H = H, .W = W, .C = C, .off = net->nacts};
    net->nacts += align16((size_t)net->N * H * W * C);
    return net->nslots++;
}

static struct layer *add_layer(struct net *net, enum layer_kind k, int in)
{
    CHECK(in >= 0 && in < net->nslots, "slot %d", in);
    net->layers = xgrow(net->layers, sizeof *net->layers, (size_t)net->nlayers + 1, &net->cap_layers);
    struct layer *l = &net->layers[net->nlayers++];
    *l = (struct layer){.kind = k, .in = in, .in2 = -1, .param_off = net->nparams};
    return l;
}

void net_init(struct net *net, struct backend be, int N, int H, int W, int C)
{
    memset(net, 0, sizeof *net);
    net->be = be;
    net->N = N;
    add_slot(net, H, W, C); /* slot 0: the input */
}

int net_add_conv(struct net *net, int in, int Co, int K, int stride, int groups)
{
    struct slot si = net->slots[in];
    struct layer *l = add_layer(net, LAYER_CONV, in);
    struct conv2d_desc d;
    conv2d_desc_init(&d, net->N, si.H, si.W, si.C, Co, K, stride, (K - 1) / 2, groups);
    l->K = K, l->stride = stride, l->groups = groups, l->Co = Co;
    l->nparam = (size_t)Co * (si.C / groups) * K * K;
    net->nparams += l->nparam;
    size_t sc = conv2d_scratch_floats(&d);
    if (sc > net->nscratch) net->nscratch = sc;
    return l->out = add_slot(net, d.Ho, d.Wo, Co);
}

int net_add_bn(struct net *net, int in, float eps, float momentum)
{
    struct slot si = net->slots[in];
    struct layer *l = add_layer(net, LAYER_BN, in);
    l->eps = eps, l->momentum = momentum;
    l->nparam = 2 * (size_t)si.C;
    net->nparams += l->nparam;
    l->stat_off = net->nstats;
    net->nstats += 2 * (size_t)si.C;
    l->aux_off = net->nacts;
    net->nacts += align16(2 * (size_t)si.C);
    return l->out = add_slot(net, si.H, si.W, si.C);
}

int net_add_act(struct net *net, int in, enum act_kind k)
{
    struct slot si = net->slots[in];
    struct layer *l = add_layer(net, LAYER_ACT, in);
    l->act = k;
    return l->out = add_slot(net, si.H, si.W, si.C);
}

int net_add_pool(struct net *net, int in)
{
    struct slot si = net->slots[in];
    struct layer *l = add_layer(net, LAYER_POOL, in);
    return l->out = add_slot(net, 1, 1, si.C);
}

int net_add_linear(struct net *net, int in, int Co, bool bias)
{
    struct slot si = net->slots[in];
    CHECK(si.H == 1 && si.W == 1, "linear input must be pooled, got %dx%d", si.H, si.W);
    struct layer *l = add_layer(net, LAYER_LINEAR, in);
    l->Co = Co, l->bias = bias;
    l->nparam = (size_t)Co * si.C + (bias ? (size_t)Co : 0);
    net->nparams += l->nparam;
    return l->out = add_slot(net, 1, 1, Co);
}

int net_add_scale(struct net *net, int x, int gate)
{
    struct slot sx = net->slots[x], sg = net->slots[gate];
    CHECK(sg.H == 1 && sg.W == 1 && sg.C == sx.C, "gate shape");
    struct layer *l = add_layer(net, LAYER_SCALE, x);
    l->in2 = gate;
    return l->out = add_slot(net, sx.H, sx.W, sx.C);
}

int net_add_add(struct net *net, int a, int b)
{
    struct slot sa = net->slots[a], sb = net->slots[b];
    CHECK(sa.H == sb.H && sa.W == sb.W && sa.C == sb.C, "add shapes differ");
    struct layer *l = add_layer(net, LAYER_ADD, a);
    l->in2 = b;
    return l->out = add_slot(net, sa.H, sa.W, sa.C);
}

int net_add_dropout(struct net *net, int in, float p)
{
    struct slot si = net->slots[in];
    struct layer *l = add_layer(net, LAYER_DROPOUT, in);
    l->p = p;
    l->aux_off = net->nacts;
    net->nacts += align16((size_t)net->N * si.H * si.W * si.C);
    return l->out = add_slot(net, si.H, si.W, si.C);
}

/* The first layer to write a slot's gradient in backward order overwrites it; later ones add. */
static void plan_grad_writes(struct net *net)
{
    bool *written = xcalloc((size_t)net->nslots, sizeof(bool));
    for (int i = net->nlayers - 1; i >= 0; i--) {
        struct layer *l = &net->layers[i];
        l->acc_in = written[l->in];
        written[l->in] = true;
        if (l->in2 >= 0) {
            l->acc_in2 = written[l->in2];
            written[l->in2] = true;
        }
    }
    free(written);
}

/* BN followed by the ACT that is its output's only reader: one fused op each way. The layer
 * list (and so export and ONNX) is unchanged; the BN output slot is simply never touched. */
static void plan_fusions(struct net *net)
{
    const struct backend_ops *o = net->be.ops;
    if (!o->batchnorm_act_forward || !o->batchnorm_act_backward || net->be.set.no_fuse) return;
    int *readers = xcalloc((size_t)net->nslots, sizeof(int));
    for (int i = 0; i < net->nlayers; i++) {
        readers[net->layers[i].in]++;
        if (net->layers[i].in2 >= 0) readers[net->layers[i].in2]++;
    }
    for (int i = 0; i + 1 < net->nlayers; i++) {
        struct layer *b = &net->layers[i], *a = &net->layers[i + 1];
        if (b->kind == LAYER_BN && a->kind == LAYER_ACT && a->in == b->out && readers[b->out] == 1)
            b->fuse_act = a->fused = true;
    }
    free(readers);
}

void net_alloc(struct net *net)
{
    plan_grad_writes(net);
    plan_fusions(net);
    for (int i = 0; i < net->nlayers && net->amp.prec != PREC_FP32; i++) { /* a 16-bit conv's scratch */
        const struct layer *l = &net->layers[i];
        const struct slot *si = &net->slots[l->in];
        if (l->kind != LAYER_CONV) continue;
        struct conv2d_desc d;
        conv2d_desc_init(&d, net->N, si->H, si->W, si->C, l->Co, l->K, l->stride, (l->K - 1) / 2, l->groups);
        d.prec = net->amp.prec;
        size_t sc = conv2d_scratch_floats(&d);
        if (sc > net->nscratch) net->nscratch = sc;
    }
    const struct backend_ops *o = net->be.ops;
    struct backend_ctx *cx = net->be.ctx;
    net->params = o->alloc(cx, net->nparams);
    net->grads = o->alloc(cx, net->nparams);
    net->mom = o->alloc(cx, net->nparams);
    net->stats = o->alloc(cx, net->nstats);
    net->acts = o->alloc(cx, net->nacts);
    net->dacts = o->alloc(cx, net->nacts);
    net->scratch = o->alloc(cx, net->nscratch);
    net->probs = o->alloc(cx, (size_t)net->N * net_num_classes(net));
    net->labels_dev = xcalloc((size_t)net->N, sizeof(int32_t));
    net->train = true;
    if (net->amp.prec != PREC_FP32) {
        CHECK(backend_has_amp(&net->be), "backend %s has no mixed precision ops (check backend_has_amp first)",
              o->name);
        CHECK(net->amp.ls.init_scale > 0 && net->amp.ls.growth_factor >= 1 && net->amp.ls.backoff_factor > 0 &&
                  net->amp.ls.backoff_factor <= 1 && net->amp.ls.growth_interval >= 1,
              "loss scaler settings");
        net->params_lp = o->alloc(cx, net->nparams);
        net->amp_state = o->alloc(cx, AMP_STATE_FLOATS);
        net_amp_set_scale(net, net->amp.ls.init_scale);
    }
}

bool net_amp_read(const struct net *net, float *out)
{
    if (!net->amp_state) return false;
    net->be.ops->download(net->be.ctx, out, net->amp_state, AMP_STATE_FLOATS);
    return true;
}

void net_amp_set_scale(struct net *net, float scale)
{
    float st[AMP_STATE_FLOATS];
    CHECK(net->amp_state && scale > 0 && isfinite(scale), "loss scale %g on an fp32 net or not positive", scale);
    net_amp_read(net, st);
    st[AMP_SCALE] = scale;
    st[AMP_FOUND_INF] = 0;
    st[AMP_GOOD] = 0;
    net->be.ops->upload(net->be.ctx, net->amp_state, st, AMP_STATE_FLOATS);
}

void net_amp_write(struct net *net, const float *st)
{
    CHECK(net->amp_state && st[AMP_SCALE] > 0 && isfinite(st[AMP_SCALE]), "loss scaler state on an fp32 net or scale %g",
          st[AMP_SCALE]);
    net->be.ops->upload(net->be.ctx, net->amp_state, st, AMP_STATE_FLOATS);
}

void net_free(struct net *net)
{
    if (!net) return;
    if (net->be.ops) {
        float *bufs[] = {net->params, net->grads, net->mom, net->stats, net->acts, net->dacts,
                         net->scratch, net->probs, net->params_lp, net->amp_state};
        for (size_t i = 0; i < sizeof bufs / sizeof bufs[0]; i++)
            if (bufs[i]) net->be.ops->free(net->be.ctx, bufs[i]);
    }
    train_graph_free(net);
    free(net->labels_dev);
    free(net->layers);
    free(net->slots);
    memset(net, 0, sizeof *net);
}

size_t net_slot_size(const struct net *net, int s, int n)
{
    const struct slot *sl = &net->slots[s];
    return (size_t)n * sl->H * sl->W * sl->C;
}

int net_num_classes(const struct net *net) { return net->slots[net->nslots - 1].C; }
const float *net_logits(const struct net *net) { return net->acts + net->slots[net->nslots - 1].off; }

void net_set_input_u8(struct net *net, const uint8_t *images, int n)
{
    CHECK(net->slots[0].C == 3 && n <= net->N, "input");
    size_t np = (size_t)n * net->slots[0].H * net->slots[0].W;
    net->be.ops->normalize_u8(net->be.ctx, net->acts + net->slots[0].off, images, np);
}

void net_set_input_staged(struct net *net, int n)
{
    CHECK(net->staged && net->slots[0].C == 3 && n <= net->N, "staged input");
    size_t np = (size_t)n * net->slots[0].H * net->slots[0].W;
    net->be.ops->normalize_u8_dev(net->be.ctx, net->acts + net->slots[0].off, net->staged->images, np);
}

void net_to_host(const struct net *net, float *host, const float *src, size_t n)
{
    net->be.ops->download(net->be.ctx, host, src, n);
}
void net_from_host(struct net *net, float *dst, const float *host, size_t n)
{
    net->be.ops->upload(net->be.ctx, dst, host, n);
}
void net_zero(struct net *net, float *dst, size_t n) { net->be.ops->zero(net->be.ctx, dst, n); }
bool net_host_memory(const struct net *net) { return net->be.ops->host_memory; }
void net_sync(const struct net *net) { net->be.ops->sync(net->be.ctx); }
