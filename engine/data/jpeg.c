/* jpeg.c: read a JPEG, decode it at the smallest DCT scale that still covers the crop box
 * (libjpeg-turbo's TurboJPEG API: tjDecompress2 with a scaling factor, up to 8x cheaper), then
 * one bilinear pass box -> (crop, crop). See jpeg.h, augment.h. */
#include "jpeg.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <turbojpeg.h>

#include "../core/check.h"
#include "../core/banned.h"

void image_decoder_init(struct image_decoder *d) { memset(d, 0, sizeof *d); }

void image_decoder_free(struct image_decoder *d)
{
    if (d->tj) tjDestroy(d->tj);
    free(d->file);
    free(d->rgb);
    free(d->scratch);
    memset(d, 0, sizeof *d);
}

static enum tipc_status read_file(struct image_decoder *d, const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        snprintf(d->err, sizeof d->err, "cannot open: %s", strerror(errno));
        return TIPC_EDATA;
    }
    d->file_len = 0;
    for (;;) {
        if (d->file_len == d->file_cap) {
            d->file_cap = d->file_cap ? 2 * d->file_cap : 1 << 18;
            d->file = xrealloc(d->file, d->file_cap);
        }
        size_t n = fread(d->file + d->file_len, 1, d->file_cap - d->file_len, f);
        d->file_len += n;
        if (n == 0) break;
    }
    int bad = ferror(f);
    fclose(f);
    if (bad) {
        snprintf(d->err, sizeof d->err, "read error");
        return TIPC_EDATA;
    }
    return TIPC_OK;
}

/* Smallest TurboJPEG scaling factor s with s * min(box w, box h) >= need (1/1 if none smaller). */
static tjscalingfactor pick_scale(struct crop_box b, int need)
{
    int n = 0;
    tjscalingfactor *sf = tjGetScalingFactors(&n), best = {1, 1};
    float side = b.w < b.h ? b.w : b.h;
    for (int i = 0; sf && i < n; i++) {
        if (sf[i].num > sf[i].denom) continue;   /* never upscale in the decoder */
        float s = (float)sf[i].num / (float)sf[i].denom;
        if (s * side >= (float)need && s < (float)best.num / (float)best.denom) best = sf[i];
    }
    return best;
}

static void grow(void **p, size_t *cap, size_t need)
{
    if (*cap >= need) return;
    free(*p);
    *p = xmalloc(need);
    *cap = need;
}

enum tipc_status image_decoder_load(struct image_decoder *d, const char *path, bool train, int resize,
                                    int crop, struct data_rng *r, uint8_t *out)
{
    d->err[0] = 0;
    if (!d->tj && !(d->tj = tjInitDecompress())) {
        snprintf(d->err, sizeof d->err, "cannot start the JPEG decoder");
        return TIPC_EDATA;
    }
    TRY(read_file(d, path));
    int w = 0, h = 0, sub = 0, cs = 0;
    if (tjDecompressHeader3(d->tj, d->file, d->file_len, &w, &h, &sub, &cs) != 0 || w <= 0 || h <= 0) {
        snprintf(d->err, sizeof d->err, "not a readable JPEG (%s)", tjGetErrorStr2(d->tj));
        return TIPC_EDATA;
    }
    struct crop_box b = train ? rrc_params(w, h, r) : eval_box(w, h, resize, crop);
    bool flip = train && data_rng_uniform(r) < 0.5;
    tjscalingfactor s = pick_scale(b, crop);
    int sw = TJSCALED(w, s), sh = TJSCALED(h, s);
    grow((void **)&d->rgb, &d->rgb_cap, (size_t)sw * sh * 3);
    if (tjDecompress2(d->tj, d->file, d->file_len, d->rgb, sw, 0, sh, TJPF_RGB, TJFLAG_FASTDCT) != 0 &&
        tjGetErrorCode(d->tj) != TJERR_WARNING) {
        snprintf(d->err, sizeof d->err, "cannot decode JPEG (%s)", tjGetErrorStr2(d->tj));
        return TIPC_EDATA;
    }
    float fx = (float)sw / (float)w, fy = (float)sh / (float)h;
    struct crop_box sb = {b.x * fx, b.y * fy, b.w * fx, b.h * fy};
    grow(&d->scratch, &d->scratch_cap, resize_scratch_size(crop, crop));
    resize_bilinear_rgb(out, crop, crop, d->rgb, sw, sh, sb, flip, d->scratch);
    return TIPC_OK;
}

enum tipc_status image_load_eval(const char *path, int resize, int crop, uint8_t *out)
{
    struct image_decoder d;
    image_decoder_init(&d);
    enum tipc_status st = image_decoder_load(&d, path, false, resize, crop, NULL, out);
    if (st != TIPC_OK) error_msg(st, "image '%s': %s", path, d.err);
    image_decoder_free(&d);
    return st;
}
