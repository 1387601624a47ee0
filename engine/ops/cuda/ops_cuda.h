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
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../ops.h"
#include "../../../core/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* struct backend_ctx (ops.h) is the CUDA context here: cuda_common.cuh defines it. */
struct stage_part; /* backend/backend.h */

/* Context on `device`: stream, cuBLAS and cuDNN handles. No device / a failing driver:
 * TIPC_ENOTBUILT with a message saying why (the GPU path is not available here). */
enum tipc_status cuda_ctx_create(struct backend_ctx **out, int device, bool tf32, bool cudnn_find);
void cuda_ctx_free(struct backend_ctx *cx);
/* cx's stream (a cudaStream_t) */
void *cuda_ctx_stream(struct backend_ctx *cx);
/* Number of usable devices; 0 with *why set (static string) when there is none. */
int cuda_device_count(const char **why);
/* "NVIDIA H100 80GB HBM3, sm_90, 132 SMs" */
void cuda_ctx_describe(const struct backend_ctx *cx, char *buf, size_t n);

/* CUDA Graphs: record the ops issued between begin and end (nothing runs), then replay them with
 * one launch. Between begin and end only ops on device buffers whose shapes ran before (so the
 * workspaces and cuDNN plans exist), no upload/download/sync/normalize_u8. A new capture
 * replaces the old one. */
void cuda_graph_begin(struct backend_ctx *cx);
/* End the capture into graph `id` (0..2); false (nothing instantiated, why set) when the capture
 * or its instantiation failed: the caller runs the work op by op instead. */
bool cuda_graph_end(struct backend_ctx *cx, int id, char *why, size_t n);
void cuda_graph_launch(struct backend_ctx *cx, int id);
/* Graph id exists and no workspace has moved since its capture (a bigger op elsewhere, e.g. an
 * eval batch, grew one): else it must be captured again before a launch. */
bool cuda_graph_valid(const struct backend_ctx *cx, int id);
/* The staged step's input slots (backend.h stage_put / stage_release; ctx_stage.cu) */
void cuda_stage_put(struct backend_ctx *cx, int k, void *dst, const struct stage_part *parts, int nparts);
void cuda_stage_release(struct backend_ctx *cx, int k);
void cuda_stage_free(struct backend_ctx *cx);

/* memory (device buffers of floats) */
float *cuda_alloc(struct backend_ctx *cx, size_t nfloats);            /* zeroed */
void cuda_free(struct backend_ctx *cx, float *p);
void cuda_zero(struct backend_ctx *cx, float *p, size_t nfloats);
void cuda_upload(struct backend_ctx *cx, float *dst, const float *host, size_t nfloats);   /* waits */
void cuda_download(struct backend_ctx *cx, float *host, const float *src, size_t nfloats); /* waits */
void cuda_sync(struct backend_ctx *cx);

/* the ops: the types of ops/ops.h (one signature each), asynchronous on cx's stream */
conv2d_forward_fn conv2d_forward_cuda;   /* scratch unused: the workspace is cx's */
conv2d_backward_fn conv2d_backward_cuda;
batchnorm_forward_fn batchnorm_forward_cuda;
batchnorm_backward_fn batchnorm_backward_cuda;
batchnorm_act_forward_fn batchnorm_act_forward_cuda;
batchnorm_act_backward_fn batchnorm_act_backward_cuda;
act_forward_fn act_forward_cuda;
act_backward_fn act_backward_cuda;
bias_act_forward_fn bias_act_forward_cuda;
softmax_forward_fn softmax_forward_cuda;
normalize_u8_fn normalize_u8_cuda;       /* the pixels: HOST memory, staged through pinned memory */
add_forward_fn add_forward_cuda;
add_backward_fn add_backward_cuda;
scale_forward_fn scale_forward_cuda;
scale_backward_fn scale_backward_cuda;
avgpool_forward_fn avgpool_forward_cuda;
avgpool_backward_fn avgpool_backward_cuda;
linear_forward_fn linear_forward_cuda;
linear_backward_fn linear_backward_cuda;
dropout_forward_fn dropout_forward_cuda;
dropout_backward_fn dropout_backward_cuda;
xent_forward_fn xent_forward_cuda;       /* labels: HOST; returns the loss on the host (waits) */
xent_backward_fn xent_backward_cuda;
sgd_step_fn sgd_step_cuda;
/* the staged step's variants (ops.h): per-step values read from device memory, nothing waits */
normalize_u8_fn normalize_u8_dev_cuda;   /* the pixels: DEVICE memory */
xent_forward_dev_fn xent_forward_dev_cuda;
xent_backward_fn xent_backward_dev_cuda; /* labels: DEVICE memory */
dropout_forward_dev_fn dropout_forward_dev_cuda;
sgd_step_dev_fn sgd_step_dev_cuda;
/* mixed precision training (sgd_amp.cu; state: the loss scaler's AMP_STATE_FLOATS floats, device
 * memory): nothing waits for the host, the skip decision stays on the device */
amp_round_fn amp_round_cuda;
amp_scale_fn amp_scale_cuda;
amp_unscale_check_fn amp_unscale_check_cuda;
sgd_step_amp_fn sgd_step_amp_cuda;
amp_update_fn amp_update_cuda;

/* ---- reduced-precision inference (engine/infer/infer_cuda.c): 16-bit activations and weights
 * (p: PREC_FP16 = IEEE binary16, PREC_BF16 = bfloat16; round to nearest even, as precision.h),
 * fp32 arithmetic and accumulation (cuBLAS CUBLAS_COMPUTE_32F, cuDNN fp32 convolutions), fp32
 * biases. `lp` buffers hold n 16-bit values (device memory, 2-byte aligned at least). */
void lp_from_f32_cuda(struct backend_ctx *cx, void *out, const float *in, size_t n, enum precision p);
void lp_to_f32_cuda(struct backend_ctx *cx, float *out, const void *in, size_t n, enum precision p);
/* conv2d_forward on lp tensors (act_lp.cu / conv2d_lp.cu); w (Cout, Cin/groups, K, K) in lp */
void conv2d_forward_lp_cuda(struct backend_ctx *cx, void *out, const void *in, const void *w,
                            const struct conv2d_desc *d, enum precision p);
/* out (N, Co) = in (N, Ci) . w^T (no bias); out is fp32 when out_f32 (the logits), else lp */
void linear_forward_lp_cuda(struct backend_ctx *cx, void *out, int out_f32, const void *in, const void *w, int N,
                            int Ci, int Co, enum precision p);
/* y (M, C) = act(y + b), b fp32 */
void bias_act_lp_cuda(struct backend_ctx *cx, void *y, const float *b, size_t M, int C, enum act_kind k,
                      enum precision p);
void act_lp_cuda(struct backend_ctx *cx, void *out, const void *in, size_t n, enum act_kind k, enum precision p);
void add_lp_cuda(struct backend_ctx *cx, void *out, const void *a, const void *b, size_t n, enum precision p);
void scale_lp_cuda(struct backend_ctx *cx, void *out, const void *x, const void *g, int N, int P, int C,
                   enum precision p);
void avgpool_lp_cuda(struct backend_ctx *cx, void *out, const void *in, int N, int P, int C, enum precision p);

#ifdef __cplusplus
}
#endif
#endif
