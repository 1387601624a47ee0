/* conv2d.c: grouped 2-D convolution on NHWC activations, CPU reference (see ops.h).
 * Three paths: pointwise (one sgemm over the whole batch), depthwise (own kernel, vectorised
 * over channels), and the general grouped case through im2col + sgemm (the stem conv).
 * Inference also runs each conv in parts (one per thread) with the folded-BN bias and the
 * activation applied to each part while it is in cache. Not here: dilation. */

/* -std=c11 turns off FMA contraction; the conv kernels are chains of multiply-adds */
#pragma GCC optimize("fp-contract=fast")
#include <stdbool.h>
#include <string.h>

#include "gemm.h"
#include "simd.h"

#include "../../../core/check.h"
#include "../../../core/banned.h"

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

/* Image ranges of the depthwise weight gradient (its scratch holds one partial per range). */
#define DW_CHUNKS 8

/* few input channels, dense: the direct kernel (forward) */
static int is_direct(const struct conv2d_desc *d) { return d->groups == 1 && d->Cin <= 4 && d->K > 1; }

size_t conv2d_scratch_floats(const struct conv2d_desc *d)
{
    if (is_pointwise(d)) return 0;
    if (is_depthwise(d)) return (2 + (size_t)DW_CHUNKS) * d->K * d->K * d->Cin;
    size_t M = (size_t)d->N * d->Ho * d->Wo, col = M * (size_t)(d->Cin / d->groups) * d->K * d->K;
    size_t direct = is_direct(d) ? (size_t)d->K * d->K * d->Cin * d->Cout : 0;
    return col > direct ? col : direct;
}

/* ---- general path: im2col for group g. col (M, Cg*K*K), k = ci*K*K + ky*K + kx ------------- */
static void im2col(float *col, const float *in, const struct conv2d_desc *d, int g)
{
    int Cg = d->Cin / d->groups, KK = d->K * d->K, Kd = Cg * KK;
#pragma omp parallel for collapse(2) schedule(dynamic, 8) if ((size_t)d->N * d->Ho * d->Wo * d->K * d->K * d->Cin >= OMP_MIN_WORK)
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
#pragma omp parallel for schedule(dynamic, 8) if ((size_t)d->N * d->Ho * d->Wo * d->K * d->K * d->Cin >= OMP_MIN_WORK)
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

/* Depthwise blocks: VW channels (a v16 or v8 register) of 4 neighbouring output pixels (four
 * independent accumulator chains), or 4 x VW channels of one pixel (again four chains), summed
 * over the taps in registers, then act(x + bias) when bias is given (inference), stored once.
 * `base` is the input at the block's top-left tap, sx the input step between neighbouring
 * output pixels, taps ky0..ky1 x kx0..kx1. */
#define DW_BLOCKS(VT, VW, LD, ST)                                                                     \
    static void dw4_##VW(float *o, const float *base, const float *wt, int C, int c0, int K, int ky0, \
                         int ky1, int W, size_t sx, const float *bias, enum act_kind act, int add)    \
    {                                                                                                 \
        VT a0 = {0}, a1 = {0}, a2 = {0}, a3 = {0};                                                    \
        for (int ky = ky0; ky < ky1; ky++)                                                            \
            for (int kx = 0; kx < K; kx++) {                                                          \
                const float *ip = base + ((size_t)ky * W + kx) * C + c0;                              \
                VT wv = LD(wt + (size_t)(ky * K + kx) * C + c0);                                      \
                a0 += LD(ip) * wv;                                                                    \
                a1 += LD(ip + sx) * wv;                                                               \
                a2 += LD(ip + 2 * sx) * wv;                                                           \
                a3 += LD(ip + 3 * sx) * wv;                                                           \
            }                                                                                         \
        if (bias) {                                                                                   \
            VT b = LD(bias + c0);                                                                     \
            a0 = act##VW(a0 + b, act), a1 = act##VW(a1 + b, act);                                     \
            a2 = act##VW(a2 + b, act), a3 = act##VW(a3 + b, act);                                     \
        }                                                                                             \
        if (add) a0 += LD(o + c0), a1 += LD(o + C + c0), a2 += LD(o + 2 * C + c0), a3 += LD(o + 3 * C + c0); \
        ST(o + c0, a0), ST(o + C + c0, a1), ST(o + 2 * C + c0, a2), ST(o + 3 * C + c0, a3);          \
    }                                                                                                 \
    static void dw1_##VW(float *o, const float *base, const float *wt, int C, int c0, int K, int ky0, \
                         int ky1, int kx0, int kx1, int W, const float *bias, enum act_kind act, int add) \
    {                                                                                                 \
        VT acc = {0};                                                                                 \
        for (int ky = ky0; ky < ky1; ky++)                                                            \
            for (int kx = kx0; kx < kx1; kx++)                                                        \
                acc += LD(base + ((size_t)ky * W + kx) * C + c0) * LD(wt + (size_t)(ky * K + kx) * C + c0); \
        if (bias) acc = act##VW(acc + LD(bias + c0), act);                                            \
        if (add) acc += LD(o + c0);                                                                   \
        ST(o + c0, acc);                                                                              \
    }
