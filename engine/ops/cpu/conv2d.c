/* conv2d.c: grouped 2-D convolution on NHWC activations, CPU reference (see ops.h).
 * Three paths: pointwise (one sgemm over the whole batch), depthwise (own kernel, vectorised
 * over channels), and the general grouped case through im2col + sgemm (the stem conv).
 * Not here: bias (MobileNetV3 convs have none; BN follows), dilation. */
#include <omp.h>

/* -std=c11 turns off FMA contraction; the conv kernels are chains of multiply-adds */
#pragma GCC optimize("fp-contract=fast")
#include <stdbool.h>
#include <string.h>

#include "gemm.h"
#include "../ops.h"

/* 16 floats in (one AVX-512 or two AVX) registers: GCC vector extension, so accumulators stay
 * in registers across a kernel's taps (a float[16] went through the stack every tap). */
typedef float v16 __attribute__((vector_size(64)));
static inline v16 ld16(const float *p) { v16 v; memcpy(&v, p, sizeof v); return v; }
static inline void st16(float *p, v16 v) { memcpy(p, &v, sizeof v); }
#include "../../core/check.h"
#include "../../core/banned.h"

void conv2d_desc_init(struct conv2d_desc *d, int N, int H, int W, int Cin, int Cout, int K, int stride,
                      int pad, int groups)
{
    int divisible = groups > 0 && Cin % groups == 0 && Cout % groups == 0;
    CHECK(divisible, "groups %d, Cin %d, Cout %d", groups, Cin, Cout);
    CHECK(K > 0 && stride > 0 && pad >= 0, "K %d stride %d pad %d", K, stride, pad);
    *d = (struct conv2d_desc){.N = N, .H = H, .W = W, .Cin = Cin, .Cout = Cout, .K = K,
                              .stride = stride, .pad = pad, .groups = groups};
    d->Ho = (H + 2 * pad - K) / stride + 1;
    d->Wo = (W + 2 * pad - K) / stride + 1;
    CHECK(d->Ho > 0 && d->Wo > 0, "conv output %dx%d", d->Ho, d->Wo);
}

static int is_pointwise(const struct conv2d_desc *d)
{
    return d->K == 1 && d->stride == 1 && d->pad == 0 && d->groups == 1;
}
static int is_depthwise(const struct conv2d_desc *d)
{
    return d->groups == d->Cin && d->Cin == d->Cout && d->groups > 1;
}

/* Threads the depthwise backward may use (its scratch holds one dw partial per thread). */
static int dw_max_threads(void)
{
    int a = omp_get_max_threads(), b = omp_get_num_procs();
    return a > b ? a : b;
}

/* few input channels, dense: the direct kernel (forward) */
static int is_direct(const struct conv2d_desc *d) { return d->groups == 1 && d->Cin <= 4 && d->K > 1; }

size_t conv2d_scratch_floats(const struct conv2d_desc *d)
{
    if (is_pointwise(d)) return 0;
    if (is_depthwise(d)) return (1 + (size_t)dw_max_threads()) * d->K * d->K * d->Cin;
    size_t M = (size_t)d->N * d->Ho * d->Wo, col = M * (size_t)(d->Cin / d->groups) * d->K * d->K;
    size_t direct = is_direct(d) ? (size_t)d->K * d->K * d->Cin * d->Cout : 0;
    return col > direct ? col : direct;
}

