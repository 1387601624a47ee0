/* conv2d.c: grouped 2-D convolution on NHWC activations, CPU reference (see ops.h).
 * Three paths: pointwise (one sgemm over the whole batch), depthwise (conv2d_dw.c: own kernel,
 * vectorised over channels), and the general grouped case through im2col + sgemm (the stem
 * conv's backward; its forward has a direct kernel).
 * Inference also runs each conv in parts (one per thread) with the folded-BN bias and the
 * activation applied to each part while it is in cache. Not here: dilation. */

/* -std=c11 turns off FMA contraction; the conv kernels are chains of multiply-adds */
#pragma GCC optimize("fp-contract=fast")
#include <stdbool.h>
#include <string.h>

#include "conv2d_dw.h"
#include "gemm.h"
#include "gemm_bf16.h"
#include "simd.h"

#include "../../../core/check.h"
#include "../../../core/banned.h"


/* few input channels, dense: the direct kernel (forward) */
static int is_direct(const struct conv2d_desc *d) { return d->groups == 1 && d->Cin <= 4 && d->K > 1; }

size_t conv2d_scratch_floats(const struct conv2d_desc *d)
{
    if (conv2d_is_pointwise(d)) /* bf16: packed weights for gemm_bf16 (sized whatever level runs) */
        return d->prec == PREC_BF16 ? gemm_bf16_pack_words(d->Cout, d->Cin) : 0;
    if (conv2d_is_depthwise(d)) return (2 + (size_t)DW_CHUNKS) * d->K * d->K * d->Cin;
    size_t M = (size_t)d->N * d->Ho * d->Wo, col = M * (size_t)(d->Cin / d->groups) * d->K * d->K;
    size_t direct = is_direct(d) ? pwconv_packed_floats(d->K * d->K * d->Cin, d->Cout) : 0;
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

/* Dense conv with few input channels (the stem: 3 -> 16, 3x3): a GEMM over patches (conv2d_pw.c)
 * with the weights packed in its panels (bias NULL: zero, for training). Forward only; backward
 * uses im2col. */
static void direct_pack(float *packed, const float *w, const float *bias, const struct conv2d_desc *d)
{
    pwconv_pack_cpu(packed, w, bias, d->K, d->Cin, d->Cout);
}

/* One output pixel whose patch crosses the border: its inside taps in the GEMM's order
 * (ky, kx, ci), vectorised over output channels (VW divides a 16-column panel), then act(x + bias). */
static void direct_border_pixel(float *o, const float *in, const float *packed, const struct conv2d_desc *d, int n,
                                int iy0, int ix0, enum act_kind act)
{
    int K = d->K, Ci = d->Cin, Co = d->Cout, Kt = K * K * Ci, np = (Co + 15) / 16;
    const float *pb = packed + (size_t)np * 16 * Kt;
    for (int j = 0; j < np; j++) {
        float t[16];
        vf acc[16 / VW] = {{0}}; /* the panel's vectors side by side: independent chains */
        for (int ky = 0; ky < K; ky++) {
            int iy = iy0 + ky;
            if (iy < 0 || iy >= d->H) continue;
            for (int kx = 0; kx < K; kx++) {
                int ix = ix0 + kx;
                if (ix < 0 || ix >= d->W) continue;
                const float *ip = in + ((size_t)(n * d->H + iy) * d->W + ix) * Ci;
                const float *wp = packed + ((size_t)j * Kt + (size_t)(ky * K + kx) * Ci) * 16;
                for (int ci = 0; ci < Ci; ci++)
                    for (int v = 0; v < 16 / VW; v++) acc[v] += ip[ci] * ldv(wp + (size_t)ci * 16 + v * VW);
            }
        }
        for (int v = 0; v < 16 / VW; v++) stv(t + v * VW, actv(acc[v] + ldv(pb + j * 16 + v * VW), act));
        memcpy(o + j * 16, t, sizeof(float) * (size_t)(Co - j * 16 < 16 ? Co - j * 16 : 16));
    }
}

/* One output row (image n, row oy) of the direct conv: act(conv + bias), bias from `packed`.
 * Pixels whose patch lies inside the input go through the GEMM kernel, the border ones tap by
 * tap (the same sum order, so the same values). */
static void direct_forward_row(float *out, const float *in, const float *packed, const struct conv2d_desc *d, int n,
                               int oy, enum act_kind act)
{
    int K = d->K, Ci = d->Cin, Co = d->Cout, s = d->stride, iy0 = oy * s - d->pad;
    float *orow = out + (size_t)(n * d->Ho + oy) * d->Wo * Co;
    int oxa = 0, oxb = 0; /* inside pixels [oxa, oxb): ox*s - pad >= 0 and ox*s - pad + K <= W */
    if (iy0 >= 0 && iy0 + K <= d->H && d->W + d->pad >= K) {
        oxa = (d->pad + s - 1) / s;
        oxb = (d->W + d->pad - K) / s + 1;
        if (oxb > d->Wo) oxb = d->Wo;
        if (oxa > oxb) oxa = oxb;
        if (oxb > oxa)
            pwconv_patches_cpu(orow + (size_t)oxa * Co, in + ((size_t)(n * d->H + iy0) * d->W + oxa * s - d->pad) * Ci,
                               (size_t)s * Ci, oxb - oxa, packed, act, K, Ci, d->W, Co);
    }
    for (int ox = 0; ox < d->Wo; ox++) {
        if (ox == oxa && oxb > oxa) ox = oxb;
        if (ox >= d->Wo) break;
        direct_border_pixel(orow + (size_t)ox * Co, in, packed, d, n, iy0, ox * s - d->pad, act);
    }
}

static void direct_forward(float *out, const float *in, const float *w, const struct conv2d_desc *d, float *packed)
{
    direct_pack(packed, w, NULL, d);
#pragma omp parallel for collapse(2) schedule(dynamic, 8) if ((size_t)d->N * d->Ho * d->Wo * d->K * d->K * d->Cin * d->Cout >= OMP_MIN_WORK)
    for (int n = 0; n < d->N; n++)
        for (int oy = 0; oy < d->Ho; oy++) direct_forward_row(out, in, packed, d, n, oy, ACT_NONE);
}

void conv2d_forward_cpu(struct backend_ctx *cx, float *out, const float *in, const float *w,
                        const struct conv2d_desc *d,
                        float *scratch)
{
    (void)cx;
    int M = d->N * d->Ho * d->Wo;
    if (conv2d_is_pointwise(d)) {
        /* out (M, Cout) = in (M, Cin) . w^T; bf16 values: vdpbf16ps where the CPU has it, else the
         * sgemm on the same values (exact products, fp32 accumulation: the same maths) */
        if (d->prec == PREC_BF16 && gemm_bf16_native())
            gemm_bf16_nt(true, M, d->Cout, d->Cin, in, d->Cin, w, d->Cin, out, d->Cout, (uint32_t *)scratch);
        else
            gemm_cpu(0, 1, M, d->Cout, d->Cin, in, d->Cin, w, d->Cin, 0.0f, out, d->Cout);
        return;
    }
    if (conv2d_is_depthwise(d)) {
        depthwise_forward_cpu(out, in, w, d, scratch);
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

void conv2d_backward_cpu(struct backend_ctx *cx, float *din, float *dw, const float *dout, const float *in,
                         const float *w,
                         const struct conv2d_desc *d, float *scratch, int acc)
{
    (void)cx;
    int M = d->N * d->Ho * d->Wo;
    /* col2im scatters (adds) into din: clear it first when overwriting */
    if (din && !acc && !conv2d_is_pointwise(d) && !conv2d_is_depthwise(d))
        memset(din, 0, sizeof(float) * (size_t)d->N * d->H * d->W * d->Cin);
    if (conv2d_is_pointwise(d)) {
        /* dw (Cout, Cin) += dout^T (Cout, M) . in (M, Cin); din (M, Cin) += dout . w */
        gemm_cpu(1, 0, d->Cout, d->Cin, M, dout, d->Cout, in, d->Cin, 1.0f, dw, d->Cin);
        if (din)
            gemm_cpu(0, 0, M, d->Cin, d->Cout, dout, d->Cout, w, d->Cin, acc ? 1.0f : 0.0f, din, d->Cin);
        return;
    }
    if (conv2d_is_depthwise(d)) {
        depthwise_backward_cpu(din, dw, dout, in, w, d, scratch, acc);
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
    if (conv2d_is_pointwise(d)) return pwconv_packed_floats(d->Cin, d->Cout);
    if (conv2d_is_depthwise(d)) return (size_t)d->K * d->K * d->Cin;
    if (is_direct(d)) return pwconv_packed_floats(d->K * d->K * d->Cin, d->Cout);
    return 0;
}

void conv2d_pack_cpu(float *packed, const float *w, const float *bias, const struct conv2d_desc *d)
{
    if (conv2d_is_pointwise(d)) pwconv_pack_cpu(packed, w, bias, 1, d->Cin, d->Cout);
    else if (conv2d_is_depthwise(d)) depthwise_transpose_cpu(packed, w, d->Cin, d->K * d->K);
    else if (is_direct(d)) direct_pack(packed, w, bias, d);
}

bool conv2d_has_parts(const struct conv2d_desc *d)
{
    return conv2d_is_pointwise(d) || conv2d_is_depthwise(d) || is_direct(d);
}

/* The split: by output rows when there are enough of them to balance, else by channels (a
 * 7x7 map has 7 rows; its 576 channels split evenly). A pointwise conv with few pixels splits
 * its output channels, so each thread packs only its share of the weights. */
void conv2d_bias_act_part_cpu(float *out, const float *in, const float *packed, const float *bias, enum act_kind act,
                              const struct conv2d_desc *d, int part, int nparts)
{
    int M = d->N * d->Ho * d->Wo, R = d->N * d->Ho, Co = d->Cout;
    int r0 = 0, r1 = R, c0 = 0, c1 = Co;
    if (conv2d_is_pointwise(d)) { /* rows are pixels here */
        r1 = M;
        if (M >= 8 * nparts * 16 || Co < 32 * nparts) part_range_int(M, part, nparts, PW_MR, &r0, &r1);
        else part_range_int(Co, part, nparts, 16, &c0, &c1);
        pwconv_bias_act_cpu(out, in, packed, act, d->Cin, Co, r0, r1, c0, c1);
        return;
    }
    bool by_rows = R >= 4 * nparts || Co < 16 * nparts || !conv2d_is_depthwise(d);
    if (by_rows) part_range_int(R, part, nparts, 1, &r0, &r1);
    else part_range_int(Co, part, nparts, 16, &c0, &c1);
    for (int r = r0; r < r1 && c0 < c1; r++) {
        int n = r / d->Ho, oy = r % d->Ho;
        if (conv2d_is_depthwise(d)) {
            depthwise_row_cpu(out, in, packed, d, n, oy, c0, c1, bias, act, 0);
        } else {
            direct_forward_row(out, in, packed, d, n, oy, act); /* the bias is packed */
        }
    }
}
