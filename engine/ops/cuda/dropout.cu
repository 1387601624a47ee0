/* dropout.cu: inverted dropout, CUDA twin of ops/cpu/dropout.c: the same mask bit for bit (the
 * same counter-based splitmix64 of seed and index). */
#include "cuda_common.cuh"
#include "../../../core/rng.h"   /* splitmix64_mix, host and device, as ops/cpu/dropout.c */

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
extern "C" void dropout_forward_cuda(struct backend_ctx *cx, float *out, float *mask, const float *in, size_t n, float p,
                                     uint64_t seed)
{
    CUDA_REQUIRE(p >= 0.0f && p < 1.0f, "dropout probability outside [0, 1)");
    if (n) LAUNCH1(dropout_forward_kernel, n, out, mask, in, n, p, 1.0f / (1.0f - p), splitmix64_mix(seed));
}
extern "C" void dropout_backward_cuda(struct backend_ctx *cx, float *din, const float *dout, const float *mask, size_t n,
                                      int acc)
{
    if (n && din) LAUNCH1(dropout_backward_kernel, n, din, dout, mask, n, acc);
}

/* the staged step's dropout (ops.h dropout_forward_dev): the seed read from device memory, mixed
 * on the device as the host mixes it above */
__global__ void dropout_forward_dev_kernel(float *out, float *mask, const float *in, size_t n, float p, float keep,
                                           const uint64_t *seed, uint64_t offset)
{
    uint64_t base = splitmix64_mix(*seed + offset);
    GRID_STRIDE(i, n) {
        float u = (float)(splitmix64_mix(base + 0x9e3779b97f4a7c15ULL * (i + 1)) >> 40) * (1.0f / 16777216.0f);
        float m = u < p ? 0.0f : keep;
        mask[i] = m;
        out[i] = in[i] * m;
    }
}
extern "C" void dropout_forward_dev_cuda(struct backend_ctx *cx, float *out, float *mask, const float *in, size_t n,
                                         float p, const uint64_t *seed, uint64_t offset)
{
    CUDA_REQUIRE(p >= 0.0f && p < 1.0f, "dropout probability outside [0, 1)");
    if (n) LAUNCH1(dropout_forward_dev_kernel, n, out, mask, in, n, p, 1.0f / (1.0f - p), seed, offset);
}
