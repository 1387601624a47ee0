/* augment.h: the geometric transforms of the input pipeline, as crop boxes plus one resampler.
 *
 * Every transform is "take box (x, y, w, h) of the source, resample it to (ow, oh), maybe
 * mirrored": torchvision's RandomResizedCrop + RandomHorizontalFlip for training and
 * Resize(short side) + CenterCrop for eval both reduce to that, so one bilinear pass does the
 * whole job (no intermediate image). Boxes are in source pixels and may be fractional (after
 * DCT downscaling the box is scaled with the image). Not here: decoding (jpeg.h), normalisation
 * (the engine). */
#ifndef TIPC_AUGMENT_H
#define TIPC_AUGMENT_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "../../core/rng.h"

struct crop_box { float x, y, w, h; };

/* torchvision RandomResizedCrop.get_params with scale (0.08, 1), ratio (3/4, 4/3): 10 attempts,
 * then the center fallback. Integer box within (width, height). */
struct crop_box rrc_params(int width, int height, struct data_rng *r);

/* Resize(short side -> resize) then CenterCrop(crop), as a box in source pixels (torchvision
 * rounding: the long side becomes int(resize * long / short), crop offsets round((size-crop)/2)). */
struct crop_box eval_box(int width, int height, int resize, int crop);

/* Bilinear resample of box b of `in` (ih, iw, 3) to `out` (oh, ow, 3), half-pixel centres,
 * edge clamped, mirrored horizontally when flip. Fixed point (7-bit weights); `tmp` holds
 * 2 * ow * 3 uint16 and 2 * ow + oh ints of scratch (see resize_scratch_size). */
void resize_bilinear_rgb(uint8_t *out, int ow, int oh, const uint8_t *in, int iw, int ih,
                         struct crop_box b, bool flip, void *tmp);
size_t resize_scratch_size(int ow, int oh);

#endif
