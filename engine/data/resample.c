/* resample.c: the input pipeline's fixed-point bilinear resampler (augment.h), compiled once per
 * CPU ISA level (engine/backend/cpu_isa.h) so its row blends run on the widest registers the CPU
 * has; integer arithmetic, so every level gives the same bytes. Plain bilinear (no antialias
 * filter): the JPEG decoder's DCT scaling has already brought the source within 2x of the
 * output, where bilinear is adequate. */
#include "augment.h"

#include <math.h>
#include <string.h>

#include "../../core/banned.h"

/* Source index and 7-bit weight of the right/bottom neighbour for each output coordinate. */
static void taps(int *idx, int *wt, int n_out, float start, float len, int n_in, bool flip)
{
    float scale = len / (float)n_out;
    for (int o = 0; o < n_out; o++) {
        int oo = flip ? n_out - 1 - o : o;
        float s = start + ((float)oo + 0.5f) * scale - 0.5f;
        if (s < 0) s = 0;
        if (s > (float)(n_in - 1)) s = (float)(n_in - 1);
        int i0 = (int)s;
        if (i0 >= n_in - 1) i0 = n_in > 1 ? n_in - 2 : 0;
        int w = n_in > 1 ? (int)lroundf((s - (float)i0) * 128.f) : 0;
        idx[o] = i0;
        wt[o] = w;
    }
}

/* One source row -> horizontally interpolated row, values x128. */
static void hrow(uint16_t *dst, const uint8_t *src, const int *xi, const int *xw, int ow, int iw)
{
    int step = iw > 1 ? 3 : 0;
    for (int o = 0; o < ow; o++) {
        const uint8_t *p = src + 3 * xi[o];
        int w1 = xw[o], w0 = 128 - w1;
        dst[3 * o + 0] = (uint16_t)(p[0] * w0 + p[step + 0] * w1);
        dst[3 * o + 1] = (uint16_t)(p[1] * w0 + p[step + 1] * w1);
        dst[3 * o + 2] = (uint16_t)(p[2] * w0 + p[step + 2] * w1);
    }
}

void resize_bilinear_rgb(uint8_t *out, int ow, int oh, const uint8_t *in, int iw, int ih,
                         struct crop_box b, bool flip, void *tmp)
{
    uint16_t *r0 = tmp, *r1 = r0 + (size_t)ow * 3;
    int *xi = (int *)(r1 + (size_t)ow * 3), *xw = xi + ow, *yi = xw + ow, *yw = yi + oh;
    taps(xi, xw, ow, b.x, b.w, iw, flip);
    taps(yi, yw, oh, b.y, b.h, ih, false);
    int have0 = -1, have1 = -1;   /* source rows currently in r0, r1 */
    for (int y = 0; y < oh; y++) {
        int y0 = yi[y], y1 = ih > 1 ? y0 + 1 : y0;
        if (have0 != y0) {
            if (have1 == y0) { uint16_t *t = r0; r0 = r1; r1 = t; have0 = y0; have1 = -1; }
            else { hrow(r0, in + (size_t)y0 * iw * 3, xi, xw, ow, iw); have0 = y0; }
        }
        if (have1 != y1) { hrow(r1, in + (size_t)y1 * iw * 3, xi, xw, ow, iw); have1 = y1; }
        int w1 = yw[y], w0 = 128 - w1;
        uint8_t *o = out + (size_t)y * ow * 3;
        for (int k = 0; k < ow * 3; k++)
            o[k] = (uint8_t)(((int)r0[k] * w0 + (int)r1[k] * w1 + (1 << 13)) >> 14);
    }
}
