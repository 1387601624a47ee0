/* sgd.c: the momentum SGD update over one contiguous parameter buffer, CPU reference. */
#include "../ops.h"
#include "../../../core/banned.h"

void sgd_step_cpu(struct backend_ctx *cx, float *p, float *m, const float *g, size_t n, float lr, float mu,
                  float wd)
{
    (void)cx;
#pragma omp parallel for simd schedule(dynamic, 16384) if (n >= OMP_MIN_WORK)
    for (size_t i = 0; i < n; i++) {
        float d = g[i] + wd * p[i];
        m[i] = mu * m[i] + d;
        p[i] -= lr * m[i];
    }
}
