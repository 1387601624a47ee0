/* conv2d.cu: grouped 2-D convolution on NHWC activations, the CUDA twin of ops/cpu/conv2d.c.
 * Paths, picked as the CPU picks them:
 *   pointwise (1x1, stride 1, groups 1): one cuBLAS sgemm over the whole batch, as the CPU;
 *   depthwise (groups == Cin == Cout, K 3/5/7): own kernels (cuDNN's NHWC depthwise is slow):
 *     forward and input gradient as gathers (one thread per output / input element, coalesced
 *     over C, no atomics), weight gradient as a deterministic two-pass reduction over pixels;
 *   anything else (the stem): cuDNN (conv2d_cudnn.cu).
 * Weights (Cout, Cin/groups, K, K) as PyTorch. Not here: bias (BN follows), dilation. */
#include "cuda_common.cuh"
#include "conv2d_cudnn.h"

/* depthwise with a kernel size our kernels are instantiated for (others go to cuDNN) */
static int is_depthwise(const struct conv2d_desc *d)
{
    return conv2d_is_depthwise(d) && (d->K == 3 || d->K == 5 || d->K == 7);
}

/* wt (KK, C) = w (C, 1, K, K) transposed: neighbouring threads (channels) read neighbouring words */
__global__ void dw_transpose_kernel(float *wt, const float *w, int C, int KK)
{
    size_t n = (size_t)C * KK;
    GRID_STRIDE(i, n) {
        int c = (int)(i / (unsigned)KK), k = (int)(i % (unsigned)KK);
        wt[(size_t)k * C + c] = w[i];
    }
}

/* (b, y, x, c) of element i of an NHWC tensor (., H, W, C) */
__device__ __forceinline__ void nhwc_coords(unsigned i, int H, int W, int C, int *b, int *y, int *x, int *c)
{
    unsigned r = i / (unsigned)C;
    *c = (int)(i - r * (unsigned)C);
    unsigned q = r / (unsigned)W;
    *x = (int)(r - q * (unsigned)W);
    *b = (int)(q / (unsigned)H);
    *y = (int)(q - (unsigned)*b * (unsigned)H);
}

/* out (N, Ho, Wo, C): one thread per output element, taps summed in (ky, kx) order. */
template <int K>
__global__ void dw_forward_kernel(float *out, const float *in, const float *wt, struct conv2d_desc d)
{
    size_t n = (size_t)d.N * d.Ho * d.Wo * d.Cin;
    int C = d.Cin;
    GRID_STRIDE(i, n) {
        int b, oy, ox, c;
        nhwc_coords(i, d.Ho, d.Wo, C, &b, &oy, &ox, &c);
        float acc = 0.0f;
#pragma unroll
        for (int ky = 0; ky < K; ky++) {
            int iy = oy * d.stride - d.pad + ky;
            if (iy < 0 || iy >= d.H) continue;
#pragma unroll
            for (int kx = 0; kx < K; kx++) {
                int ix = ox * d.stride - d.pad + kx;
                if (ix < 0 || ix >= d.W) continue;
                acc += in[(((size_t)b * d.H + iy) * d.W + ix) * C + c] * wt[(ky * K + kx) * C + c];
            }
        }
        out[i] = acc;
    }
}

/* din (N, H, W, C): each input element gathers the outputs whose window covered it. */
template <int K>
__global__ void dw_backward_data_kernel(float *din, const float *dout, const float *wt, struct conv2d_desc d, int acc)
{
    size_t n = (size_t)d.N * d.H * d.W * d.Cin;
    int C = d.Cin, s = d.stride;
    GRID_STRIDE(i, n) {
        int b, iy, ix, c;
        nhwc_coords(i, d.H, d.W, C, &b, &iy, &ix, &c);
        float g = 0.0f;
#pragma unroll
        for (int ky = 0; ky < K; ky++) {
            int ty = iy + d.pad - ky; /* = oy * stride */
            if (ty < 0 || ty % s) continue;
            int oy = ty / s;
            if (oy >= d.Ho) continue;
#pragma unroll
            for (int kx = 0; kx < K; kx++) {
                int tx = ix + d.pad - kx;
                if (tx < 0 || tx % s) continue;
                int ox = tx / s;
                if (ox >= d.Wo) continue;
                g += dout[(((size_t)b * d.Ho + oy) * d.Wo + ox) * C + c] * wt[(ky * K + kx) * C + c];
            }
        }
        din[i] = acc ? din[i] + g : g;
    }
}

