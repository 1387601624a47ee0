/* gemm.h: C (M, N) = op(A) . op(B) + beta * C, row-major, alpha 1; ta/tb transpose A/B.
 * Large products are split across the OpenMP team (single-threaded OpenBLAS per block). */
#ifndef TIPC_GEMM_H
#define TIPC_GEMM_H
#include <stdbool.h>

void gemm_cpu(int ta, int tb, int M, int N, int K, const float *A, int lda, const float *B, int ldb, float beta,
              float *C, int ldc);

#endif
