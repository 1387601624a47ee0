/* sgd_amp.c: the mixed precision side of the training step on the CPU (ops.h "mixed precision";
 * the design is precision.h's): rounding buffers to bf16/fp16, the loss scale, the fused unscale +
 * finite check, the skippable SGD step and the scaler's update. Named sgd_amp so it pairs with the
 * CUDA twins in ops/cuda/sgd_amp.cu (check_layout pairs op files by the name's first word).
 *
 * Rounding is exact round-to-nearest-even either way: bf16 with integer arithmetic on the bits
 * (the same as bf16_from_f32), fp16 through F16C/AVX-512F's vcvtps2ph with RNE (IEEE binary16:
 * inf past 65504, subnormals kept), which tests/unit/test_amp.c checks against the scalar
 * reference; without AVX-512F (another -march) the scalar reference runs. */
#include <math.h>
#ifdef __AVX512F__
#include <immintrin.h>
#endif

#include "../ops.h"
#include "../../../core/banned.h"

/* the elements of one OpenMP chunk: a multiple of 16 so every chunk but the last is whole vectors */
#define CHUNK 16384

#ifdef __AVX512F__
static inline __m512 round_bf16_v(__m512 x)
{
    __m512i u = _mm512_castps_si512(x);
    __m512i lsb = _mm512_and_si512(_mm512_srli_epi32(u, 16), _mm512_set1_epi32(1));
    __m512i r = _mm512_add_epi32(u, _mm512_add_epi32(lsb, _mm512_set1_epi32(0x7fff)));
    __mmask16 nan = _mm512_cmp_ps_mask(x, x, _CMP_UNORD_Q);
    r = _mm512_mask_or_epi32(r, nan, u, _mm512_set1_epi32(0x00400000)); /* NaN: quiet, no carry */
    return _mm512_castsi512_ps(_mm512_and_si512(r, _mm512_set1_epi32((int)0xffff0000u)));
}
static inline __m512 round_fp16_v(__m512 x)
{
    return _mm512_cvtph_ps(_mm512_cvtps_ph(x, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
}
#endif

/* out[0..n) = round_p(in * mul) */
static void round_run(float *out, const float *in, size_t n, float mul, enum precision p)
{
    size_t i = 0;
#ifdef __AVX512F__
    __m512 m = _mm512_set1_ps(mul);
    if (p == PREC_BF16)
        for (; i + 16 <= n; i += 16) _mm512_storeu_ps(out + i, round_bf16_v(_mm512_mul_ps(_mm512_loadu_ps(in + i), m)));
    else if (p == PREC_FP16)
        for (; i + 16 <= n; i += 16) _mm512_storeu_ps(out + i, round_fp16_v(_mm512_mul_ps(_mm512_loadu_ps(in + i), m)));
#endif
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
