/* conv2d_lp.cu: convolutions and GEMMs of the reduced-precision (fp16 / bf16) inference pass
 * (engine/infer/infer_cuda.c) on 16-bit NHWC activations and 16-bit weights (converted once when
 * the model is prepared), always with fp32 accumulation:
 *   pointwise convs and linear layers: cublasGemmEx, 16-bit A and B, CUBLAS_COMPUTE_32F (tensor
 *     cores), C in 16 bits or, for the logits, fp32;
 *   depthwise (K 3/5/7): own kernel, fp32 sums of the taps, one rounding on store;
 *   anything else (the stem): cuDNN with 16-bit tensors and an fp32 convolution (cuDNN's
 *     PSEUDO_HALF / PSEUDO_BFLOAT16 configurations), conv2d_cudnn.cu's plan cache; when cuDNN
 *     has no algorithm for the shape in 16 bits (3 input channels in NHWC), a direct kernel.
 * Weights keep PyTorch's layout, as in conv2d.cu. Not here: biases, activations (act_lp.cu). */
#include "conv2d_cudnn.h"
#include "lp.cuh"

/* row-major C (M, N) = A (M, K) . B (N, K)^T: column-major C^T = B^T' . A, cuBLAS's operands swapped */
static void gemm_lp(struct backend_ctx *cx, int M, int N, int K, const void *A, const void *B, void *C, int c_f32,
                    enum precision p)
{
    if (M <= 0 || N <= 0 || K <= 0) return;
    const float one = 1.0f, zero = 0.0f;
    cudaDataType_t t = lp_cuda_type(p);
    CUBLAS_CHECK(cublasGemmEx(cx->cublas, CUBLAS_OP_T, CUBLAS_OP_N, N, M, K, &one, B, t, K, A, t, K, &zero, C,
                              c_f32 ? CUDA_R_32F : t, N, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
}

extern "C" void linear_forward_lp_cuda(struct backend_ctx *cx, void *out, int out_f32, const void *in, const void *w,
                                       int N, int Ci, int Co, enum precision p)
{
    gemm_lp(cx, N, Co, Ci, in, w, out, out_f32, p);
}

/* (b, y, x, c) of element i of an NHWC tensor (., H, W, C) */
__device__ __forceinline__ void lp_nhwc(unsigned i, int H, int W, int C, int *b, int *y, int *x, int *c)
{
    unsigned r = i / (unsigned)C;
    *c = (int)(i - r * (unsigned)C);
    unsigned q = r / (unsigned)W;
    *x = (int)(r - q * (unsigned)W);
    *b = (int)(q / (unsigned)H);
    *y = (int)(q - (unsigned)*b * (unsigned)H);
}

/* out (N, Ho, Wo, C): one thread per output, taps in (ky, kx) order, w (C, 1, K, K) */
template <typename T, int K> __global__ void dw_lp_kernel(T *out, const T *in, const T *w, struct conv2d_desc d)
{
    unsigned n = (unsigned)d.N * d.Ho * d.Wo * d.Cin;
    int C = d.Cin;
    GRID_STRIDE(i, n) {
        int b, oy, ox, c;
        lp_nhwc(i, d.Ho, d.Wo, C, &b, &oy, &ox, &c);
        const T *wc = w + (size_t)c * K * K;
        float acc = 0.0f;
#pragma unroll
        for (int ky = 0; ky < K; ky++) {
            int iy = oy * d.stride - d.pad + ky;
            if (iy < 0 || iy >= d.H) continue;
#pragma unroll
            for (int kx = 0; kx < K; kx++) {
                int ix = ox * d.stride - d.pad + kx;
                if (ix < 0 || ix >= d.W) continue;
                acc += lp_f(in[(((size_t)b * d.H + iy) * d.W + ix) * C + c]) * lp_f(wc[ky * K + kx]);
            }
        }
        out[i] = lp_from<T>(acc);
    }
}

template <typename T> static void dw_lp(struct backend_ctx *cx, T *out, const T *in, const T *w,
                                        const struct conv2d_desc *d)
{
    size_t n = (size_t)d->N * d->Ho * d->Wo * d->Cin;
    CUDA_REQUIRE(n < ((size_t)1 << 31), "a tensor of 2^31 or more elements");
    unsigned g = grid_for(n, 256, cx);
    switch (d->K) {
    case 3: dw_lp_kernel<T, 3><<<g, 256, 0, cx->stream>>>(out, in, w, *d); break;
    case 5: dw_lp_kernel<T, 5><<<g, 256, 0, cx->stream>>>(out, in, w, *d); break;
    default: dw_lp_kernel<T, 7><<<g, 256, 0, cx->stream>>>(out, in, w, *d); break;
    }
    LAUNCH_CHECK();
}

/* the general grouped conv, one thread per output, fp32 sum over (ci, ky, kx), w (Cout, Cg, K, K) */
template <typename T> __global__ void conv_direct_lp_kernel(T *out, const T *in, const T *w, struct conv2d_desc d)
{
    unsigned n = (unsigned)d.N * d.Ho * d.Wo * d.Cout;
    int Cg = d.Cin / d.groups, Og = d.Cout / d.groups, K = d.K;
    GRID_STRIDE(i, n) {
        int b, oy, ox, co;
        lp_nhwc(i, d.Ho, d.Wo, d.Cout, &b, &oy, &ox, &co);
        int c0 = co / Og * Cg;
        const T *wc = w + (size_t)co * Cg * K * K;
        float acc = 0.0f;
        for (int ci = 0; ci < Cg; ci++)
            for (int ky = 0; ky < K; ky++) {
                int iy = oy * d.stride - d.pad + ky;
                if (iy < 0 || iy >= d.H) continue;
                for (int kx = 0; kx < K; kx++) {
                    int ix = ox * d.stride - d.pad + kx;
                    if (ix < 0 || ix >= d.W) continue;
                    acc += lp_f(in[(((size_t)b * d.H + iy) * d.W + ix) * d.Cin + c0 + ci]) *
                           lp_f(wc[(ci * K + ky) * K + kx]);
                }
            }
        out[i] = lp_from<T>(acc);
    }
}

extern "C" void conv2d_forward_lp_cuda(struct backend_ctx *cx, void *out, const void *in, const void *w,
                                       const struct conv2d_desc *d, enum precision p)
{
    if (conv2d_is_pointwise(d)) { /* out (M, Cout) = in (M, Cin) . w^T */
        gemm_lp(cx, d->N * d->H * d->W, d->Cout, d->Cin, in, w, out, 0, p);
        return;
    }
    if (conv2d_is_depthwise(d) && (d->K == 3 || d->K == 5 || d->K == 7)) {
        LP_DISPATCH(p, dw_lp<T>(cx, (T *)out, (const T *)in, (const T *)w, d));
        return;
    }
    if (conv2d_forward_cudnn_lp(cx, out, in, w, d, p)) return;
    size_t n = (size_t)d->N * d->Ho * d->Wo * d->Cout;
    CUDA_REQUIRE(n < ((size_t)1 << 31), "a tensor of 2^31 or more elements");
    LP_DISPATCH(p, (conv_direct_lp_kernel<T><<<grid_for(n, 256, cx), 256, 0, cx->stream>>>((T *)out, (const T *)in,
                                                                                           (const T *)w, *d)));
    LAUNCH_CHECK();
}