DW_BLOCKS(v16, 16, ld16, st16)
DW_BLOCKS(v8, 8, ld8, st8)

/* 64 channels of one pixel: four chains (one chain of 25 dependent multiply-adds per 16
 * channels left the FMA units idle on 7x7 maps, where every pixel is a border pixel) */
static void dw1x4_16(float *o, const float *base, const float *wt, int C, int c0, int K, int ky0, int ky1,
                     int kx0, int kx1, int W, const float *bias, enum act_kind act, int add)
{
    v16 a[4] = {{0}};
    for (int ky = ky0; ky < ky1; ky++)
        for (int kx = kx0; kx < kx1; kx++) {
            const float *ip = base + ((size_t)ky * W + kx) * C + c0, *wp = wt + (size_t)(ky * K + kx) * C + c0;
            for (int j = 0; j < 4; j++) a[j] += ld16(ip + 16 * j) * ld16(wp + 16 * j);
        }
    for (int j = 0; j < 4; j++) {
        if (bias) a[j] = act16(a[j] + ld16(bias + c0 + 16 * j), act);
        if (add) a[j] += ld16(o + c0 + 16 * j);
        st16(o + c0 + 16 * j, a[j]);
    }
}

/* Channels in chunks of 64, 16, then 8 (MobileNetV3's widths are multiples of 8), then scalars. */
static void dw_pixel(float *o, const float *base, const float *wt, int C, int c0, int c1, int K, int ky0, int ky1,
                     int kx0, int kx1, int W, const float *bias, enum act_kind act, int add)
{
    int c = c0;
    for (; c + 64 <= c1; c += 64) dw1x4_16(o, base, wt, C, c, K, ky0, ky1, kx0, kx1, W, bias, act, add);
    for (; c + 16 <= c1; c += 16) dw1_16(o, base, wt, C, c, K, ky0, ky1, kx0, kx1, W, bias, act, add);
    for (; c + 8 <= c1; c += 8) dw1_8(o, base, wt, C, c, K, ky0, ky1, kx0, kx1, W, bias, act, add);
    for (; c < c1; c++) {
        float a = 0;
        for (int ky = ky0; ky < ky1; ky++)
            for (int kx = kx0; kx < kx1; kx++) a += base[((size_t)ky * W + kx) * C + c] * wt[(size_t)(ky * K + kx) * C + c];
        if (bias) bias_act_block_cpu(&a, 1, bias + c, 1, 1, act);
        o[c] = add ? o[c] + a : a;
    }
}

/* Channels [c0, c1) of one output row (image n, row oy) of the depthwise conv; wt is the
 * (KK, C) transposed weight. c0 is a multiple of 8. With bias: act(conv + bias); with add:
 * added to what the output holds (the input gradient as a conv, below). */
