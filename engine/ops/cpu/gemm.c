/* gemm.c: row-major sgemm split across the OpenMP team, each thread calling single-threaded
 * OpenBLAS on its block of C. One threading runtime for the whole engine: OpenBLAS's own
 * pthreads spin after each call and fought the OpenMP team for the 2 cores here. */
#include <cblas.h>
#include <omp.h>

#include "gemm.h"
#include "../ops.h"
#include "../../core/banned.h"

void gemm_cpu(int ta, int tb, int M, int N, int K, const float *A, int lda, const float *B, int ldb, float beta,
              float *C, int ldc)
{
    enum CBLAS_TRANSPOSE TA = ta ? CblasTrans : CblasNoTrans, TB = tb ? CblasTrans : CblasNoTrans;
    int nt = omp_get_max_threads();
    if (nt <= 1 || (double)M * N * K < 4.0 * OMP_MIN_WORK * 16) {
        cblas_sgemm(CblasRowMajor, TA, TB, M, N, K, 1.0f, A, lda, B, ldb, beta, C, ldc);
        return;
    }
    /* split the longer side of C into one block per thread (16-aligned for the kernels) */
    if (openblas_get_num_threads() != 1) openblas_set_num_threads(1); /* never nest two thread pools */
    bool rows = M >= N;
    int len = rows ? M : N, blk = ((len + nt - 1) / nt + 15) / 16 * 16;
#pragma omp parallel for schedule(static) num_threads(nt)
    for (int t = 0; t < nt; t++) {
        int s = t * blk, n = len - s < blk ? len - s : blk;
        if (n <= 0) continue;
        if (rows)
            cblas_sgemm(CblasRowMajor, TA, TB, n, N, K, 1.0f, ta ? A + s : A + (size_t)s * lda, lda, B, ldb, beta,
                        C + (size_t)s * ldc, ldc);
        else
            cblas_sgemm(CblasRowMajor, TA, TB, M, n, K, 1.0f, A, lda, tb ? B + (size_t)s * ldb : B + s, ldb, beta,
                        C + s, ldc);
    }
}
