/* ctx.cu: the CUDA context (device, stream, cuBLAS / cuDNN handles, grow-only workspaces),
 * device memory entry points and the checked-call failure path.
 * Not here: ops (the other .cu files), the backend vtable (backend/backend_cuda.c). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_common.cuh"
extern "C" {
#include "../../../core/check.h"
}

extern "C" void cuda_fail(const char *file, int line, const char *stmt, const char *lib, const char *msg)
{
    tipc_die_msg(TIPC_EINTERNAL, "tipc: error: %s:%d: %s failed: %s (%s)", file, line, stmt, msg, lib);
}

extern "C" int cuda_device_count(const char **why)
{
    int n = 0;
    cudaError_t e = cudaGetDeviceCount(&n);
    if (e != cudaSuccess) {
        cudaGetLastError(); /* clear the sticky error state of the runtime */
        *why = cudaGetErrorString(e);
        return 0;
    }
    if (n == 0) *why = "cudaGetDeviceCount found no device";
    return n;
}

/* Set-up failures are reported, not fatal: `--device gpu` on a machine whose driver or cuDNN is
 * broken must say so and exit 7 like a build without CUDA. */
#define INIT_TRY(stmt, msgfn)                                                                       \
    do {                                                                                            \
        auto e_ = (stmt);                                                                           \
        if ((int)e_ != 0) {                                                                         \
            error_msg(TIPC_ENOTBUILT, "device %d: %s failed: %s", device, #stmt, msgfn(e_));         \
            cuda_ctx_free(cx);                                                                      \
            return TIPC_ENOTBUILT;                                                                  \
        }                                                                                           \
    } while (0)

extern "C" enum tipc_status cuda_ctx_create(struct backend_ctx **out, int device, bool tf32, bool cudnn_find)
{
    *out = NULL;
    const char *why = "";
    int n = cuda_device_count(&why);
    if (n == 0) return error_msg(TIPC_ENOTBUILT, "no CUDA device (%s)", why);
    if (device < 0 || device >= n)
        return error_msg(TIPC_EUSAGE, "CUDA device %d does not exist (%d visible; check TIPC_DEVICE, LOCAL_RANK and "
                                      "CUDA_VISIBLE_DEVICES)", device, n);
    struct backend_ctx *cx = (struct backend_ctx *)xcalloc(1, sizeof *cx);
    cx->device = device;
    cx->tf32 = tf32;
    cx->find = cudnn_find;
    INIT_TRY(cudaSetDevice(device), cudaGetErrorString);
    cudaDeviceProp p;
    INIT_TRY(cudaGetDeviceProperties(&p, device), cudaGetErrorString);
    cx->sm_count = p.multiProcessorCount > 0 ? p.multiProcessorCount : 1;
    INIT_TRY(cudaStreamCreateWithFlags(&cx->stream, cudaStreamNonBlocking), cudaGetErrorString);
    INIT_TRY(cublasCreate(&cx->cublas), cublasGetStatusString);
    INIT_TRY(cublasSetStream(cx->cublas, cx->stream), cublasGetStatusString);
    INIT_TRY(cublasSetMathMode(cx->cublas, cx->tf32 ? CUBLAS_TF32_TENSOR_OP_MATH : CUBLAS_DEFAULT_MATH),
             cublasGetStatusString);
    /* 32 MiB, NVIDIA's advice for Hopper; ours, so that cuBLAS never allocates during a capture */
    INIT_TRY(cudaMalloc(&cx->cublas_ws, (size_t)32 << 20), cudaGetErrorString);
    INIT_TRY(cublasSetWorkspace(cx->cublas, cx->cublas_ws, (size_t)32 << 20), cublasGetStatusString);
    INIT_TRY(cudnnCreate(&cx->cudnn), cudnnGetErrorString);
    INIT_TRY(cudnnSetStream(cx->cudnn, cx->stream), cudnnGetErrorString);
    INIT_TRY(cudaMalloc((void **)&cx->loss, sizeof(double)), cudaGetErrorString);
    INIT_TRY(cudaEventCreateWithFlags(&cx->img_read, cudaEventDisableTiming), cudaGetErrorString);
    *out = cx;
    return TIPC_OK;
}

extern "C" void cuda_ctx_free(struct backend_ctx *cx)
{
    if (!cx) return;
    if (cx->stream) cudaStreamSynchronize(cx->stream);
    for (int i = 0; i < cx->nplans; i++) {
        struct conv_plan *pl = &cx->plans[i];
        cudnnDestroyTensorDescriptor(pl->x);
        cudnnDestroyTensorDescriptor(pl->y);
        cudnnDestroyFilterDescriptor(pl->w);
        cudnnDestroyConvolutionDescriptor(pl->conv);
    }
    free(cx->plans);
    for (int i = 0; i < 3; i++)
        if (cx->graphs[i]) cudaGraphExecDestroy(cx->graphs[i]);
    cuda_stage_free(cx);
    cudaFree(cx->cublas_ws);
    cudaFree(cx->ws);
    cudaFree(cx->red);
    cudaFree(cx->coef);
    cudaFree(cx->img);
    cudaFreeHost(cx->img_host);
    if (cx->img_read) cudaEventDestroy(cx->img_read);
    cudaFree(cx->labels);
    cudaFree(cx->loss);
    if (cx->cudnn) cudnnDestroy(cx->cudnn);
    if (cx->cublas) cublasDestroy(cx->cublas);
    if (cx->stream) cudaStreamDestroy(cx->stream);
    free(cx);
}

extern "C" void cuda_ctx_describe(const struct backend_ctx *cx, char *buf, size_t n)
{
    cudaDeviceProp p;
    CUDA_CHECK(cudaGetDeviceProperties(&p, cx->device));
    snprintf(buf, n, "%s, sm_%d%d, %d SMs, %.1f GiB, TF32 %s", p.name, p.major, p.minor, p.multiProcessorCount,
             (double)p.totalGlobalMem / (1 << 30), cx->tf32 ? "on" : "off");
}

/* Grow *buf to at least `bytes` (25% headroom). The stream is drained first: queued kernels may
 * still read the old buffer. */
static void *grow(struct backend_ctx *cx, void **buf, size_t *have, size_t bytes)
{
    if (bytes <= *have && *buf) return *buf;
    CUDA_CHECK(cudaStreamSynchronize(cx->stream));
    CUDA_CHECK(cudaFree(*buf));
    *buf = NULL;
    size_t want = bytes + bytes / 4 + 256;
    CUDA_CHECK(cudaMalloc(buf, want));
    *have = want;
    cx->ws_gen++; /* graphs captured before hold the old address (cuda_graph_valid) */
    return *buf;
}
void *cuda_ws(struct backend_ctx *cx, size_t bytes) { return grow(cx, &cx->ws, &cx->ws_bytes, bytes); }
void *cuda_red(struct backend_ctx *cx, size_t bytes) { return grow(cx, &cx->red, &cx->red_bytes, bytes); }
float *cuda_coef(struct backend_ctx *cx, size_t floats)
{
    size_t bytes = cx->coef_floats * sizeof(float);
    float *p = (float *)grow(cx, (void **)&cx->coef, &bytes, floats * sizeof(float));
    cx->coef_floats = bytes / sizeof(float);
    return p;
}

extern "C" float *cuda_alloc(struct backend_ctx *cx, size_t n)
{
    void *p = NULL;
    size_t bytes = (n ? n : 1) * sizeof(float);
    CUDA_CHECK(cudaMalloc(&p, bytes));
    CUDA_CHECK(cudaMemsetAsync(p, 0, bytes, cx->stream));
    return (float *)p;
}
extern "C" void cuda_free(struct backend_ctx *cx, float *p)
{
    CUDA_CHECK(cudaStreamSynchronize(cx->stream));
    CUDA_CHECK(cudaFree(p));
}
extern "C" void cuda_zero(struct backend_ctx *cx, float *p, size_t n)
{
    if (n) CUDA_CHECK(cudaMemsetAsync(p, 0, n * sizeof(float), cx->stream));
}
extern "C" void cuda_upload(struct backend_ctx *cx, float *dst, const float *host, size_t n)
{
    if (!n) return;
    CUDA_CHECK(cudaMemcpyAsync(dst, host, n * sizeof(float), cudaMemcpyHostToDevice, cx->stream));
    CUDA_CHECK(cudaStreamSynchronize(cx->stream));
}
extern "C" void cuda_download(struct backend_ctx *cx, float *host, const float *src, size_t n)
{
    if (!n) return;
    CUDA_CHECK(cudaMemcpyAsync(host, src, n * sizeof(float), cudaMemcpyDeviceToHost, cx->stream));
    CUDA_CHECK(cudaStreamSynchronize(cx->stream));
}
extern "C" void cuda_sync(struct backend_ctx *cx) { CUDA_CHECK(cudaStreamSynchronize(cx->stream)); }
extern "C" void *cuda_ctx_stream(struct backend_ctx *cx) { return cx->stream; }

extern "C" void cuda_graph_begin(struct backend_ctx *cx)
{
    CUDA_CHECK(cudaStreamSynchronize(cx->stream));
    /* thread-local: the loader's threads may touch the CUDA runtime meanwhile */
    CUDA_CHECK(cudaStreamBeginCapture(cx->stream, cudaStreamCaptureModeThreadLocal));
}
extern "C" bool cuda_graph_end(struct backend_ctx *cx, int id, char *why, size_t n)
{
    CUDA_REQUIRE(id >= 0 && id < 3, "graph id out of range");
    cudaGraph_t g = NULL;
    cudaError_t e = cudaStreamEndCapture(cx->stream, &g);
    if (cx->graphs[id]) CUDA_CHECK(cudaGraphExecDestroy(cx->graphs[id]));
    cx->graphs[id] = NULL;
    if (e == cudaSuccess) e = cudaGraphInstantiate(&cx->graphs[id], g, 0);
    if (g) cudaGraphDestroy(g);
    cx->graph_gen[id] = cx->ws_gen;
    if (e != cudaSuccess) {
        cx->graphs[id] = NULL;
        snprintf(why, n, "%s", cudaGetErrorString(e));
        cudaGetLastError(); /* a failed capture is reported here, not by the next op's check */
        return false;
    }
    return true;
}
extern "C" void cuda_graph_launch(struct backend_ctx *cx, int id)
{
    CUDA_REQUIRE(id >= 0 && id < 3 && cx->graphs[id] != NULL, "no captured graph to launch");
    CUDA_CHECK(cudaGraphLaunch(cx->graphs[id], cx->stream));
}
extern "C" bool cuda_graph_valid(const struct backend_ctx *cx, int id)
{
    return id >= 0 && id < 3 && cx->graphs[id] && cx->graph_gen[id] == cx->ws_gen;
}
