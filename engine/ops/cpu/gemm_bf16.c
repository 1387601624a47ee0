/* gemm_bf16.c: see gemm_bf16.h. Blocking: 8 rows of A (their bf16 pairs built once per K chunk
 * on the stack) x one 16-column panel of packed B, 8 zmm accumulators; rows split across the
 * OpenMP team in blocks of 8. The AVX-512 bodies carry target attributes and the _v4 suffix of
 * the x86-64-v4 kernels (cpu_isa.h): they run only while that level runs. */
#if defined(__x86_64__)
#include <immintrin.h>
#endif
#include <math.h>
#include <string.h>

#include "gemm_bf16.h"
#include "../cpu_isa.h"
#include "../ops.h"
#include "../../../core/banned.h"

#define MR 8      /* rows per block */
#define KC 1024   /* bf16 pairs per K chunk (A's pairs: MR * KC words on the stack) */

static inline uint32_t hi16(const float *p) { uint32_t u; memcpy(&u, p, 4); return u >> 16; }

/* the running kernels are the AVX-512 ones (a forced lower level never uses it) */
bool gemm_bf16_native(void)
{
#if !defined(__x86_64__)
    return false;
#endif
    static int have = -1;
    if (have < 0) {
#if defined(__x86_64__)
        __builtin_cpu_init();
        have = __builtin_cpu_supports("avx512bf16") ? 1 : 0;
#else
        have = 0;
#endif
    }
    return have && cpu_isa_current() == CPU_ISA_V4;
}

size_t gemm_bf16_pack_words(int N, int K) { return (size_t)((N + 15) / 16) * 16 * (size_t)((K + 1) / 2); }

/* the pair (k, k+1) of row r as vdpbf16ps wants it: element k in the low half; past K: 0 */
static inline uint32_t pair(const float *row, int k, int K)
{
    return hi16(row + k) | (k + 1 < K ? hi16(row + k + 1) << 16 : 0);
}

static void pack_b(uint32_t *pack, int N, int K, const float *B, int ldb)
{
    int K2 = (K + 1) / 2, np = (N + 15) / 16;
    for (int p = 0; p < np; p++)
        for (int kk = 0; kk < K2; kk++)
            for (int j = 0; j < 16; j++) {
                int n = p * 16 + j;
                pack[((size_t)p * K2 + kk) * 16 + j] = n < N ? pair(B + (size_t)n * ldb, 2 * kk, K) : 0;
            }
}

/* vdpbf16ps by definition: acc += a.odd * b.odd, then acc += a.even * b.even (exact products) */
static inline float dp_scalar(float acc, uint32_t a, uint32_t b)
{
    float ao, bo, ae, be;
    uint32_t t;
    t = a & 0xffff0000u, memcpy(&ao, &t, 4);
    t = b & 0xffff0000u, memcpy(&bo, &t, 4);
    t = a << 16, memcpy(&ae, &t, 4);
    t = b << 16, memcpy(&be, &t, 4);
    return fmaf(ae, be, fmaf(ao, bo, acc));
}

#if defined(__x86_64__)
/* One block: rows [m0, m0 + mr) x all panels, pairs [k0, k0 + kc) (a: their A pairs, MR x kc);
 * first chunk overwrites C, later ones add. DP(acc, a, b) is the vdpbf16ps step. */
#define BLOCK_BODY(DP)                                                                              \
    for (int p = 0; p < np; p++) {                                                                  \
        __m512 acc[MR];                                                                             \
        int n0 = p * 16, nn = N - n0 < 16 ? N - n0 : 16;                                            \
        __mmask16 mask = (__mmask16)((1u << nn) - 1);                                               \
        for (int r = 0; r < MR; r++)                                                                \
            acc[r] = first || r >= mr ? _mm512_setzero_ps()                                         \
                                      : _mm512_maskz_loadu_ps(mask, C + (size_t)(m0 + r) * ldc + n0); \
        const uint32_t *bp = pack + ((size_t)p * K2 + k0) * 16;                                     \
        for (int kk = 0; kk < kc; kk++) {                                                           \
            __m512i b = _mm512_loadu_si512(bp + (size_t)kk * 16);                                   \
            for (int r = 0; r < MR; r++)                                                            \
                if (r < mr) acc[r] = DP(acc[r], _mm512_set1_epi32((int)a[r * KC + kk]), b);         \
        }                                                                                           \
        for (int r = 0; r < mr; r++) _mm512_mask_storeu_ps(C + (size_t)(m0 + r) * ldc + n0, mask, acc[r]); \
    }

