/* bn.cu: batch normalisation over the channel axis of NHWC rows (M = N*H*W, C), the CUDA twin of
 * ops/cpu/bn.c, with the same numerics: per-channel sums in double (var = E[x^2] - E[x]^2 is
 * safe in double), biased variance to normalise, unbiased into the running average, the same
 * float expressions for the running statistics and the backward coefficients.
 * Reductions are deterministic: a fixed grid of row chunks, each block (32 channels x 8 row
 * lanes) writes one partial per chunk, and one thread per channel adds the chunks in order.
 * Three kernels each way: partial sums, per-channel finish, elementwise apply.
 * Not here: folding BN into the conv for inference (io/export.c). */
#include "cuda_common.cuh"

#define BN_LANES 8

/* Row chunks for an (M, C) reduction: about 4 blocks per SM, at least 32 rows each, at most 1024. */
static int bn_chunks(const struct backend_ctx *cx, int M, int C)
{
    int ctiles = (C + 31) / 32, n = 4 * cx->sm_count / ctiles;
    if (n > (M + 31) / 32) n = (M + 31) / 32;
    if (n > 1024) n = 1024;
    return n < 1 ? 1 : n;
}

/* part (nchunk, 2, C): MODE 0: sum x, sum x^2. MODE 1 (backward): sum dy, sum dy*(x-mean)*rstd. */
template <int MODE>
__global__ void bn_partial_kernel(double *part, const float *a, const float *b, const float *mean,
                                  const float *rstd, int M, int C, int rows_per_chunk)
{
    __shared__ double s1[BN_LANES][32], s2[BN_LANES][32];
    int c = blockIdx.x * 32 + threadIdx.x, chunk = blockIdx.y;
    int m0 = chunk * rows_per_chunk, m1 = min(M, m0 + rows_per_chunk);
    double p = 0, q = 0;
    if (c < C) {
        float mu = MODE ? mean[c] : 0.0f, rs = MODE ? rstd[c] : 0.0f;
        for (int m = m0 + threadIdx.y; m < m1; m += BN_LANES) {
            float v = a[(size_t)m * C + c];
            if (MODE == 0) {
                p += v;
                q += (double)v * v;
            } else {
                float x = b[(size_t)m * C + c];
                p += v;
                q += v * (x - mu) * rs;
            }
        }
    }
    s1[threadIdx.y][threadIdx.x] = p;
    s2[threadIdx.y][threadIdx.x] = q;
    __syncthreads();
    if (threadIdx.y == 0 && c < C) {
        for (int l = 1; l < BN_LANES; l++) p += s1[l][threadIdx.x], q += s2[l][threadIdx.x];
        part[((size_t)chunk * 2) * C + c] = p;
        part[((size_t)chunk * 2 + 1) * C + c] = q;
    }
}

/* Forward finish: statistics, running averages, coef = scale (C) then shift (C). */
__global__ void bn_forward_finish_kernel(float *coef, float *save_mean, float *save_rstd, const double *part,
                                         int nchunk, const float *gamma, const float *beta, float *run_mean,
                                         float *run_var, struct bn_desc d)
{
    int C = d.C, M = d.M;
    for (int c = blockIdx.x * blockDim.x + threadIdx.x; c < C; c += gridDim.x * blockDim.x) {
        float scale, shift;
        if (d.train) {
            double sum = 0, sq = 0;
            for (int t = 0; t < nchunk; t++) sum += part[(size_t)t * 2 * C + c], sq += part[((size_t)t * 2 + 1) * C + c];
            double mu = sum / M, var = sq / M - mu * mu;
            if (var < 0) var = 0;
            float mean = (float)mu, rstd = (float)(1.0 / sqrt(var + d.eps));
            save_mean[c] = mean;
            save_rstd[c] = rstd;
            double unbiased = M > 1 ? var * M / (M - 1) : var;
            run_mean[c] = (1 - d.momentum) * run_mean[c] + d.momentum * mean;
            run_var[c] = (float)((1 - d.momentum) * run_var[c] + d.momentum * unbiased);
            scale = gamma[c] * rstd;
            shift = beta[c] - mean * scale;
        } else {
            scale = gamma[c] / sqrtf(run_var[c] + d.eps);
            shift = beta[c] - run_mean[c] * scale;
        }
        coef[c] = scale;
        coef[C + c] = shift;
    }
}

__global__ void bn_apply_kernel(float *out, const float *in, const float *coef, size_t n, int C)
{
    GRID_STRIDE(i, n) {
        unsigned c = i % (unsigned)C;
        out[i] = in[i] * coef[c] + coef[C + c];
    }
}

