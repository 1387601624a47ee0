/* conv2d_pw.c: the inference pointwise conv and the direct (stem) conv as one register-blocked
 * GEMM: out (M, Co) = act(in (M, Kt) . w^T + bias) with the weights packed once into 16-column
 * panels (the same packing at every ISA level), a kernel of PW_MR rows x PW_NP panels (sized per
 * level in simd.h) and the epilogue applied in registers before the one store. A row of `in` is
 * nseg segments of seg floats, segstride apart: a pointwise conv's row is one segment (its
 * pixel's Ci channels); a direct conv's (few input channels, K x K) is its pixel's patch, K
 * input rows of K*Ci neighbouring floats each. At batch 1 these GEMMs are small (M = 49..3136,
 * Ci, Co = 16..576) and OpenBLAS re-packed both operands on every call: that and the separate
 * bias/activation pass were most of their time. Not here: training's pointwise convs (conv2d.c,
 * through sgemm). */

/* -std=c11 turns off FMA contraction; the kernel is a chain of multiply-adds */
#pragma GCC optimize("fp-contract=fast")
#include "simd.h"
#include "../../../core/banned.h"

static int npanels(int Co) { return (Co + 15) / 16; }

/* panels of weights, then the bias padded to whole panels: Kt = K*K*Ci weights per column */
size_t pwconv_packed_floats(int Kt, int Co) { return (size_t)npanels(Co) * 16 * ((size_t)Kt + 1); }

/* w (Co, Ci, K, K) (a pointwise conv's (Co, Ci): K = 1); panel j holds column o = j*16 + c's
 * weight k = (ky*K + kx)*Ci + ci (a patch's order in memory) at [j][k][c], zero beyond Co.
 * bias NULL: zero. */
void pwconv_pack_cpu(float *packed, const float *w, const float *bias, int K, int Ci, int Co)
{
    int Kt = K * K * Ci;
    for (int j = 0; j < npanels(Co); j++)
        for (int k = 0; k < Kt; k++)
            for (int c = 0; c < 16; c++) {
                int o = j * 16 + c, ci = k % Ci, kk = k / Ci;
                packed[((size_t)j * Kt + k) * 16 + c] = o < Co ? w[((size_t)o * Ci + ci) * K * K + kk] : 0.0f;
            }
    /* the bias test hoisted out of the loop: vectorised in the loop, it became a masked load from
     * bias that qemu's AVX2 (7.2) faults on when bias is NULL, though the mask is all off */
    float *pb = packed + (size_t)npanels(Co) * 16 * Kt;
    for (int o = 0; o < npanels(Co) * 16; o++) pb[o] = 0.0f;
    if (bias)
        for (int o = 0; o < Co; o++) pb[o] = bias[o];
}

/* R rows r[0..R-1] (pointers into `in`, the last repeated for a short block) times NV vectors of
 * columns from the panels at `pan` (vector v: panel v / PW_NV, its columns (v % PW_NV) * VW on),
 * then act(x + bias) in registers; `cols` output columns stored to o[i*Co] for the first `rows`
 * rows. R x NV accumulators (simd.h sizes the full block to the level's register file: 16 on
 * AVX-512, 12 on AVX2 and SSE). The products are summed in k order. One copy per activation, so
 * the epilogue is straight-line code on registers (with `act` a variable, GCC spilled the
 * accumulators around its switch: a tenth of the kernel's time where Ci is 16). */
#define PW_NV (16 / VW)          /* vectors per panel */
#define PW_NB (PW_NP * PW_NV)    /* vectors per full block */
#define PW_ARGS float *o, int Co, int rows, int cols, const float *const *r, const float *pan, const float *pb, \
                int Kt, int seg, int nseg, size_t segstride
#define PW_PASS o, Co, rows, cols, r, pan, pb, Kt, seg, nseg, segstride
#define PW_KERNEL(NAME, R, NV)                                                                     \
    static inline __attribute__((always_inline)) void NAME##_act(PW_ARGS, enum act_kind act)       \
    {                                                                                              \
        vf a[R][NV]; /* registers: nothing takes their address (no memset, no memcpy) */           \
        _Pragma("GCC unroll 16") for (int i = 0; i < R; i++)                                                                \
            _Pragma("GCC unroll 16") for (int j = 0; j < NV; j++) a[i][j] = (vf){0};                                        \
        for (int s = 0; s < nseg; s++) {                                                           \
            const float *rs[R];                                                                    \
            _Pragma("GCC unroll 16") for (int i = 0; i < R; i++) rs[i] = r[i] + s * segstride;                              \
            const float *ps = pan + (size_t)s * seg * 16;                                          \
            for (int k = 0; k < seg; k++) {                                                        \
                vf b[NV];                                                                          \
                _Pragma("GCC unroll 16") for (int v = 0; v < NV; v++)                                                       \
                    b[v] = ldv(ps + ((size_t)(v / PW_NV) * Kt + k) * 16 + (v % PW_NV) * VW);       \
                _Pragma("GCC unroll 16") for (int i = 0; i < R; i++) {                                                      \
                    float x = rs[i][k];                                                            \
                    _Pragma("GCC unroll 16") for (int j = 0; j < NV; j++) a[i][j] += x * b[j];                              \
                }                                                                                  \
            }                                                                                      \
        }                                                                                          \
        vf bias[NV];                                                                               \
        _Pragma("GCC unroll 16") for (int j = 0; j < NV; j++) bias[j] = ldv(pb + (j / PW_NV) * 16 + (j % PW_NV) * VW);      \
        /* row by row, each stored as soon as it is done (fewer live registers); constant        \
         * indices only (i < R, not i < rows), or `a` would have to live in memory */             \
        _Pragma("GCC unroll 16") for (int i = 0; i < R; i++) {                                                              \
            if (i >= rows) break;                                                                  \
            if (cols == NV * VW) {                                                                 \
                _Pragma("GCC unroll 16") for (int j = 0; j < NV; j++) stv(o + (size_t)i * Co + j * VW, actv(a[i][j] + bias[j], act)); \
            } else { /* the last columns: through a row buffer */                                 \
                float t[NV * VW];                                                                  \
                _Pragma("GCC unroll 16") for (int j = 0; j < NV; j++) stv(t + j * VW, actv(a[i][j] + bias[j], act));        \
                memcpy(o + (size_t)i * Co, t, sizeof(float) * (size_t)cols);                       \
            }                                                                                      \
        }                                                                                          \
    }                                                                                              \
    static void NAME(PW_ARGS, enum act_kind act)                                                   \
    {                                                                                              \
        switch (act) {                                                                             \
        case ACT_NONE: NAME##_act(PW_PASS, ACT_NONE); break;                                       \
        case ACT_RELU: NAME##_act(PW_PASS, ACT_RELU); break;                                       \
        case ACT_HARDSWISH: NAME##_act(PW_PASS, ACT_HARDSWISH); break;                             \
        case ACT_HARDSIGMOID: NAME##_act(PW_PASS, ACT_HARDSIGMOID); break;                         \
        }                                                                                          \
    }
