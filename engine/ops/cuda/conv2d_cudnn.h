/* conv2d_cudnn.h: the cuDNN path of the CUDA conv (conv2d_cudnn.cu), called by conv2d.cu for shapes the
 * cuBLAS (pointwise) and own-kernel (depthwise) paths do not take. Same contract as
 * conv2d_forward_cuda / conv2d_backward_cuda. C++ (nvcc) only. */
#ifndef TIPC_CONV2D_CUDNN_H
#define TIPC_CONV2D_CUDNN_H
#include "ops_cuda.h"

void conv2d_forward_cudnn(struct backend_ctx *cx, float *out, const float *in, const float *w,
                          const struct conv2d_desc *d);
void conv2d_backward_cudnn(struct backend_ctx *cx, float *din, float *dw, const float *dout, const float *in,
                           const float *w, const struct conv2d_desc *d, int acc);
/* inference in fp16 / bf16 (p): 16-bit NHWC in, out and weights (PyTorch's layout), fp32
 * accumulation; 0 (nothing done) when cuDNN has no algorithm for the shape in that precision */
int conv2d_forward_cudnn_lp(struct backend_ctx *cx, void *out, const void *in, const void *w,
                            const struct conv2d_desc *d, enum precision p);
#endif
