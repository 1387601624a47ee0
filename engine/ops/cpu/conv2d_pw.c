/* conv2d_pw.c: the inference pointwise conv: out (M, Co) = act(in (M, Ci) . w^T + bias) with the
 * weights packed once into 16-column panels (the same packing at every ISA level), a
 * register-blocked kernel (PW_MR rows x PW_NP panels, sized per level in simd.h) and the
 * epilogue applied in registers before the one store. At batch 1 these GEMMs are small (M = 49..3136,
 * Ci, Co = 16..576) and OpenBLAS re-packed both operands on every call: that and the separate
 * bias/activation pass were most of their time. Not here: training (conv2d.c, through sgemm). */

/* -std=c11 turns off FMA contraction; the kernel is a chain of multiply-adds */
#pragma GCC optimize("fp-contract=fast")
#include "simd.h"
#include "../../../core/banned.h"

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
 * starting at `pan`, then act(x + bias) in registers; `cols` output columns stored to o[i*Co]
 * for the first `rows` rows. R x NP x 16 / VW accumulators (simd.h sizes them to the level's
 * register file: 16 on AVX-512, 12 on AVX2 and SSE). */
#define PW_NV (16 / VW) /* vectors per panel */
#define PW_KERNEL(NAME, R, NP)                                                                     \
    static void NAME(float *o, int Co, int rows, int cols, const float *const *r,  \
                                     const float *pan, const float *pb, int Ci, enum act_kind act) \
    {                                                                                              \
        vf a[R][NP * PW_NV]; /* registers: nothing takes their address (no memset, no memcpy) */   \
        for (int i = 0; i < R; i++)                                                                \
            for (int j = 0; j < NP * PW_NV; j++) a[i][j] = (vf){0};                                \
        for (int k = 0; k < Ci; k++) {                                                             \
            vf b[NP * PW_NV];                                                                      \
            for (int p = 0; p < NP; p++)                                                           \
                for (int v = 0; v < PW_NV; v++) b[p * PW_NV + v] = ldv(pan + ((size_t)p * Ci + k) * 16 + v * VW); \
            for (int i = 0; i < R; i++) {                                                          \
                float x = r[i][k];                                                                 \
                for (int j = 0; j < NP * PW_NV; j++) a[i][j] += x * b[j];                          \
            }                                                                                      \
        }                                                                                          \
        for (int j = 0; j < NP * PW_NV; j++) {                                                     \
            vf b = ldv(pb + j * VW);                                                               \
            for (int i = 0; i < R; i++) a[i][j] = actv(a[i][j] + b, act);                          \
        }                                                                                          \
        if (cols == NP * 16) {                                                                     \
            for (int i = 0; i < rows; i++)                                                         \
                for (int j = 0; j < NP * PW_NV; j++) stv(o + (size_t)i * Co + j * VW, a[i][j]);    \
        } else { /* a last partial panel: through a row buffer */                                 \
            float t[NP * 16];                                                                      \
            for (int i = 0; i < rows; i++) {                                                       \
                for (int j = 0; j < NP * PW_NV; j++) stv(t + j * VW, a[i][j]);                     \
                memcpy(o + (size_t)i * Co, t, sizeof(float) * (size_t)cols);                       \
            }                                                                                      \
        }                                                                                          \
    }
/* full blocks of PW_MR rows, the rest in blocks of PW_SHORT (a short last one repeats a row);
 * blocks of PW_NP panels, a last single panel where fewer columns are left */
#define PW_SHORT ((PW_MR + 1) / 2)
PW_KERNEL(pw_block, PW_MR, PW_NP)
PW_KERNEL(pw_block_short, PW_SHORT, PW_NP)
#if PW_NP > 1
PW_KERNEL(pw_panel, PW_MR, 1)
PW_KERNEL(pw_panel_short, PW_SHORT, 1)
#endif

void pwconv_bias_act_cpu(float *out, const float *in, const float *packed, enum act_kind act, int Ci, int Co,
                         int r0, int r1, int c0, int c1)
{
    const float *pb = packed + (size_t)npanels(Co) * 16 * Ci;
    for (int m = r0; m < r1;) {
        int big = r1 - m >= PW_MR, rows = big ? PW_MR : r1 - m < PW_SHORT ? r1 - m : PW_SHORT;
        const float *r[PW_MR];
        for (int i = 0; i < PW_MR; i++) r[i] = in + (size_t)(m + (i < rows ? i : rows - 1)) * Ci;
        for (int c = c0; c < c1; c += PW_NP * 16) {
            int cols = c1 - c < PW_NP * 16 ? c1 - c : PW_NP * 16;
            const float *pan = packed + (size_t)(c / 16) * Ci * 16;
            float *o = out + (size_t)m * Co + c;
#if PW_NP > 1
            if (cols <= 16) {
                if (big) pw_panel(o, Co, rows, cols, r, pan, pb + c, Ci, act);
                else pw_panel_short(o, Co, rows, cols, r, pan, pb + c, Ci, act);
                continue;
            }
#endif
            if (big) pw_block(o, Co, rows, cols, r, pan, pb + c, Ci, act);
            else pw_block_short(o, Co, rows, cols, r, pan, pb + c, Ci, act);
        }
        m += rows;
    }
}