/* full blocks of PW_MR rows, the rest in blocks of PW_SHORT (a short last one repeats a row);
 * blocks of PW_NB vectors, a last one of a single vector where no more columns are left (AVX2:
 * the 8 columns past a multiple of 16 of Co = 24, 40, 72, 88, 120 are not computed twice) */
#define PW_SHORT ((PW_MR + 1) / 2)
PW_KERNEL(pw_block, PW_MR, PW_NB)
PW_KERNEL(pw_block_short, PW_SHORT, PW_NB)
#if PW_NB > 1
PW_KERNEL(pw_vec, PW_MR, 1)
PW_KERNEL(pw_vec_short, PW_SHORT, 1)
#endif

/* nrows rows, row i at in + i*step, into out + i*Co, columns [c0, c1). The rows go in chunks of
 * about PW_CHUNK_BYTES of input (several blocks), and each block of columns runs over a whole
 * chunk before the next: the chunk's rows and one block's weights stay in L1 (rows outermost
 * streamed every column block's weights from L2 once per PW_MR rows) */
#define PW_CHUNK_BYTES 16384
static void pw_rows(float *out, int Co, const float *in, size_t step, int nrows, const float *packed, int seg,
                    int nseg, size_t segstride, int c0, int c1, enum act_kind act)
{
    int Kt = seg * nseg;
    const float *pb = packed + (size_t)npanels(Co) * 16 * Kt;
    int chunk = PW_CHUNK_BYTES / (int)sizeof(float) / Kt / PW_MR * PW_MR;
    if (chunk < PW_MR) chunk = PW_MR;
    for (int m0 = 0; m0 < nrows; m0 += chunk) {
        int m1 = nrows - m0 > chunk ? m0 + chunk : nrows;
        for (int c = c0; c < c1; c += PW_NB * VW) {
            int cols = c1 - c < PW_NB * VW ? c1 - c : PW_NB * VW;
            const float *pan = packed + (size_t)(c / 16) * Kt * 16;
            for (int m = m0; m < m1;) {
                int big = m1 - m >= PW_MR, rows = big ? PW_MR : m1 - m < PW_SHORT ? m1 - m : PW_SHORT;
                const float *r[PW_MR];
                for (int i = 0; i < PW_MR; i++) r[i] = in + (size_t)(m + (i < rows ? i : rows - 1)) * step;
                float *o = out + (size_t)m * Co + c;
#if PW_NB > 1
                if (cols <= VW) {
                    if (big) pw_vec(o, Co, rows, cols, r, pan, pb + c, Kt, seg, nseg, segstride, act);
                    else pw_vec_short(o, Co, rows, cols, r, pan, pb + c, Kt, seg, nseg, segstride, act);
                    m += rows;
                    continue;
                }
#endif
                if (big) pw_block(o, Co, rows, cols, r, pan, pb + c, Kt, seg, nseg, segstride, act);
                else pw_block_short(o, Co, rows, cols, r, pan, pb + c, Kt, seg, nseg, segstride, act);
                m += rows;
            }
        }
    }
}

void pwconv_bias_act_cpu(float *out, const float *in, const float *packed, enum act_kind act, int Ci, int Co,
                         int r0, int r1, int c0, int c1)
{
    pw_rows(out + (size_t)r0 * Co, Co, in + (size_t)r0 * Ci, (size_t)Ci, r1 - r0, packed, Ci, 1, 0, c0, c1, act);
}

void pwconv_patches_cpu(float *out, const float *in, size_t step, int npix, const float *packed, enum act_kind act,
                        int K, int Ci, int W, int Co)
{
    pw_rows(out, Co, in, step, npix, packed, K * Ci, K, (size_t)W * Ci, 0, Co, act);
}
