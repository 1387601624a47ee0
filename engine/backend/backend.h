/* backend.h: struct backend_ops, the one place where CPU vs CUDA is chosen (ggml's backend
 * vtable, nccl-tests' struct testColl). net.c calls ops only through it, so the model and its
 * forward/backward walker are written once. Each entry mirrors the op of the same name in
 * ops/ops.h with the backend context first (NULL for the CPU). Buffers passed in live in the
 * backend's memory (alloc/upload/download move them). Not here: which ops exist (ops.h). */
#ifndef TIPC_BACKEND_H
#define TIPC_BACKEND_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../ops/ops.h"
#include "../../core/status.h"

struct backend_ops {
    const char *name; /* "cpu", "cuda" */
    /* memory */
    float *(*alloc)(void *ctx, size_t nfloats);                 /* zeroed */
    void (*free)(void *ctx, float *p);
    void (*zero)(void *ctx, float *p, size_t nfloats);
    void (*upload)(void *ctx, float *dst, const float *host, size_t nfloats);
    void (*download)(void *ctx, float *host, const float *src, size_t nfloats);
    void (*sync)(void *ctx);
    /* ops */
    void (*conv2d_forward)(void *ctx, float *out, const float *in, const float *w,
                           const struct conv2d_desc *d, float *scratch);
    void (*conv2d_backward)(void *ctx, float *din, float *dw, const float *dout, const float *in,
                            const float *w, const struct conv2d_desc *d, float *scratch, int acc);
    void (*batchnorm_forward)(void *ctx, float *out, float *save_mean, float *save_rstd, const float *in,
                              const float *gamma, const float *beta, float *run_mean, float *run_var,
                              const struct bn_desc *d);
    void (*batchnorm_backward)(void *ctx, float *din, float *dgamma, float *dbeta, const float *dout,
                               const float *in, const float *save_mean, const float *save_rstd,
                               const float *gamma, const float *run_var, const struct bn_desc *d, int acc);
    /* optional (NULL: the net runs a BN and the activation after it as two ops) */
    void (*batchnorm_act_forward)(void *ctx, float *out, float *save_mean, float *save_rstd, const float *in,
                                  const float *gamma, const float *beta, float *run_mean, float *run_var,
                                  const struct bn_desc *d, enum act_kind act);
    void (*batchnorm_act_backward)(void *ctx, float *din, float *dgamma, float *dbeta, const float *dout,
                                   const float *in, const float *save_mean, const float *save_rstd,
                                   const float *gamma, const float *beta, const float *run_var,
                                   const struct bn_desc *d, int acc, enum act_kind act);
    void (*act_forward)(void *ctx, float *out, const float *in, size_t n, enum act_kind k);
    void (*act_backward)(void *ctx, float *din, const float *dout, const float *in, size_t n,
                         enum act_kind k, int acc);
    void (*bias_act_forward)(void *ctx, float *y, const float *b, size_t M, int C, enum act_kind k);
    void (*softmax_forward)(void *ctx, float *out, const float *in, int N, int K);
    /* host uint8 images (npix, 3) -> normalised floats in backend memory */
    void (*normalize_u8)(void *ctx, float *out, const uint8_t *host_images, size_t npix);
    void (*add_forward)(void *ctx, float *out, const float *a, const float *b, size_t n);
    void (*add_backward)(void *ctx, float *da, float *db, const float *dout, size_t n, int acc_a, int acc_b);
    void (*scale_forward)(void *ctx, float *out, const float *x, const float *g, int N, int P, int C);
    void (*scale_backward)(void *ctx, float *dx, float *dg, const float *dout, const float *x,
                           const float *g, int N, int P, int C, int acc_x, int acc_g);
    void (*avgpool_forward)(void *ctx, float *out, const float *in, int N, int P, int C);
    void (*avgpool_backward)(void *ctx, float *din, const float *dout, int N, int P, int C, int acc);
    void (*linear_forward)(void *ctx, float *out, const float *in, const float *w, const float *b, int N,
                           int Ci, int Co);
    void (*linear_backward)(void *ctx, float *din, float *dw, float *db, const float *dout,
                            const float *in, const float *w, int N, int Ci, int Co, int acc);
    void (*dropout_forward)(void *ctx, float *out, float *mask, const float *in, size_t n, float p,
                            uint64_t seed);
    void (*dropout_backward)(void *ctx, float *din, const float *dout, const float *mask, size_t n, int acc);
    /* loss: logits/probs on the device, labels on the host; returns the mean loss on the host */
    float (*xent_forward)(void *ctx, float *probs, const float *logits, const int32_t *labels, int N, int K,
                          float eps);
    void (*xent_backward)(void *ctx, float *dlogits, const float *probs, const int32_t *labels, int N,
                          int K, float eps);
    void (*sgd_step)(void *ctx, float *p, float *m, const float *g, size_t n, float lr, float mu,
                     float wd);
};

