/* gemm.c: row-major sgemm split across the OpenMP team, each thread calling single-threaded
 * OpenBLAS on its block of C. One threading runtime for the whole engine: OpenBLAS's own
 * pthreads spin after each call and fought the OpenMP team for the 2 cores here. */
#include <cblas.h>
#include <omp.h>

#include "gemm.h"
#include "../ops.h"
#include "../../../core/banned.h"

/* rows (or columns) of C per block, at least, where the threads still get a block each */
#define GEMM_MIN_BLOCK 64

void gemm_cpu(int ta, int tb, int M, int N, int K, const float *A, int lda, const float *B, int ldb, float beta,
              float *C, int ldc)
{
    enum CBLAS_TRANSPOSE TA = ta ? CblasTrans : CblasNoTrans, TB = tb ? CblasTrans : CblasNoTrans;
    if (M == 1 && !ta) {
        /* one row (bs=1 linear layers): sgemv streams B once; sgemm packed all of it first
         * (the 1024x1000 classifier took 18% of a bs=1 inference) */
        if (tb)
            cblas_sgemv(CblasRowMajor, CblasNoTrans, N, K, 1.0f, B, ldb, A, 1, beta, C, 1);
        else
            cblas_sgemv(CblasRowMajor, CblasTrans, K, N, 1.0f, B, ldb, A, 1, beta, C, 1);
        return;
    }
    int nt = omp_get_max_threads();
    if (nt <= 1 || (double)M * N * K < 4.0 * OMP_MIN_WORK * 16) {
        cblas_sgemm(CblasRowMajor, TA, TB, M, N, K, 1.0f, A, lda, B, ldb, beta, C, ldc);
        return;
    }
    /* split the longer side of C into one block per thread */
    if (openblas_get_num_threads() != 1) openblas_set_num_threads(1); /* never nest two thread pools */
    bool rows = M >= N;
    /* up to 4 blocks per thread taken dynamically: a thread that loses its core to another
     * process does not hold the others at the barrier (each block's result is independent); but
     * no block shorter than GEMM_MIN_BLOCK where that leaves a block per thread: every block
     * packs the whole shared operand again (a weight gradient, C = Co x Ci summed over the
     * batch's pixels, split into blocks of 4 rows packed its pixels 4 times) */
    int len = rows ? M : N, nb = len / GEMM_MIN_BLOCK;
    nb = nb > 4 * nt ? 4 * nt : nb < nt ? nt : nb;
    int blk = ((len + nb - 1) / nb + 3) / 4 * 4;
#pragma omp parallel for schedule(dynamic, 1) num_threads(nt)
    for (int t = 0; t < nb; t++) {
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