/* ---- general path: im2col for group g. col (M, Cg*K*K), k = ci*K*K + ky*K + kx ------------- */
static void im2col(float *col, const float *in, const struct conv2d_desc *d, int g)
{
    int Cg = d->Cin / d->groups, KK = d->K * d->K, Kd = Cg * KK;
#pragma omp parallel for collapse(2) schedule(static) if ((size_t)d->N * d->Ho * d->Wo * d->K * d->K * d->Cin >= OMP_MIN_WORK)
    for (int n = 0; n < d->N; n++)
        for (int oy = 0; oy < d->Ho; oy++)
            for (int ox = 0; ox < d->Wo; ox++) {
                float *c = col + ((size_t)(n * d->Ho + oy) * d->Wo + ox) * Kd;
                for (int ky = 0; ky < d->K; ky++) {
                    int iy = oy * d->stride - d->pad + ky;
                    for (int kx = 0; kx < d->K; kx++) {
                        int ix = ox * d->stride - d->pad + kx;
                        int inside = iy >= 0 && iy < d->H && ix >= 0 && ix < d->W;
                        const float *ip = in + ((size_t)(n * d->H + iy) * d->W + ix) * d->Cin + g * Cg;
                        for (int ci = 0; ci < Cg; ci++)
                            c[ci * KK + ky * d->K + kx] = inside ? ip[ci] : 0.0f;
                    }
                }
            }
}

/* din += col2im(dcol); parallel over images (each writes its own din image). */
static void col2im_add(float *din, const float *col, const struct conv2d_desc *d, int g)
{
    int Cg = d->Cin / d->groups, KK = d->K * d->K, Kd = Cg * KK;
#pragma omp parallel for schedule(static) if ((size_t)d->N * d->Ho * d->Wo * d->K * d->K * d->Cin >= OMP_MIN_WORK)
    for (int n = 0; n < d->N; n++)
        for (int oy = 0; oy < d->Ho; oy++)
            for (int ox = 0; ox < d->Wo; ox++) {
                const float *c = col + ((size_t)(n * d->Ho + oy) * d->Wo + ox) * Kd;
                for (int ky = 0; ky < d->K; ky++) {
                    int iy = oy * d->stride - d->pad + ky;
                    if (iy < 0 || iy >= d->H) continue;
                    for (int kx = 0; kx < d->K; kx++) {
                        int ix = ox * d->stride - d->pad + kx;
                        if (ix < 0 || ix >= d->W) continue;
                        float *ip = din + ((size_t)(n * d->H + iy) * d->W + ix) * d->Cin + g * Cg;
                        for (int ci = 0; ci < Cg; ci++) ip[ci] += c[ci * KK + ky * d->K + kx];
                    }
                }
            }
}

/* ---- depthwise: wt (K*K, C) is w (C, 1, K, K) transposed so the inner loop runs over C ---- */
static void dw_transpose(float *wt, const float *w, int C, int KK)
{
    for (int c = 0; c < C; c++)
        for (int k = 0; k < KK; k++) wt[(size_t)k * C + c] = w[(size_t)c * KK + k];
}

/* Each output pixel's channels in chunks of 16 accumulated in registers over the K*K taps,
 * stored once (storing per tap made this the top kernel of bs=1 inference). */
