/* act.c: elementwise ops, CPU reference: ReLU, hardswish, hardsigmoid, residual add, the
 * squeeze-excite channel scale and inverted dropout. The formulas and their derivatives (PyTorch's
 * at the kinks) are act_scalar / act_grad_scalar in simd.h. Not here: BN (bn.c), pooling (pool.c). */
#include <string.h>

#include "simd.h"
#include "../../../core/check.h"
#include "../../../core/rng.h"
#include "../../../core/banned.h"

const char *act_name(enum act_kind k)
{
    switch (k) {
    case ACT_NONE: return "none";
    case ACT_RELU: return "relu";
    case ACT_HARDSWISH: return "hardswish";
    case ACT_HARDSIGMOID: return "hardsigmoid";
    }
    return "?";
}

/* one loop per activation, the kind a constant in each (so each vectorises) */
#define ACT_FWD_LOOP(K)                                                                      \
    _Pragma("omp simd") for (size_t i = lo; i < hi; i++) out[i] = act_scalar(in[i], K)

void act_forward_part_cpu(float *out, const float *in, size_t n, enum act_kind k, int part, int nparts)
{
    size_t lo, hi;
    part_range(n, part, nparts, 16, &lo, &hi);
    switch (k) {
    case ACT_NONE:
        if (out != in && hi > lo) memmove(out + lo, in + lo, (hi - lo) * sizeof(float));
        break;
    case ACT_RELU: ACT_FWD_LOOP(ACT_RELU); break;
    case ACT_HARDSWISH: ACT_FWD_LOOP(ACT_HARDSWISH); break;
    case ACT_HARDSIGMOID: ACT_FWD_LOOP(ACT_HARDSIGMOID); break;
    }
}

void act_forward_cpu(float *out, const float *in, size_t n, enum act_kind k)
{
    int np = omp_parts(n);
#pragma omp parallel for schedule(dynamic, 1) if (np > 1)
    for (int p = 0; p < np; p++) act_forward_part_cpu(out, in, n, k, p, np);
}

/* Both loops spelled out (acc is loop-invariant, but inside an OpenMP simd loop gcc keeps
 * the branch and stops vectorising: ReLU backward took 10% of a training step). */
#define ACT_BWD_LOOP(expr)                                                                   \
    do {                                                                                     \
        if (acc) {                                                                           \
            _Pragma("omp parallel for simd schedule(dynamic, 16384) if (n >= OMP_MIN_WORK)")        \
            for (size_t i = 0; i < n; i++) { float x = in[i], g = dout[i]; din[i] += (expr); } \
        } else {                                                                             \
            _Pragma("omp parallel for simd schedule(dynamic, 16384) if (n >= OMP_MIN_WORK)")        \
            for (size_t i = 0; i < n; i++) { float x = in[i], g = dout[i]; din[i] = (expr); }  \
        }                                                                                    \
    } while (0)

void act_backward_cpu(float *din, const float *dout, const float *in, size_t n, enum act_kind k, int acc)
{
    switch (k) {
    case ACT_NONE: ACT_BWD_LOOP(act_grad_scalar(x, g, ACT_NONE)); break;
    case ACT_RELU: ACT_BWD_LOOP(act_grad_scalar(x, g, ACT_RELU)); break;
    case ACT_HARDSWISH: ACT_BWD_LOOP(act_grad_scalar(x, g, ACT_HARDSWISH)); break;
    case ACT_HARDSIGMOID: ACT_BWD_LOOP(act_grad_scalar(x, g, ACT_HARDSIGMOID)); break;
    }
}

void add_forward_part_cpu(float *out, const float *a, const float *b, size_t n, int part, int nparts)
{
    size_t lo, hi;
    part_range(n, part, nparts, 16, &lo, &hi);
#pragma omp simd
    for (size_t i = lo; i < hi; i++) out[i] = a[i] + b[i];
}

void add_forward_cpu(float *out, const float *a, const float *b, size_t n)
{
    int np = omp_parts(n);
#pragma omp parallel for schedule(dynamic, 1) if (np > 1)
    for (int p = 0; p < np; p++) add_forward_part_cpu(out, a, b, n, p, np);
}

void add_backward_cpu(float *da, float *db, const float *dout, size_t n, int acc_a, int acc_b)
{
#pragma omp parallel for simd schedule(dynamic, 16384) if (n >= OMP_MIN_WORK)
    for (size_t i = 0; i < n; i++) {
        if (acc_a) da[i] += dout[i]; else da[i] = dout[i];
        if (acc_b) db[i] += dout[i]; else db[i] = dout[i];
    }
}

void scale_forward_part_cpu(float *out, const float *x, const float *g, int N, int P, int C, int part, int nparts)
{
    size_t lo, hi;
    part_range((size_t)N * P, part, nparts, 1, &lo, &hi);
    for (size_t r = lo; r < hi; r++) {
        const float *gn = g + r / (size_t)P * C, *xr = x + r * C;
        float *o = out + r * C;
        for (int c = 0; c < C; c++) o[c] = xr[c] * gn[c];
    }
}

