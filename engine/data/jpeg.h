/* jpeg.h: JPEG decoding (libjpeg-turbo, DCT scaling for cheap downscale) and the eval transform
 * for a single image: resize the short side to `resize`, center-crop `crop`, RGB uint8 HWC. */
#ifndef TIPC_JPEG_H
#define TIPC_JPEG_H
#include <stdint.h>
#include "../core/status.h"

enum tipc_status image_load_eval(const char *path, int resize, int crop, uint8_t *out /* (crop, crop, 3) */);

#endif