/* Weight gradient, pass 1: block (32 channels, 8 row lanes) x chunk of output pixels; each thread
 * keeps K*K sums in registers (compile-time indices), the 8 lanes are added in shared memory and
 * part (nchunk, KK, C) gets one partial per chunk. */
#define DW_LANES 8
template <int K>
__global__ void dw_backward_filter_kernel(float *part, const float *dout, const float *in, struct conv2d_desc d,
                                          int rows_per_chunk)
{
    constexpr int KK = K * K;
    __shared__ float sh[DW_LANES][32];
    int C = d.Cin, c = blockIdx.x * 32 + threadIdx.x, chunk = blockIdx.y;
    int M = d.N * d.Ho * d.Wo;
    int m0 = chunk * rows_per_chunk, m1 = min(M, m0 + rows_per_chunk);
    float acc[KK];
#pragma unroll
    for (int k = 0; k < KK; k++) acc[k] = 0.0f;
    if (c < C)
        for (int m = m0 + threadIdx.y; m < m1; m += DW_LANES) {
            int ox = m % d.Wo, oy = (m / d.Wo) % d.Ho, b = m / (d.Wo * d.Ho);
            float g = dout[(size_t)m * C + c];
#pragma unroll
            for (int ky = 0; ky < K; ky++) {
                int iy = oy * d.stride - d.pad + ky;
#pragma unroll
                for (int kx = 0; kx < K; kx++) {
                    int ix = ox * d.stride - d.pad + kx;
                    if (iy >= 0 && iy < d.H && ix >= 0 && ix < d.W)
                        acc[ky * K + kx] += g * in[(((size_t)b * d.H + iy) * d.W + ix) * C + c];
                }
            }
        }
#pragma unroll
    for (int k = 0; k < KK; k++) {
        sh[threadIdx.y][threadIdx.x] = acc[k];
        __syncthreads();
        if (threadIdx.y == 0 && c < C) {
            float s = 0.0f;
            for (int l = 0; l < DW_LANES; l++) s += sh[l][threadIdx.x];
            part[((size_t)chunk * KK + k) * C + c] = s;
        }
        __syncthreads();
    }
}

/* Pass 2: dw (C, KK) += the chunk partials, added in chunk order (deterministic). */
__global__ void dw_filter_finish_kernel(float *dw, const float *part, int C, int KK, int nchunk)
{
    size_t n = (size_t)C * KK;
    GRID_STRIDE(i, n) {
        int c = (int)(i / (unsigned)KK), k = (int)(i % (unsigned)KK);
        float s = 0.0f;
        for (int t = 0; t < nchunk; t++) s += part[((size_t)t * KK + k) * C + c];
        dw[i] += s;
    }
}

template <int K> static void dw_launch_forward(struct backend_ctx *cx, float *out, const float *in, const float *wt,
                                               const struct conv2d_desc *d)
{
    size_t n = (size_t)d->N * d->Ho * d->Wo * d->Cin;
    dw_forward_kernel<K><<<grid_for(n, 256, cx), 256, 0, cx->stream>>>(out, in, wt, *d);
    LAUNCH_CHECK();
}

