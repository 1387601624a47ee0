/* conv2d_dw.h: the depthwise kernels of conv2d_dw.c, for conv2d.c (the training ops and the
 * inference parts). Same contracts as conv2d_forward_cpu / conv2d_backward_cpu on a depthwise
 * desc; wt is the (K*K, C) transposed weight. Internal to ops/cpu. */
#ifndef TIPC_CONV2D_DW_H
#define TIPC_CONV2D_DW_H
#include "../ops.h"

/* Image ranges of the depthwise weight gradient (its scratch holds one partial per range). */
#define DW_CHUNKS 8

/* wt (K*K, C) = w (C, 1, K, K) transposed, so the inner loops run over channels */
void depthwise_transpose_cpu(float *wt, const float *w, int C, int KK);
/* output row oy of image n, channels [c0, c1): act(conv + bias) when bias is given, added to
 * out when add, else stored */
void depthwise_row_cpu(float *out, const float *in, const float *wt, const struct conv2d_desc *d, int n, int oy,
                       int c0, int c1, const float *bias, enum act_kind act, int add);
/* scratch: (K*K, C) floats (the transposed weights) */
void depthwise_forward_cpu(float *out, const float *in, const float *w, const struct conv2d_desc *d, float *wt);
/* scratch: conv2d_scratch_floats() floats */
void depthwise_backward_cpu(float *din, float *dw, const float *dout, const float *in, const float *w,
                            const struct conv2d_desc *d, float *scratch, int acc);

#endif
