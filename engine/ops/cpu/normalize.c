/* normalize.c: uint8 RGB pixels to normalised floats (ImageNet mean/std), CPU reference. */
#include "../ops.h"
#include "../../../core/banned.h"

static const float img_mean[3] = {0.485f, 0.456f, 0.406f}, img_std[3] = {0.229f, 0.224f, 0.225f};

void normalize_u8_part_cpu(float *out, const uint8_t *in, size_t npix, int part, int nparts)
{
    size_t lo, hi;
    part_range(npix, part, nparts, 16, &lo, &hi);
    for (size_t i = lo; i < hi; i++)
        for (int c = 0; c < 3; c++) out[i * 3 + c] = (in[i * 3 + c] * (1.0f / 255.0f) - img_mean[c]) / img_std[c];
}

void normalize_u8_cpu(struct backend_ctx *cx, float *out, const uint8_t *in, size_t npix)
{
    (void)cx;
    int np = omp_parts(npix * 3);
#pragma omp parallel for schedule(dynamic, 1) if (np > 1)
    for (int p = 0; p < np; p++) normalize_u8_part_cpu(out, in, npix, p, np);
}
