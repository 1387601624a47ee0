/* simd.h: the CPU kernels' vector types (GCC vector extensions: one AVX-512 register, or two
 * AVX ones, per v16) and the folded-BN epilogue act(x + bias) on registers. Loads and stores
 * go through memcpy: no alignment assumed. Not here: any kernel. */
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