static void depthwise_forward(float *out, const float *in, const float *w, const struct conv2d_desc *d,
                              float *wt)
{
    int C = d->Cin, K = d->K, C16 = C / 16 * 16;
    dw_transpose(wt, w, C, K * K);
#pragma omp parallel for collapse(2) schedule(static) if ((size_t)d->N * d->Ho * d->Wo * K * K * C >= OMP_MIN_WORK)
    for (int n = 0; n < d->N; n++)
        for (int oy = 0; oy < d->Ho; oy++) {
            int ky0 = 0, ky1 = K, iy0 = oy * d->stride - d->pad;
            if (iy0 < 0) ky0 = -iy0;
            if (iy0 + K > d->H) ky1 = d->H - iy0;
            for (int ox = 0; ox < d->Wo; ox++) {
                int kx0 = 0, kx1 = K, ix0 = ox * d->stride - d->pad;
                /* four interior pixels at once: four independent accumulator chains */
                if (ix0 >= 0 && ox + 3 < d->Wo && (ox + 3) * d->stride - d->pad + K <= d->W) {
                    size_t sx = (size_t)d->stride * C;
                    float *o = out + ((size_t)(n * d->Ho + oy) * d->Wo + ox) * C;
                    const float *base = in + ((size_t)(n * d->H + iy0) * d->W + ix0) * C;
                    for (int c0 = 0; c0 < C16; c0 += 16) {
                        v16 a0 = {0}, a1 = {0}, a2 = {0}, a3 = {0};
                        for (int ky = ky0; ky < ky1; ky++)
                            for (int kx = 0; kx < K; kx++) {
                                const float *ip = base + ((size_t)ky * d->W + kx) * C + c0;
                                v16 wv = ld16(wt + (size_t)(ky * K + kx) * C + c0);
                                a0 += ld16(ip) * wv;
                                a1 += ld16(ip + sx) * wv;
                                a2 += ld16(ip + 2 * sx) * wv;
                                a3 += ld16(ip + 3 * sx) * wv;
                            }
                        st16(o + c0, a0);
                        st16(o + C + c0, a1);
                        st16(o + 2 * C + c0, a2);
                        st16(o + 3 * C + c0, a3);
                    }
                    for (int p = 0; p < 4; p++) /* channel tail (C not a multiple of 16) */
                        for (int c = C16; c < C; c++) {
                            float a = 0;
                            for (int ky = ky0; ky < ky1; ky++)
                                for (int kx = 0; kx < K; kx++)
                                    a += base[((size_t)ky * d->W + kx) * C + p * sx + c] * wt[(size_t)(ky * K + kx) * C + c];
                            o[(size_t)p * C + c] = a;
                        }
                    ox += 3;
                    continue;
                }
                if (ix0 < 0) kx0 = -ix0;
                if (ix0 + K > d->W) kx1 = d->W - ix0;
                float *o = out + ((size_t)(n * d->Ho + oy) * d->Wo + ox) * C;
                const float *base = in + ((size_t)(n * d->H + iy0) * d->W + ix0) * C;
                for (int c0 = 0; c0 < C16; c0 += 16) {
                    v16 acc = {0};
                    for (int ky = ky0; ky < ky1; ky++)
                        for (int kx = kx0; kx < kx1; kx++)
                            acc += ld16(base + ((size_t)ky * d->W + kx) * C + c0) *
                                   ld16(wt + (size_t)(ky * K + kx) * C + c0);
                    st16(o + c0, acc);
                }
                for (int c = C16; c < C; c++) {
                    float a = 0;
                    for (int ky = ky0; ky < ky1; ky++)
                        for (int kx = kx0; kx < kx1; kx++)
                            a += base[((size_t)ky * d->W + kx) * C + c] * wt[(size_t)(ky * K + kx) * C + c];
                    o[c] = a;
                }
            }
        }
}

/* Dense conv with few input channels (the stem: 3): direct, vectorised over Cout, with the
 * weights transposed to (K, K, Cin, Cout) in scratch. Forward only; backward uses im2col. */