#define NATIVE_DP(acc, a, b) _mm512_dpbf16_ps(acc, (__m512bh)(a), (__m512bh)(b))
static inline __attribute__((target("avx512f"))) __m512 emul_dp_v4(__m512 acc, __m512i a, __m512i b)
{
    __m512i hi = _mm512_set1_epi32((int)0xffff0000u);
    acc = _mm512_fmadd_ps(_mm512_castsi512_ps(_mm512_and_si512(a, hi)), _mm512_castsi512_ps(_mm512_and_si512(b, hi)),
                          acc);
    return _mm512_fmadd_ps(_mm512_castsi512_ps(_mm512_slli_epi32(a, 16)), _mm512_castsi512_ps(_mm512_slli_epi32(b, 16)),
                           acc);
}
#define EMUL_DP(acc, a, b) emul_dp_v4(acc, a, b)

__attribute__((target("avx512f,avx512bw,avx512bf16"))) static void block_native_v4(
    int m0, int mr, int k0, int kc, bool first, int N, int K2, int np, const uint32_t *a, const uint32_t *pack,
    float *C, int ldc)
{
    BLOCK_BODY(NATIVE_DP)
}
__attribute__((target("avx512f"))) static void block_emul_v4(int m0, int mr, int k0, int kc, bool first, int N, int K2,
                                                          int np, const uint32_t *a, const uint32_t *pack, float *C,
                                                          int ldc)
{
    BLOCK_BODY(EMUL_DP)
}

#endif

static void block_scalar(int m0, int mr, int k0, int kc, bool first, int N, int K2, const uint32_t *a,
                         const uint32_t *pack, float *C, int ldc)
{
    for (int r = 0; r < mr; r++)
        for (int n = 0; n < N; n++) {
            float acc = first ? 0.0f : C[(size_t)(m0 + r) * ldc + n];
            const uint32_t *bp = pack + ((size_t)(n / 16) * K2 + k0) * 16 + n % 16;
            for (int kk = 0; kk < kc; kk++) acc = dp_scalar(acc, a[r * KC + kk], bp[(size_t)kk * 16]);
            C[(size_t)(m0 + r) * ldc + n] = acc;
        }
}

void gemm_bf16_nt(bool native, int M, int N, int K, const float *A, int lda, const float *B, int ldb, float *C,
                  int ldc, uint32_t *pack)
{
    pack_b(pack, N, K, B, ldb);
    int K2 = (K + 1) / 2, nblk = (M + MR - 1) / MR;
#if defined(__x86_64__)
    int np = (N + 15) / 16;
    bool avx512 = cpu_isa_current() == CPU_ISA_V4;
#else
    (void)native; /* no vdpbf16ps: the scalar block */
#endif
#pragma omp parallel for schedule(dynamic, 4) if ((double)M * N * K >= 4.0 * OMP_MIN_WORK * 16)
    for (int blk = 0; blk < nblk; blk++) {
        uint32_t a[MR * KC];
        int m0 = blk * MR, mr = M - m0 < MR ? M - m0 : MR;
        for (int k0 = 0; k0 < K2; k0 += KC) {
            int kc = K2 - k0 < KC ? K2 - k0 : KC;
            for (int r = 0; r < mr; r++)
                for (int kk = 0; kk < kc; kk++) a[r * KC + kk] = pair(A + (size_t)(m0 + r) * lda, 2 * (k0 + kk), K);
#if defined(__x86_64__)
            if (native) block_native_v4(m0, mr, k0, kc, k0 == 0, N, K2, np, a, pack, C, ldc);
            else if (avx512) block_emul_v4(m0, mr, k0, kc, k0 == 0, N, K2, np, a, pack, C, ldc);
            else
#endif
                block_scalar(m0, mr, k0, kc, k0 == 0, N, K2, a, pack, C, ldc);
        }
    }
}
