/* pool.c: global average pooling of NHWC (N, P=H*W, C) to (N, C), CPU reference. */
#include "simd.h"
#include "../../../core/banned.h"

/* channels split: each part sums its channel range over the P positions, a register of channels
 * at a time (summing into out[] in memory made every position wait for the last one's store) */
void avgpool_forward_part_cpu(float *out, const float *in, int N, int P, int C, int part, int nparts)
{
    int lo, hi;
    part_range_int(C, part, nparts, 16, &lo, &hi);
    for (int n = 0; n < N; n++) {
        float *o = out + (size_t)n * C;
        const float *x = in + (size_t)n * P * C;
        int c = lo;
        for (; c + 8 * VW <= hi; c += 8 * VW) { /* 8 registers per pass over the positions */
            vf a[8] = {{0}};
            for (int p = 0; p < P; p++)
                for (int j = 0; j < 8; j++) a[j] += ldv(x + (size_t)p * C + c + j * VW);
            for (int j = 0; j < 8; j++) stv(o + c + j * VW, a[j] * (1.0f / (float)P));
        }
        for (; c + VW <= hi; c += VW) {
            vf a = {0};
            for (int p = 0; p < P; p++) a += ldv(x + (size_t)p * C + c);
            stv(o + c, a * (1.0f / (float)P));
        }
        for (; c < hi; c++) { /* the same order per channel */
            float a = 0.0f;
            for (int p = 0; p < P; p++) a += x[(size_t)p * C + c];
            o[c] = a * (1.0f / (float)P);
        }
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
