/* bn.c: batch normalisation over the channel axis of NHWC rows (M = N*H*W, C), CPU reference.
 * Statistics are accumulated in double (M reaches 4e5 at batch 32, 112 px) and follow PyTorch:
 * biased variance to normalise, unbiased variance into the running average. Not here: the
 * inference-time folding of BN into the conv (infer/infer.c does that). */
#include <math.h>
#include <string.h>

#include "simd.h"
#include "../../../core/check.h"
#include "../../../core/banned.h"

/* Per-channel sums over M rows in BN_CHUNKS fixed row ranges taken dynamically by the
 * threads; the chunk partials are added in chunk order, so the result is bit-identical
 * whatever thread ran what, and a thread that loses its core holds up one chunk, not half. */
#define BN_CHUNKS 8

/* Rows per dynamic chunk for row loops: about 16K floats, so that handing out chunks (an
 * atomic each) stays negligible even for C = 16 (8 rows were 50K chunks per pass at bs=32). */
static int row_chunk(int C) { return C >= 2048 ? 8 : 16384 / C > 8 ? 16384 / C : 8; }

static void sum_chunks(double *s1, double *s2, int C, double (*part)[2][C])
{
    for (int c = 0; c < C; c++) s1[c] = s2[c] = 0;
    for (int k = 0; k < BN_CHUNKS; k++)
        for (int c = 0; c < C; c++) s1[c] += part[k][0][c], s2[c] += part[k][1][c];
}

/* One pass: sum[c] = sum_m x[m,c], sq[c] = sum_m x[m,c]^2, in double (var = E[x^2] - E[x]^2
 * is safe in double for activations of this size). */
static void channel_sums(double *sum, double *sq, const float *x, int M, int C)
{
    double part[BN_CHUNKS][2][C];
    int per = (M + BN_CHUNKS - 1) / BN_CHUNKS;
#pragma omp parallel for schedule(dynamic, 1) if ((size_t)M * C >= OMP_MIN_WORK)
    for (int k = 0; k < BN_CHUNKS; k++) {
        double *ps = part[k][0], *pq = part[k][1];
        for (int c = 0; c < C; c++) ps[c] = pq[c] = 0;
        int m1 = (k + 1) * per < M ? (k + 1) * per : M;
        for (int m = k * per; m < m1; m++) {
            const float *r = x + (size_t)m * C;
            for (int c = 0; c < C; c++) {
                double v = r[c];
                ps[c] += v;
                pq[c] += v * v;
            }
        }
    }
    sum_chunks(sum, sq, C, part);
}

/* y = x * scale + shift: the same float expression in forward and in the fused backward's
 * recomputation, so the activation's kinks are decided identically both ways. */
static void bn_affine(float *scale, float *shift, const float *mean, const float *rstd, const float *gamma,
                      const float *beta, int C)
{
    for (int c = 0; c < C; c++) {
        scale[c] = gamma[c] * rstd[c];
        shift[c] = (beta ? beta[c] : 0.0f) - mean[c] * scale[c];
    }
}

/* The statistics (train: batch, saved and folded into the running averages; eval: running),
 * as mean and rstd per channel. */
static void bn_stats(float *mean, float *rstd, float *save_mean, float *save_rstd, const float *in,
                     float *run_mean, float *run_var, const struct bn_desc *d)
{
    int M = d->M, C = d->C;
    if (!d->train) {
        for (int c = 0; c < C; c++) mean[c] = run_mean[c], rstd[c] = 1.0f / sqrtf(run_var[c] + d->eps);
        return;
    }
    double sum[C], sq[C];
    channel_sums(sum, sq, in, M, C);
    for (int c = 0; c < C; c++) {
        double mu = sum[c] / M, var = sq[c] / M - mu * mu;
        if (var < 0) var = 0;
        mean[c] = (float)mu;
        rstd[c] = (float)(1.0 / sqrt(var + d->eps));
        save_mean[c] = mean[c];
        save_rstd[c] = rstd[c];
        double unbiased = M > 1 ? var * M / (M - 1) : var;
        run_mean[c] = (1 - d->momentum) * run_mean[c] + d->momentum * mean[c];
        run_var[c] = (float)((1 - d->momentum) * run_var[c] + d->momentum * unbiased);
    }
}