void scale_forward_cpu(float *out, const float *x, const float *g, int N, int P, int C)
{
    int np = omp_parts((size_t)N * P * C);
    if (np > N * P) np = N * P;
#pragma omp parallel for schedule(dynamic, 1) if (np > 1)
    for (int p = 0; p < np; p++) scale_forward_part_cpu(out, x, g, N, P, C, p, np);
}

/* dg (N, C) is a reduction over P: threads split the images. */
void scale_backward_cpu(float *dx, float *dg, const float *dout, const float *x, const float *g, int N,
                        int P, int C, int acc_x, int acc_g)
{
    if (!acc_g) memset(dg, 0, sizeof(float) * (size_t)N * C); /* (N, C): small */
#pragma omp parallel for schedule(dynamic, 8) if ((size_t)N * P * C >= OMP_MIN_WORK)
    for (int n = 0; n < N; n++) {
        const float *gn = g + (size_t)n * C;
        float *dgn = dg + (size_t)n * C;
        for (int p = 0; p < P; p++) {
            size_t o = ((size_t)n * P + p) * C;
            for (int c = 0; c < C; c++) {
                dgn[c] += dout[o + c] * x[o + c];
                if (acc_x) dx[o + c] += dout[o + c] * gn[c]; else dx[o + c] = dout[o + c] * gn[c];
            }
        }
    }
}

/* Counter-based randomness (splitmix64 of seed+index): the mask does not depend on threading. */

void dropout_forward_cpu(float *out, float *mask, const float *in, size_t n, float p, uint64_t seed)
{
    CHECK(p >= 0.0f && p < 1.0f, "dropout p %g", (double)p);
    float keep = 1.0f / (1.0f - p);
    uint64_t base = splitmix64_mix(seed);
#pragma omp parallel for schedule(dynamic, 16384) if (n >= OMP_MIN_WORK)
    for (size_t i = 0; i < n; i++) {
        float u = (float)(splitmix64_mix(base + 0x9e3779b97f4a7c15ULL * (i + 1)) >> 40) * (1.0f / 16777216.0f);
        mask[i] = u < p ? 0.0f : keep;
        out[i] = in[i] * mask[i];
    }
}

void dropout_backward_cpu(float *din, const float *dout, const float *mask, size_t n, int acc)
{
    if (acc) {
#pragma omp parallel for simd schedule(dynamic, 16384) if (n >= OMP_MIN_WORK)
        for (size_t i = 0; i < n; i++) din[i] += dout[i] * mask[i];
    } else {
#pragma omp parallel for simd schedule(dynamic, 16384) if (n >= OMP_MIN_WORK)
        for (size_t i = 0; i < n; i++) din[i] = dout[i] * mask[i];
    }
}

void bias_act_block_cpu(float *y, size_t ldy, const float *b, int rows, int cols, enum act_kind k)
{
#define BIAS_ACT_LOOP(K) for (int c = 0; c < cols; c++) r[c] = act_scalar(r[c] + b[c], K)
    for (int m = 0; m < rows; m++) {
        float *r = y + (size_t)m * ldy;
        switch (k) {
        case ACT_NONE: BIAS_ACT_LOOP(ACT_NONE); break;
        case ACT_RELU: BIAS_ACT_LOOP(ACT_RELU); break;
        case ACT_HARDSWISH: BIAS_ACT_LOOP(ACT_HARDSWISH); break;
        case ACT_HARDSIGMOID: BIAS_ACT_LOOP(ACT_HARDSIGMOID); break;
        }
    }
#undef BIAS_ACT_LOOP
}

void bias_act_forward_cpu(float *y, const float *b, size_t M, int C, enum act_kind k)
{
#pragma omp parallel for schedule(dynamic, 8) if (M * (size_t)C >= OMP_MIN_WORK)
    for (size_t m = 0; m < M; m++) bias_act_block_cpu(y + m * (size_t)C, (size_t)C, b, 1, C, k);
}

static const float img_mean[3] = {0.485f, 0.456f, 0.406f}, img_std[3] = {0.229f, 0.224f, 0.225f};

void normalize_u8_part_cpu(float *out, const uint8_t *in, size_t npix, int part, int nparts)
{
    size_t lo, hi;
    part_range(npix, part, nparts, 16, &lo, &hi);
    for (size_t i = lo; i < hi; i++)
        for (int c = 0; c < 3; c++) out[i * 3 + c] = (in[i * 3 + c] * (1.0f / 255.0f) - img_mean[c]) / img_std[c];
}

void normalize_u8_cpu(float *out, const uint8_t *in, size_t npix)
{
    int np = omp_parts(npix * 3);
#pragma omp parallel for schedule(dynamic, 1) if (np > 1)
    for (int p = 0; p < np; p++) normalize_u8_part_cpu(out, in, npix, p, np);
}
