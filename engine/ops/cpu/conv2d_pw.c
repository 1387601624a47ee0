/* conv2d_pw.c: the inference pointwise conv: out (M, Co) = act(in (M, Ci) . w^T + bias) with the
 * weights packed once into 16-column panels, a register-blocked 8x32 kernel and the epilogue
 * applied in registers before the one store. At batch 1 these GEMMs are small (M = 49..3136,
 * Ci, Co = 16..576) and OpenBLAS re-packed both operands on every call: that and the separate
 * bias/activation pass were most of their time. Not here: training (conv2d.c, through sgemm). */

/* -std=c11 turns off FMA contraction; the kernel is a chain of multiply-adds */
#pragma GCC optimize("fp-contract=fast")
#include "simd.h"
#include "../../../core/banned.h"

#define PW_ROWS 8

static int npanels(int Co) { return (Co + 15) / 16; }

/* panels of weights, then the bias padded to whole panels */
size_t pwconv_packed_floats(int Ci, int Co) { return (size_t)npanels(Co) * 16 * ((size_t)Ci + 1); }

/* panel j holds w[j*16 .. j*16+15][k] at [j][k][0..15], zero beyond Co */
void pwconv_pack_cpu(float *packed, const float *w, const float *bias, int Ci, int Co)
{
    for (int j = 0; j < npanels(Co); j++)
        for (int k = 0; k < Ci; k++)
            for (int c = 0; c < 16; c++) {
                int o = j * 16 + c;
                packed[((size_t)j * Ci + k) * 16 + c] = o < Co ? w[(size_t)o * Ci + k] : 0.0f;
            }
    float *pb = packed + (size_t)npanels(Co) * 16 * Ci;
    for (int o = 0; o < npanels(Co) * 16; o++) pb[o] = o < Co ? bias[o] : 0.0f;
}

/* R rows r[0..R-1] (pointers into `in`, the last repeated for a short block) times NP panels
 * (1 or 2) starting at `pan`, then act(x + bias) in registers; `cols` output columns stored to
 * o[i*Co] for the first `rows` rows. */
#define PW_KERNEL(R, NP)                                                                           \
    static void pw_kernel_##R##_##NP(float *o, int Co, int rows, int cols, const float *const *r,  \
                                     const float *pan, const float *pb, int Ci, enum act_kind act) \
    {                                                                                              \
        v16 a[R][NP];                                                                              \
        memset(a, 0, sizeof a);                                                                    \
        const float *p1 = pan + (size_t)Ci * 16;                                                   \
        for (int k = 0; k < Ci; k++) {                                                             \
            v16 b0 = ld16(pan + (size_t)k * 16), b1 = NP > 1 ? ld16(p1 + (size_t)k * 16) : b0;     \
            for (int i = 0; i < R; i++) {                                                          \
                float x = r[i][k];                                                                 \
                a[i][0] += x * b0;                                                                 \
                if (NP > 1) a[i][NP - 1] += x * b1;                                                \
            }                                                                                      \
        }                                                                                          \
        for (int p = 0; p < NP; p++) {                                                             \
            v16 b = ld16(pb + p * 16);                                                             \
            for (int i = 0; i < R; i++) a[i][p] = act16(a[i][p] + b, act);                         \
        }                                                                                          \
        if (cols == NP * 16) {                                                                     \
            for (int i = 0; i < rows; i++)                                                         \
                for (int p = 0; p < NP; p++) st16(o + (size_t)i * Co + p * 16, a[i][p]);           \
        } else {                                                                                   \
            for (int i = 0; i < rows; i++) memcpy(o + (size_t)i * Co, a[i], sizeof(float) * (size_t)cols); \
        }                                                                                          \
    }
PW_KERNEL(8, 1)
PW_KERNEL(8, 2)
PW_KERNEL(4, 1)
PW_KERNEL(4, 2)

void pwconv_bias_act_cpu(float *out, const float *in, const float *packed, enum act_kind act, int Ci, int Co,
                         int r0, int r1, int c0, int c1)
{
    const float *pb = packed + (size_t)npanels(Co) * 16 * Ci;
    for (int m = r0; m < r1;) {
        /* full blocks of PW_ROWS, the rest in blocks of 4 (a short last one repeats a row) */
        int big = r1 - m >= PW_ROWS, rows = big ? PW_ROWS : r1 - m < 4 ? r1 - m : 4;
        const float *r[PW_ROWS];
        for (int i = 0; i < PW_ROWS; i++) r[i] = in + (size_t)(m + (i < rows ? i : rows - 1)) * Ci;
        for (int c = c0; c < c1; c += 32) {
            int cols = c1 - c < 32 ? c1 - c : 32;
            const float *pan = packed + (size_t)(c / 16) * Ci * 16;
            float *o = out + (size_t)m * Co + c;
            if (big && cols > 16) pw_kernel_8_2(o, Co, rows, cols, r, pan, pb + c, Ci, act);
            else if (big) pw_kernel_8_1(o, Co, rows, cols, r, pan, pb + c, Ci, act);
            else if (cols > 16) pw_kernel_4_2(o, Co, rows, cols, r, pan, pb + c, Ci, act);
            else pw_kernel_4_1(o, Co, rows, cols, r, pan, pb + c, Ci, act);
        }
        m += rows;
    }
}
