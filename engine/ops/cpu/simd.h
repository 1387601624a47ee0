/* simd.h: the CPU kernels' vector types (GCC vector extensions: one AVX-512 register, or two
 * AVX ones, per v16), the folded-BN epilogue act(x + bias) on registers, and the scalar
 * activation and its derivative that every elementwise kernel uses (one definition, so the
 * kinks are decided the same way in act.c and in the fused BN of bn.c). Loads and stores go
 * through memcpy: no alignment assumed. Not here: any kernel. */
#ifndef TIPC_SIMD_H
#define TIPC_SIMD_H
#include <string.h>

#include "../ops.h"

typedef float v16 __attribute__((vector_size(64)));
typedef float v8 __attribute__((vector_size(32)));
typedef int vi16 __attribute__((vector_size(64)));
typedef int vi8 __attribute__((vector_size(32)));

static inline v16 ld16(const float *p) { v16 v; memcpy(&v, p, sizeof v); return v; }
static inline void st16(float *p, v16 v) { memcpy(p, &v, sizeof v); }
static inline v8 ld8(const float *p) { v8 v; memcpy(&v, p, sizeof v); return v; }
static inline void st8(float *p, v8 v) { memcpy(p, &v, sizeof v); }

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
 * -3, (2v+3)/6 on [-3, 3], 1 above; hardsigmoid: 1/6 strictly inside (-3, 3)) */
static inline float act_grad_scalar(float v, float g, enum act_kind k)
{
    switch (k) {
    case ACT_NONE: return g;
    case ACT_RELU: return v > 0 ? g : 0.0f;
    case ACT_HARDSWISH: return v < -3.0f ? 0.0f : (v <= 3.0f ? g * (v * (1.0f / 3.0f) + 0.5f) : g);
    case ACT_HARDSIGMOID: return (v > -3.0f && v < 3.0f) ? g * (1.0f / 6.0f) : 0.0f;
    }
    return g;
}

/* act(v + b) for one vector: max/min through compare masks (the extensions have no min/max) */
#define SIMD_ACT(VT, VI, W)                                                                  \
    static inline VT act##W(VT v, enum act_kind k)                                           \
    {                                                                                        \
        VT zero = {0}, six = zero + 6.0f;                                                    \
        VT t;                                                                                \
        VI m;                                                                                \
        switch (k) {                                                                         \
        case ACT_NONE: return v;                                                             \
        case ACT_RELU: return (VT)((VI)v & (VI)(v > zero));                                  \
        case ACT_HARDSWISH:                                                                  \
        case ACT_HARDSIGMOID:                                                                \
            t = v + 3.0f;                                                                    \
            t = (VT)((VI)t & (VI)(t > zero));                                                \
            m = t < six;                                                                     \
            t = (VT)(((VI)t & m) | ((VI)six & ~m));                                          \
            return k == ACT_HARDSWISH ? v * t * (1.0f / 6.0f) : t * (1.0f / 6.0f);           \
        }                                                                                    \
        return v;                                                                            \
    }
SIMD_ACT(v16, vi16, 16)
SIMD_ACT(v8, vi8, 8)

#endif
