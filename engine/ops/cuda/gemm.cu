/* gemm.cu: the row-major GEMM helper of the CUDA ops (cuBLAS), twin of ops/cpu/gemm.c. */
#include "cuda_common.cuh"

/* Row-major C = op(A) op(B) + beta C is column-major C^T = op(B)^T op(A)^T: swap the operands. */
void gemm_cuda(struct backend_ctx *cx, int ta, int tb, int M, int N, int K, const float *A, int lda, const float *B,
               int ldb, float beta, float *C, int ldc)
{
    if (M <= 0 || N <= 0) return;
    const float one = 1.0f;
    if (K <= 0) { /* C = beta C: cuBLAS handles k = 0 as such */
        CUBLAS_CHECK(cublasSgemm(cx->cublas, CUBLAS_OP_N, CUBLAS_OP_N, N, M, 0, &one, B, ldb > 0 ? ldb : 1, A,
                                 lda > 0 ? lda : 1, &beta, C, ldc));
        return;
    }
    CUBLAS_CHECK(cublasSgemm(cx->cublas, tb ? CUBLAS_OP_T : CUBLAS_OP_N, ta ? CUBLAS_OP_T : CUBLAS_OP_N, N, M, K,
                             &one, B, ldb, A, lda, &beta, C, ldc));
}