static void direct_forward(float *out, const float *in, const float *w, const struct conv2d_desc *d, float *wt)
{
    int K = d->K, Ci = d->Cin, Co = d->Cout;
    for (int co = 0; co < Co; co++)
        for (int ci = 0; ci < Ci; ci++)
            for (int k = 0; k < K * K; k++) wt[((size_t)k * Ci + ci) * Co + co] = w[((size_t)co * Ci + ci) * K * K + k];
#pragma omp parallel for collapse(2) schedule(static) if ((size_t)d->N * d->Ho * d->Wo * K * K * Ci * Co >= OMP_MIN_WORK)
    for (int n = 0; n < d->N; n++)
        for (int oy = 0; oy < d->Ho; oy++)
            for (int ox = 0; ox < d->Wo; ox++) {
                float *o = out + ((size_t)(n * d->Ho + oy) * d->Wo + ox) * Co;
                int iy0 = oy * d->stride - d->pad, ix0 = ox * d->stride - d->pad;
                bool inside4 = iy0 >= 0 && iy0 + K <= d->H && ix0 >= 0 && ox + 3 < d->Wo &&
                               (ox + 3) * d->stride - d->pad + K <= d->W && Co % 16 == 0;
                if (inside4) { /* four pixels, four independent accumulator chains */
                    size_t sx = (size_t)d->stride * Ci;
                    const float *base = in + ((size_t)(n * d->H + iy0) * d->W + ix0) * Ci;
                    for (int c0 = 0; c0 < Co; c0 += 16) {
                        v16 a0 = {0}, a1 = {0}, a2 = {0}, a3 = {0};
                        for (int ky = 0; ky < K; ky++)
                            for (int kx = 0; kx < K; kx++) {
                                const float *ip = base + ((size_t)ky * d->W + kx) * Ci;
                                const float *wp = wt + (size_t)(ky * K + kx) * Ci * Co + c0;
                                for (int ci = 0; ci < Ci; ci++, wp += Co) {
                                    v16 wv = ld16(wp);
                                    a0 += ip[ci] * wv;
                                    a1 += ip[ci + sx] * wv;
                                    a2 += ip[ci + 2 * sx] * wv;
                                    a3 += ip[ci + 3 * sx] * wv;
                                }
                            }
                        st16(o + c0, a0);
                        st16(o + Co + c0, a1);
                        st16(o + 2 * Co + c0, a2);
                        st16(o + 3 * Co + c0, a3);
                    }
                    ox += 3;
                    continue;
                }
                for (int c0 = 0; c0 < Co; c0 += 16) {
                    int cn = Co - c0 < 16 ? Co - c0 : 16;
                    v16 acc = {0};
                    float part[16] = {0};
                    for (int ky = 0; ky < K; ky++) {
                        int iy = oy * d->stride - d->pad + ky;
                        if (iy < 0 || iy >= d->H) continue;
                        for (int kx = 0; kx < K; kx++) {
                            int ix = ox * d->stride - d->pad + kx;
                            if (ix < 0 || ix >= d->W) continue;
                            const float *ip = in + ((size_t)(n * d->H + iy) * d->W + ix) * Ci;
                            const float *wp = wt + (size_t)(ky * K + kx) * Ci * Co + c0;
                            for (int ci = 0; ci < Ci; ci++, wp += Co) {
                                if (cn == 16)
                                    acc += ip[ci] * ld16(wp);
                                else
                                    for (int j = 0; j < cn; j++) part[j] += ip[ci] * wp[j];
                            }
                        }
                    }
                    if (cn == 16) st16(o + c0, acc);
                    else memcpy(o + c0, part, sizeof(float) * (size_t)cn);
                }
            }
}

/* Threads split the images; each accumulates its own transposed dw partial (KK, C) in
 * scratch, summed at the end, so the inner loops run over all C contiguous channels. */
static void depthwise_backward(float *din, float *dw, const float *dout, const float *in, const float *w,
                               const struct conv2d_desc *d, float *scratch)
{
    int C = d->Cin, K = d->K, KK = K * K;
    int nt = omp_get_max_threads();
    if (nt > d->N) nt = d->N;
    if (nt > dw_max_threads()) nt = dw_max_threads();
    float *wt = scratch, *part = scratch + (size_t)KK * C; /* (KK, C), then nt x (KK, C) */
    dw_transpose(wt, w, C, KK);
    memset(part, 0, sizeof(float) * (size_t)nt * KK * C);
#pragma omp parallel for num_threads(nt) schedule(static)
    for (int n = 0; n < d->N; n++) {
        float *dwt = part + (size_t)omp_get_thread_num() * KK * C;
        for (int oy = 0; oy < d->Ho; oy++)
            for (int ox = 0; ox < d->Wo; ox++) {
                const float *go = dout + ((size_t)(n * d->Ho + oy) * d->Wo + ox) * C;
                for (int ky = 0; ky < K; ky++) {
                    int iy = oy * d->stride - d->pad + ky;
                    if (iy < 0 || iy >= d->H) continue;
                    for (int kx = 0; kx < K; kx++) {
                        int ix = ox * d->stride - d->pad + kx;
                        if (ix < 0 || ix >= d->W) continue;
                        size_t io = ((size_t)(n * d->H + iy) * d->W + ix) * C;
                        const float *wp = wt + (size_t)(ky * K + kx) * C, *ip = in + io;
                        float *gw = dwt + (size_t)(ky * K + kx) * C;
                        for (int c = 0; c < C; c++) gw[c] += go[c] * ip[c];
                        if (din) {
                            float *dp = din + io;
                            for (int c = 0; c < C; c++) dp[c] += go[c] * wp[c];
                        }
                    }
                }
            }
    }
    for (int t = 0; t < nt; t++)
        for (int c = 0; c < C; c++)
            for (int k = 0; k < KK; k++) dw[(size_t)c * KK + k] += part[((size_t)t * KK + k) * C + c];
}

