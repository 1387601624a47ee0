/* linear.c: fully connected layer y = x W^T + b through OpenBLAS sgemm, CPU reference. Also the
 * 1x1 convs of squeeze-excite, which act on pooled (N, C) vectors. */

#include <cblas.h>

#include "gemm.h"
#include "../ops.h"
#include "../../../core/banned.h"

void linear_forward_cpu(struct backend_ctx *cx, float *out, const float *in, const float *w, const float *b,
                        int N, int Ci, int Co)
{
    (void)cx;
    for (int n = 0; n < N; n++)
        for (int o = 0; o < Co; o++) out[(size_t)n * Co + o] = b ? b[o] : 0.0f;
    gemm_cpu(0, 1, N, Co, Ci, in, Ci, w, Ci, 1.0f, out, Co);
}

void linear_backward_cpu(struct backend_ctx *cx, float *din, float *dw, float *db, const float *dout,
                         const float *in,
                         const float *w, int N, int Ci, int Co, int acc)
{
    (void)cx;
    /* dw (Co, Ci) += dout^T (Co, N) . in (N, Ci) */
    gemm_cpu(1, 0, Co, Ci, N, dout, Co, in, Ci, 1.0f, dw, Ci);
    if (db)
        for (int n = 0; n < N; n++)
            for (int o = 0; o < Co; o++) db[o] += dout[(size_t)n * Co + o];
    /* din (N, Ci) += dout (N, Co) . w (Co, Ci) */
    if (din)
        gemm_cpu(0, 0, N, Ci, Co, dout, Co, w, Ci, acc ? 1.0f : 0.0f, din, Ci);
}

/* output features [lo, hi) for all N rows: sgemv for one row (streams its share of w once) */
void linear_act_part_cpu(float *out, const float *in, const float *w, const float *b, enum act_kind act, int N,
                         int Ci, int Co, int part, int nparts)
{
    int lo, hi;
    part_range_int(Co, part, nparts, 16, &lo, &hi);
    if (lo >= hi) return;
    if (N == 1)
        cblas_sgemv(CblasRowMajor, CblasNoTrans, hi - lo, Ci, 1.0f, w + (size_t)lo * Ci, Ci, in, 1, 0.0f, out + lo, 1);
    else
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, N, hi - lo, Ci, 1.0f, in, Ci, w + (size_t)lo * Ci, Ci,
                    0.0f, out + lo, Co);
    bias_act_block_cpu(out + lo, (size_t)Co, b + lo, N, hi - lo, act);
}
