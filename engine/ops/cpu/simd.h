/* simd.h: the CPU kernels' vector type and register blocking for the ISA level this file is
 * compiled for (engine/backend/cpu_isa.h: each kernel source is compiled once per level, with
 * that level's -march, and the best one the CPU runs is picked at start-up):
 *   x86-64-v4 (AVX-512, 32 registers)   VW 16 floats, pointwise block 8 rows x 32 columns
 *   x86-64-v3 (AVX2 + FMA, 16 registers) VW 8,         pointwise block 6 rows x 16 columns
 *   x86-64-v2 (SSE4.2, 16 registers)     VW 4,         pointwise block 3 rows x 16 columns
 *   aarch64   (NEON, 32 registers)       VW 4,         pointwise block 6 rows x 16 columns
 * (accumulators: 16, 12, 12 and 24 registers). `vf` is one hardware register (GCC vector
 * extensions), so a kernel written with vf, VW and the blocking constants is one source for
 * every level; loads and stores go through memcpy (no alignment assumed). Each output value is
 * summed in the same order at every width, so v3 and v4 give the same bits; v2 has no FMA.
 * Also: the folded-BN epilogue act(x + bias) on registers, and the scalar activation and its
 * derivative that every elementwise kernel uses (one definition, so the kinks are decided the
 * same way in act.c and in the fused BN of bn.c). Not here: any kernel. */
#ifndef TIPC_SIMD_H
#define TIPC_SIMD_H
#include <stdint.h>
#include <string.h>

#include "../ops.h"

#if defined(__AVX512F__)
#define VW 16
#define PW_MR 8 /* pointwise kernel: rows per block */
#define PW_NP 2 /* pointwise kernel: 16-column weight panels per block */
#elif defined(__AVX2__)
#define VW 8
#define PW_MR 6
#define PW_NP 1
#elif defined(__aarch64__)
#define VW 4
#define PW_MR 6
#define PW_NP 1
#else
#define VW 4
#define PW_MR 3
#define PW_NP 1
#endif

typedef float vf __attribute__((vector_size(VW * 4)));
typedef int32_t vi __attribute__((vector_size(VW * 4)));
typedef uint32_t vu __attribute__((vector_size(VW * 4)));
static inline vf ldv(const float *p) { vf v; memcpy(&v, p, sizeof v); return v; }
static inline void stv(float *p, vf v) { memcpy(p, &v, sizeof v); }
#if VW > 8
/* half a register where VW is 16 (the nets' channel counts are multiples of 8); only declared
 * where it fits a register (a wider vector than the level has would change the ABI) */
typedef float v8 __attribute__((vector_size(32)));
typedef int32_t vi8 __attribute__((vector_size(32)));
static inline v8 ld8(const float *p) { v8 v; memcpy(&v, p, sizeof v); return v; }
static inline void st8(float *p, v8 v) { memcpy(p, &v, sizeof v); }
#endif

static inline float relu6f(float x) { return x < 0 ? 0 : (x > 6 ? 6 : x); }

/* act(v); called with a constant k inside a loop, the switch folds away and the loop vectorises */
static inline float act_scalar(float v, enum act_kind k)
{
    switch (k) {
    case ACT_NONE: return v;
    case ACT_RELU: return v > 0 ? v : 0.0f;
    case ACT_HARDSWISH: return v * relu6f(v + 3.0f) * (1.0f / 6.0f);
    case ACT_HARDSIGMOID: return relu6f(v + 3.0f) * (1.0f / 6.0f);
    }
    return v;
}

/* act'(v) * g at the pre-activation v, PyTorch's derivatives at the kinks (hardswish: 0 below
 * -3, (2v+3)/6 on [-3, 3], 1 above; hardsigmoid: 1/6 strictly inside (-3, 3)). The arithmetic is
 * done unconditionally and only its result selected: a multiply inside a condition cannot be
 * vectorised without AVX-512's masks (it might trap), so on AVX2 and SSE that loop stayed scalar
 * (BN + hardswish backward took 9% of an AVX2 training step). g * 1 is g, so the values are the
 * same as the conditional form's. */
static inline float act_grad_scalar(float v, float g, enum act_kind k)
{
    float d, r;
    switch (k) {
    case ACT_NONE: return g;
    case ACT_RELU: return v > 0 ? g : 0.0f;
    case ACT_HARDSWISH:
        d = v * (1.0f / 3.0f) + 0.5f;
        r = g * (v <= 3.0f ? d : 1.0f);
        return v < -3.0f ? 0.0f : r;
    case ACT_HARDSIGMOID:
        r = g * (1.0f / 6.0f);
        return (v > -3.0f && v < 3.0f) ? r : 0.0f;
    }
    return g;
}

/* max(v, lo) and min(v, hi) per lane, as x86's maxps / minps define them (the second operand
 * where the comparison is false, NaN included): one instruction on x86 (the masked form below
 * was a compare, an and and a 3-uop blend per bound, in the epilogue of every conv); the same
 * values as the masked form (and -0.0 against +0.0 gives +0.0 either way), so every level agrees */
#if defined(__AVX512F__)
#include <immintrin.h>
static inline vf vmaxv(vf a, vf b) { return _mm512_max_ps(a, b); }
static inline vf vminv(vf a, vf b) { return _mm512_min_ps(a, b); }
static inline v8 vmax8(v8 a, v8 b) { return _mm256_max_ps(a, b); }
static inline v8 vmin8(v8 a, v8 b) { return _mm256_min_ps(a, b); }
#elif defined(__AVX__)
#include <immintrin.h>
static inline vf vmaxv(vf a, vf b) { return _mm256_max_ps(a, b); }
static inline vf vminv(vf a, vf b) { return _mm256_min_ps(a, b); }
#elif defined(__SSE__)
#include <immintrin.h>
static inline vf vmaxv(vf a, vf b) { return _mm_max_ps(a, b); }
static inline vf vminv(vf a, vf b) { return _mm_min_ps(a, b); }
#else
static inline vf vmaxv(vf a, vf b) { vi m = a > b; return (vf)(((vi)a & m) | ((vi)b & ~m)); }
static inline vf vminv(vf a, vf b) { vi m = a < b; return (vf)(((vi)a & m) | ((vi)b & ~m)); }
#endif

/* act(v) for one vector (hardswish v * min(max(v + 3, 0), 6) / 6) */
#define SIMD_ACT(NAME, VT, VMAX, VMIN)                                                       \
    static inline VT NAME(VT v, enum act_kind k)                                             \
    {                                                                                        \
        VT zero = {0}, six = zero + 6.0f, t;                                                 \
        switch (k) {                                                                         \
        case ACT_NONE: return v;                                                             \
        case ACT_RELU: return VMAX(v, zero);                                                 \
        case ACT_HARDSWISH:                                                                  \
        case ACT_HARDSIGMOID:                                                                \
            t = VMIN(VMAX(v + 3.0f, zero), six);                                             \
            return k == ACT_HARDSWISH ? v * t * (1.0f / 6.0f) : t * (1.0f / 6.0f);           \
        }                                                                                    \
        return v;                                                                            \
    }
SIMD_ACT(actv, vf, vmaxv, vminv)
#if VW > 8
SIMD_ACT(act8, v8, vmax8, vmin8)
#endif

#endif
