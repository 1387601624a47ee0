/* conv2d_dw.c: the depthwise path of conv2d.c (groups == Cin == Cout), CPU: weights transposed
 * to (K*K, C) so the inner loops run over channels in registers; forward, the weight and input
 * gradients, and one output row with a fused bias + activation for inference parts. */

/* -std=c11 turns off FMA contraction; the conv kernels are chains of multiply-adds */
#pragma GCC optimize("fp-contract=fast")
#include <stdbool.h>
#include <stddef.h>
#include <string.h>

#include "conv2d_dw.h"
#include "simd.h"

#include "../../../core/check.h"
#include "../../../core/banned.h"

/* ---- depthwise: wt (K*K, C) is w (C, 1, K, K) transposed so the inner loop runs over C ---- */
void depthwise_transpose_cpu(float *wt, const float *w, int C, int KK)
{
    for (int c = 0; c < C; c++)
        for (int k = 0; k < KK; k++) wt[(size_t)k * C + c] = w[(size_t)c * KK + k];
}

/* Depthwise blocks: one register of channels (VW of them, or 8: half an AVX-512 register) of 4
 * neighbouring output pixels (four independent accumulator chains), or 4 x VW channels of one
 * pixel (again four chains), summed
 * over the taps in registers, then act(x + bias) when bias is given (inference), stored once.
 * `base` is the input at the block's top-left tap, sx the input step between neighbouring
 * output pixels, taps ky0..ky1 x kx0..kx1. */
#define DW_BLOCKS(VT, SFX, LD, ST, ACT)                                                                     \
    static void dw4_##SFX(float *o, const float *base, const float *wt, int C, int c0, int K, int ky0, \
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
            a0 = ACT(a0 + b, act), a1 = ACT(a1 + b, act);                                     \
            a2 = ACT(a2 + b, act), a3 = ACT(a3 + b, act);                                     \
        }                                                                                             \
        if (add) a0 += LD(o + c0), a1 += LD(o + C + c0), a2 += LD(o + 2 * C + c0), a3 += LD(o + 3 * C + c0); \
        ST(o + c0, a0), ST(o + C + c0, a1), ST(o + 2 * C + c0, a2), ST(o + 3 * C + c0, a3);          \
    }                                                                                                 \
    static void dw1_##SFX(float *o, const float *base, const float *wt, int C, int c0, int K, int ky0, \
                         int ky1, int kx0, int kx1, int W, const float *bias, enum act_kind act, int add) \
    {                                                                                                 \
        VT acc = {0};                                                                                 \
        for (int ky = ky0; ky < ky1; ky++)                                                            \
            for (int kx = kx0; kx < kx1; kx++)                                                        \
                acc += LD(base + ((size_t)ky * W + kx) * C + c0) * LD(wt + (size_t)(ky * K + kx) * C + c0); \
        if (bias) acc = ACT(acc + LD(bias + c0), act);                                            \
        if (add) acc += LD(o + c0);                                                                   \
        ST(o + c0, acc);                                                                              \
    }
DW_BLOCKS(vf, v, ldv, stv, actv)
#if VW > 8
DW_BLOCKS(v8, 8, ld8, st8, act8)
#endif

/* A row segment of DW_R neighbouring output pixels for one register of channels, K x K taps at
 * stride S, all three compile-time constants so that the loops unroll and the DW_R accumulators
 * and the K weights of a tap row stay in registers: each input pixel of the segment is loaded
 * once per tap row and used for every output it feeds (up to K), instead of once per (output,
 * tap) as in dw4_ (5 loads per 4 multiply-adds, the load ports' limit). DW_R accumulators + K
 * weights + 1 input fit AVX2's and SSE's 16 registers for K <= 5 (13 for K = 5). Each output
 * still sums its taps in (ky, kx) order, so the values equal the per-pixel kernels' bit for bit.
 * `ip` is the input at (tap row ky0, column ix0, channel c0); inputs outside columns [0, W) are
 * skipped (CHECK: the segment touches the left or right border; else no test at all). */
