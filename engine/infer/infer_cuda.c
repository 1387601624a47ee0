/* infer_cuda.c: the CUDA backend's inference schedule. fp32 runs the graph layer by layer through
 * the op table (as infer.c would). fp16 / bf16 (infer_set_precision) run a reduced-precision pass:
 * the folded weights (already rounded to p by infer_set_precision, so the same values as the
 * CPU's op-by-op 16-bit pass) are converted to 16 bits ONCE when the precision is set (biases stay fp32),
 * activations live in a 16-bit copy of the activation buffer (same slot offsets, half the bytes),
 * and every conv / linear accumulates in fp32 (cuBLAS GemmEx with CUBLAS_COMPUTE_32F, cuDNN fp32
 * convolutions, own kernels summing in fp32; ops/cuda/conv2d_lp.cu, act_lp.cu). The input is
 * normalised in fp32 as on every path (bit-identical to the CPU) and rounded once; the layer that
 * writes the logits writes them in fp32 (a linear layer's GEMM stores fp32 directly), and the
 * softmax runs in fp32, so infer_logits()/infer_output() are float as always. A pass issues
 * kernels only (no allocation, no host sync), so a CUDA Graph captured after one plain pass
 * replays it. Not here: the graph and its planning (infer.c), the kernels (ops/cuda). */
#include <string.h>

#include "infer.h"
#include "../../core/check.h"
#ifdef TIPC_HAVE_CUDA
#include "../ops/cuda/ops_cuda.h"
#endif
#include "../../core/banned.h"

#ifdef TIPC_HAVE_CUDA

void infer_release_cuda(struct backend_ctx *cx, struct infer_model *m)
{
    if (m->lp_weights) cuda_free(cx, m->lp_weights);
    if (m->lp_acts) cuda_free(cx, m->lp_acts);
    m->lp_weights = m->lp_acts = NULL;
}

enum tipc_status infer_precision_cuda(struct backend_ctx *cx, struct infer_model *m, enum precision p)
{
    infer_release_cuda(cx, m);
    if (p == PREC_FP32) return TIPC_OK;
    /* the logits are kept in fp32 only: a graph where another layer than the softmax reads them
     * runs infer.c's op-by-op pass instead (the caller says so) */
    for (int i = 0; i < m->nlayers; i++) {
        const struct infer_layer *l = &m->layers[i];
        if (l->kind != INF_SOFTMAX && (l->in == m->logits_slot || l->in2 == m->logits_slot)) return TIPC_EDATA;
    }
    /* 16-bit words in buffers of floats: n halves in (n + 1) / 2 floats */
    m->lp_weights = cuda_alloc(cx, (m->nweights + 1) / 2);
    m->lp_acts = cuda_alloc(cx, (m->nacts + 1) / 2);
    lp_from_f32_cuda(cx, m->lp_weights, m->wdev, m->nweights, p);
    cuda_sync(cx);
    return TIPC_OK;
}

/* the 16-bit copy of slot s */
static uint16_t *lp_slot(const struct infer_model *m, int s) { return (uint16_t *)m->lp_acts + m->slot_off[s]; }

static void lp_layer(struct backend_ctx *cx, struct infer_model *m, const struct infer_layer *l, int n)
{
    enum precision p = m->prec;
    const struct infer_slot *si = &m->slots[l->in], *so = &m->slots[l->out];
    const uint16_t *W = (const uint16_t *)m->lp_weights + l->w_off;
    const float *b = m->wdev + l->b_off;
    void *x = lp_slot(m, l->in), *y = lp_slot(m, l->out);
    float *yf = m->acts + m->slot_off[l->out];  /* the fp32 slot: logits, probabilities */
    bool logits = l->out == m->logits_slot;
    size_t cnt = (size_t)n * si->H * si->W * si->C, ocnt = (size_t)n * so->H * so->W * so->C;
    switch ((enum infer_kind)l->kind) {
    case INF_CONV: {
        struct conv2d_desc d = infer_conv_desc(m, l, n);
        conv2d_forward_lp_cuda(cx, y, x, W, &d, p);
        bias_act_lp_cuda(cx, y, b, (size_t)n * so->H * so->W, so->C, (enum act_kind)l->act, p);
        break;
    }
    case INF_LINEAR:
        if (logits) { /* fp32 out of the GEMM's fp32 accumulator, the epilogue in fp32 */
            linear_forward_lp_cuda(cx, yf, 1, x, W, n, si->C, l->Co, p);
            bias_act_forward_cuda(cx, yf, b, (size_t)n, l->Co, (enum act_kind)l->act);
            return;
        }
        linear_forward_lp_cuda(cx, y, 0, x, W, n, si->C, l->Co, p);
        bias_act_lp_cuda(cx, y, b, (size_t)n, l->Co, (enum act_kind)l->act, p);
        break;
    case INF_ACT: act_lp_cuda(cx, y, x, cnt, (enum act_kind)l->act, p); break;
    case INF_POOL: avgpool_lp_cuda(cx, y, x, n, si->H * si->W, si->C, p); break;
    case INF_SCALE: scale_lp_cuda(cx, y, x, lp_slot(m, l->in2), n, si->H * si->W, si->C, p); break;
    case INF_ADD: add_lp_cuda(cx, y, x, lp_slot(m, l->in2), cnt, p); break;
    case INF_SOFTMAX: /* the logits are fp32 (below, or written so by their linear layer) */
        softmax_forward_cuda(cx, yf, m->acts + m->slot_off[l->in], n, si->C);
        return;
    case INF_KIND_COUNT: BUG("inference layer kind");
    }
    if (logits) lp_to_f32_cuda(cx, yf, y, ocnt, p); /* logits from a layer that stores 16 bits */
}

void infer_forward_cuda(struct backend_ctx *cx, struct infer_model *m, int n)
{
    if (m->prec == PREC_FP32 || !m->lp_acts) {
        for (int i = 0; i < m->nlayers; i++) infer_layer_forward(m, i, n);
        return;
    }
    const struct infer_slot *s0 = &m->slots[0];
    lp_from_f32_cuda(cx, lp_slot(m, 0), m->acts + m->slot_off[0], (size_t)n * s0->H * s0->W * s0->C, m->prec);
    for (int i = 0; i < m->nlayers; i++) lp_layer(cx, m, &m->layers[i], n);
}

#endif
