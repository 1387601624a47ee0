/* infer.c: building (BN folding), planning (liveness-shared activations) and running the
 * inference graph. File I/O is in infer_io.c. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "infer.h"
#include "../model/finite.h"
#include "../../core/check.h"
#include "../../core/banned.h"

struct builder { struct infer_model *m; size_t capl, caps, capw; int *map; /* net slot -> infer slot */ };

static int new_slot(struct builder *b, int H, int W, int C)
{
    struct infer_model *m = b->m;
    m->slots = xgrow(m->slots, sizeof *m->slots, (size_t)m->nslots + 1, &b->caps);
    m->slots[m->nslots] = (struct infer_slot){H, W, C};
    return m->nslots++;
}
static struct infer_layer *new_layer(struct builder *b, enum infer_kind k, int in)
{
    struct infer_model *m = b->m;
    m->layers = xgrow(m->layers, sizeof *m->layers, (size_t)m->nlayers + 1, &b->capl);
    struct infer_layer *l = &m->layers[m->nlayers++];
    *l = (struct infer_layer){.kind = k, .in = in, .in2 = -1, .act = ACT_NONE};
    return l;
}
static size_t new_weights(struct builder *b, size_t n)
{
    struct infer_model *m = b->m;
    m->weights = xgrow(m->weights, sizeof(float), m->nweights + n, &b->capw);
    size_t off = m->nweights;
    memset(m->weights + off, 0, n * sizeof(float));
    m->nweights += n;
    return off;
}

/* Fuse an ACT layer right after layer i (consuming its output) into l; returns layers eaten. */
static int fuse_act(struct builder *b, const struct net *net, int i, int out, struct infer_layer *l, int *last)
{
    if (i + 1 < net->nlayers && net->layers[i + 1].kind == LAYER_ACT && net->layers[i + 1].in == out) {
        l->act = net->layers[i + 1].act;
        *last = net->layers[i + 1].out;
        (void)b;
        return 1;
    }
    *last = out;
    return 0;
}

static int add_conv(struct builder *b, const struct net *net, int i)
{
    const struct layer *c = &net->layers[i];
    const struct slot *si = &net->slots[c->in];
    const float *P = net->params;
    int Co = c->Co, Cg = si->C / c->groups;
    size_t per = (size_t)Cg * c->K * c->K;
    const struct slot *so = &net->slots[c->out];
    struct infer_layer *l = new_layer(b, INF_CONV, b->map[c->in]);
    l->K = c->K, l->stride = c->stride, l->groups = c->groups, l->Co = Co;
    l->w_off = new_weights(b, (size_t)Co * per);
    l->b_off = new_weights(b, (size_t)Co);
    float *w = b->m->weights + l->w_off, *bias = b->m->weights + l->b_off;
    memcpy(w, P + c->param_off, (size_t)Co * per * sizeof(float));
    int eaten = 0, out = c->out;
    if (i + 1 < net->nlayers && net->layers[i + 1].kind == LAYER_BN && net->layers[i + 1].in == c->out) {
        /* w' = w * gamma / sqrt(var + eps); b' = beta - mean * gamma / sqrt(var + eps) */
        const struct layer *bn = &net->layers[i + 1];
        const float *g = P + bn->param_off, *be = g + Co, *rm = net->stats + bn->stat_off, *rv = rm + Co;
        for (int o = 0; o < Co; o++) {
            float s = g[o] / sqrtf(rv[o] + bn->eps);
            for (size_t k = 0; k < per; k++) w[(size_t)o * per + k] *= s;
            bias[o] = be[o] - rm[o] * s;
        }
        eaten = 1;
        out = bn->out;
    }
    int last;
    eaten += fuse_act(b, net, i + eaten, out, l, &last);
    l->out = b->map[last] = new_slot(b, so->H, so->W, Co);
    return eaten;
}