static void dw_forward_row(float *out, const float *in, const float *wt, const struct conv2d_desc *d, int n, int oy,
                           int c0, int c1, const float *bias, enum act_kind act, int add)
{
    int C = d->Cin, K = d->K;
    int ky0 = 0, ky1 = K, iy0 = oy * d->stride - d->pad;
    if (iy0 < 0) ky0 = -iy0;
    if (iy0 + K > d->H) ky1 = d->H - iy0;
    for (int ox = 0; ox < d->Wo; ox++) {
        int ix0 = ox * d->stride - d->pad;
        float *o = out + ((size_t)(n * d->Ho + oy) * d->Wo + ox) * C;
        const float *base = in + ((size_t)(n * d->H + iy0) * d->W + ix0) * C;
        if (ix0 >= 0 && ox + 3 < d->Wo && (ox + 3) * d->stride - d->pad + K <= d->W && (c1 - c0) % 8 == 0) {
            size_t sx = (size_t)d->stride * C;
            int c = c0;
            for (; c + 16 <= c1; c += 16) dw4_16(o, base, wt, C, c, K, ky0, ky1, d->W, sx, bias, act, add);
            for (; c < c1; c += 8) dw4_8(o, base, wt, C, c, K, ky0, ky1, d->W, sx, bias, act, add);
            ox += 3;
            continue;
        }
        int kx0 = ix0 < 0 ? -ix0 : 0, kx1 = ix0 + K > d->W ? d->W - ix0 : K;
        dw_pixel(o, base, wt, C, c0, c1, K, ky0, ky1, kx0, kx1, d->W, bias, act, add);
    }
}

static void depthwise_forward(float *out, const float *in, const float *w, const struct conv2d_desc *d,
                              float *wt)
{
    dw_transpose(wt, w, d->Cin, d->K * d->K);
#pragma omp parallel for collapse(2) schedule(dynamic, 8) if ((size_t)d->N * d->Ho * d->Wo * d->K * d->K * d->Cin >= OMP_MIN_WORK)
    for (int n = 0; n < d->N; n++)
        for (int oy = 0; oy < d->Ho; oy++) dw_forward_row(out, in, wt, d, n, oy, 0, d->Cin, NULL, ACT_NONE, 0);
}

/* Dense conv with few input channels (the stem: 3): direct, vectorised over Cout, with the
 * weights transposed to (K, K, Cin, Cout) in scratch. Forward only; backward uses im2col. */

/* Transposed stem weights (K, K, Cin, Cout) so the inner loop runs over Cout. */
static void direct_pack(float *wt, const float *w, const struct conv2d_desc *d)
{
    int K = d->K, Ci = d->Cin, Co = d->Cout;
    for (int co = 0; co < Co; co++)
        for (int ci = 0; ci < Ci; ci++)
            for (int k = 0; k < K * K; k++) wt[((size_t)k * Ci + ci) * Co + co] = w[((size_t)co * Ci + ci) * K * K + k];
}

/* One output row (image n, row oy) of the direct conv, K and Ci passed so that the common
 * 3x3 RGB stem gets a fully unrolled copy (below). */