void conv2d_forward_cpu(float *out, const float *in, const float *w, const struct conv2d_desc *d,
                        float *scratch)
{
    int M = d->N * d->Ho * d->Wo;
    if (is_pointwise(d)) {
        /* out (M, Cout) = in (M, Cin) . w^T */
        gemm_cpu(0, 1, M, d->Cout, d->Cin, in, d->Cin, w, d->Cin, 0.0f, out, d->Cout);
        return;
    }
    if (is_depthwise(d)) {
        depthwise_forward(out, in, w, d, scratch);
        return;
    }
    if (is_direct(d)) {
        direct_forward(out, in, w, d, scratch);
        return;
    }
    int Cog = d->Cout / d->groups, Kd = (d->Cin / d->groups) * d->K * d->K;
    for (int g = 0; g < d->groups; g++) {
        im2col(scratch, in, d, g);
        gemm_cpu(0, 1, M, Cog, Kd, scratch, Kd, w + (size_t)g * Cog * Kd, Kd, 0.0f, out + (size_t)g * Cog, d->Cout);
    }
}

void conv2d_backward_cpu(float *din, float *dw, const float *dout, const float *in, const float *w,
                         const struct conv2d_desc *d, float *scratch, int acc)
{
    int M = d->N * d->Ho * d->Wo;
    /* scattering paths (depthwise, col2im) add into din: clear it first when overwriting */
    if (din && !acc && !is_pointwise(d)) memset(din, 0, sizeof(float) * (size_t)d->N * d->H * d->W * d->Cin);
    if (is_pointwise(d)) {
        /* dw (Cout, Cin) += dout^T (Cout, M) . in (M, Cin); din (M, Cin) += dout . w */
        gemm_cpu(1, 0, d->Cout, d->Cin, M, dout, d->Cout, in, d->Cin, 1.0f, dw, d->Cin);
        if (din)
            gemm_cpu(0, 0, M, d->Cin, d->Cout, dout, d->Cout, w, d->Cin, acc ? 1.0f : 0.0f, din, d->Cin);
        return;
    }
    if (is_depthwise(d)) {
        depthwise_backward(din, dw, dout, in, w, d, scratch);
        return;
    }
    int Cog = d->Cout / d->groups, Kd = (d->Cin / d->groups) * d->K * d->K;
    for (int g = 0; g < d->groups; g++) {
        const float *go = dout + (size_t)g * Cog;
        im2col(scratch, in, d, g);
        gemm_cpu(1, 0, Cog, Kd, M, go, d->Cout, scratch, Kd, 1.0f, dw + (size_t)g * Cog * Kd, Kd);
        if (!din) continue;
        /* dcol (M, Kd) = dout_g (M, Cog) . w_g (Cog, Kd), reusing the im2col scratch */
        gemm_cpu(0, 0, M, Kd, Cog, go, d->Cout, w + (size_t)g * Cog * Kd, Kd, 0.0f, scratch, Kd);
        col2im_add(din, scratch, d, g);
    }
}
