/* act.cu: elementwise ops, the CUDA twins of ops/cpu/act.c: ReLU / hardswish / hardsigmoid
 * (forward, backward, and the inference bias+activation epilogue), residual add, inverted
 * dropout, uint8 input normalisation, and the momentum SGD update (one kernel over the whole
 * contiguous parameter buffer). Same formulas and kinks as the CPU; dropout draws the same mask
 * bit for bit (the same counter-based splitmix64 of seed and index).
 * Grid-stride loops, 256 threads. Not here: channel reductions (se.cu, bn.cu). */
#include <string.h>

#include "cuda_common.cuh"
#include "../../../core/rng.h"

__device__ __forceinline__ float relu6f(float x) { return x < 0.0f ? 0.0f : (x > 6.0f ? 6.0f : x); }

template <int KIND> __device__ __forceinline__ float act_f(float x)
{
    if (KIND == ACT_RELU) return x > 0.0f ? x : 0.0f;
    if (KIND == ACT_HARDSWISH) return x * relu6f(x + 3.0f) * (1.0f / 6.0f);
    if (KIND == ACT_HARDSIGMOID) return relu6f(x + 3.0f) * (1.0f / 6.0f);
    return x;
}
/* d act / d x times g, at the forward input x (PyTorch's choices at the kinks) */
template <int KIND> __device__ __forceinline__ float act_df(float x, float g)
{
    if (KIND == ACT_RELU) return x > 0.0f ? g : 0.0f;
    if (KIND == ACT_HARDSWISH) return x < -3.0f ? 0.0f : (x <= 3.0f ? g * (x * (1.0f / 3.0f) + 0.5f) : g);
    if (KIND == ACT_HARDSIGMOID) return (x > -3.0f && x < 3.0f) ? g * (1.0f / 6.0f) : 0.0f;
    return g;
}

template <int KIND> __global__ void act_forward_kernel(float *out, const float *in, size_t n)
{
    GRID_STRIDE(i, n) out[i] = act_f<KIND>(in[i]);
}
template <int KIND> __global__ void act_backward_kernel(float *din, const float *dout, const float *in, size_t n, int acc)
{
    GRID_STRIDE(i, n) {
        float v = act_df<KIND>(in[i], dout[i]);
        din[i] = acc ? din[i] + v : v;
    }
}
template <int KIND> __global__ void bias_act_kernel(float *y, const float *b, size_t n, int C)
{
    GRID_STRIDE(i, n) y[i] = act_f<KIND>(y[i] + b[i % (unsigned)C]);
}

#define THREADS 256
#define LAUNCH1(kern, n, ...)                                                               \
    do {                                                                                    \
        kern<<<grid_for((n), THREADS, cx), THREADS, 0, cx->stream>>>(__VA_ARGS__);          \
        LAUNCH_CHECK();                                                                     \
    } while (0)

extern "C" void act_forward_cuda(struct cuda_ctx *cx, float *out, const float *in, size_t n, enum act_kind k)
{
    if (!n) return;
    switch (k) {
    case ACT_NONE:
        if (out != in) CUDA_CHECK(cudaMemcpyAsync(out, in, n * sizeof(float), cudaMemcpyDeviceToDevice, cx->stream));
        break;
    case ACT_RELU: LAUNCH1(act_forward_kernel<ACT_RELU>, n, out, in, n); break;
    case ACT_HARDSWISH: LAUNCH1(act_forward_kernel<ACT_HARDSWISH>, n, out, in, n); break;
    case ACT_HARDSIGMOID: LAUNCH1(act_forward_kernel<ACT_HARDSIGMOID>, n, out, in, n); break;
    }
}

extern "C" void act_backward_cuda(struct cuda_ctx *cx, float *din, const float *dout, const float *in, size_t n,
                                  enum act_kind k, int acc)
{
    if (!n || !din) return;
    switch (k) {
    case ACT_NONE: LAUNCH1(act_backward_kernel<ACT_NONE>, n, din, dout, in, n, acc); break;
    case ACT_RELU: LAUNCH1(act_backward_kernel<ACT_RELU>, n, din, dout, in, n, acc); break;
    case ACT_HARDSWISH: LAUNCH1(act_backward_kernel<ACT_HARDSWISH>, n, din, dout, in, n, acc); break;
    case ACT_HARDSIGMOID: LAUNCH1(act_backward_kernel<ACT_HARDSIGMOID>, n, din, dout, in, n, acc); break;
    }
}

extern "C" void bias_act_forward_cuda(struct cuda_ctx *cx, float *y, const float *b, size_t M, int C, enum act_kind k)
{
    size_t n = M * (size_t)C;
    if (!n) return;
    switch (k) {
    case ACT_NONE: LAUNCH1(bias_act_kernel<ACT_NONE>, n, y, b, n, C); break;
    case ACT_RELU: LAUNCH1(bias_act_kernel<ACT_RELU>, n, y, b, n, C); break;
    case ACT_HARDSWISH: LAUNCH1(bias_act_kernel<ACT_HARDSWISH>, n, y, b, n, C); break;
    case ACT_HARDSIGMOID: LAUNCH1(bias_act_kernel<ACT_HARDSIGMOID>, n, y, b, n, C); break;
    }
}