void batchnorm_act_forward_cpu(struct backend_ctx *cx, float *out, float *save_mean, float *save_rstd,
                               const float *in, const float *gamma,
                               const float *beta, float *run_mean, float *run_var, const struct bn_desc *d,
                               enum act_kind act)
{
    (void)cx;
    int M = d->M, C = d->C;
    float mean[C], rstd[C], scale[C], shift[C]; /* C <= a few thousand: fits on the stack */
    bn_stats(mean, rstd, save_mean, save_rstd, in, run_mean, run_var, d);
    bn_affine(scale, shift, mean, rstd, gamma, beta, C);
    int rows = row_chunk(C);
#pragma omp parallel for schedule(dynamic, rows) if ((size_t)M * C >= OMP_MIN_WORK)
    for (int m = 0; m < M; m++) {
        const float *x = in + (size_t)m * C;
        float *y = out + (size_t)m * C;
#define BN_ACT_LOOP(K) for (int c = 0; c < C; c++) y[c] = act_scalar(x[c] * scale[c] + shift[c], K)
        switch (act) {
        case ACT_NONE: BN_ACT_LOOP(ACT_NONE); break;
        case ACT_RELU: BN_ACT_LOOP(ACT_RELU); break;
        case ACT_HARDSWISH: BN_ACT_LOOP(ACT_HARDSWISH); break;
        case ACT_HARDSIGMOID: BN_ACT_LOOP(ACT_HARDSIGMOID); break;
        }
#undef BN_ACT_LOOP
    }
}

void batchnorm_forward_cpu(struct backend_ctx *cx, float *out, float *save_mean, float *save_rstd, const float *in,
                           const float *gamma, const float *beta, float *run_mean, float *run_var,
                           const struct bn_desc *d)
{
    batchnorm_act_forward_cpu(cx, out, save_mean, save_rstd, in, gamma, beta, run_mean, run_var, d, ACT_NONE);
}

/* Pass 1 over rows [m0, m1): per-channel sums of g and g * xhat (inlined per activation). */
static inline __attribute__((always_inline)) void bwd_sums(double *py, double *pyx, const float *dout,
                                                           const float *in, const float *scale, const float *shift,
                                                           const float *mean, const float *rstd, int m0, int m1,
                                                           int C, enum act_kind act)
{
    float g[C]; /* the row's activation gradient first: float selects vectorise, the double sums apart */
    for (int c = 0; c < C; c++) py[c] = pyx[c] = 0;
    for (int m = m0; m < m1; m++) {
        const float *dy = dout + (size_t)m * C, *x = in + (size_t)m * C;
#pragma omp simd
        for (int c = 0; c < C; c++) g[c] = act_grad_scalar(x[c] * scale[c] + shift[c], dy[c], act);
        for (int c = 0; c < C; c++) {
            py[c] += g[c];
            pyx[c] += g[c] * (x[c] - mean[c]) * rstd[c];
        }
    }}

/* Pass 2, one row: dx (= or +=) k1 * g + k2 + k3 * (x - mean) */
static inline __attribute__((always_inline)) void bwd_row(float *dx, const float *dy, const float *x,
                                                          const float *scale, const float *shift, const float *mean,
                                                          const float *k1, const float *k2, const float *k3, int C,
                                                          enum act_kind act, int acc)
{
#pragma omp simd
    for (int c = 0; c < C; c++) {
        float v = k1[c] * act_grad_scalar(x[c] * scale[c] + shift[c], dy[c], act) + k2[c] + k3[c] * (x[c] - mean[c]);
        dx[c] = acc ? dx[c] + v : v;
    }
}

/* BN then act, backward, without the BN output: it is recomputed from x (bn_affine), so
 * neither the forward nor the backward pass writes or reads it.
 * train: dx = rstd/M * (M*dxhat - sum(dxhat) - xhat*sum(dxhat*xhat)), dxhat = g*gamma */