#define DW_R 7
#define DW_SEG(VT, LD, ST, ACT, NAME, K, S, CHECK)                                                   \
    static void NAME(float *o, const float *ip, const float *wt, int C, int W, int ix0, int nky,     \
                     const float *bias, enum act_kind act, int add)                                  \
    {                                                                                                \
        VT a[DW_R] = {{0}};                                                                          \
        for (int ky = 0; ky < nky; ky++, ip += (size_t)W * C, wt += (size_t)K * C) {                \
            VT w[K];                                                                                 \
            _Pragma("GCC unroll 8") for (int kx = 0; kx < K; kx++) w[kx] = LD(wt + (size_t)kx * C);  \
            _Pragma("GCC unroll 64") for (int j = 0; j < S * (DW_R - 1) + K; j++) {                  \
                if (CHECK && (ix0 + j < 0 || ix0 + j >= W)) continue;                                \
                VT x = LD(ip + (ptrdiff_t)j * C);                                                    \
                _Pragma("GCC unroll 8") for (int kx = 0; kx < K; kx++) {                             \
                    int t = j - kx;                                                                  \
                    if (t >= 0 && t % S == 0 && t / S < DW_R) a[t / S] += x * w[kx];                 \
                }                                                                                    \
            }                                                                                        \
        }                                                                                            \
        VT b = bias ? LD(bias) : (VT){0};                                                            \
        _Pragma("GCC unroll 8") for (int r = 0; r < DW_R; r++) {                                     \
            VT v = bias ? ACT(a[r] + b, act) : a[r];                                                 \
            if (add) v += LD(o + (size_t)r * C);                                                     \
            ST(o + (size_t)r * C, v);                                                                \
        }                                                                                            \
    }