static int add_linear(struct builder *b, const struct net *net, int i)
{
    const struct layer *c = &net->layers[i];
    int Ci = net->slots[c->in].C, Co = c->Co;
    struct infer_layer *l = new_layer(b, INF_LINEAR, b->map[c->in]);
    l->Co = Co;
    l->w_off = new_weights(b, (size_t)Co * Ci);
    l->b_off = new_weights(b, (size_t)Co);
    memcpy(b->m->weights + l->w_off, net->params + c->param_off, (size_t)Co * Ci * sizeof(float));
    if (c->bias)
        memcpy(b->m->weights + l->b_off, net->params + c->param_off + (size_t)Co * Ci, (size_t)Co * sizeof(float));
    int last, eaten = fuse_act(b, net, i, c->out, l, &last);
    l->out = b->map[last] = new_slot(b, 1, 1, Co);
    return eaten;
}

void infer_from_net(struct infer_model *m, const struct net *net, int N)
{
    memset(m, 0, sizeof *m);
    m->be = net->be;
    struct builder b = {.m = m, .map = xcalloc((size_t)net->nslots, sizeof(int))};
    const struct slot *s0 = &net->slots[0];
    b.map[0] = new_slot(&b, s0->H, s0->W, s0->C);
    for (int i = 0; i < net->nlayers; i++) {
        const struct layer *l = &net->layers[i];
        const struct slot *so = &net->slots[l->out];
        struct infer_layer *il;
        switch (l->kind) {
        case LAYER_CONV: i += add_conv(&b, net, i); break;
        case LAYER_LINEAR: i += add_linear(&b, net, i); break;
        case LAYER_DROPOUT: b.map[l->out] = b.map[l->in]; break;
        case LAYER_ACT:
            il = new_layer(&b, INF_ACT, b.map[l->in]);
            il->act = l->act;
            il->out = b.map[l->out] = new_slot(&b, so->H, so->W, so->C);
            break;
        case LAYER_POOL:
        case LAYER_SCALE:
        case LAYER_ADD:
            il = new_layer(&b, l->kind == LAYER_POOL ? INF_POOL : l->kind == LAYER_SCALE ? INF_SCALE : INF_ADD,
                           b.map[l->in]);
            il->in2 = l->in2 >= 0 ? b.map[l->in2] : -1;
            il->out = b.map[l->out] = new_slot(&b, so->H, so->W, so->C);
            break;
        case LAYER_BN: BUG("batchnorm without a conv before it cannot be folded");
        case LAYER_KIND_COUNT: BUG("layer kind");
        }
    }
    m->logits_slot = b.map[net->nslots - 1];
    struct infer_layer *sm = new_layer(&b, INF_SOFTMAX, m->logits_slot);
    const struct infer_slot ls = m->slots[m->logits_slot];
    sm->out = m->probs_slot = new_slot(&b, 1, 1, ls.C);
    m->num_classes = ls.C;
    m->resolution = s0->H;
    free(b.map);
    infer_plan(m, N);
}

struct conv2d_desc infer_conv_desc(const struct infer_model *m, const struct infer_layer *l, int n)
{
    const struct infer_slot *si = &m->slots[l->in];
    struct conv2d_desc d;
    conv2d_desc_init(&d, n, si->H, si->W, si->C, l->Co, l->K, l->stride, (l->K - 1) / 2, l->groups);
    return d;
}

