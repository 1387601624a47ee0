/* sgd.c: the momentum SGD update over one contiguous parameter buffer, CPU reference. */
#include <math.h>

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

/* the staged step's update (ops.h): lr from memory, skipped on a non-finite loss */
void sgd_step_dev_cpu(struct backend_ctx *cx, float *p, float *m, const float *g, size_t n, const float *lr, float mu,
                      float wd, const float *loss)
{
    if (!isfinite(*loss)) return;
    sgd_step_cpu(cx, p, m, g, n, *lr, mu, wd);
}
