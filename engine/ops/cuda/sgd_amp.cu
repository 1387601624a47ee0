/* sgd_amp.cu: the mixed precision side of the training step on the GPU, the CUDA twins of
 * ops/cpu/sgd_amp.c (the design is ops/precision.h's): rounding buffers to bf16/fp16, the loss
 * scale, the fused unscale + finite check, the skippable SGD step and the scaler's update.
 * The scaler's state (AMP_STATE_FLOATS floats) is device memory: the scale, the skip decision,
 * backoff and growth are read and written by kernels on the stream, so a training step never
 * waits for the host and the same launches replay from a CUDA Graph whatever the step found
 * (the only host values are the sizes, pointers and the loss_scaler's constant settings).
 * Rounding is bit-identical to precision.h's scalar reference (__float2bfloat16_rn and
 * __float2half_rn are round-to-nearest-even with the same inf/subnormal behaviour; NaN stays NaN).
 * Elementwise kernels use elementwise.cuh's float4 launcher (scalar tails). */
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "elementwise.cuh"

template <int P> __device__ __forceinline__ float round_p(float x)
{
    if (P == PREC_BF16) return __bfloat162float(__float2bfloat16_rn(x));
    if (P == PREC_FP16) return __half2float(__float2half_rn(x));
    return x;
}

/* out = round_p(in * mul), mul = 1 or state[AMP_SCALE] (read on the device) */
template <int P, int SCALED> struct round_fn {
    float *out;
    const float *in, *state;
    __device__ float mul() const { return SCALED ? state[AMP_SCALE] : 1.0f; }
    __device__ float f(float x, float m) const { return round_p<P>(SCALED ? __fmul_rn(x, m) : x); }
    __device__ void one(unsigned i) const { out[i] = f(in[i], mul()); }
    __device__ void vec4(unsigned j) const
    {
        float m = mul();
        float4 v = ld4(in, j);
        st4(out, j, make_float4(f(v.x, m), f(v.y, m), f(v.z, m), f(v.w, m)));
    }
};

template <int SCALED> static void round_launch(struct backend_ctx *cx, float *out, const float *in, size_t n,
                                               const float *state, enum precision p)
{
    bool vec = aligned16(out) && aligned16(in);
    switch (p) {
    case PREC_BF16: ew_launch(cx, round_fn<PREC_BF16, SCALED>{out, in, state}, n, vec); break;
    case PREC_FP16: ew_launch(cx, round_fn<PREC_FP16, SCALED>{out, in, state}, n, vec); break;
    case PREC_FP32: ew_launch(cx, round_fn<PREC_FP32, SCALED>{out, in, state}, n, vec); break;
    }
}

extern "C" void amp_round_cuda(struct backend_ctx *cx, float *out, const float *in, size_t n, enum precision p)
{
    if (!n) return;
    if (p == PREC_FP32) {
        if (out != in) CUDA_CHECK(cudaMemcpyAsync(out, in, n * sizeof(float), cudaMemcpyDeviceToDevice, cx->stream));
        return;
    }
    round_launch<0>(cx, out, in, n, NULL, p);
}

extern "C" void amp_scale_cuda(struct backend_ctx *cx, float *x, size_t n, const float *state, enum precision p)
{
    if (n) round_launch<1>(cx, x, x, n, state, p);
}

/* g *= 1/scale and one flag for the whole buffer: each warp votes, one lane stores 1.0f into a
 * flag cleared just before (all writers store the same value, so no atomics are needed). */
__device__ __forceinline__ bool nonfinite(float v) { return (__float_as_uint(v) & 0x7f800000u) == 0x7f800000u; }

__global__ void unscale_check_kernel(float *g, unsigned n, float *state, int vec)
{
    float inv = 1.0f / state[AMP_SCALE];
    bool bad = false;
    unsigned start = 0;
    if (vec) {
        unsigned n4 = n >> 2;
        GRID_STRIDE(j, n4) {
            float4 v = ld4(g, j);
            v = make_float4(v.x * inv, v.y * inv, v.z * inv, v.w * inv);
            bad |= nonfinite(v.x) | nonfinite(v.y) | nonfinite(v.z) | nonfinite(v.w);
            st4(g, j, v);
        }
        start = n4 << 2;
    }
    for (unsigned i = start + blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
        float v = g[i] * inv;
        bad |= nonfinite(v);
        g[i] = v;
    }
    if (__any_sync(0xffffffffu, bad) && (threadIdx.x & 31) == 0) state[AMP_FOUND_INF] = 1.0f;
}

extern "C" void amp_unscale_check_cuda(struct backend_ctx *cx, float *g, size_t n, float *state)
{
    CUDA_CHECK(cudaMemsetAsync(state + AMP_FOUND_INF, 0, sizeof(float), cx->stream)); /* 0.0f */
    if (!n) return;
    CUDA_REQUIRE(n < ((size_t)1 << 31), "a tensor of 2^31 or more elements");
    bool vec = aligned16(g);
    size_t work = vec ? n / 4 + 3 : n;
    unscale_check_kernel<<<grid_for(work, LAUNCH1_THREADS, cx), LAUNCH1_THREADS, 0, cx->stream>>>(
        g, (unsigned)n, state, vec ? 1 : 0);
    LAUNCH_CHECK();
}

/* sgd_step's update (sgd.cu's formula), skipped as a whole when the unscale found a non-finite
 * gradient: every thread reads the flag, so the decision costs no launch and no host round trip */
struct sgd_amp_fn {
    float *p, *m;
    const float *g, *state;
    float lr, mu, wd;
    __device__ void upd(float &pp, float &mm, float gg) const
    {
        float d = gg + wd * pp;
        mm = mu * mm + d;
        pp -= lr * mm;
    }
    __device__ void one(unsigned i) const
    {
        if (state[AMP_FOUND_INF] != 0.0f) return;
        float pp = p[i], mm = m[i];
        upd(pp, mm, g[i]);
        p[i] = pp, m[i] = mm;
    }
    __device__ void vec4(unsigned j) const
    {
        if (state[AMP_FOUND_INF] != 0.0f) return;
        float4 pp = ld4(p, j), mm = ld4(m, j), gg = ld4(g, j);
        upd(pp.x, mm.x, gg.x), upd(pp.y, mm.y, gg.y), upd(pp.z, mm.z, gg.z), upd(pp.w, mm.w, gg.w);
        st4(p, j, pp);
        st4(m, j, mm);
    }
};

extern "C" void sgd_step_amp_cuda(struct backend_ctx *cx, float *p, float *m, const float *g, size_t n, float lr,
                                  float mu, float wd, const float *state)
{
    ew_launch(cx, sgd_amp_fn{p, m, g, state, lr, mu, wd}, n, aligned16(p) && aligned16(m) && aligned16(g));
}

/* one thread: precision.h's amp_state_update, the one definition of backoff and growth */
__global__ void amp_update_kernel(float *state, float growth, float backoff, int interval, int dynamic)
{
    amp_state_update(state, growth, backoff, interval, dynamic != 0);
}

extern "C" void amp_update_cuda(struct backend_ctx *cx, float *state, const struct loss_scaler *ls)
{
    amp_update_kernel<<<1, 1, 0, cx->stream>>>(state, ls->growth_factor, ls->backoff_factor, ls->growth_interval,
                                               ls->dynamic ? 1 : 0);
    LAUNCH_CHECK();
}
