/* augment.c: crop-box parameters (torchvision semantics) and the resampler's scratch size.
 * Reference: torchvision/transforms/transforms.py (RandomResizedCrop.get_params, Resize,
 * CenterCrop). Not here: the resampler itself (resample.c, compiled per CPU ISA level). */
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
