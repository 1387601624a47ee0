/* bn.cu: batch normalisation over the channel axis of NHWC rows (M = N*H*W, C), alone and fused
 * with the activation that follows it, the CUDA twins of ops/cpu/bn.c, with the same numerics:
 * per-channel sums in double (var = E[x^2] - E[x]^2 is safe in double), biased variance to
 * normalise, unbiased into the running average, the same float expressions for the running
 * statistics, the affine y = x*scale + shift (no FMA: the activation's kinks are decided on the
 * same value as on the CPU, and the same in forward and in backward's recomputation) and the
 * backward coefficients. Fused: out = act(BN(x)); the BN output is never stored, backward
 * recomputes it from x (one activation-sized read and write less each way).
 * Reductions are deterministic: a fixed grid of row chunks, each block (32 channels x 8 row
 * lanes) writes one partial per chunk, and one thread per channel adds the chunks in order.
 * Three kernels each way: partial sums, per-channel finish, elementwise apply (float4 when
 * C % 4 == 0 and the buffers are aligned). Not here: BN folded into the conv for inference. */
#include "elementwise.cuh"

#define BN_LANES 8

/* Row chunks for an (M, C) reduction: about 4 blocks per SM, at least 32 rows each, at most 1024. */
static int bn_chunks(const struct backend_ctx *cx, int M, int C)
{
    int ctiles = (C + 31) / 32, n = 4 * cx->sm_count / ctiles;
    if (n > (M + 31) / 32) n = (M + 31) / 32;
    if (n > 1024) n = 1024;
    return n < 1 ? 1 : n;
}

/* part (nchunk, 2, C). Forward (BWD 0): sum x, sum x^2 of a = x. Backward (BWD 1): with
 * g = act'(x*scale + shift) * dy (a = dy, b = x; coef = scale (C), shift (C)), sum g and
 * sum g*(x-mean)*rstd. */
