/* add.c: the residual add, CPU reference. */
#include "../ops.h"
#include "../../../core/banned.h"

void add_forward_part_cpu(float *out, const float *a, const float *b, size_t n, int part, int nparts)
{
    size_t lo, hi;
    part_range(n, part, nparts, 16, &lo, &hi);
#pragma omp simd
    for (size_t i = lo; i < hi; i++) out[i] = a[i] + b[i];
}

void add_forward_cpu(struct backend_ctx *cx, float *out, const float *a, const float *b, size_t n)
{
    (void)cx;
    int np = omp_parts(n);
#pragma omp parallel for schedule(dynamic, 1) if (np > 1)
    for (int p = 0; p < np; p++) add_forward_part_cpu(out, a, b, n, p, np);
}

void add_backward_cpu(struct backend_ctx *cx, float *da, float *db, const float *dout, size_t n, int acc_a,
                      int acc_b)
{
    (void)cx;
#pragma omp parallel for simd schedule(dynamic, 16384) if (n >= OMP_MIN_WORK)
    for (size_t i = 0; i < n; i++) {
        if (acc_a) da[i] += dout[i]; else da[i] = dout[i];
        if (acc_b) db[i] += dout[i]; else db[i] = dout[i];
    }
}