#define DW_SEGS(VT, SFX, LD, ST, ACT)                                                                \
    DW_SEG(VT, LD, ST, ACT, dwseg3s1_##SFX, 3, 1, 1)                                                 \
    DW_SEG(VT, LD, ST, ACT, dwseg3s2_##SFX, 3, 2, 1)                                                 \
    DW_SEG(VT, LD, ST, ACT, dwseg5s1_##SFX, 5, 1, 1)                                                 \
    DW_SEG(VT, LD, ST, ACT, dwseg5s2_##SFX, 5, 2, 1)                                                 \
    DW_SEG(VT, LD, ST, ACT, dwseg3s1i_##SFX, 3, 1, 0)                                                \
    DW_SEG(VT, LD, ST, ACT, dwseg3s2i_##SFX, 3, 2, 0)                                                \
    DW_SEG(VT, LD, ST, ACT, dwseg5s1i_##SFX, 5, 1, 0)                                                \
    DW_SEG(VT, LD, ST, ACT, dwseg5s2i_##SFX, 5, 2, 0)                                                \
    typedef void (*dwseg_fn_##SFX)(float *, const float *, const float *, int, int, int, int, const float *, \
                                   enum act_kind, int);                                             \
    /* the segment kernel for K and S (NULL: none), interior (no column tests) or not */             \
    static dwseg_fn_##SFX dwseg_pick_##SFX(int K, int S, int interior)                              \
    {                                                                                                \
        if (K == 3 && S == 1) return interior ? dwseg3s1i_##SFX : dwseg3s1_##SFX;                   \
        if (K == 3 && S == 2) return interior ? dwseg3s2i_##SFX : dwseg3s2_##SFX;                   \
        if (K == 5 && S == 1) return interior ? dwseg5s1i_##SFX : dwseg5s1_##SFX;                   \
        if (K == 5 && S == 2) return interior ? dwseg5s2i_##SFX : dwseg5s2_##SFX;                   \
        return NULL;                                                                                 \
    }
DW_SEGS(vf, v, ldv, stv, actv)
#if VW > 8
DW_SEGS(v8, 8, ld8, st8, act8)
#endif

/* Row segments of DW_R pixels over channels [c0, c1) (a multiple of 8 wide); the last segment
 * is moved left to end at the row's end and recomputes a few pixels (same values), so only
 * stores may repeat: not for add, where the caller takes the per-pixel path. Returns false
 * when no segment kernel fits (K, stride, or a row shorter than DW_R). */
static bool dw_row_segments(float *orow, const float *irow, const float *wt, const struct conv2d_desc *d, int ky0,
                            int ky1, int c0, int c1, const float *bias, enum act_kind act)
{
    int C = d->Cin, K = d->K, S = d->stride, Wo = d->Wo;
    if (Wo < DW_R || dwseg_pick_v(K, S, 0) == NULL || (c1 - c0) % 8) return false;
    int span = S * (DW_R - 1) + K; /* input columns a segment reads */
    for (int ox = 0; ox < Wo; ox += DW_R) {
        if (ox + DW_R > Wo) ox = Wo - DW_R;
        int ix0 = ox * S - d->pad;
        bool interior = ix0 >= 0 && ix0 + span <= d->W;
        float *o = orow + (size_t)ox * C;
        const float *ip = irow + (ptrdiff_t)ix0 * C, *w = wt + (size_t)ky0 * K * C;
        int c = c0;
        dwseg_fn_v f = dwseg_pick_v(K, S, interior);
        for (; c + VW <= c1; c += VW) f(o + c, ip + c, w + c, C, d->W, ix0, ky1 - ky0, bias ? bias + c : NULL, act, 0);
#if VW > 8
        if (c < c1) dwseg_pick_8(K, S, interior)(o + c, ip + c, w + c, C, d->W, ix0, ky1 - ky0, bias ? bias + c : NULL, act, 0);
#endif
    }
    return true;
}

/* 4 x VW channels of one pixel: four chains (one chain of 25 dependent multiply-adds per
 * register left the FMA units idle on 7x7 maps, where every pixel is a border pixel) */
static void dw1x4(float *o, const float *base, const float *wt, int C, int c0, int K, int ky0, int ky1,
                     int kx0, int kx1, int W, const float *bias, enum act_kind act, int add)
{
    vf a[4] = {{0}};
    for (int ky = ky0; ky < ky1; ky++)
        for (int kx = kx0; kx < kx1; kx++) {
            const float *ip = base + ((size_t)ky * W + kx) * C + c0, *wp = wt + (size_t)(ky * K + kx) * C + c0;
            for (int j = 0; j < 4; j++) a[j] += ldv(ip + VW * j) * ldv(wp + VW * j);
        }
    for (int j = 0; j < 4; j++) {
        if (bias) a[j] = actv(a[j] + ldv(bias + c0 + VW * j), act);
        if (add) a[j] += ldv(o + c0 + VW * j);
        stv(o + c0 + VW * j, a[j]);
    }
}

/* Channels in chunks of 4 x VW, VW, then 8 (MobileNetV3's widths are multiples of 8), then scalars. */
static void dw_pixel(float *o, const float *base, const float *wt, int C, int c0, int c1, int K, int ky0, int ky1,
                     int kx0, int kx1, int W, const float *bias, enum act_kind act, int add)
{
    int c = c0;
    for (; c + 4 * VW <= c1; c += 4 * VW) dw1x4(o, base, wt, C, c, K, ky0, ky1, kx0, kx1, W, bias, act, add);
    for (; c + VW <= c1; c += VW) dw1_v(o, base, wt, C, c, K, ky0, ky1, kx0, kx1, W, bias, act, add);
#if VW > 8
    for (; c + 8 <= c1; c += 8) dw1_8(o, base, wt, C, c, K, ky0, ky1, kx0, kx1, W, bias, act, add);
#endif
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
void depthwise_row_cpu(float *out, const float *in, const float *wt, const struct conv2d_desc *d, int n, int oy,
                       int c0, int c1, const float *bias, enum act_kind act, int add)
{
    int C = d->Cin, K = d->K;
    int ky0 = 0, ky1 = K, iy0 = oy * d->stride - d->pad;
    if (iy0 < 0) ky0 = -iy0;
    if (iy0 + K > d->H) ky1 = d->H - iy0;
    if (!add && dw_row_segments(out + (size_t)(n * d->Ho + oy) * d->Wo * C, in + (ptrdiff_t)((size_t)(n * d->H) * d->W + (ptrdiff_t)(iy0 + ky0) * d->W) * C,
                                wt, d, ky0, ky1, c0, c1, bias, act))
        return;
    for (int ox = 0; ox < d->Wo; ox++) {
        int ix0 = ox * d->stride - d->pad;
        float *o = out + ((size_t)(n * d->Ho + oy) * d->Wo + ox) * C;
        const float *base = in + ((size_t)(n * d->H + iy0) * d->W + ix0) * C;
        if (ix0 >= 0 && ox + 3 < d->Wo && (ox + 3) * d->stride - d->pad + K <= d->W && (c1 - c0) % 8 == 0) {
            size_t sx = (size_t)d->stride * C;
            int c = c0;
            for (; c + VW <= c1; c += VW) dw4_v(o, base, wt, C, c, K, ky0, ky1, d->W, sx, bias, act, add);
#if VW > 8
            for (; c < c1; c += 8) dw4_8(o, base, wt, C, c, K, ky0, ky1, d->W, sx, bias, act, add);
#endif
            ox += 3;
            continue;
        }
        int kx0 = ix0 < 0 ? -ix0 : 0, kx1 = ix0 + K > d->W ? d->W - ix0 : K;
        dw_pixel(o, base, wt, C, c0, c1, K, ky0, ky1, kx0, kx1, d->W, bias, act, add);
    }
}

void depthwise_forward_cpu(float *out, const float *in, const float *w, const struct conv2d_desc *d, float *wt)
{
    depthwise_transpose_cpu(wt, w, d->Cin, d->K * d->K);
#pragma omp parallel for collapse(2) schedule(dynamic, 8) if ((size_t)d->N * d->Ho * d->Wo * d->K * d->K * d->Cin >= OMP_MIN_WORK)
    for (int n = 0; n < d->N; n++)
        for (int oy = 0; oy < d->Ho; oy++) depthwise_row_cpu(out, in, wt, d, n, oy, 0, d->Cin, NULL, ACT_NONE, 0);
}

/* Weight gradient of one output row (image n, row oy) into dwt (KK, C), transposed: for each
 * tap and VW channels, the products over the row's pixels are summed in registers (four
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
            for (; c + VW <= C; c += VW) {
                vf a0 = {0}, a1 = {0}, a2 = {0}, a3 = {0};
                int ox = ox0;
                for (; ox + 4 <= ox1; ox += 4) {
                    const float *g = go + (size_t)ox * C + c, *x = irow + (size_t)(ox * s - d->pad + kx) * C + c;
                    size_t sx = (size_t)s * C;
                    a0 += ldv(g) * ldv(x);
                    a1 += ldv(g + C) * ldv(x + sx);
                    a2 += ldv(g + 2 * C) * ldv(x + 2 * sx);
                    a3 += ldv(g + 3 * C) * ldv(x + 3 * sx);
                }
                for (; ox < ox1; ox++) a0 += ldv(go + (size_t)ox * C + c) * ldv(irow + (size_t)(ox * s - d->pad + kx) * C + c);
                stv(gw + c, ldv(gw + c) + ((a0 + a1) + (a2 + a3)));
            }
            for (; c < C; c++) { /* the same four chains, so every width sums in one order */
                float a[4] = {0};
                int full = ox1 > ox0 ? (ox1 - ox0) / 4 * 4 : 0; /* pixels in whole groups of 4 */
                for (int ox = ox0; ox < ox1; ox++)
                    a[ox - ox0 < full ? (ox - ox0) % 4 : 0] += go[(size_t)ox * C + c] * irow[(size_t)(ox * s - d->pad + kx) * C + c];
                gw[c] += (a[0] + a[1]) + (a[2] + a[3]);
            }
        }
    }
}

/* Input gradient of one input row (image n, row iy) for strides > 1, gathered: each input
 * pixel lists the (tap, output pixel) pairs that read it (for stride s only taps of the right
 * parity), then sums them for 4 x VW channels at a time in four register chains and stores or adds
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
        for (; c + 4 * VW <= C; c += 4 * VW) {
            vf a[4] = {{0}};
            for (int t = 0; t < nt; t++)
                for (int j = 0; j < 4; j++) a[j] += ldv(dout + go_off[t] + c + VW * j) * ldv(wt + w_off[t] + c + VW * j);
            for (int j = 0; j < 4; j++) stv(o + c + VW * j, acc ? ldv(o + c + VW * j) + a[j] : a[j]);
        }
        for (; c + VW <= C; c += VW) {
            vf a = {0};
            for (int t = 0; t < nt; t++) a += ldv(dout + go_off[t] + c) * ldv(wt + w_off[t] + c);
            stv(o + c, acc ? ldv(o + c) + a : a);
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
void depthwise_backward_cpu(float *din, float *dw, const float *dout, const float *in, const float *w,
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
    depthwise_transpose_cpu(wt, w, C, KK);
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
                    if (d->stride == 1) depthwise_row_cpu(din, dout, wf, &td, n, iy, 0, C, NULL, ACT_NONE, acc);
                    else dw_input_grad_row(din, dout, wt, d, n, iy, acc);
                }
        }
    }
    for (int t = 0; t < nch; t++)
        for (int c = 0; c < C; c++)
            for (int k = 0; k < KK; k++) dw[(size_t)c * KK + k] += part[((size_t)t * KK + k) * C + c];
}