/* Greedy first-fit of slot lifetimes [def, last use] into one buffer. */
void infer_plan(struct infer_model *m, int N)
{
    int S = m->nslots;
    int *def = xcalloc((size_t)S, sizeof(int)), *last = xcalloc((size_t)S, sizeof(int));
    size_t *size = xcalloc((size_t)S, sizeof(size_t));
    m->slot_off = xcalloc((size_t)S, sizeof(size_t));
    for (int s = 0; s < S; s++) {
        def[s] = -1, last[s] = -1;
        size[s] = ((size_t)N * m->slots[s].H * m->slots[s].W * m->slots[s].C + 15) & ~(size_t)15;
    }
    m->nscratch = 0;
    for (int i = 0; i < m->nlayers; i++) {
        const struct infer_layer *l = &m->layers[i];
        def[l->out] = i;
        last[l->in] = i;
        if (l->in2 >= 0) last[l->in2] = i;
        if (l->kind == INF_CONV) {
            struct conv2d_desc d = infer_conv_desc(m, l, N);
            size_t sc = conv2d_scratch_floats(&d);
            if (sc > m->nscratch) m->nscratch = sc;
        }
    }
    /* outputs stay readable, and the input (slot 0) is never overwritten, so a pass can be
     * repeated on the same input (benchmarks, CUDA graph replays) */
    last[m->logits_slot] = last[m->probs_slot] = last[0] = m->nlayers;
    m->nacts = 0;
    for (int s = 0; s < S; s++) {
        size_t off = 0;
        for (int again = 1; again;) {
            again = 0;
            for (int t = 0; t < s; t++) {
                bool live = !(last[t] < def[s] || last[s] < def[t]);
                if (live && off < m->slot_off[t] + size[t] && m->slot_off[t] < off + size[s]) {
                    off = m->slot_off[t] + size[t];
                    again = 1;
                }
            }
        }
        m->slot_off[s] = off;
        if (off + size[s] > m->nacts) m->nacts = off + size[s];
    }
    free(def);
    free(last);
    free(size);
    m->N = N;
    m->acts = m->be.ops->alloc(m->be.ctx, m->nacts);
    m->scratch = m->be.ops->alloc(m->be.ctx, m->nscratch);
    if (m->be.ops->host_memory) {
        m->wdev = m->weights;
    } else {
        m->wdev = m->be.ops->alloc(m->be.ctx, m->nweights);
        m->be.ops->upload(m->be.ctx, m->wdev, m->weights, m->nweights);
    }
}

/* the backend buffers of infer_plan, and what the backend's own schedule made */
static void unplan(struct infer_model *m)
{
    const struct backend_ops *o = m->be.ops;
    if (o) {
        if (o->infer_release) o->infer_release(m->be.ctx, m);
        if (m->acts) o->free(m->be.ctx, m->acts);
        if (m->scratch) o->free(m->be.ctx, m->scratch);
        if (m->wdev && m->wdev != m->weights) o->free(m->be.ctx, m->wdev);
    }
    m->acts = m->scratch = m->wdev = NULL;
}

void infer_move(struct infer_model *m, struct backend be)
{
    if (m->be.ops == be.ops && m->be.ctx == be.ctx) return;
    unplan(m);
    free(m->slot_off);
    m->slot_off = NULL;
    m->nacts = m->nscratch = 0;
    m->be = be;
    infer_plan(m, m->N);
    /* the weights are rounded already (host copy, uploaded by infer_plan); the backend's own
     * 16-bit pass, if it has one, is made again for its memory */
    if (m->prec != PREC_FP32 && be.ops->infer_precision && be.ops->infer_precision(be.ctx, m, m->prec) != TIPC_OK)
        warning_msg("inference in %s on the %s backend runs op by op (rounded fp32)", precision_name(m->prec),
                    be.ops->name);
}

void infer_free(struct infer_model *m)
{
    if (!m) return;
    unplan(m);
    free(m->layers);
    free(m->slots);
    free(m->weights);
    free(m->slot_off);
    memset(m, 0, sizeof *m);
}

void infer_set_input_u8(struct infer_model *m, const uint8_t *images, int n)
{
    CHECK(n <= m->N, "batch %d over planned %d", n, m->N);
    size_t np = (size_t)n * m->slots[0].H * m->slots[0].W;
    if (m->be.ops->infer_input_u8)
        m->be.ops->infer_input_u8(m->be.ctx, m, images, n);
    else
        m->be.ops->normalize_u8(m->be.ctx, m->acts + m->slot_off[0], images, np);
}

void infer_set_input_f32(struct infer_model *m, const float *nhwc, int n)
{
    CHECK(n <= m->N, "batch %d over planned %d", n, m->N);
    size_t cnt = (size_t)n * m->slots[0].H * m->slots[0].W * m->slots[0].C;
    m->be.ops->upload(m->be.ctx, m->acts + m->slot_off[0], nhwc, cnt);
}

void infer_sync(const struct infer_model *m) { m->be.ops->sync(m->be.ctx); }