void batchnorm_act_backward_cpu(struct backend_ctx *cx, float *din, float *dgamma, float *dbeta,
                                const float *dout, const float *in,
                                const float *save_mean, const float *save_rstd, const float *gamma,
                                const float *beta, const float *run_var, const struct bn_desc *d, int acc,
                                enum act_kind act)
{
    (void)cx;
    int M = d->M, C = d->C;
    float rstd[C], scale[C], shift[C];
    for (int c = 0; c < C; c++)
        rstd[c] = d->train ? save_rstd[c] : 1.0f / sqrtf(run_var[c] + d->eps);
    bn_affine(scale, shift, save_mean, rstd, gamma, beta, C);
    double sdy[C], sdyx[C], part[BN_CHUNKS][2][C];
    int per = (M + BN_CHUNKS - 1) / BN_CHUNKS;
#pragma omp parallel for schedule(dynamic, 1) if ((size_t)M * C >= OMP_MIN_WORK)
    for (int k = 0; k < BN_CHUNKS; k++) {
        int m1 = (k + 1) * per < M ? (k + 1) * per : M;
        switch (act) { /* one specialised loop per activation (the switch stays out of it) */
        case ACT_NONE: bwd_sums(part[k][0], part[k][1], dout, in, scale, shift, save_mean, rstd, k * per, m1, C, ACT_NONE); break;
        case ACT_RELU: bwd_sums(part[k][0], part[k][1], dout, in, scale, shift, save_mean, rstd, k * per, m1, C, ACT_RELU); break;
        case ACT_HARDSWISH: bwd_sums(part[k][0], part[k][1], dout, in, scale, shift, save_mean, rstd, k * per, m1, C, ACT_HARDSWISH); break;
        case ACT_HARDSIGMOID: bwd_sums(part[k][0], part[k][1], dout, in, scale, shift, save_mean, rstd, k * per, m1, C, ACT_HARDSIGMOID); break;
        }
    }
    sum_chunks(sdy, sdyx, C, part);
    float k1[C], k2[C], k3[C];
    for (int c = 0; c < C; c++) {
        dgamma[c] += (float)sdyx[c];
        dbeta[c] += (float)sdy[c];
        float g = gamma[c] * rstd[c];
        k1[c] = g; /* coefficient of the activation gradient */
        /* eval: the statistics are constants, so only the first term remains */
        k2[c] = d->train ? -g * (float)(sdy[c] / M) : 0.0f;         /* constant term */
        k3[c] = d->train ? -g * (float)(sdyx[c] / M) * rstd[c] : 0.0f; /* coeff of (x-mean) */
    }
    if (!din) return;
    int rows = row_chunk(C);
#pragma omp parallel for schedule(dynamic, rows) if ((size_t)M * C >= OMP_MIN_WORK)
    for (int m = 0; m < M; m++) {
        const float *dy = dout + (size_t)m * C, *x = in + (size_t)m * C;
        float *dx = din + (size_t)m * C;
#define BWD_ROW(A, ACC) bwd_row(dx, dy, x, scale, shift, save_mean, k1, k2, k3, C, A, ACC)
        switch (act) {
        case ACT_NONE: if (acc) BWD_ROW(ACT_NONE, 1); else BWD_ROW(ACT_NONE, 0); break;
        case ACT_RELU: if (acc) BWD_ROW(ACT_RELU, 1); else BWD_ROW(ACT_RELU, 0); break;
        case ACT_HARDSWISH: if (acc) BWD_ROW(ACT_HARDSWISH, 1); else BWD_ROW(ACT_HARDSWISH, 0); break;
        case ACT_HARDSIGMOID: if (acc) BWD_ROW(ACT_HARDSIGMOID, 1); else BWD_ROW(ACT_HARDSIGMOID, 0); break;
        }
#undef BWD_ROW
    }}

void batchnorm_backward_cpu(struct backend_ctx *cx, float *din, float *dgamma, float *dbeta, const float *dout,
                            const float *in,
                            const float *save_mean, const float *save_rstd, const float *gamma,
                            const float *run_var, const struct bn_desc *d, int acc)
{
    (void)cx;
    /* ACT_NONE never reads beta (shift only feeds the activation's kink tests) */
    batchnorm_act_backward_cpu(cx, din, dgamma, dbeta, dout, in, save_mean, save_rstd, gamma, gamma, run_var, d, acc,
                               ACT_NONE);
}