static inline __attribute__((always_inline)) void direct_row(float *out, const float *in, const float *wt,
                                                             const struct conv2d_desc *d, int n, int oy, int K, int Ci)
{
    int Co = d->Cout;
    for (int ox = 0; ox < d->Wo; ox++) {
        float *o = out + ((size_t)(n * d->Ho + oy) * d->Wo + ox) * Co;
        int iy0 = oy * d->stride - d->pad, ix0 = ox * d->stride - d->pad;
        bool inside8 = iy0 >= 0 && iy0 + K <= d->H && ix0 >= 0 && ox + 7 < d->Wo &&
                       (ox + 7) * d->stride - d->pad + K <= d->W && Co % 16 == 0;
        if (inside8) { /* eight pixels, eight independent accumulator chains */
            size_t sx = (size_t)d->stride * Ci;
            const float *base = in + ((size_t)(n * d->H + iy0) * d->W + ix0) * Ci;
            for (int c0 = 0; c0 < Co; c0 += 16) {
                v16 a[8] = {{0}};
                for (int ky = 0; ky < K; ky++)
                    for (int kx = 0; kx < K; kx++) {
                        const float *ip = base + ((size_t)ky * d->W + kx) * Ci;
                        const float *wp = wt + (size_t)(ky * K + kx) * Ci * Co + c0;
                        for (int ci = 0; ci < Ci; ci++, wp += Co) {
                            v16 wv = ld16(wp);
                            for (int p = 0; p < 8; p++) a[p] += ip[ci + p * sx] * wv;
                        }
                    }
                for (int p = 0; p < 8; p++) st16(o + (size_t)p * Co + c0, a[p]);
            }
            ox += 7;
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

static void direct_forward_row(float *out, const float *in, const float *wt, const struct conv2d_desc *d, int n,
                               int oy)
{
    if (d->K == 3 && d->Cin == 3) direct_row(out, in, wt, d, n, oy, 3, 3);
    else direct_row(out, in, wt, d, n, oy, d->K, d->Cin);
}

static void direct_forward(float *out, const float *in, const float *w, const struct conv2d_desc *d, float *wt)
{
    direct_pack(wt, w, d);
#pragma omp parallel for collapse(2) schedule(dynamic, 8) if ((size_t)d->N * d->Ho * d->Wo * d->K * d->K * d->Cin * d->Cout >= OMP_MIN_WORK)
    for (int n = 0; n < d->N; n++)
        for (int oy = 0; oy < d->Ho; oy++) direct_forward_row(out, in, wt, d, n, oy);
}

/* Weight gradient of one output row (image n, row oy) into dwt (KK, C), transposed: for each
 * tap and 16 channels, the products over the row's pixels are summed in registers (four
 * chains over neighbouring pixels) and added to dwt once per row. */
static void dw_grad_row(float *dwt, const float *dout, const float *in, const struct conv2d_desc *d, int n, int oy)
{
    int C = d->Cin, K = d->K, s = d->stride;
    const float *go = dout + (size_t)(n * d->Ho + oy) * d->Wo * C;
    for (int ky = 0; ky < K; ky++) {
        int iy = oy * s - d->pad + ky;
        if (iy < 0 || iy >= d->H) continue;
        const float *irow = in + (size_t)(n * d->H + iy) * d->W * C;
        for (int kx = 0; kx < K; kx++) {
            /* output pixels whose tap kx lands inside the row: ox in [ox0, ox1) */
            int ox0 = d->pad - kx > 0 ? (d->pad - kx + s - 1) / s : 0;
            int ox1 = (d->W - 1 + d->pad - kx) / s + 1;
            if (ox1 > d->Wo) ox1 = d->Wo;
            float *gw = dwt + (size_t)(ky * K + kx) * C;
            int c = 0;
            for (; c + 16 <= C; c += 16) {
                v16 a0 = {0}, a1 = {0}, a2 = {0}, a3 = {0};
                int ox = ox0;
                for (; ox + 4 <= ox1; ox += 4) {
                    const float *g = go + (size_t)ox * C + c, *x = irow + (size_t)(ox * s - d->pad + kx) * C + c;
                    size_t sx = (size_t)s * C;
                    a0 += ld16(g) * ld16(x);
                    a1 += ld16(g + C) * ld16(x + sx);
                    a2 += ld16(g + 2 * C) * ld16(x + 2 * sx);
                    a3 += ld16(g + 3 * C) * ld16(x + 3 * sx);
                }
                for (; ox < ox1; ox++) a0 += ld16(go + (size_t)ox * C + c) * ld16(irow + (size_t)(ox * s - d->pad + kx) * C + c);
                st16(gw + c, ld16(gw + c) + ((a0 + a1) + (a2 + a3)));
            }
            for (; c < C; c++) {
                float a = 0;
                for (int ox = ox0; ox < ox1; ox++) a += go[(size_t)ox * C + c] * irow[(size_t)(ox * s - d->pad + kx) * C + c];
                gw[c] += a;
            }
        }
    }
}

/* Input gradient of one input row (image n, row iy) for strides > 1, gathered: each input
 * pixel lists the (tap, output pixel) pairs that read it (for stride s only taps of the right
 * parity), then sums them for 64 channels at a time in four register chains and stores or adds
 * once. No scatter, so nothing to clear first. Stride 1 is a plain conv (see below). */
static void dw_input_grad_row(float *din, const float *dout, const float *wt, const struct conv2d_desc *d, int n,
                              int iy, int acc)
{
    int C = d->Cin, K = d->K, s = d->stride;
    size_t go_off[64], w_off[64]; /* K <= 8 checked by the caller */
    for (int ix = 0; ix < d->W; ix++) {
        float *o = din + ((size_t)(n * d->H + iy) * d->W + ix) * C;
        int nt = 0;
        for (int ky = (iy + d->pad) % s; ky < K; ky += s) {
            int oy = (iy + d->pad - ky) / s;
            if (oy < 0 || oy >= d->Ho) continue;
            for (int kx = (ix + d->pad) % s; kx < K; kx += s) {
                int ox = (ix + d->pad - kx) / s;
                if (ox < 0 || ox >= d->Wo) continue;
                go_off[nt] = ((size_t)(n * d->Ho + oy) * d->Wo + ox) * C;
                w_off[nt++] = (size_t)(ky * K + kx) * C;
            }
        }
        int c = 0;
        for (; c + 64 <= C; c += 64) {
            v16 a[4] = {{0}};
            for (int t = 0; t < nt; t++)
                for (int j = 0; j < 4; j++) a[j] += ld16(dout + go_off[t] + c + 16 * j) * ld16(wt + w_off[t] + c + 16 * j);
            for (int j = 0; j < 4; j++) st16(o + c + 16 * j, acc ? ld16(o + c + 16 * j) + a[j] : a[j]);
        }
        for (; c + 16 <= C; c += 16) {
            v16 a = {0};
            for (int t = 0; t < nt; t++) a += ld16(dout + go_off[t] + c) * ld16(wt + w_off[t] + c);
            st16(o + c, acc ? ld16(o + c) + a : a);
        }
        for (; c < C; c++) {
            float a = 0;
            for (int t = 0; t < nt; t++) a += dout[go_off[t] + c] * wt[w_off[t] + c];
            o[c] = acc ? o[c] + a : a;
        }
    }
}

/* Stride 1: din is the depthwise conv of dout with the kernel flipped and padding K-1-pad, so
 * the forward kernels (four-pixel register blocks) compute it. wf (KK, C): flipped wt. */
static void dw_flip(float *wf, const float *wt, int C, int K)
{
    for (int k = 0; k < K * K; k++) memcpy(wf + (size_t)(K * K - 1 - k) * C, wt + (size_t)k * C, sizeof(float) * (size_t)C);
}

/* The weight gradient: the images are cut into at most DW_CHUNKS fixed ranges taken
 * dynamically by the threads; each range accumulates its own transposed partial (KK, C) in
 * scratch and the partials are summed in range order: bit-identical whatever the scheduling,
 * and a thread that loses its core to another process holds up one range, not half the batch.
 * The input gradient: rows in parallel, each written by one thread. */
static void depthwise_backward(float *din, float *dw, const float *dout, const float *in, const float *w,
                               const struct conv2d_desc *d, float *scratch, int acc)
{
    int C = d->Cin, K = d->K, KK = K * K;
    int nch = d->N < DW_CHUNKS ? d->N : DW_CHUNKS, per = (d->N + nch - 1) / nch;
    /* (KK, C) transposed, (KK, C) flipped, then nch x (KK, C) partials */
    float *wt = scratch, *wf = scratch + (size_t)KK * C, *part = wf + (size_t)KK * C;
    struct conv2d_desc td; /* stride 1: the input gradient as a conv over dout */
    if (d->stride == 1) conv2d_desc_init(&td, d->N, d->Ho, d->Wo, C, C, K, 1, K - 1 - d->pad, C);
    CHECK(d->stride == 1 ? td.Ho == d->H && td.Wo == d->W : K <= 8, "depthwise backward: K %d stride %d pad %d",
          K, d->stride, d->pad);
    dw_transpose(wt, w, C, KK);
    dw_flip(wf, wt, C, K);
    memset(part, 0, sizeof(float) * (size_t)nch * KK * C);
    bool par = (size_t)d->N * d->Ho * d->Wo * KK * C >= OMP_MIN_WORK;
#pragma omp parallel if (par)
    {
#pragma omp for schedule(dynamic, 1) nowait
        for (int ch = 0; ch < nch; ch++)
            for (int n = ch * per; n < (ch + 1) * per && n < d->N; n++)
                for (int oy = 0; oy < d->Ho; oy++) dw_grad_row(part + (size_t)ch * KK * C, dout, in, d, n, oy);
        if (din) {
#pragma omp for collapse(2) schedule(dynamic, 4)
            for (int n = 0; n < d->N; n++)
                for (int iy = 0; iy < d->H; iy++) {
                    if (d->stride == 1) dw_forward_row(din, dout, wf, &td, n, iy, 0, C, NULL, ACT_NONE, acc);
                    else dw_input_grad_row(din, dout, wt, d, n, iy, acc);
                }
        }
    }
    for (int t = 0; t < nch; t++)
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
    /* col2im scatters (adds) into din: clear it first when overwriting */
    if (din && !acc && !is_pointwise(d) && !is_depthwise(d))
        memset(din, 0, sizeof(float) * (size_t)d->N * d->H * d->W * d->Cin);
    if (is_pointwise(d)) {
        /* dw (Cout, Cin) += dout^T (Cout, M) . in (M, Cin); din (M, Cin) += dout . w */
        gemm_cpu(1, 0, d->Cout, d->Cin, M, dout, d->Cout, in, d->Cin, 1.0f, dw, d->Cin);
        if (din)
            gemm_cpu(0, 0, M, d->Cin, d->Cout, dout, d->Cout, w, d->Cin, acc ? 1.0f : 0.0f, din, d->Cin);
        return;
    }
    if (is_depthwise(d)) {
        depthwise_backward(din, dw, dout, in, w, d, scratch, acc);
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

/* ---- inference: conv + bias + activation on one part of the output, one thread -------------- */

size_t conv2d_packed_floats(const struct conv2d_desc *d)
{
    if (is_pointwise(d)) return pwconv_packed_floats(d->Cin, d->Cout);
    if (is_depthwise(d)) return (size_t)d->K * d->K * d->Cin;
    if (is_direct(d)) return (size_t)d->K * d->K * d->Cin * d->Cout;
    return 0;
}

void conv2d_pack_cpu(float *packed, const float *w, const float *bias, const struct conv2d_desc *d)
{
    if (is_pointwise(d)) pwconv_pack_cpu(packed, w, bias, d->Cin, d->Cout);
    else if (is_depthwise(d)) dw_transpose(packed, w, d->Cin, d->K * d->K);
    else if (is_direct(d)) direct_pack(packed, w, d);
}

bool conv2d_has_parts(const struct conv2d_desc *d) { return is_pointwise(d) || is_depthwise(d) || is_direct(d); }

/* The split: by output rows when there are enough of them to balance, else by channels (a
 * 7x7 map has 7 rows; its 576 channels split evenly). A pointwise conv with few pixels splits
 * its output channels, so each thread packs only its share of the weights. */
void conv2d_bias_act_part_cpu(float *out, const float *in, const float *packed, const float *bias, enum act_kind act,
                              const struct conv2d_desc *d, int part, int nparts)
{
    int M = d->N * d->Ho * d->Wo, R = d->N * d->Ho, Co = d->Cout;
    int r0 = 0, r1 = R, c0 = 0, c1 = Co;
    if (is_pointwise(d)) { /* rows are pixels here */
        r1 = M;
        if (M >= 8 * nparts * 16 || Co < 32 * nparts) part_range_int(M, part, nparts, 8, &r0, &r1);
        else part_range_int(Co, part, nparts, 16, &c0, &c1);
        pwconv_bias_act_cpu(out, in, packed, act, d->Cin, Co, r0, r1, c0, c1);
        return;
    }
    bool by_rows = R >= 4 * nparts || Co < 16 * nparts || !is_depthwise(d);
    if (by_rows) part_range_int(R, part, nparts, 1, &r0, &r1);
    else part_range_int(Co, part, nparts, 16, &c0, &c1);
    for (int r = r0; r < r1 && c0 < c1; r++) {
        int n = r / d->Ho, oy = r % d->Ho;
        if (is_depthwise(d)) {
            dw_forward_row(out, in, packed, d, n, oy, c0, c1, bias, act, 0);
        } else {
            direct_forward_row(out, in, packed, d, n, oy);
            bias_act_block_cpu(out + (size_t)r * d->Wo * Co + c0, Co, bias + c0, d->Wo, c1 - c0, act);
        }
    }
}