void infer_layer_forward(struct infer_model *m, int i, int n)
{
    const struct backend_ops *o = m->be.ops;
    struct backend_ctx *cx = m->be.ctx;
    const struct infer_layer *l = &m->layers[i];
    const struct infer_slot *si = &m->slots[l->in], *so = &m->slots[l->out];
    float *x = m->acts + m->slot_off[l->in], *y = m->acts + m->slot_off[l->out];
    const float *w = m->wdev + l->w_off, *b = m->wdev + l->b_off;
    size_t cnt = (size_t)n * si->H * si->W * si->C;
    switch ((enum infer_kind)l->kind) {
    case INF_CONV: {
        struct conv2d_desc d = infer_conv_desc(m, l, n);
        o->conv2d_forward(cx, y, x, w, &d, m->scratch);
        o->bias_act_forward(cx, y, b, (size_t)n * so->H * so->W, so->C, (enum act_kind)l->act);
        break;
    }
    case INF_LINEAR:
        o->linear_forward(cx, y, x, w, b, n, si->C, l->Co);
        if (l->act != ACT_NONE) o->act_forward(cx, y, y, (size_t)n * l->Co, (enum act_kind)l->act);
        break;
    case INF_ACT: o->act_forward(cx, y, x, cnt, (enum act_kind)l->act); break;
    case INF_POOL: o->avgpool_forward(cx, y, x, n, si->H * si->W, si->C); break;
    case INF_SCALE:
        o->scale_forward(cx, y, x, m->acts + m->slot_off[l->in2], n, si->H * si->W, si->C);
        break;
    case INF_ADD: o->add_forward(cx, y, x, m->acts + m->slot_off[l->in2], cnt); break;
    case INF_SOFTMAX: o->softmax_forward(cx, y, x, n, si->C); break;
    case INF_KIND_COUNT: BUG("inference layer kind");
    }
}

void infer_set_precision(struct infer_model *m, enum precision p)
{
    CHECK(p == PREC_FP32 || backend_has_amp(&m->be), "%s inference on backend %s without AMP ops",
          precision_name(p), m->be.ops->name);
    CHECK(!m->packed && m->prec == PREC_FP32, "infer_set_precision after the first pass");
    m->prec = p;
    if (p == PREC_FP32) return;
    for (int i = 0; i < m->nlayers; i++) { /* host weights too: infer_move uploads them again */
        const struct infer_layer *l = &m->layers[i];
        const struct infer_slot *si = &m->slots[l->in];
        size_t nw = l->kind == INF_CONV ? (size_t)l->Co * (si->C / l->groups) * l->K * l->K
                    : l->kind == INF_LINEAR ? (size_t)l->Co * si->C : 0;
        for (size_t j = 0; j < nw; j++) m->weights[l->w_off + j] = round_to(m->weights[l->w_off + j], p);
    }
    if (m->wdev != m->weights) m->be.ops->upload(m->be.ctx, m->wdev, m->weights, m->nweights);
    /* a backend with its own 16-bit pass (CUDA: 16-bit activations and weights, the same rounded
     * values, fp32 accumulation) prepares it now; when it cannot, passes go op by op below */
    const struct backend_ops *o = m->be.ops;
    if (o->infer_precision && o->infer_precision(m->be.ctx, m, p) != TIPC_OK)
        warning_msg("inference in %s on the %s backend runs op by op (rounded fp32)", precision_name(p), o->name);
}

/* a pass in bf16/fp16 (infer_set_precision): op by op, each layer's output rounded */
static void forward_reduced(struct infer_model *m, int n)
{
    const struct backend_ops *o = m->be.ops;
    const struct infer_slot *s0 = &m->slots[0];
    float *x = m->acts + m->slot_off[0];
    o->amp_round(m->be.ctx, x, x, (size_t)n * s0->H * s0->W * s0->C, m->prec);
    for (int i = 0; i < m->nlayers; i++) {
        const struct infer_layer *l = &m->layers[i];
        infer_layer_forward(m, i, n);
        if (l->kind == INF_SOFTMAX) continue;
        const struct infer_slot *so = &m->slots[l->out];
        float *y = m->acts + m->slot_off[l->out];
        o->amp_round(m->be.ctx, y, y, (size_t)n * so->H * so->W * so->C, m->prec);
    }
}

