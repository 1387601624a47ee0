/* precision.h: mixed precision (AMP) types shared by the ops, the model and the commands: the
 * precision policy's dtype, the dynamic loss scaler's settings and its state layout, and the
 * scalar reference conversions (round to nearest even) every backend must match.
 *
 * The design (docs/engine.md#mixed-precision-amp):
 * - One policy per net, chosen before net_alloc (struct net.amp): fp32 (no AMP op runs at all),
 *   bf16 or fp16. Master weights, their gradients, momentum, BN running statistics and the loss
 *   stay fp32. Every activation and activation gradient is stored in the policy's dtype at each
 *   op boundary, and conv/linear take weights rounded to that dtype (a copy refreshed before each
 *   forward); products accumulate in fp32. This engine's buffers are float: a value "in bf16" is
 *   a float whose low 16 bits are zero (fp16: a float exactly representable in binary16, inf past
 *   65504), so a kernel that stores real 16-bit words gives bit-identical values and the CPU's
 *   rounded-fp32 path is the reference the GPU's AMP is tested against (llm.c style).
 * - The loss scale lives in a small buffer in the backend's memory (AMP_STATE_FLOATS floats:
 *   host memory on the CPU, device memory on CUDA), so the scale, the skip decision, backoff and
 *   growth all run as ops on the backend's stream and nothing waits for the host: backward starts
 *   from dlogits * scale (amp_scale), the gradients are unscaled and checked in one pass after the
 *   data-parallel average (amp_unscale_check), the update runs unless that pass found a non-finite
 *   value (sgd_step_amp), and amp_update halves the scale on a skipped step and multiplies it by
 *   growth_factor after growth_interval finite steps in a row (PyTorch GradScaler semantics). */
#ifndef TIPC_PRECISION_H
#define TIPC_PRECISION_H
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

/* the scalar helpers below are the reference for device code too */
#ifdef __CUDACC__
#define TIPC_HD __host__ __device__
#else
#define TIPC_HD
#endif

enum precision { PREC_FP32, PREC_BF16, PREC_FP16 };

/* "fp32", "bf16", "fp16" */
static inline const char *precision_name(enum precision p)
{
    return p == PREC_BF16 ? "bf16" : p == PREC_FP16 ? "fp16" : "fp32";
}
/* accepts fp32|bf16|fp16 (and float32, bfloat16, float16); false for anything else */
static inline bool precision_parse(const char *s, enum precision *out)
{
    static const struct { const char *name; enum precision p; } T[] = {
        {"fp32", PREC_FP32}, {"float32", PREC_FP32}, {"bf16", PREC_BF16},
        {"bfloat16", PREC_BF16}, {"fp16", PREC_FP16}, {"float16", PREC_FP16}};
    for (unsigned i = 0; i < sizeof T / sizeof T[0]; i++)
        if (!strcmp(s, T[i].name)) return *out = T[i].p, true;
    return false;
}

/* Dynamic loss scaling settings (host). Defaults: amp_scaler_defaults(). */
struct loss_scaler {
    float init_scale;      /* first scale (Paddle AMP.scale_loss / init_loss_scaling) */
    float growth_factor;   /* x this after growth_interval finite steps in a row (2) */
    float backoff_factor;  /* x this on a step with a non-finite gradient (0.5) */
    int growth_interval;   /* finite steps in a row before growing (Paddle's incr_every_n_steps) */
    bool dynamic;          /* false: the scale stays init_scale (a non-finite step is still skipped) */
};
/* fp16: 32768 (Paddle's init_loss_scaling), x2 every 1000 finite steps, x0.5 on overflow;
 * bf16 has fp32's exponent range: scale 1, static. */
static inline struct loss_scaler amp_scaler_defaults(enum precision p)
{
    struct loss_scaler s = {.init_scale = 1.0f, .growth_factor = 2.0f, .backoff_factor = 0.5f,
                            .growth_interval = 1000, .dynamic = false};
    if (p == PREC_FP16) s.init_scale = 32768.0f, s.dynamic = true;
    return s;
}

/* The loss scaler's state: AMP_STATE_FLOATS floats in the backend's memory (net->amp_state). */
enum {
    AMP_SCALE,      /* the current loss scale */
    AMP_FOUND_INF,  /* 1 when the last amp_unscale_check saw a non-finite gradient, else 0 */
    AMP_GOOD,       /* finite steps since the last growth or backoff */
    AMP_SKIPPED,    /* steps skipped so far (a count; exact up to 2^24) */
    AMP_STATE_FLOATS
};

