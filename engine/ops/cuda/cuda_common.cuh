/* cuda_common.cuh: what every .cu file of engine/ops/cuda shares: the checked-call macros
 * (ggml's CUDA_CHECK_GEN: one helper, the statement text, the library's message, file:line),
 * struct backend_ctx (stream, cuDNN / cuBLAS handles, grow-only workspaces, the conv algorithm
 * cache) and small launch helpers. C++ (nvcc) only; C callers see ops_cuda.h.
 * Not here: the ops (one .cu per op family), the backend vtable (backend/backend_cuda.c). */
#ifndef TIPC_CUDA_COMMON_CUH
#define TIPC_CUDA_COMMON_CUH

#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <cudnn.h>
#include <stddef.h>
#include <stdint.h>

#include "ops_cuda.h"

/* Print `file:line: STMT failed: MESSAGE (library)` and die (exit TIPC_EINTERNAL, through the
 * replaceable die routine, so tests can trap it). Defined in ctx.cu. */
extern "C" void cuda_fail(const char *file, int line, const char *stmt, const char *lib, const char *msg);

#define CUDA_CHECK(stmt)                                                                    \
    do {                                                                                    \
        cudaError_t e_ = (stmt);                                                            \
        if (e_ != cudaSuccess) cuda_fail(__FILE__, __LINE__, #stmt, "cuda", cudaGetErrorString(e_)); \
    } while (0)
#define CUDNN_CHECK(stmt)                                                                   \
    do {                                                                                    \
        cudnnStatus_t e_ = (stmt);                                                          \
        if (e_ != CUDNN_STATUS_SUCCESS) cuda_fail(__FILE__, __LINE__, #stmt, "cudnn", cudnnGetErrorString(e_)); \
    } while (0)
#define CUBLAS_CHECK(stmt)                                                                  \
    do {                                                                                    \
        cublasStatus_t e_ = (stmt);                                                         \
        if (e_ != CUBLAS_STATUS_SUCCESS) cuda_fail(__FILE__, __LINE__, #stmt, "cublas", cublasGetStatusString(e_)); \
    } while (0)
/* After a kernel launch: launch-configuration errors surface here, not three ops later. */
#define LAUNCH_CHECK() CUDA_CHECK(cudaGetLastError())
/* Invariant on the host side of an op (bad shapes): same exit path. */
#define CUDA_REQUIRE(cond, what)                                                            \
    do {                                                                                    \
        if (!(cond)) cuda_fail(__FILE__, __LINE__, #cond, "tipc", what);                   \
    } while (0)

/* One cached cuDNN convolution (general path): descriptors and the algorithms picked for it. */
struct conv_plan {
    struct conv2d_desc d;
    int lp;                                /* enum precision of the tensors (PREC_FP32: float) */
    cudnnTensorDescriptor_t x, y;
    cudnnFilterDescriptor_t w;
    cudnnConvolutionDescriptor_t conv;
    int have_fwd, have_bwd;                /* algorithms found (forward / both backward) */
    cudnnConvolutionFwdAlgo_t fwd;
    cudnnConvolutionBwdDataAlgo_t bwd_data;
    cudnnConvolutionBwdFilterAlgo_t bwd_filter;
    cudnnMathType_t fwd_math, data_math, filter_math;
    size_t ws_fwd, ws_data, ws_filter;     /* bytes */
};

struct backend_ctx {
    int device;
    int sm_count;
    int tf32;                              /* backend_settings.tf32: TF32 tensor cores in cuBLAS/cuDNN */
    int find;                              /* cudnnFind (benchmark) vs cudnnGet (heuristics) */
    cudaStream_t stream;
    cublasHandle_t cublas;
    cudnnHandle_t cudnn;
    void *ws; size_t ws_bytes;             /* op workspace (cuDNN, transposed weights, partials) */
    void *red; size_t red_bytes;           /* reduction partials (BN, depthwise dw, loss) */
    float *coef; size_t coef_floats;       /* per-channel coefficients (BN scale/shift, k1..k3) */
    uint8_t *img; size_t img_bytes;        /* uint8 input batch on the device */
    uint8_t *img_host;                     /* (img_bytes) pinned staging of the batch */
    cudaEvent_t img_read;                  /* the last upload has read img_host */
    int32_t *labels; size_t label_cap;     /* labels of the last loss, on the device */
    double *loss;                          /* (1) the batch loss */
    struct conv_plan *plans; int nplans, cap_plans;
    void *cublas_ws;                       /* cuBLAS workspace: no allocation inside a graph capture */
    cudaGraphExec_t graphs[3];             /* captured work (cuda_graph_*) by id, NULL when none:
                                              0 inference, 1 and 2 the staged training step's slots */
    unsigned long ws_gen;                  /* bumped whenever a workspace above moves (grow) */
    unsigned long graph_gen[3];            /* ws_gen when each graph was captured */
    /* the staged step's input slots (ctx_stage.cu): pinned twins, copied on copy_stream */
    cudaStream_t copy_stream;
    uint8_t *stage_host[2]; size_t stage_host_bytes[2];
    cudaEvent_t stage_copied[2];           /* slot k's copy has finished (its twin is free again) */
    cudaEvent_t stage_read[2];             /* the work that reads slot k has finished */
};

/* Grow-only device buffers of the context (cudaMalloc only when a bigger one is needed: the
 * first step of a shape; later steps reuse them). The old contents are not kept. */
void *cuda_ws(struct backend_ctx *cx, size_t bytes);
void *cuda_red(struct backend_ctx *cx, size_t bytes);
float *cuda_coef(struct backend_ctx *cx, size_t floats);

/* Row-major GEMM as ops/cpu/gemm.c's gemm_cpu: C (M, N) = op(A) op(B) + beta C, through cuBLAS. */
void gemm_cuda(struct backend_ctx *cx, int ta, int tb, int M, int N, int K, const float *A, int lda, const float *B,
               int ldb, float beta, float *C, int ldc);

/* Blocks for a grid-stride loop over n items with `threads` per block (capped: the loop covers the
 * rest). n < 2^31: the loops index in 32 bits (64-bit division is a long instruction sequence, and
 * the kernels divide to find channels and pixels). */
static inline unsigned grid_for(size_t n, int threads, const struct backend_ctx *cx)
{
    CUDA_REQUIRE(n < ((size_t)1 << 31), "a tensor of 2^31 or more elements");
    size_t b = (n + (size_t)threads - 1) / (size_t)threads;
    size_t cap = (size_t)cx->sm_count * 32;
    if (b > cap) b = cap;
    return (unsigned)(b ? b : 1);
}

#define GRID_STRIDE(i, n) \
    for (unsigned i = blockIdx.x * blockDim.x + threadIdx.x; i < (n); i += gridDim.x * blockDim.x)

/* Launch an elementwise grid-stride kernel over n items on cx's stream (cx in scope), checked. */
#define LAUNCH1_THREADS 256
#define LAUNCH1(kern, n, ...)                                                               \
    do {                                                                                    \
        kern<<<grid_for((n), LAUNCH1_THREADS, cx), LAUNCH1_THREADS, 0, cx->stream>>>(__VA_ARGS__); \
        LAUNCH_CHECK();                                                                     \
    } while (0)

#endif
