/* pool.c: global average pooling of NHWC (N, P=H*W, C) to (N, C), CPU reference. */
#include "../ops.h"
#include "../../../core/banned.h"

/* channels split: each part sums its channel range over the P positions */
void avgpool_forward_part_cpu(float *out, const float *in, int N, int P, int C, int part, int nparts)
{
    int lo, hi;
    part_range_int(C, part, nparts, 16, &lo, &hi);
    for (int n = 0; n < N; n++) {
        float *o = out + (size_t)n * C;
        for (int c = lo; c < hi; c++) o[c] = 0.0f;
        for (int p = 0; p < P; p++) {
            const float *x = in + ((size_t)n * P + p) * C;
            for (int c = lo; c < hi; c++) o[c] += x[c];
        }
        for (int c = lo; c < hi; c++) o[c] *= 1.0f / (float)P;
    }
}

/* images in parallel (each image's channels as one part) */
void avgpool_forward_cpu(struct backend_ctx *cx, float *out, const float *in, int N, int P, int C)
{
    (void)cx;
#pragma omp parallel for schedule(dynamic, 8) if ((size_t)N * P * C >= OMP_MIN_WORK)
    for (int n = 0; n < N; n++)
        avgpool_forward_part_cpu(out + (size_t)n * C, in + (size_t)n * P * C, 1, P, C, 0, 1);
}

void avgpool_backward_cpu(struct backend_ctx *cx, float *din, const float *dout, int N, int P, int C, int acc)
{
    (void)cx;
#pragma omp parallel for collapse(2) schedule(dynamic, 64) if ((size_t)N * P * C >= OMP_MIN_WORK)
    for (int n = 0; n < N; n++)
        for (int p = 0; p < P; p++) {
            float *dx = din + ((size_t)n * P + p) * C;
            const float *g = dout + (size_t)n * C;
            if (acc)
                for (int c = 0; c < C; c++) dx[c] += g[c] * (1.0f / (float)P);
            else
                for (int c = 0; c < C; c++) dx[c] = g[c] * (1.0f / (float)P);
        }
}
