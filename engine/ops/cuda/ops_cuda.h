/* ops_cuda.h: the CUDA twins of ops/ops.h, callable from C. Same contracts as the CPU reference
 * (NHWC activations, PyTorch weight layouts, forward overwrites, backward accumulates parameter
 * gradients and follows `acc` for input gradients), with the CUDA context first. Every op is
 * asynchronous on the context's stream except where noted (xent_forward_cuda returns the loss,
 * so it waits). Pointers are device memory unless the comment says host.
 * Failures of CUDA / cuDNN / cuBLAS calls print file:line, the call and the library's message
 * and exit TIPC_EINTERNAL (70) through the die routine (core/check.h).
 * Not here: the vtable (backend/backend_cuda.c), context set-up (ctx.cu). Only in CUDA builds. */
#ifndef TIPC_OPS_CUDA_H
#define TIPC_OPS_CUDA_H
#include <stddef.h>
#include <stdint.h>

#include "../ops.h"
#include "../../../core/status.h"

#ifdef __cplusplus
extern "C" {
#endif

struct cuda_ctx;

/* Context on `device`: stream, cuBLAS and cuDNN handles. No device / a failing driver:
 * TIPC_ENOTBUILT with a message saying why (the GPU path is not available here). */
enum tipc_status cuda_ctx_create(struct cuda_ctx **out, int device);
void cuda_ctx_free(struct cuda_ctx *cx);
/* Number of usable devices; 0 with *why set (static string) when there is none. */
int cuda_device_count(const char **why);
/* "NVIDIA H100 80GB HBM3, sm_90, 132 SMs" */
void cuda_ctx_describe(const struct cuda_ctx *cx, char *buf, size_t n);

/* CUDA Graphs: record the ops issued between begin and end (nothing runs), then replay them with
 * one launch. Between begin and end only ops on device buffers whose shapes ran before (so the
 * workspaces and cuDNN plans exist), no upload/download/sync/normalize_u8. A new capture
 * replaces the old one. */
void cuda_graph_begin(struct cuda_ctx *cx);
void cuda_graph_end(struct cuda_ctx *cx);
void cuda_graph_launch(struct cuda_ctx *cx);

/* memory (device buffers of floats) */
float *cuda_alloc(struct cuda_ctx *cx, size_t nfloats);            /* zeroed */
void cuda_free(struct cuda_ctx *cx, float *p);
void cuda_zero(struct cuda_ctx *cx, float *p, size_t nfloats);
void cuda_upload(struct cuda_ctx *cx, float *dst, const float *host, size_t nfloats);   /* waits */
void cuda_download(struct cuda_ctx *cx, float *host, const float *src, size_t nfloats); /* waits */
void cuda_sync(struct cuda_ctx *cx);

void conv2d_forward_cuda(struct cuda_ctx *cx, float *out, const float *in, const float *w,
                         const struct conv2d_desc *d);
void conv2d_backward_cuda(struct cuda_ctx *cx, float *din, float *dw, const float *dout, const float *in,
                          const float *w, const struct conv2d_desc *d, int acc);
void batchnorm_forward_cuda(struct cuda_ctx *cx, float *out, float *save_mean, float *save_rstd, const float *in,
                            const float *gamma, const float *beta, float *run_mean, float *run_var,
                            const struct bn_desc *d);
void batchnorm_backward_cuda(struct cuda_ctx *cx, float *din, float *dgamma, float *dbeta, const float *dout,
                             const float *in, const float *save_mean, const float *save_rstd, const float *gamma,
                             const float *run_var, const struct bn_desc *d, int acc);
void act_forward_cuda(struct cuda_ctx *cx, float *out, const float *in, size_t n, enum act_kind k);
void act_backward_cuda(struct cuda_ctx *cx, float *din, const float *dout, const float *in, size_t n,
                       enum act_kind k, int acc);
void bias_act_forward_cuda(struct cuda_ctx *cx, float *y, const float *b, size_t M, int C, enum act_kind k);
void softmax_forward_cuda(struct cuda_ctx *cx, float *out, const float *in, int N, int K);
/* host_images: HOST uint8 (npix, 3) */
void normalize_u8_cuda(struct cuda_ctx *cx, float *out, const uint8_t *host_images, size_t npix);
void add_forward_cuda(struct cuda_ctx *cx, float *out, const float *a, const float *b, size_t n);
void add_backward_cuda(struct cuda_ctx *cx, float *da, float *db, const float *dout, size_t n, int acc_a,
                       int acc_b);
void scale_forward_cuda(struct cuda_ctx *cx, float *out, const float *x, const float *g, int N, int P, int C);
void scale_backward_cuda(struct cuda_ctx *cx, float *dx, float *dg, const float *dout, const float *x,
                         const float *g, int N, int P, int C, int acc_x, int acc_g);
void avgpool_forward_cuda(struct cuda_ctx *cx, float *out, const float *in, int N, int P, int C);
void avgpool_backward_cuda(struct cuda_ctx *cx, float *din, const float *dout, int N, int P, int C, int acc);
void linear_forward_cuda(struct cuda_ctx *cx, float *out, const float *in, const float *w, const float *b, int N,
                         int Ci, int Co);
void linear_backward_cuda(struct cuda_ctx *cx, float *din, float *dw, float *db, const float *dout,
                          const float *in, const float *w, int N, int Ci, int Co, int acc);
void dropout_forward_cuda(struct cuda_ctx *cx, float *out, float *mask, const float *in, size_t n, float p,
                          uint64_t seed);
void dropout_backward_cuda(struct cuda_ctx *cx, float *din, const float *dout, const float *mask, size_t n,
                           int acc);
/* labels: HOST (N); returns the mean loss on the host (waits for the stream). */
float xent_forward_cuda(struct cuda_ctx *cx, float *probs, const float *logits, const int32_t *labels, int N,
                        int K, float eps);
void xent_backward_cuda(struct cuda_ctx *cx, float *dlogits, const float *probs, const int32_t *labels, int N,
                        int K, float eps);
void sgd_step_cuda(struct cuda_ctx *cx, float *p, float *m, const float *g, size_t n, float lr, float mu,
                   float wd);

#ifdef __cplusplus
}
#endif
#endif