__global__ void add_forward_kernel(float *out, const float *a, const float *b, size_t n)
{
    GRID_STRIDE(i, n) out[i] = a[i] + b[i];
}
__global__ void add_backward_kernel(float *da, float *db, const float *dout, size_t n, int acc_a, int acc_b)
{
    GRID_STRIDE(i, n) {
        float g = dout[i];
        da[i] = acc_a ? da[i] + g : g;
        db[i] = acc_b ? db[i] + g : g;
    }
}
extern "C" void add_forward_cuda(struct cuda_ctx *cx, float *out, const float *a, const float *b, size_t n)
{
    if (n) LAUNCH1(add_forward_kernel, n, out, a, b, n);
}
extern "C" void add_backward_cuda(struct cuda_ctx *cx, float *da, float *db, const float *dout, size_t n, int acc_a,
                                  int acc_b)
{
    if (n) LAUNCH1(add_backward_kernel, n, da, db, dout, n, acc_a, acc_b);
}

__global__ void dropout_forward_kernel(float *out, float *mask, const float *in, size_t n, float p, float keep,
                                       uint64_t base)
{
    GRID_STRIDE(i, n) {
        float u = (float)(splitmix64_mix(base + 0x9e3779b97f4a7c15ULL * (i + 1)) >> 40) * (1.0f / 16777216.0f);
        float m = u < p ? 0.0f : keep;
        mask[i] = m;
        out[i] = in[i] * m;
    }
}
__global__ void dropout_backward_kernel(float *din, const float *dout, const float *mask, size_t n, int acc)
{
    GRID_STRIDE(i, n) {
        float v = dout[i] * mask[i];
        din[i] = acc ? din[i] + v : v;
    }
}
extern "C" void dropout_forward_cuda(struct cuda_ctx *cx, float *out, float *mask, const float *in, size_t n, float p,
                                     uint64_t seed)
{
    CUDA_REQUIRE(p >= 0.0f && p < 1.0f, "dropout probability outside [0, 1)");
    if (n) LAUNCH1(dropout_forward_kernel, n, out, mask, in, n, p, 1.0f / (1.0f - p), splitmix64_mix(seed));
}
extern "C" void dropout_backward_cuda(struct cuda_ctx *cx, float *din, const float *dout, const float *mask, size_t n,
                                      int acc)
{
    if (n && din) LAUNCH1(dropout_backward_kernel, n, din, dout, mask, n, acc);
}

/* (x/255 - mean) / std with ImageNet statistics; __fmul_rn/__fsub_rn/__fdiv_rn keep the CPU's
 * rounding (no FMA contraction), so the input matches the CPU's bit for bit. */
__global__ void normalize_u8_kernel(float *out, const uint8_t *in, size_t n)
{
    GRID_STRIDE(i, n) {
        int c = (int)(i % 3);
        float mean = c == 0 ? 0.485f : (c == 1 ? 0.456f : 0.406f);
        float sd = c == 0 ? 0.229f : (c == 1 ? 0.224f : 0.225f);
        out[i] = __fdiv_rn(__fsub_rn(__fmul_rn((float)in[i], 1.0f / 255.0f), mean), sd);
    }
}
/* The batch goes through a pinned buffer: a copy from pageable memory would first wait for all the
 * queued work of the stream; this waits only until the previous batch's upload has read the
 * buffer (the event), so the host can stage the next batch while the GPU computes. */
extern "C" void normalize_u8_cuda(struct cuda_ctx *cx, float *out, const uint8_t *host_images, size_t npix)
{
    size_t n = npix * 3;
    if (!n) return;
    if (n > cx->img_bytes) {
        CUDA_CHECK(cudaStreamSynchronize(cx->stream));
        CUDA_CHECK(cudaFree(cx->img));
        CUDA_CHECK(cudaFreeHost(cx->img_host));
        cx->img = NULL, cx->img_host = NULL, cx->img_bytes = 0;
        CUDA_CHECK(cudaMalloc((void **)&cx->img, n));
        CUDA_CHECK(cudaMallocHost((void **)&cx->img_host, n));
        cx->img_bytes = n;
    }
    CUDA_CHECK(cudaEventSynchronize(cx->img_read));
    memcpy(cx->img_host, host_images, n);
    CUDA_CHECK(cudaMemcpyAsync(cx->img, cx->img_host, n, cudaMemcpyHostToDevice, cx->stream));
    CUDA_CHECK(cudaEventRecord(cx->img_read, cx->stream));
    LAUNCH1(normalize_u8_kernel, n, out, cx->img, n);
}

/* g' = g + wd*p; m = mu*m + g'; p -= lr*m (PyTorch SGD, dampening 0, not Nesterov) */
__global__ void sgd_kernel(float *p, float *m, const float *g, size_t n, float lr, float mu, float wd)
{
    GRID_STRIDE(i, n) {
        float d = g[i] + wd * p[i];
        float v = mu * m[i] + d;
        m[i] = v;
        p[i] -= lr * v;
    }
}
extern "C" void sgd_step_cuda(struct cuda_ctx *cx, float *p, float *m, const float *g, size_t n, float lr, float mu,
                              float wd)
{
    if (n) LAUNCH1(sgd_kernel, n, p, m, g, n, lr, mu, wd);
}
