/* bn.c: batch normalisation over the channel axis of NHWC rows (M = N*H*W, C), CPU reference.
 * Statistics are accumulated in double (M reaches 4e5 at batch 32, 112 px) and follow PyTorch:
 * biased variance to normalise, unbiased variance into the running average. Not here: the
 * inference-time folding of BN into the conv (io/export.c does that). */
#include <math.h>
#include <string.h>

#include "../ops.h"
#include "../../core/check.h"
#include "../../core/banned.h"

/* One pass: sum[c] = sum_m x[m,c], sq[c] = sum_m x[m,c]^2, in double (var = E[x^2] - E[x]^2
 * is safe in double for activations of this size). */
static void channel_sums(double *sum, double *sq, const float *x, int M, int C)
{
    memset(sum, 0, sizeof(double) * (size_t)C);
    memset(sq, 0, sizeof(double) * (size_t)C);
#pragma omp parallel for reduction(+ : sum[:C], sq[:C]) schedule(static) if ((size_t)M * C >= OMP_MIN_WORK)
    for (int m = 0; m < M; m++) {
        const float *r = x + (size_t)m * C;
        for (int c = 0; c < C; c++) {
            double v = r[c];
            sum[c] += v;
            sq[c] += v * v;
        }
    }
}

void batchnorm_forward_cpu(float *out, float *save_mean, float *save_rstd, const float *in,
                           const float *gamma, const float *beta, float *run_mean, float *run_var,
                           const struct bn_desc *d)
{
    int M = d->M, C = d->C;
    float scale[C], shift[C]; /* C <= a few thousand: fits on the stack */
    if (d->train) {
        double sum[C], sq[C];
        float mean[C];
        channel_sums(sum, sq, in, M, C);
        for (int c = 0; c < C; c++) {
            double mu = sum[c] / M, var = sq[c] / M - mu * mu;
            if (var < 0) var = 0;
            mean[c] = (float)mu;
            float rstd = (float)(1.0 / sqrt(var + d->eps));
            save_mean[c] = mean[c];
            save_rstd[c] = rstd;
            double unbiased = M > 1 ? var * M / (M - 1) : var;
            run_mean[c] = (1 - d->momentum) * run_mean[c] + d->momentum * mean[c];
            run_var[c] = (float)((1 - d->momentum) * run_var[c] + d->momentum * unbiased);
            scale[c] = gamma[c] * rstd;
            shift[c] = beta[c] - mean[c] * scale[c];
        }
    } else {
        for (int c = 0; c < C; c++) {
            scale[c] = gamma[c] / sqrtf(run_var[c] + d->eps);
            shift[c] = beta[c] - run_mean[c] * scale[c];
        }
    }
#pragma omp parallel for schedule(static) if ((size_t)M * C >= OMP_MIN_WORK)
    for (int m = 0; m < M; m++) {
        const float *x = in + (size_t)m * C;
        float *y = out + (size_t)m * C;
        for (int c = 0; c < C; c++) y[c] = x[c] * scale[c] + shift[c];
    }
}

/* train: dx = rstd/M * (M*dxhat - sum(dxhat) - xhat*sum(dxhat*xhat)), dxhat = dy*gamma */
void batchnorm_backward_cpu(float *din, float *dgamma, float *dbeta, const float *dout, const float *in,
                            const float *save_mean, const float *save_rstd, const float *gamma,
                            const float *run_var, const struct bn_desc *d, int acc)
{
    int M = d->M, C = d->C;
    float rstd[C];
    for (int c = 0; c < C; c++)
        rstd[c] = d->train ? save_rstd[c] : 1.0f / sqrtf(run_var[c] + d->eps);
    save_rstd = rstd;
    double sdy[C], sdyx[C];
    memset(sdy, 0, sizeof sdy);
    memset(sdyx, 0, sizeof sdyx);
#pragma omp parallel for reduction(+ : sdy[:C], sdyx[:C]) schedule(static) if ((size_t)M * C >= OMP_MIN_WORK)
    for (int m = 0; m < M; m++) {
        const float *dy = dout + (size_t)m * C, *x = in + (size_t)m * C;
        for (int c = 0; c < C; c++) {
            sdy[c] += dy[c];
            sdyx[c] += dy[c] * (x[c] - save_mean[c]) * save_rstd[c];
        }
    }
    float k1[C], k2[C], k3[C];
    for (int c = 0; c < C; c++) {
        dgamma[c] += (float)sdyx[c];
        dbeta[c] += (float)sdy[c];
        float g = gamma[c] * save_rstd[c];
        k1[c] = g; /* coefficient of dy */
        /* eval: the statistics are constants, so only the dy term remains */
        k2[c] = d->train ? -g * (float)(sdy[c] / M) : 0.0f;              /* constant term */
        k3[c] = d->train ? -g * (float)(sdyx[c] / M) * save_rstd[c] : 0.0f; /* coeff of (x-mean) */
    }
    if (!din) return;
#pragma omp parallel for schedule(static) if ((size_t)M * C >= OMP_MIN_WORK)
    for (int m = 0; m < M; m++) {
        const float *dy = dout + (size_t)m * C, *x = in + (size_t)m * C;
        float *dx = din + (size_t)m * C;
        if (acc)
            for (int c = 0; c < C; c++) dx[c] += k1[c] * dy[c] + k2[c] + k3[c] * (x[c] - save_mean[c]);
        else
            for (int c = 0; c < C; c++) dx[c] = k1[c] * dy[c] + k2[c] + k3[c] * (x[c] - save_mean[c]);
    }
}
