/* desc.h: the descriptors the ops take (a conv's or a BN's dimensions, the activation kind),
 * shared by the CPU and CUDA ops, the model (net_walk.c) and the inference graph (infer.c).
 * Not here: the ops (ops.h). */
#ifndef TIPC_DESC_H
#define TIPC_DESC_H

/* A conv: in (N, H, W, Cin), w (Cout, Cin/groups, K, K), out (N, Ho, Wo, Cout) with
 * Ho = (H + 2*pad - K) / stride + 1. */
struct conv2d_desc {
    int N, H, W, Cin, Cout, K, stride, pad, groups;
    int Ho, Wo; /* filled by conv2d_desc_init */
    int prec;   /* enum precision (precision.h) of in and w: a bf16/fp16 net's convs say so, so a
                   backend may use 16-bit kernels (same values, fp32 accumulation); 0: fp32 */
};
/* Fill d, checking that groups divide the channels and the output is not empty. */
void conv2d_desc_init(struct conv2d_desc *d, int N, int H, int W, int Cin, int Cout, int K, int stride,
                      int pad, int groups);
/* the fast paths every backend has: one GEMM, and a per-channel kernel */
static inline int conv2d_is_pointwise(const struct conv2d_desc *d)
{
    return d->K == 1 && d->stride == 1 && d->pad == 0 && d->groups == 1;
}
static inline int conv2d_is_depthwise(const struct conv2d_desc *d)
{
    return d->groups == d->Cin && d->Cin == d->Cout && d->groups > 1;
}

/* BN over the channel axis of (M, C) rows, M = N*H*W; train: batch statistics, else running. */
struct bn_desc {
    int M, C;
    float eps, momentum;
    int train;
};

enum act_kind { ACT_NONE, ACT_RELU, ACT_HARDSWISH, ACT_HARDSIGMOID };
const char *act_name(enum act_kind k); /* "relu"... */

#endif