template <int K> static void dw_launch_backward(struct backend_ctx *cx, float *din, float *dw, const float *dout,
                                                const float *in, const float *wt, const struct conv2d_desc *d, int acc)
{
    int C = d->Cin, KK = K * K, M = d->N * d->Ho * d->Wo, ctiles = (C + 31) / 32;
    /* about 4 blocks per SM in all, at least 64 pixels per chunk */
    int nchunk = 4 * cx->sm_count / ctiles;
    if (nchunk < 1) nchunk = 1;
    if (nchunk > (M + 63) / 64) nchunk = (M + 63) / 64;
    int rpc = (M + nchunk - 1) / nchunk;
    float *part = (float *)cuda_red(cx, sizeof(float) * (size_t)nchunk * KK * C);
    dw_backward_filter_kernel<K><<<dim3(ctiles, nchunk), dim3(32, DW_LANES), 0, cx->stream>>>(part, dout, in, *d, rpc);
    LAUNCH_CHECK();
    dw_filter_finish_kernel<<<grid_for((size_t)C * KK, 256, cx), 256, 0, cx->stream>>>(dw, part, C, KK, nchunk);
    LAUNCH_CHECK();
    if (!din) return;
    size_t n = (size_t)d->N * d->H * d->W * C;
    dw_backward_data_kernel<K><<<grid_for(n, 256, cx), 256, 0, cx->stream>>>(din, dout, wt, *d, acc);
    LAUNCH_CHECK();
}

static float *dw_weights(struct backend_ctx *cx, const float *w, const struct conv2d_desc *d)
{
    int KK = d->K * d->K;
    float *wt = (float *)cuda_ws(cx, sizeof(float) * (size_t)KK * d->Cin);
    dw_transpose_kernel<<<grid_for((size_t)KK * d->Cin, 256, cx), 256, 0, cx->stream>>>(wt, w, d->Cin, KK);
    LAUNCH_CHECK();
    return wt;
}

extern "C" void conv2d_forward_cuda(struct backend_ctx *cx, float *out, const float *in, const float *w,
                                    const struct conv2d_desc *d, float *scratch)
{
    (void)scratch; /* the CPU's im2col buffer: the workspaces here are cx's */
    int M = d->N * d->Ho * d->Wo;
    if (conv2d_is_pointwise(d)) { /* out (M, Cout) = in (M, Cin) . w^T */
        gemm_cuda(cx, 0, 1, M, d->Cout, d->Cin, in, d->Cin, w, d->Cin, 0.0f, out, d->Cout);
        return;
    }
    if (!is_depthwise(d)) {
        conv2d_forward_cudnn(cx, out, in, w, d);
        return;
    }
    float *wt = dw_weights(cx, w, d);
    switch (d->K) {
    case 3: dw_launch_forward<3>(cx, out, in, wt, d); break;
    case 5: dw_launch_forward<5>(cx, out, in, wt, d); break;
    default: dw_launch_forward<7>(cx, out, in, wt, d); break;
    }
}

extern "C" void conv2d_backward_cuda(struct backend_ctx *cx, float *din, float *dw, const float *dout, const float *in,
                                     const float *w, const struct conv2d_desc *d, float *scratch, int acc)
{
    (void)scratch;
    int M = d->N * d->Ho * d->Wo;
    if (conv2d_is_pointwise(d)) {
        /* dw (Cout, Cin) += dout^T (Cout, M) . in (M, Cin); din (M, Cin) (+)= dout . w */
        gemm_cuda(cx, 1, 0, d->Cout, d->Cin, M, dout, d->Cout, in, d->Cin, 1.0f, dw, d->Cin);
        if (din) gemm_cuda(cx, 0, 0, M, d->Cin, d->Cout, dout, d->Cout, w, d->Cin, acc ? 1.0f : 0.0f, din, d->Cin);
        return;
    }
    if (!is_depthwise(d)) {
        conv2d_backward_cudnn(cx, din, dw, dout, in, w, d, acc);
        return;
    }
    float *wt = dw_weights(cx, w, d);
    switch (d->K) {
    case 3: dw_launch_backward<3>(cx, din, dw, dout, in, wt, d, acc); break;
    case 5: dw_launch_backward<5>(cx, din, dw, dout, in, wt, d, acc); break;
    default: dw_launch_backward<7>(cx, din, dw, dout, in, wt, d, acc); break;
    }
}
