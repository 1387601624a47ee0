/* augment.c: crop-box parameters (torchvision semantics) and a fixed-point bilinear resampler.
 * Reference: torchvision/transforms/transforms.py (RandomResizedCrop.get_params, Resize,
 * CenterCrop). The resampler is plain bilinear (no antialias filter); the JPEG decoder's DCT
 * scaling has already brought the source within 2x of the output, where bilinear is adequate. */
#include "augment.h"

#include <math.h>
#include <string.h>

#include "../../core/banned.h"

/* torch.randint(lo, hi) with hi exclusive */
static int rand_int(struct data_rng *r, int lo, int hi) { return lo + (int)data_rng_below(r, (uint32_t)(hi - lo)); }

struct crop_box rrc_params(int width, int height, struct data_rng *r)
{
    const double area = (double)width * height, lr0 = log(3.0 / 4.0), lr1 = log(4.0 / 3.0);
    for (int attempt = 0; attempt < 10; attempt++) {
        double target = area * (0.08 + (1.0 - 0.08) * data_rng_uniform(r));
        double aspect = exp(lr0 + (lr1 - lr0) * data_rng_uniform(r));
        int w = (int)rint(sqrt(target * aspect)), h = (int)rint(sqrt(target / aspect));  /* Python round: half to even */
        if (w > 0 && w <= width && h > 0 && h <= height) {
            int i = rand_int(r, 0, height - h + 1), j = rand_int(r, 0, width - w + 1);
            return (struct crop_box){(float)j, (float)i, (float)w, (float)h};
        }
    }
    double in_ratio = (double)width / height;
    int w = width, h = height;
    if (in_ratio < 3.0 / 4.0) h = (int)rint(w / (3.0 / 4.0));
    else if (in_ratio > 4.0 / 3.0) w = (int)rint(h * (4.0 / 3.0));
    return (struct crop_box){(float)((width - w) / 2), (float)((height - h) / 2), (float)w, (float)h};
}

struct crop_box eval_box(int width, int height, int resize, int crop)
{
    /* Resize(int): short side -> resize, long side -> int(resize * long / short) */
    int rw, rh;
    if (width <= height) { rw = resize; rh = (int)((long)resize * height / width); }
    else { rh = resize; rw = (int)((long)resize * width / height); }
    int top = (int)rint((rh - crop) / 2.0), left = (int)rint((rw - crop) / 2.0);
    float sx = (float)width / rw, sy = (float)height / rh;
    return (struct crop_box){left * sx, top * sy, crop * sx, crop * sy};
}

size_t resize_scratch_size(int ow, int oh)
{
    return (size_t)2 * ow * 3 * sizeof(uint16_t) + ((size_t)2 * ow + 2 * (size_t)oh) * sizeof(int) + 64;
}

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
