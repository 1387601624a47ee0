/* gemm_bf16.h: C (M, N) = A (M, K) . B (N, K)^T with bf16 inputs and fp32 accumulation, the
 * GEMM of a bf16 net's pointwise convs (engine/ops/precision.h). A and B are float arrays whose
 * values are bf16 (low 16 bits zero, as the AMP policy keeps them), so the words are exact.
 *
 * Two kernels from one body, chosen at run time:
 * - native: AVX512-BF16's vdpbf16ps (two bf16 products per fp32 lane per instruction), compiled
 *   with a target attribute so any x86-64 build has it; runs only where
 *   __builtin_cpu_supports("avx512bf16") (Cooper Lake, Sapphire Rapids, Zen 4 and later) and the
 *   x86-64-v4 kernels run (cpu_isa.h: a forced lower level takes the fallback below);
 * - emulated: the same loop with vdpbf16ps replaced by its definition (two fp32 FMAs of the
 *   widened bf16 halves, odd element first), bit-identical to the native one except that
 *   vdpbf16ps treats subnormal inputs and outputs as zero. It exists to test the kernel's packing
 *   and indexing on CPUs without the instruction; elsewhere the fallback of a bf16 conv is the
 *   fp32 sgemm on the bf16 values (exact products, fp32 accumulation: the same maths). */
#ifndef TIPC_GEMM_BF16_H
#define TIPC_GEMM_BF16_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* this CPU runs vdpbf16ps (checked once) and the x86-64-v4 kernels are running */
bool gemm_bf16_native(void);
/* 32-bit words of B packed for the kernel: 16-column panels x ceil(K/2) bf16 pairs */
size_t gemm_bf16_pack_words(int N, int K);
/* C = A . B^T; pack: gemm_bf16_pack_words(N, K) words of caller scratch. native must only be
 * true where gemm_bf16_native(). Rows are split across the OpenMP team. */
void gemm_bf16_nt(bool native, int M, int N, int K, const float *A, int lda, const float *B, int ldb, float *C,
                  int ldc, uint32_t *pack);

#endif
