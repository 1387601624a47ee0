/* act.cu: activations, the CUDA twins of ops/cpu/act.c: ReLU / hardswish / hardsigmoid
 * (forward, backward, and the inference bias+activation epilogue). Same formulas and kinks as
 * the CPU. Grid-stride loops (LAUNCH1). Not here: BN (bn.cu). */
#include <string.h>

#include "cuda_common.cuh"

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

extern "C" void act_forward_cuda(struct backend_ctx *cx, float *out, const float *in, size_t n, enum act_kind k)
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

extern "C" void act_backward_cuda(struct backend_ctx *cx, float *din, const float *dout, const float *in, size_t n,
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

extern "C" void bias_act_forward_cuda(struct backend_ctx *cx, float *y, const float *b, size_t M, int C, enum act_kind k)
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
