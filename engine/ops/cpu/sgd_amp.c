/* sgd_amp.c: the mixed precision side of the training step on the CPU (ops.h "mixed precision";
 * the design is precision.h's): rounding buffers to bf16/fp16, the loss scale, the fused unscale +
 * finite check, the skippable SGD step and the scaler's update. Named sgd_amp so it pairs with the
 * CUDA twins in ops/cuda/sgd_amp.cu (check_layout pairs op files by the name's first word).
 *
 * Rounding is exact round-to-nearest-even either way, on one register at a time (simd.h's vf,
 * so each ISA level gets its width): bf16 with integer arithmetic on the bits (the same steps
 * as bf16_from_f32), fp16 through the compiler's IEEE binary16 conversion (F16C's vcvtps2ph
 * with RNE on x86-64-v3/v4, NEON's fcvtn on aarch64, libgcc's soft-float on v2: inf past 65504,
 * subnormals kept), which tests/unit/test_amp.c checks against the scalar reference. */
#include <math.h>

#include "simd.h"
#include "../../../core/banned.h"

/* the elements of one OpenMP chunk: a multiple of 16 so every chunk but the last is whole vectors */
#define CHUNK 16384

static inline vf round_bf16_v(vf x)
{
    vu u = (vu)x;
    vu r = u + 0x7fffu + ((u >> 16) & 1u);
    vu nan = (vu)(x != x);
    r = (r & ~nan) | ((u | 0x00400000u) & nan); /* NaN: quiet, no carry */
    return (vf)(r & 0xffff0000u);
}

typedef _Float16 vh __attribute__((vector_size(VW * 2)));
static inline vf round_fp16_v(vf x) { return __builtin_convertvector(__builtin_convertvector(x, vh), vf); }

/* out[0..n) = round_p(in * mul) */
static void round_run(float *out, const float *in, size_t n, float mul, enum precision p)
{
    size_t i = 0;
    if (p == PREC_BF16)
        for (; i + VW <= n; i += VW) stv(out + i, round_bf16_v(ldv(in + i) * mul));
    else if (p == PREC_FP16)
        for (; i + VW <= n; i += VW) stv(out + i, round_fp16_v(ldv(in + i) * mul));
    for (; i < n; i++) out[i] = round_to(in[i] * mul, p);
}

static void round_scaled(float *out, const float *in, size_t n, float mul, enum precision p)
{
    size_t chunks = (n + CHUNK - 1) / CHUNK;
#pragma omp parallel for schedule(dynamic, 1) if (n >= OMP_MIN_WORK)
    for (size_t c = 0; c < chunks; c++) {
        size_t lo = c * CHUNK, len = n - lo < CHUNK ? n - lo : CHUNK;
        round_run(out + lo, in + lo, len, mul, p);
    }
}

void amp_round_cpu(struct backend_ctx *cx, float *out, const float *in, size_t n, enum precision p)
{
    (void)cx;
    if (p == PREC_FP32) {
        if (out != in) memcpy(out, in, n * sizeof *out);
        return;
    }
    round_scaled(out, in, n, 1.0f, p);
}

void amp_scale_cpu(struct backend_ctx *cx, float *x, size_t n, const float *state, enum precision p)
{
    (void)cx;
    round_scaled(x, x, n, state[AMP_SCALE], p);
}

void amp_unscale_check_cpu(struct backend_ctx *cx, float *g, size_t n, float *state)
{
    (void)cx;
    float inv = 1.0f / state[AMP_SCALE];
    unsigned bad = 0;
    /* non-finite <=> all exponent bits set; the OR of the flags is order-free */
#pragma omp parallel for simd schedule(static) reduction(| : bad) if (n >= OMP_MIN_WORK)
    for (size_t i = 0; i < n; i++) {
        float v = g[i] * inv;
        uint32_t u;
        memcpy(&u, &v, sizeof u);
        bad |= (u & 0x7f800000u) == 0x7f800000u;
        g[i] = v;
    }
    state[AMP_FOUND_INF] = bad ? 1.0f : 0.0f;
}

void sgd_step_amp_cpu(struct backend_ctx *cx, float *p, float *m, const float *g, size_t n, float lr, float mu,
                      float wd, const float *state)
{
    if (state[AMP_FOUND_INF] == 0) sgd_step_cpu(cx, p, m, g, n, lr, mu, wd);
}

void amp_update_cpu(struct backend_ctx *cx, float *state, const struct loss_scaler *ls)
{
    (void)cx;
    amp_state_update(state, ls->growth_factor, ls->backoff_factor, ls->growth_interval, ls->dynamic);
}