/* The scaler's step (the amp_update op's contract, one definition for every backend): after a
 * skipped step (state[AMP_FOUND_INF] != 0) skipped += 1, good = 0 and, dynamic, the scale backs
 * off (not below 2^-24); after a finite one good += 1 and, dynamic, growth_interval good steps in
 * a row multiply the scale by growth_factor (not above 2^24) and restart the count. */
static inline TIPC_HD void amp_state_update(float *st, float growth_factor, float backoff_factor,
                                            int growth_interval, bool dynamic)
{
    if (st[AMP_FOUND_INF] != 0) {
        st[AMP_SKIPPED] += 1;
        st[AMP_GOOD] = 0;
        if (dynamic) st[AMP_SCALE] = fmaxf(st[AMP_SCALE] * backoff_factor, 1.0f / 16777216.0f);
        return;
    }
    st[AMP_GOOD] += 1;
    if (dynamic && st[AMP_GOOD] >= (float)growth_interval) {
        st[AMP_SCALE] = fminf(st[AMP_SCALE] * growth_factor, 16777216.0f);
        st[AMP_GOOD] = 0;
    }
}

/* ---- scalar reference conversions (round to nearest, ties to even) --------------------------- */
static inline TIPC_HD uint32_t f32_bits(float f) { uint32_t u; memcpy(&u, &f, 4); return u; }
static inline TIPC_HD float f32_from_bits(uint32_t u) { float f; memcpy(&f, &u, 4); return f; }

/* fp32 -> bf16 bits: NaN stays NaN (quiet, sign kept), +-inf stays, overflow past bf16's largest
 * finite value rounds to inf (as RNE does), subnormals are kept (no flush). */
static inline TIPC_HD uint16_t bf16_from_f32(float f)
{
    uint32_t u = f32_bits(f);
    if ((u & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((u >> 16) | 0x40u); /* NaN: quiet */
    u += 0x7fffu + ((u >> 16) & 1u);
    return (uint16_t)(u >> 16);
}
static inline TIPC_HD float f32_from_bf16(uint16_t h) { return f32_from_bits((uint32_t)h << 16); }
static inline TIPC_HD float round_bf16(float f) { return f32_from_bf16(bf16_from_f32(f)); }

/* fp32 -> binary16 bits (IEEE: overflow to inf past 65520, subnormals down to 2^-24, RNE). */
static inline TIPC_HD uint16_t fp16_from_f32(float f)
{
    uint32_t u = f32_bits(f), sign = (u >> 16) & 0x8000u, a = u & 0x7fffffffu;
    if (a > 0x7f800000u) return (uint16_t)(sign | 0x7e00u | ((a >> 13) & 0x3ffu));  /* NaN */
    if (a >= 0x477ff000u) return (uint16_t)(sign | 0x7c00u); /* >= 65520 (and inf): inf */
    if (a < 0x38800000u) {                                   /* below 2^-14: subnormal or 0 */
        float m = f32_from_bits(a) * 16777216.0f;            /* units of 2^-24, exact */
        return (uint16_t)(sign | (uint32_t)nearbyintf(m));   /* default rounding mode: RNE */
    }
    a += 0x0fffu + ((a >> 13) & 1u) - 0x38000000u;           /* rebias 127 -> 15, RNE */
    return (uint16_t)(sign | (a >> 13));
}
static inline TIPC_HD float f32_from_fp16(uint16_t h)
{
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16, e = (h >> 10) & 0x1fu, m = h & 0x3ffu;
    if (e == 0) return f32_from_bits(sign) + (sign ? -1.0f : 1.0f) * (float)m * (1.0f / 16777216.0f);
    if (e == 31) return f32_from_bits(sign | 0x7f800000u | (m << 13));
    return f32_from_bits(sign | ((e + 112u) << 23) | (m << 13));
}
static inline TIPC_HD float round_fp16(float f) { return f32_from_fp16(fp16_from_f32(f)); }

/* f rounded to p's nearest representable value (fp32: f) */
static inline TIPC_HD float round_to(float f, enum precision p)
{
    return p == PREC_BF16 ? round_bf16(f) : p == PREC_FP16 ? round_fp16(f) : f;
}

#endif