template <int BWD, int ACT>
__global__ void bn_partial_kernel(double *part, const float *a, const float *b, const float *mean,
                                  const float *rstd, const float *coef, int M, int C, int rows_per_chunk)
{
    __shared__ double s1[BN_LANES][32], s2[BN_LANES][32];
    int c = blockIdx.x * 32 + threadIdx.x, chunk = blockIdx.y;
    int m0 = chunk * rows_per_chunk, m1 = min(M, m0 + rows_per_chunk);
    double p = 0, q = 0;
    if (c < C) {
        float mu = BWD ? mean[c] : 0.0f, rs = BWD ? rstd[c] : 0.0f;
        float sc = BWD && ACT != ACT_NONE ? coef[c] : 0.0f, sh = BWD && ACT != ACT_NONE ? coef[C + c] : 0.0f;
        for (int m = m0 + threadIdx.y; m < m1; m += BN_LANES) {
            float v = a[(size_t)m * C + c];
            if (BWD == 0) {
                p += v;
                q += (double)v * v;
            } else {
                float x = b[(size_t)m * C + c];
                if (ACT != ACT_NONE) v = act_df<ACT>(bn_affine_f(x, sc, sh), v);
                p += v;
                q += __fmul_rn(__fmul_rn(v, __fsub_rn(x, mu)), rs);
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

/* scale = gamma*rstd, shift = beta - mean*scale, as ops/cpu/bn.c's bn_affine (beta NULL: 0) */
__device__ __forceinline__ void bn_affine_coef(float *scale, float *shift, float mean, float rstd, float gamma,
                                               float beta)
{
    *scale = __fmul_rn(gamma, rstd);
    *shift = __fsub_rn(beta, __fmul_rn(mean, *scale));
}

/* Forward finish: statistics, running averages, coef = scale (C) then shift (C). */
__global__ void bn_forward_finish_kernel(float *coef, float *save_mean, float *save_rstd, const double *part,
                                         int nchunk, const float *gamma, const float *beta, float *run_mean,
                                         float *run_var, struct bn_desc d)
{
    int C = d.C, M = d.M;
    for (int c = blockIdx.x * blockDim.x + threadIdx.x; c < C; c += gridDim.x * blockDim.x) {
        float mean, rstd;
        if (d.train) {
            double sum = 0, sq = 0;
            for (int t = 0; t < nchunk; t++) sum += part[(size_t)t * 2 * C + c], sq += part[((size_t)t * 2 + 1) * C + c];
            double mu = sum / M, var = sq / M - mu * mu;
            if (var < 0) var = 0;
            mean = (float)mu, rstd = (float)(1.0 / sqrt(var + d.eps));
            save_mean[c] = mean;
            save_rstd[c] = rstd;
            double unbiased = M > 1 ? var * M / (M - 1) : var;
            run_mean[c] = (1 - d.momentum) * run_mean[c] + d.momentum * mean;
            run_var[c] = (float)((1 - d.momentum) * run_var[c] + d.momentum * unbiased);
        } else {
            mean = run_mean[c], rstd = 1.0f / sqrtf(run_var[c] + d.eps);
        }
        bn_affine_coef(&coef[c], &coef[C + c], mean, rstd, gamma[c], beta[c]);
    }
}

/* out = act(in*scale[c] + shift[c]); vec4 needs C % 4 == 0 */
template <int ACT> struct bn_apply {
    float *out;
    const float *in, *coef;
    unsigned C;
    __device__ float f(float x, unsigned c) const { return act_f<ACT>(bn_affine_f(x, coef[c], coef[C + c])); }
    __device__ void one(unsigned i) const { out[i] = f(in[i], i % C); }
    __device__ void vec4(unsigned j) const
    {
        unsigned c = j * 4 % C;
        float4 v = ld4(in, j);
        st4(out, j, make_float4(f(v.x, c), f(v.y, c + 1), f(v.z, c + 2), f(v.w, c + 3)));
    }
};

/* Backward set-up: rstd (eval: from the running variance, as the CPU) into coef + 3C, and the
 * forward affine (scale, shift) into coef + 4C, + 5C for the activation's recomputation. */
__global__ void bn_backward_setup_kernel(float *coef, const float *save_mean, const float *save_rstd,
                                         const float *gamma, const float *beta, const float *run_var, struct bn_desc d)
{
    int C = d.C;
    for (int c = blockIdx.x * blockDim.x + threadIdx.x; c < C; c += gridDim.x * blockDim.x) {
        float rstd = d.train ? save_rstd[c] : 1.0f / sqrtf(run_var[c] + d.eps);
        coef[3 * C + c] = rstd;
        bn_affine_coef(&coef[4 * C + c], &coef[5 * C + c], save_mean[c], rstd, gamma[c], beta ? beta[c] : 0.0f);
    }
}

/* Backward finish: parameter gradients, coef = k1, k2, k3 (C each); rstd at coef + 3C. */
__global__ void bn_backward_finish_kernel(float *coef, float *dgamma, float *dbeta, const double *part, int nchunk,
                                          const float *gamma, struct bn_desc d)
{
    int C = d.C, M = d.M;
    for (int c = blockIdx.x * blockDim.x + threadIdx.x; c < C; c += gridDim.x * blockDim.x) {
        double sdy = 0, sdyx = 0;
        for (int t = 0; t < nchunk; t++) sdy += part[(size_t)t * 2 * C + c], sdyx += part[((size_t)t * 2 + 1) * C + c];
        dgamma[c] += (float)sdyx;
        dbeta[c] += (float)sdy;
        float rstd = coef[3 * C + c], g = gamma[c] * rstd;
        coef[c] = g;
        /* eval: the statistics are constants, so only the dy term remains */
        coef[C + c] = d.train ? -g * (float)(sdy / M) : 0.0f;
        coef[2 * C + c] = d.train ? -g * (float)(sdyx / M) * rstd : 0.0f;
    }
}

/* din (=|+=) k1*g + k2 + k3*(x - mean), g = act'(x*scale + shift)*dy; vec4 needs C % 4 == 0 */
template <int ACT, int ACC> struct bn_bwd_apply {
    float *din;
    const float *dout, *in, *mean, *coef;
    unsigned C;
    __device__ float f(float dy, float x, unsigned c) const
    {
        const float *k = coef;
        float g = ACT == ACT_NONE ? dy : act_df<ACT>(bn_affine_f(x, k[4 * C + c], k[5 * C + c]), dy);
        return __fadd_rn(__fadd_rn(__fmul_rn(k[c], g), k[C + c]), __fmul_rn(k[2 * C + c], __fsub_rn(x, mean[c])));
    }
    __device__ void one(unsigned i) const
    {
        float v = f(dout[i], in[i], i % C);
        din[i] = ACC ? din[i] + v : v;
    }
    __device__ void vec4(unsigned j) const
    {
        unsigned c = j * 4 % C;
        float4 g = ld4(dout, j), x = ld4(in, j);
        float4 v = make_float4(f(g.x, x.x, c), f(g.y, x.y, c + 1), f(g.z, x.z, c + 2), f(g.w, x.w, c + 3));
        if (ACC) {
            float4 d = ld4(din, j);
            v = make_float4(d.x + v.x, d.y + v.y, d.z + v.z, d.w + v.w);
        }
        st4(din, j, v);
    }
};

template <int ACT> static void bn_act_forward(struct backend_ctx *cx, float *out, float *save_mean, float *save_rstd,
                                              const float *in, const float *gamma, const float *beta, float *run_mean,
                                              float *run_var, const struct bn_desc *d)
{
    int M = d->M, C = d->C, nchunk = 1;
    if (M <= 0 || C <= 0) return;
    float *coef = cuda_coef(cx, 2 * (size_t)C);
    double *part = NULL;
    if (d->train) {
        nchunk = bn_chunks(cx, M, C);
        part = (double *)cuda_red(cx, sizeof(double) * 2 * (size_t)nchunk * C);
        dim3 grid((C + 31) / 32, nchunk), block(32, BN_LANES);
        bn_partial_kernel<0, ACT_NONE><<<grid, block, 0, cx->stream>>>(part, in, NULL, NULL, NULL, NULL, M, C,
                                                                       (M + nchunk - 1) / nchunk);
        LAUNCH_CHECK();
    }
    bn_forward_finish_kernel<<<(C + 127) / 128, 128, 0, cx->stream>>>(coef, save_mean, save_rstd, part, nchunk, gamma,
                                                                     beta, run_mean, run_var, *d);
    LAUNCH_CHECK();
    bool vec = C % 4 == 0 && aligned16(out) && aligned16(in) && aligned16(coef);
    ew_launch(cx, bn_apply<ACT>{out, in, coef, (unsigned)C}, (size_t)M * C, vec);
}

template <int ACT> static void bn_act_backward(struct backend_ctx *cx, float *din, float *dgamma, float *dbeta,
                                               const float *dout, const float *in, const float *save_mean,
                                               const float *save_rstd, const float *gamma, const float *beta,
                                               const float *run_var, const struct bn_desc *d, int acc)
{
    int M = d->M, C = d->C, nchunk = bn_chunks(cx, M, C);
    if (M <= 0 || C <= 0) return;
    float *coef = cuda_coef(cx, 6 * (size_t)C);
    bn_backward_setup_kernel<<<(C + 127) / 128, 128, 0, cx->stream>>>(coef, save_mean, save_rstd, gamma,
                                                                     ACT == ACT_NONE ? NULL : beta, run_var, *d);
    LAUNCH_CHECK();
    double *part = (double *)cuda_red(cx, sizeof(double) * 2 * (size_t)nchunk * C);
    dim3 grid((C + 31) / 32, nchunk), block(32, BN_LANES);
    bn_partial_kernel<1, ACT><<<grid, block, 0, cx->stream>>>(part, dout, in, save_mean, coef + 3 * C, coef + 4 * C,
                                                              M, C, (M + nchunk - 1) / nchunk);
    LAUNCH_CHECK();
    bn_backward_finish_kernel<<<(C + 127) / 128, 128, 0, cx->stream>>>(coef, dgamma, dbeta, part, nchunk, gamma, *d);
    LAUNCH_CHECK();
    if (!din) return;
    size_t n = (size_t)M * C;
    bool vec = C % 4 == 0 && aligned16(din) && aligned16(dout) && aligned16(in) && aligned16(coef);
    if (acc)
        ew_launch(cx, bn_bwd_apply<ACT, 1>{din, dout, in, save_mean, coef, (unsigned)C}, n, vec);
    else
        ew_launch(cx, bn_bwd_apply<ACT, 0>{din, dout, in, save_mean, coef, (unsigned)C}, n, vec);
}

extern "C" void batchnorm_act_forward_cuda(struct backend_ctx *cx, float *out, float *save_mean, float *save_rstd,
                                           const float *in, const float *gamma, const float *beta, float *run_mean,
                                           float *run_var, const struct bn_desc *d, enum act_kind act)
{
    switch (act) {
    case ACT_NONE: bn_act_forward<ACT_NONE>(cx, out, save_mean, save_rstd, in, gamma, beta, run_mean, run_var, d); break;
    case ACT_RELU: bn_act_forward<ACT_RELU>(cx, out, save_mean, save_rstd, in, gamma, beta, run_mean, run_var, d); break;
    case ACT_HARDSWISH:
        bn_act_forward<ACT_HARDSWISH>(cx, out, save_mean, save_rstd, in, gamma, beta, run_mean, run_var, d);
        break;
    case ACT_HARDSIGMOID:
        bn_act_forward<ACT_HARDSIGMOID>(cx, out, save_mean, save_rstd, in, gamma, beta, run_mean, run_var, d);
        break;
    }
}

extern "C" void batchnorm_act_backward_cuda(struct backend_ctx *cx, float *din, float *dgamma, float *dbeta,
                                            const float *dout, const float *in, const float *save_mean,
                                            const float *save_rstd, const float *gamma, const float *beta,
                                            const float *run_var, const struct bn_desc *d, int acc, enum act_kind act)
{
#define BN_BWD(K) bn_act_backward<K>(cx, din, dgamma, dbeta, dout, in, save_mean, save_rstd, gamma, beta, run_var, d, acc)
    switch (act) {
    case ACT_NONE: BN_BWD(ACT_NONE); break;
    case ACT_RELU: BN_BWD(ACT_RELU); break;
    case ACT_HARDSWISH: BN_BWD(ACT_HARDSWISH); break;
    case ACT_HARDSIGMOID: BN_BWD(ACT_HARDSIGMOID); break;
    }
#undef BN_BWD
}

extern "C" void batchnorm_forward_cuda(struct backend_ctx *cx, float *out, float *save_mean, float *save_rstd,
                                       const float *in, const float *gamma, const float *beta, float *run_mean,
                                       float *run_var, const struct bn_desc *d)
{
    bn_act_forward<ACT_NONE>(cx, out, save_mean, save_rstd, in, gamma, beta, run_mean, run_var, d);
}

extern "C" void batchnorm_backward_cuda(struct backend_ctx *cx, float *din, float *dgamma, float *dbeta,
                                        const float *dout, const float *in, const float *save_mean,
                                        const float *save_rstd, const float *gamma, const float *run_var,
                                        const struct bn_desc *d, int acc)
{
    bn_act_backward<ACT_NONE>(cx, din, dgamma, dbeta, dout, in, save_mean, save_rstd, gamma, NULL, run_var, d, acc);
}
