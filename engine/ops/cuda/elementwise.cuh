/* elementwise.cuh: what the elementwise CUDA kernels share: the activations and their
 * derivatives (the formulas and kinks of ops/cpu/simd.h's act_scalar / act_grad_scalar), the
 * BN affine written as the CPU writes it, and one vectorised grid-stride launcher.
 * ew_launch runs a functor over n elements: F::vec4(j) does elements 4j..4j+3 with float4
 * loads and stores (one 16-byte transaction per thread instead of four), F::one(i) element i.
 * The float4 path is taken only when the caller says every pointer the functor touches is
 * 16-byte aligned (and, where a per-channel vector is indexed, C % 4 == 0); the last n % 4
 * elements (and everything, when not aligned) go through one(). Nothing here decides per step
 * on the host beyond pointers and sizes, so a captured CUDA Graph replays the same kernels.
 * Not here: reductions (bn.cu, pool.cu, se.cu). */
#ifndef TIPC_ELEMENTWISE_CUH
#define TIPC_ELEMENTWISE_CUH

#include "cuda_common.cuh"

__device__ __forceinline__ float relu6f(float x) { return x < 0.0f ? 0.0f : (x > 6.0f ? 6.0f : x); }

template <int KIND> __device__ __forceinline__ float act_f(float x)
{
    if (KIND == ACT_RELU) return x > 0.0f ? x : 0.0f;
    if (KIND == ACT_HARDSWISH) return __fmul_rn(__fmul_rn(x, relu6f(x + 3.0f)), 1.0f / 6.0f);
    if (KIND == ACT_HARDSIGMOID) return relu6f(x + 3.0f) * (1.0f / 6.0f);
    return x;
}
/* d act / d x times g, at the forward input x (PyTorch's choices at the kinks) */
template <int KIND> __device__ __forceinline__ float act_df(float x, float g)
{
    if (KIND == ACT_RELU) return x > 0.0f ? g : 0.0f;
    if (KIND == ACT_HARDSWISH)
        return x < -3.0f ? 0.0f : (x <= 3.0f ? __fmul_rn(g, __fadd_rn(__fmul_rn(x, 1.0f / 3.0f), 0.5f)) : g);
    if (KIND == ACT_HARDSIGMOID) return (x > -3.0f && x < 3.0f) ? g * (1.0f / 6.0f) : 0.0f;
    return g;
}

/* x * scale + shift rounded twice, as the CPU (C11, no FMA contraction) computes it: forward
 * and the fused backward's recomputation then take an activation's kinks at the same inputs on
 * both backends. */
__device__ __forceinline__ float bn_affine_f(float x, float scale, float shift)
{
    return __fadd_rn(__fmul_rn(x, scale), shift);
}

__device__ __forceinline__ float4 ld4(const float *p, unsigned j) { return reinterpret_cast<const float4 *>(p)[j]; }
__device__ __forceinline__ void st4(float *p, unsigned j, float4 v) { reinterpret_cast<float4 *>(p)[j] = v; }

template <class F> __global__ void ew_kernel(F f, unsigned n, int vec)
{
    unsigned start = 0;
    if (vec) {
        unsigned n4 = n >> 2;
        GRID_STRIDE(j, n4) f.vec4(j);
        start = n4 << 2;
    }
    for (unsigned i = start + blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) f.one(i);
}

static inline bool aligned16(const void *p) { return ((uintptr_t)p & 15) == 0; }

/* Launch f over n elements on cx's stream; vec: the float4 path may be used (see above). */
template <class F> static void ew_launch(struct backend_ctx *cx, const F &f, size_t n, bool vec)
{
    if (!n) return;
    CUDA_REQUIRE(n < ((size_t)1 << 31), "a tensor of 2^31 or more elements");
    size_t work = vec ? n / 4 + 3 : n;
    ew_kernel<F><<<grid_for(work, LAUNCH1_THREADS, cx), LAUNCH1_THREADS, 0, cx->stream>>>(f, (unsigned)n, vec ? 1 : 0);
    LAUNCH_CHECK();
}

#endif