/* A backend in use: its ops and its context (cuDNN handles, streams...; NULL on the CPU). */
struct backend {
    const struct backend_ops *ops;
    void *ctx;
};

extern const struct backend_ops backend_cpu_ops;

/* Set the CPU thread count (OpenMP and OpenBLAS); threads <= 0 keeps the default. */
void backend_cpu_set_threads(int threads);

/* OpenBLAS picks its kernels once, when it loads, from OPENBLAS_CORETYPE or CPU detection;
 * in some VMs detection falls back to the SSE3 "Prescott" kernels (3x slower sgemm here).
 * When that happened on a CPU with AVX2+FMA and the variable is unset, set
 * OPENBLAS_CORETYPE=Haswell; likewise GOMP_SPINCOUNT=10000 when neither it nor
 * OMP_WAIT_POLICY is set (libgomp's long default spin is pathological on a loaded machine).
 * Both are read only at start-up, so this re-executes the process once (/proc/self/exe, same
 * argv, TIPC_BLAS_REEXEC=1 marks it). Call it first thing in an engine command; it returns
 * normally when nothing needs doing or exec fails. */
void backend_cpu_fix_blas(void);

/* Open the backend for a device name: "cpu", or "gpu" / "cuda" (the CUDA backend on
 * backend_device_from_env()'s device, described on stdout unless quiet). CPU: always OK.
 * GPU: TIPC_ENOTBUILT (exit 7) with a message saying why when this tipc was built without CUDA
 * ("rebuild with USE_CUDA=1") or the machine has no usable device; TIPC_EUSAGE for another name.
 * backend_close() releases what backend_open() made (a zeroed backend is fine). */
enum tipc_status backend_open(struct backend *b, const char *device, int quiet);
void backend_close(struct backend *b);
bool backend_is_cpu(const struct backend *b);
/* The CUDA device of this process: TIPC_DEVICE (set by `tipc launch` from --gpus), else
 * FLAGS_selected_gpus, else LOCAL_RANK, else 0; indexes the devices CUDA_VISIBLE_DEVICES shows. */
int backend_device_from_env(void);

/* The CUDA backend (backend_cuda.c): ctx is a struct cuda_ctx (stream, cuBLAS / cuDNN handles,
 * workspaces; engine/ops/cuda). Every CUDA, cuDNN and cuBLAS call inside an op is checked: a
 * failure prints `file:line: CALL failed: MESSAGE (library)` and exits 70 (TIPC_EINTERNAL)
 * through the die routine. In builds without CUDA, backend_cuda_init() returns TIPC_ENOTBUILT. */
enum tipc_status backend_cuda_init(struct backend *b, int device);
void backend_cuda_free(struct backend *b);
/* CUDA Graphs (cuda_graph_* in ops/cuda/ops_cuda.h): capture the ops issued between begin and
 * end once (after a warm-up pass of the same shapes), replay them with one launch. begin returns
 * false (and end/launch do nothing) on the CPU. */
bool backend_graph_begin(struct backend *b);
void backend_graph_end(struct backend *b);
void backend_graph_launch(struct backend *b);
/* "cuda:0 (NVIDIA H100 80GB HBM3, sm_90, 132 SMs, 79.1 GiB, TF32 off)" */
void backend_cuda_describe(const struct backend *b, char *buf, size_t n);
#ifdef TIPC_HAVE_CUDA
extern const struct backend_ops backend_cuda_ops;
#endif

#endif
