/* synth.h: the embedded default dataset: deterministic synthetic JPEGs in the PaddleClas layout.
 *
 * `classes` classes; class c is a texture (horizontal, vertical or diagonal stripes, checker,
 * dots: c % 5) in its own hue (c * 360/classes degrees) filling a randomly placed ellipse over a
 * noisy low-saturation background. Orientation, period, phase, ellipse, background and sizes vary
 * per image, so a small CNN has to learn colour and texture, and it can. Sizes are those of
 * ImageNet photos (500x375, 375x500, 500x333, ...), encoded at quality 90 by libjpeg-turbo.
 * Output (written into a temp dir, renamed into place when complete):
 *   ROOT/train/<cc>_<name>/<nnnnn>.jpg, ROOT/val/..., ROOT/train_list.txt, ROOT/val_list.txt
 *   (`train/03_dots_120deg/00012.jpg 3`), ROOT/label_list.txt (`3 03_dots_120deg`).
 * The same config and seed give byte-identical files. Not a model of ImageNet statistics. */
#ifndef TIPC_SYNTH_H
#define TIPC_SYNTH_H
#include <stddef.h>
#include <stdint.h>
#include "../core/status.h"

struct synth_config {
    int classes;            /* default 10 */
    int train_per_class;    /* default 10 */
    int val_per_class;      /* default 4 */
    int quality;            /* JPEG quality, default 90 */
    uint64_t seed;          /* default 1 */
};

void synth_config_default(struct synth_config *c);

/* Generate the dataset and publish it at `root` atomically (replacing a tree prepare made; a
 * user's folder is refused, core/fs.h check_replaceable). Its marker names the parameters
 * (synth_describe). TIPC_EDATA with a message naming the path on failure. */
enum tipc_status synth_dataset(const char *root, const struct synth_config *c);
/* "synthetic classes=10 train_per_class=10 ..." (the marker text: a changed config redoes it). */
void synth_describe(const struct synth_config *c, char *buf, size_t n);

/* One image of class `cls`, variant `key`, as JPEG bytes (tjFree() them). w, h: 0 = pick. */
enum tipc_status synth_jpeg(const struct synth_config *c, int cls, uint64_t key, int w, int h,
                            unsigned char **jpeg, unsigned long *size);

/* Name of class c ("03_dots_108deg") into buf. */
void synth_class_name(const struct synth_config *c, int cls, char *buf, int n);

#endif
