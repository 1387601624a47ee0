/* jpeg.h: JPEG decoding (libjpeg-turbo, DCT scaling for cheap downscale) and the eval transform
 * for a single image: resize the short side to `resize`, center-crop `crop`, RGB uint8 HWC. */
#ifndef TIPC_JPEG_H
#define TIPC_JPEG_H
#include <stdint.h>
#include "../../core/status.h"

enum tipc_status image_load_eval(const char *path, int resize, int crop, uint8_t *out /* (crop, crop, 3) */);

/* ---- the pieces the loader uses (one decoder per thread) -------------------------------------- */
#include <stdbool.h>
#include <stddef.h>
#include "augment.h"

/* A reusable decoder: the TurboJPEG handle and growable file/pixel/scratch buffers. */
struct image_decoder {
    void *jd;                 /* libjpeg decompressor + error handler (jpeg.c) */
    unsigned char *file;      /* (file_cap) the JPEG bytes */
    size_t file_len, file_cap;
    uint8_t *rgb;             /* (h, w, 3) decoded pixels */
    size_t rgb_cap;
    void *scratch;            /* resize scratch */
    size_t scratch_cap;
    char err[256];            /* what went wrong, for the caller's file:line message */
};

void image_decoder_init(struct image_decoder *d);
void image_decoder_free(struct image_decoder *d);

/* Decode `path` and write the transformed (crop, crop, 3) RGB image to out.
 * train: RandomResizedCrop(crop) + horizontal flip drawn from r; else Resize(resize) +
 * CenterCrop(crop) (r unused). The DCT scale is the smallest of libjpeg-turbo's factors (n/8) that
 * keeps the box at least `crop` pixels on both sides, and only the rows and columns around the
 * box are decoded. On failure: TIPC_EDATA with d->err set (nothing printed). */
/* The largest image tipc decodes, checked on the header before anything sized by the image is
 * allocated: a small file can declare 30000x30000 pixels and a full decode of it (a progressive
 * JPEG keeps every coefficient) would take gigabytes per thread. */
#define IMAGE_MAX_SIDE 32768
#define IMAGE_MAX_PIXELS 64000000
/* true when w x h is within the limits; otherwise false and `why` says so. */
bool image_size_ok(long w, long h, char *why, size_t n);

enum tipc_status image_decoder_load(struct image_decoder *d, const char *path, bool train, int resize,
                                    int crop, struct data_rng *r, uint8_t *out);

#endif
