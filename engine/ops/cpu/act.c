/* act.c: activations, CPU reference: ReLU, hardswish, hardsigmoid (forward, backward) and the
 * inference epilogue act(x + bias). The formulas and their derivatives (PyTorch's at the kinks)
 * are act_scalar / act_grad_scalar in simd.h. Not here: BN + activation fused (bn.c). */
#include <string.h>

#include "simd.h"
#include "../../../core/banned.h"

/* one loop per activation, the kind a constant in each (so each vectorises) */
#define ACT_FWD_LOOP(K)                                                                      \
    _Pragma("omp simd") for (size_t i = lo; i < hi; i++) out[i] = act_scalar(in[i], K)

void act_forward_part_cpu(float *out, const float *in, size_t n, enum act_kind k, int part, int nparts)
{
    size_t lo, hi;
    part_range(n, part, nparts, 16, &lo, &hi);
    switch (k) {
    case ACT_NONE:
        if (out != in && hi > lo) memmove(out + lo, in + lo, (hi - lo) * sizeof(float));
        break;
    case ACT_RELU: ACT_FWD_LOOP(ACT_RELU); break;
    case ACT_HARDSWISH: ACT_FWD_LOOP(ACT_HARDSWISH); break;
    case ACT_HARDSIGMOID: ACT_FWD_LOOP(ACT_HARDSIGMOID); break;
    }
}

void act_forward_cpu(struct backend_ctx *cx, float *out, const float *in, size_t n, enum act_kind k)
{
    (void)cx;
    int np = omp_parts(n);
#pragma omp parallel for schedule(dynamic, 1) if (np > 1)
    for (int p = 0; p < np; p++) act_forward_part_cpu(out, in, n, k, p, np);
}

/* Both loops spelled out (acc is loop-invariant, but inside an OpenMP simd loop gcc keeps
 * the branch and stops vectorising: ReLU backward took 10% of a training step). */
#define ACT_BWD_LOOP(expr)                                                                   \
    do {                                                                                     \
        if (acc) {                                                                           \
            _Pragma("omp parallel for simd schedule(dynamic, 16384) if (n >= OMP_MIN_WORK)")        \
            for (size_t i = 0; i < n; i++) { float x = in[i], g = dout[i]; din[i] += (expr); } \
        } else {                                                                             \
            _Pragma("omp parallel for simd schedule(dynamic, 16384) if (n >= OMP_MIN_WORK)")        \
            for (size_t i = 0; i < n; i++) { float x = in[i], g = dout[i]; din[i] = (expr); }  \
        }                                                                                    \
    } while (0)

void act_backward_cpu(struct backend_ctx *cx, float *din, const float *dout, const float *in, size_t n,
                      enum act_kind k, int acc)
{
    (void)cx;
    switch (k) {
    case ACT_NONE: ACT_BWD_LOOP(act_grad_scalar(x, g, ACT_NONE)); break;
    case ACT_RELU: ACT_BWD_LOOP(act_grad_scalar(x, g, ACT_RELU)); break;
    case ACT_HARDSWISH: ACT_BWD_LOOP(act_grad_scalar(x, g, ACT_HARDSWISH)); break;
    case ACT_HARDSIGMOID: ACT_BWD_LOOP(act_grad_scalar(x, g, ACT_HARDSIGMOID)); break;
    }
}

void bias_act_block_cpu(float *y, size_t ldy, const float *b, int rows, int cols, enum act_kind k)
{
#define BIAS_ACT_LOOP(K) for (int c = 0; c < cols; c++) r[c] = act_scalar(r[c] + b[c], K)
    for (int m = 0; m < rows; m++) {
        float *r = y + (size_t)m * ldy;
        switch (k) {
        case ACT_NONE: BIAS_ACT_LOOP(ACT_NONE); break;
        case ACT_RELU: BIAS_ACT_LOOP(ACT_RELU); break;
        case ACT_HARDSWISH: BIAS_ACT_LOOP(ACT_HARDSWISH); break;
        case ACT_HARDSIGMOID: BIAS_ACT_LOOP(ACT_HARDSIGMOID); break;
        }
    }
#undef BIAS_ACT_LOOP
}

void bias_act_forward_cpu(struct backend_ctx *cx, float *y, const float *b, size_t M, int C, enum act_kind k)
{
    (void)cx;
#pragma omp parallel for schedule(dynamic, 8) if (M * (size_t)C >= OMP_MIN_WORK)
    for (size_t m = 0; m < M; m++) bias_act_block_cpu(y + m * (size_t)C, (size_t)C, b, 1, C, k);
}