void infer_forward(struct infer_model *m, int n)
{
    CHECK(n > 0 && n <= m->N, "batch %d of planned %d", n, m->N);
    /* bf16/fp16: the backend's own 16-bit pass when it made one (infer_set_precision), else op by op */
    if (m->prec != PREC_FP32 && !m->lp_acts) {
        forward_reduced(m, n);
        return;
    }
    /* the backend's own schedule when it has one; infer_per_op: op by op anyway (A/B benchmarks;
     * a 16-bit pass has no op-by-op twin) */
    if (m->be.ops->infer_forward && (!m->be.set.infer_per_op || m->prec != PREC_FP32)) {
        m->be.ops->infer_forward(m->be.ctx, m, n);
        return;
    }
    for (int i = 0; i < m->nlayers; i++) infer_layer_forward(m, i, n);
}

const float *infer_output(const struct infer_model *m) { return m->acts + m->slot_off[m->probs_slot]; }
const float *infer_logits(const struct infer_model *m) { return m->acts + m->slot_off[m->logits_slot]; }

void infer_output_host(const struct infer_model *m, float *probs, int n)
{
    m->be.ops->download(m->be.ctx, probs, infer_output(m), (size_t)n * m->num_classes);
}
void infer_logits_host(const struct infer_model *m, float *logits, int n)
{
    m->be.ops->download(m->be.ctx, logits, infer_logits(m), (size_t)n * m->num_classes);
}

static const char *const KIND_NAME[INF_KIND_COUNT] = {"conv", "linear", "act", "pool", "scale", "add", "softmax"};

bool infer_weights_finite(const struct infer_model *m, char *what, size_t n)
{
    long k = first_nonfinite(m->weights, m->nweights);
    if (k < 0) return true;
    for (int i = 0; i < m->nlayers; i++) {   /* the layer whose weights or bias hold it */
        const struct infer_layer *l = &m->layers[i];
        if (l->kind != INF_CONV && l->kind != INF_LINEAR) continue;
        const struct infer_slot *si = &m->slots[l->in];
        uint64_t nw = l->kind == INF_CONV ? (uint64_t)l->Co * (si->C / l->groups) * l->K * l->K : (uint64_t)l->Co * si->C;
        bool w = (uint64_t)k >= l->w_off && (uint64_t)k < l->w_off + nw;
        if (!w && !((uint64_t)k >= l->b_off && (uint64_t)k < l->b_off + (uint64_t)l->Co)) continue;
        snprintf(what, n, "layer %d (%s) %s [%llu] = %g", i, KIND_NAME[l->kind], w ? "weight" : "bias",
                 (unsigned long long)((uint64_t)k - (w ? l->w_off : l->b_off)), (double)m->weights[k]);
        return false;
    }
    snprintf(what, n, "weight %ld = %g", k, (double)m->weights[k]);
    return false;
}

long infer_outputs_finite(const float *out, int n, int K) { return first_nonfinite(out, (size_t)n * K); }

bool infer_check_finite(struct infer_model *m, char *what, size_t n)
{
    if (!infer_weights_finite(m, what, n)) return false;
    const struct infer_slot *s0 = &m->slots[0];
    size_t px = (size_t)s0->H * s0->W * 3;
    uint8_t *gray = xmalloc(px);
    memset(gray, 128, px);
    float *out = xmalloc(sizeof(float) * 2 * (size_t)m->num_classes);
    infer_set_input_u8(m, gray, 1);
    infer_forward(m, 1);
    infer_logits_host(m, out, 1);
    infer_output_host(m, out + m->num_classes, 1);
    long k = infer_outputs_finite(out, 2, m->num_classes);
    if (k >= 0)
        snprintf(what, n, "its %s on a plain gray image are not finite (class %ld: %g): the weights are finite but "
                 "overflow", k < m->num_classes ? "logits" : "probabilities", k % m->num_classes, (double)out[k]);
    free(gray);
    free(out);
    return k < 0;
}