/* Backward finish: parameter gradients, coef = k1, k2, k3 (C each), rstd into coef + 3C. */
__global__ void bn_backward_finish_kernel(float *coef, float *dgamma, float *dbeta, const double *part, int nchunk,
                                          const float *gamma, const float *rstd_in, struct bn_desc d)
{
    int C = d.C, M = d.M;
    for (int c = blockIdx.x * blockDim.x + threadIdx.x; c < C; c += gridDim.x * blockDim.x) {
        double sdy = 0, sdyx = 0;
        for (int t = 0; t < nchunk; t++) sdy += part[(size_t)t * 2 * C + c], sdyx += part[((size_t)t * 2 + 1) * C + c];
        dgamma[c] += (float)sdyx;
        dbeta[c] += (float)sdy;
        float rstd = rstd_in[c], g = gamma[c] * rstd;
        coef[c] = g;
        /* eval: the statistics are constants, so only the dy term remains */
        coef[C + c] = d.train ? -g * (float)(sdy / M) : 0.0f;
        coef[2 * C + c] = d.train ? -g * (float)(sdyx / M) * rstd : 0.0f;
    }
}

/* rstd (C) of eval mode from the running variance, as the CPU computes it */
__global__ void bn_eval_rstd_kernel(float *rstd, const float *run_var, int C, float eps)
{
    for (int c = blockIdx.x * blockDim.x + threadIdx.x; c < C; c += gridDim.x * blockDim.x)
        rstd[c] = 1.0f / sqrtf(run_var[c] + eps);
}

__global__ void bn_backward_apply_kernel(float *din, const float *dout, const float *in, const float *mean,
                                         const float *coef, size_t n, int C, int acc)
{
    GRID_STRIDE(i, n) {
        unsigned c = i % (unsigned)C;
        float v = coef[c] * dout[i] + coef[C + c] + coef[2 * C + c] * (in[i] - mean[c]);
        din[i] = acc ? din[i] + v : v;
    }
}

extern "C" void batchnorm_forward_cuda(struct backend_ctx *cx, float *out, float *save_mean, float *save_rstd,
                                       const float *in, const float *gamma, const float *beta, float *run_mean,
                                       float *run_var, const struct bn_desc *d)
{
    int M = d->M, C = d->C, nchunk = 1;
    float *coef = cuda_coef(cx, 2 * (size_t)C);
    double *part = NULL;
    if (d->train) {
        nchunk = bn_chunks(cx, M, C);
        part = (double *)cuda_red(cx, sizeof(double) * 2 * (size_t)nchunk * C);
        dim3 grid((C + 31) / 32, nchunk), block(32, BN_LANES);
        bn_partial_kernel<0><<<grid, block, 0, cx->stream>>>(part, in, NULL, NULL, NULL, M, C,
                                                             (M + nchunk - 1) / nchunk);
        LAUNCH_CHECK();
    }
    bn_forward_finish_kernel<<<(C + 127) / 128, 128, 0, cx->stream>>>(coef, save_mean, save_rstd, part, nchunk, gamma,
                                                                     beta, run_mean, run_var, *d);
    LAUNCH_CHECK();
    size_t n = (size_t)M * C;
    bn_apply_kernel<<<grid_for(n, 256, cx), 256, 0, cx->stream>>>(out, in, coef, n, C);
    LAUNCH_CHECK();
}

extern "C" void batchnorm_backward_cuda(struct backend_ctx *cx, float *din, float *dgamma, float *dbeta,
                                        const float *dout, const float *in, const float *save_mean,
                                        const float *save_rstd, const float *gamma, const float *run_var,
                                        const struct bn_desc *d, int acc)
{
    int M = d->M, C = d->C, nchunk = bn_chunks(cx, M, C);
    float *coef = cuda_coef(cx, 4 * (size_t)C);
    const float *rstd = save_rstd;
    if (!d->train) {
        bn_eval_rstd_kernel<<<(C + 127) / 128, 128, 0, cx->stream>>>(coef + 3 * C, run_var, C, d->eps);
        LAUNCH_CHECK();
        rstd = coef + 3 * C;
    }
    double *part = (double *)cuda_red(cx, sizeof(double) * 2 * (size_t)nchunk * C);
    dim3 grid((C + 31) / 32, nchunk), block(32, BN_LANES);
    bn_partial_kernel<1><<<grid, block, 0, cx->stream>>>(part, dout, in, save_mean, rstd, M, C,
                                                         (M + nchunk - 1) / nchunk);
    LAUNCH_CHECK();
    bn_backward_finish_kernel<<<(C + 127) / 128, 128, 0, cx->stream>>>(coef, dgamma, dbeta, part, nchunk, gamma, rstd,
                                                                      *d);
    LAUNCH_CHECK();
    if (!din) return;
    size_t n = (size_t)M * C;
    bn_backward_apply_kernel<<<grid_for(n, 256, cx), 256, 0, cx->stream>>>(din, dout, in, save_mean, coef, n, C, acc);
    LAUNCH_CHECK();
}
