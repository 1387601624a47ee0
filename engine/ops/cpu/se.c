/* se.c: the squeeze-excite channel scale out[n,p,c] = x[n,p,c] * g[n,c], CPU reference.
 * Not here: SE's pooling (pool.c) and 1x1 convs (linear.c). */
#include <string.h>

#include "../ops.h"
#include "../../../core/banned.h"

void scale_forward_part_cpu(float *out, const float *x, const float *g, int N, int P, int C, int part, int nparts)
{
    size_t lo, hi;
    part_range((size_t)N * P, part, nparts, 1, &lo, &hi);
    for (size_t r = lo; r < hi; r++) {
        const float *gn = g + r / (size_t)P * C, *xr = x + r * C;
        float *o = out + r * C;
        for (int c = 0; c < C; c++) o[c] = xr[c] * gn[c];
    }
}

void scale_forward_cpu(struct backend_ctx *cx, float *out, const float *x, const float *g, int N, int P, int C)
{
    (void)cx;
    int np = omp_parts((size_t)N * P * C);
    if (np > N * P) np = N * P;
#pragma omp parallel for schedule(dynamic, 1) if (np > 1)
    for (int p = 0; p < np; p++) scale_forward_part_cpu(out, x, g, N, P, C, p, np);
}

/* dg (N, C) is a reduction over P: threads split the images. */
void scale_backward_cpu(struct backend_ctx *cx, float *dx, float *dg, const float *dout, const float *x,
                        const float *g, int N,
                        int P, int C, int acc_x, int acc_g)
{
    (void)cx;
    if (!acc_g) memset(dg, 0, sizeof(float) * (size_t)N * C); /* (N, C): small */
#pragma omp parallel for schedule(dynamic, 8) if ((size_t)N * P * C >= OMP_MIN_WORK)
    for (int n = 0; n < N; n++) {
        const float *gn = g + (size_t)n * C;
        float *dgn = dg + (size_t)n * C;
        for (int p = 0; p < P; p++) {
            size_t o = ((size_t)n * P + p) * C;
            for (int c = 0; c < C; c++) {
                dgn[c] += dout[o + c] * x[o + c];
                if (acc_x) dx[o + c] += dout[o + c] * gn[c]; else dx[o + c] = dout[o + c] * gn[c];
            }
        }
    }
}
