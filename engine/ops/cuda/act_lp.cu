/* act_lp.cu: the elementwise and pooling kernels of the reduced-precision (fp16 / bf16) inference
 * pass (engine/infer/infer_cuda.c): conversions from and to fp32, bias + activation, activation,
 * residual add, squeeze-excite scale and global average pool, on 16-bit activations (lp.cuh)
 * with fp32 arithmetic and one rounding per stored value; biases stay fp32. The formulas are
 * those of the fp32 ops (elementwise.cuh, pool.cu). Not here: convs and GEMMs (conv2d_lp.cu). */
#include "elementwise.cuh"
#include "lp.cuh"

template <typename T> __global__ void lp_from_f32_kernel(T *out, const float *in, unsigned n)
{
    GRID_STRIDE(i, n) out[i] = lp_from<T>(in[i]);
}
template <typename T> __global__ void lp_to_f32_kernel(float *out, const T *in, unsigned n)
{
    GRID_STRIDE(i, n) out[i] = lp_f(in[i]);
}
template <typename T, int K> __global__ void bias_act_lp_kernel(T *y, const float *b, unsigned n, unsigned C)
{
    GRID_STRIDE(i, n) y[i] = lp_from<T>(act_f<K>(lp_f(y[i]) + b[i % C]));
}
template <typename T, int K> __global__ void act_lp_kernel(T *out, const T *in, unsigned n)
{
    GRID_STRIDE(i, n) out[i] = lp_from<T>(act_f<K>(lp_f(in[i])));
}
template <typename T> __global__ void add_lp_kernel(T *out, const T *a, const T *b, unsigned n)
{
    GRID_STRIDE(i, n) out[i] = lp_from<T>(lp_f(a[i]) + lp_f(b[i]));
}
template <typename T> __global__ void scale_lp_kernel(T *out, const T *x, const T *g, unsigned n, unsigned P, unsigned C)
{
    GRID_STRIDE(i, n) {
        unsigned c = i % C, b = i / (P * C);
        out[i] = lp_from<T>(lp_f(x[i]) * lp_f(g[(size_t)b * C + c]));
    }
}
#define POOL_LANES 8
/* grid (C tiles, N), block (32, POOL_LANES): out[b, c] = mean_p in, summed in fp32 in a fixed order */
template <typename T> __global__ void avgpool_lp_kernel(T *out, const T *in, int P, int C)
{
    __shared__ float sh[POOL_LANES][32];
    int c = blockIdx.x * 32 + threadIdx.x, b = blockIdx.y;
    float s = 0.0f;
    if (c < C)
        for (int p = threadIdx.y; p < P; p += POOL_LANES) s += lp_f(in[((size_t)b * P + p) * C + c]);
    sh[threadIdx.y][threadIdx.x] = s;
    __syncthreads();
    if (threadIdx.y == 0 && c < C) {
        for (int l = 1; l < POOL_LANES; l++) s += sh[l][threadIdx.x];
        out[(size_t)b * C + c] = lp_from<T>(s * (1.0f / (float)P));
    }
}

/* a grid-stride launch over n elements, checked */
#define LP_LAUNCH(kern, n, ...)                                                             \
    do {                                                                                    \
        CUDA_REQUIRE((n) < ((size_t)1 << 31), "a tensor of 2^31 or more elements");        \
        kern<<<grid_for((n), LAUNCH1_THREADS, cx), LAUNCH1_THREADS, 0, cx->stream>>>(__VA_ARGS__); \
        LAUNCH_CHECK();                                                                     \
    } while (0)

extern "C" void lp_from_f32_cuda(struct backend_ctx *cx, void *out, const float *in, size_t n, enum precision p)
{
    if (n) LP_DISPATCH(p, LP_LAUNCH(lp_from_f32_kernel<T>, n, (T *)out, in, (unsigned)n));
}
extern "C" void lp_to_f32_cuda(struct backend_ctx *cx, float *out, const void *in, size_t n, enum precision p)
{
    if (n) LP_DISPATCH(p, LP_LAUNCH(lp_to_f32_kernel<T>, n, out, (const T *)in, (unsigned)n));
}
template <typename T> static void bias_act_lp(struct backend_ctx *cx, T *y, const float *b, size_t n, unsigned C,
                                              enum act_kind k)
{
    switch (k) {
    case ACT_NONE: LP_LAUNCH((bias_act_lp_kernel<T, ACT_NONE>), n, y, b, (unsigned)n, C); break;
    case ACT_RELU: LP_LAUNCH((bias_act_lp_kernel<T, ACT_RELU>), n, y, b, (unsigned)n, C); break;
    case ACT_HARDSWISH: LP_LAUNCH((bias_act_lp_kernel<T, ACT_HARDSWISH>), n, y, b, (unsigned)n, C); break;
    case ACT_HARDSIGMOID: LP_LAUNCH((bias_act_lp_kernel<T, ACT_HARDSIGMOID>), n, y, b, (unsigned)n, C); break;
    }
}
extern "C" void bias_act_lp_cuda(struct backend_ctx *cx, void *y, const float *b, size_t M, int C, enum act_kind k,
                                 enum precision p)
{
    size_t n = M * (size_t)C;
    if (n) LP_DISPATCH(p, bias_act_lp<T>(cx, (T *)y, b, n, (unsigned)C, k));
}

template <typename T> static void act_lp(struct backend_ctx *cx, T *out, const T *in, size_t n, enum act_kind k)
{
    switch (k) {
    case ACT_NONE:
        if (out != in) CUDA_CHECK(cudaMemcpyAsync(out, in, n * sizeof(T), cudaMemcpyDeviceToDevice, cx->stream));
        break;
    case ACT_RELU: LP_LAUNCH((act_lp_kernel<T, ACT_RELU>), n, out, in, (unsigned)n); break;
    case ACT_HARDSWISH: LP_LAUNCH((act_lp_kernel<T, ACT_HARDSWISH>), n, out, in, (unsigned)n); break;
    case ACT_HARDSIGMOID: LP_LAUNCH((act_lp_kernel<T, ACT_HARDSIGMOID>), n, out, in, (unsigned)n); break;
    }
}
extern "C" void act_lp_cuda(struct backend_ctx *cx, void *out, const void *in, size_t n, enum act_kind k,
                            enum precision p)
{
    if (n) LP_DISPATCH(p, act_lp<T>(cx, (T *)out, (const T *)in, n, k));
}

extern "C" void add_lp_cuda(struct backend_ctx *cx, void *out, const void *a, const void *b, size_t n, enum precision p)
{
    if (n) LP_DISPATCH(p, LP_LAUNCH(add_lp_kernel<T>, n, (T *)out, (const T *)a, (const T *)b, (unsigned)n));
}

extern "C" void scale_lp_cuda(struct backend_ctx *cx, void *out, const void *x, const void *g, int N, int P, int C,
                              enum precision p)
{
    size_t n = (size_t)N * P * C;
    if (n)
        LP_DISPATCH(p, LP_LAUNCH(scale_lp_kernel<T>, n, (T *)out, (const T *)x, (const T *)g, (unsigned)n,
                                 (unsigned)P, (unsigned)C));
}

extern "C" void avgpool_lp_cuda(struct backend_ctx *cx, void *out, const void *in, int N, int P, int C, enum precision p)
{
    if (N <= 0 || C <= 0) return;
    dim3 grid((C + 31) / 32, N), block(32, POOL_LANES);
    LP_DISPATCH(p, (avgpool_lp_kernel<T><<<grid, block, 0, cx->stream>>>((T *)out, (const T *)in, P, C)));
    LAUNCH_CHECK();
}
