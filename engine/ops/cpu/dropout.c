/* dropout.c: inverted dropout, CPU reference; the mask is drawn from a counter (splitmix64 of
 * seed and index), so it does not depend on threading and the CUDA twin draws the same one. */
#include "../ops.h"
#include "../../../core/check.h"
#include "../../../core/rng.h"
#include "../../../core/banned.h"

/* Counter-based randomness (splitmix64_mix of seed+index, core/rng.h): the mask does not depend on
 * threading. */

void dropout_forward_cpu(struct backend_ctx *cx, float *out, float *mask, const float *in, size_t n, float p,
                         uint64_t seed)
{
    (void)cx;
    CHECK(p >= 0.0f && p < 1.0f, "dropout p %g", (double)p);
    float keep = 1.0f / (1.0f - p);
    uint64_t base = splitmix64_mix(seed);
#pragma omp parallel for schedule(dynamic, 16384) if (n >= OMP_MIN_WORK)
    for (size_t i = 0; i < n; i++) {
        float u = (float)(splitmix64_mix(base + 0x9e3779b97f4a7c15ULL * (i + 1)) >> 40) * (1.0f / 16777216.0f);
        mask[i] = u < p ? 0.0f : keep;
        out[i] = in[i] * mask[i];
    }
}

void dropout_backward_cpu(struct backend_ctx *cx, float *din, const float *dout, const float *mask, size_t n,
                          int acc)
{
    (void)cx;
    if (acc) {
#pragma omp parallel for simd schedule(dynamic, 16384) if (n >= OMP_MIN_WORK)
        for (size_t i = 0; i < n; i++) din[i] += dout[i] * mask[i];
    } else {
#pragma omp parallel for simd schedule(dynamic, 16384) if (n >= OMP_MIN_WORK)
        for (size_t i = 0; i < n; i++) din[i] = dout[i] * mask[i];
    }
}

void dropout_forward_dev_cpu(struct backend_ctx *cx, float *out, float *mask, const float *in, size_t n, float p,
                             const uint64_t *seed, uint64_t offset)
{
    dropout_forward_cpu(cx, out, mask, in, n, p, *seed + offset);
}
