/* synth.c: see synth.h. Drawing is plain per-pixel float code: a 500x375 image takes about a
 * millisecond to draw and two to encode, so the default 140 images take well under a second. */
#include "synth.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <turbojpeg.h>

#include "../core/fs.h"
#include "../core/rng.h"
#include "../core/check.h"
#include "../core/banned.h"

static const char *const pattern_names[5] = {"hstripes", "vstripes", "diagonal", "checker", "dots"};
static const int sizes[6][2] = {{500, 375}, {375, 500}, {500, 333}, {500, 400}, {333, 500}, {400, 300}};

void synth_config_default(struct synth_config *c)
{
    *c = (struct synth_config){.classes = 10, .train_per_class = 10, .val_per_class = 4, .quality = 90, .seed = 1};
}

void synth_class_name(const struct synth_config *c, int cls, char *buf, int n)
{
    snprintf(buf, (size_t)n, "%02d_%s_%03ddeg", cls, pattern_names[cls % 5], cls * 360 / c->classes);
}

static void hsv_to_rgb(float h, float s, float v, float rgb[3])
{
    float c = v * s, hp = fmodf(h, 360.f) / 60.f, x = c * (1 - fabsf(fmodf(hp, 2.f) - 1));
    float r = 0, g = 0, b = 0;
    if (hp < 1) { r = c; g = x; } else if (hp < 2) { r = x; g = c; } else if (hp < 3) { g = c; b = x; }
    else if (hp < 4) { g = x; b = c; } else if (hp < 5) { r = x; b = c; } else { r = c; b = x; }
    rgb[0] = r + v - c; rgb[1] = g + v - c; rgb[2] = b + v - c;
}

/* Texture value in {0, 1} at rotated coordinates (u, v) for pattern kind k, period p. */
static int texture(int k, float u, float v, float p)
{
    float a = u / p, b = v / p;
    switch (k) {
    case 0: return fmodf(b + 1000.f, 1.f) < 0.5f;
    case 1: return fmodf(a + 1000.f, 1.f) < 0.5f;
    case 2: return fmodf(a + b + 1000.f, 1.f) < 0.5f;
    case 3: return (((int)floorf(a) + (int)floorf(b)) & 1) == 0;
    default: {
        float fa = a - floorf(a) - 0.5f, fb = b - floorf(b) - 0.5f;
        return fa * fa + fb * fb < 0.09f;
    }
    }
}

struct scene {
    int kind;
    float fg[3], dark[3], bg[3];     /* 0..255 */
    float cx, cy, rx, ry, cos_t, sin_t, period, phase;
};

static void scene_init(struct scene *s, const struct synth_config *c, int cls, struct data_rng *r, int w, int h)
{
    s->kind = cls % 5;
    float hue = (float)cls * 360.f / (float)c->classes + (float)(data_rng_uniform(r) * 10 - 5);
    hsv_to_rgb(hue, 0.75f + 0.2f * (float)data_rng_uniform(r), 0.8f + 0.2f * (float)data_rng_uniform(r), s->fg);
    hsv_to_rgb(hue, 0.8f, 0.25f + 0.1f * (float)data_rng_uniform(r), s->dark);
    hsv_to_rgb((float)data_rng_uniform(r) * 360.f, 0.15f * (float)data_rng_uniform(r),
               0.3f + 0.5f * (float)data_rng_uniform(r), s->bg);
    for (int i = 0; i < 3; i++) { s->fg[i] *= 255; s->dark[i] *= 255; s->bg[i] *= 255; }
    s->cx = w * (0.35f + 0.3f * (float)data_rng_uniform(r));
    s->cy = h * (0.35f + 0.3f * (float)data_rng_uniform(r));
    s->rx = w * (0.3f + 0.2f * (float)data_rng_uniform(r));
    s->ry = h * (0.3f + 0.2f * (float)data_rng_uniform(r));
    float t = (float)(data_rng_uniform(r) * 0.5 - 0.25);  /* +-14 degrees */
    s->cos_t = cosf(t);
    s->sin_t = sinf(t);
    s->period = 14.f + 18.f * (float)data_rng_uniform(r);
    s->phase = (float)data_rng_uniform(r) * s->period;
}

/* Draw into rgb (h, w, 3). */
static void draw(uint8_t *rgb, int w, int h, const struct scene *s, struct data_rng *r)
{
    for (int y = 0; y < h; y++) {
        for (int x = 0; x < w; x++) {
            float dx = (x - s->cx) / s->rx, dy = (y - s->cy) / s->ry;
            const float *col = s->bg;
            if (dx * dx + dy * dy < 1.f) {
                float u = (x - s->cx) * s->cos_t - (y - s->cy) * s->sin_t + s->phase;
                float v = (x - s->cx) * s->sin_t + (y - s->cy) * s->cos_t + s->phase;
                col = texture(s->kind, u, v, s->period) ? s->fg : s->dark;
            }
            uint64_t n = data_rng_next(r);
            for (int ch = 0; ch < 3; ch++) {
                float val = col[ch] + (float)((int)((n >> (8 * ch)) & 31) - 16);
                rgb[((size_t)y * w + x) * 3 + ch] = (uint8_t)(val < 0 ? 0 : val > 255 ? 255 : val);
            }
        }
    }
}

enum tipc_status synth_jpeg(const struct synth_config *c, int cls, uint64_t key, int w, int h,
                            unsigned char **jpeg, unsigned long *size)
{
    struct data_rng r = data_rng_key(c->seed, (uint64_t)cls, key);
    if (w <= 0 || h <= 0) {
        const int *sz = sizes[data_rng_below(&r, 6)];
        w = sz[0];
        h = sz[1];
    }
    struct scene s;
    scene_init(&s, c, cls, &r, w, h);
    uint8_t *rgb = xmalloc((size_t)w * h * 3); /* (h, w, 3) */
    draw(rgb, w, h, &s, &r);
    tjhandle tj = tjInitCompress();
    *jpeg = NULL;
    *size = 0;
    int rc = tj ? tjCompress2(tj, rgb, w, 0, h, TJPF_RGB, jpeg, size, TJSAMP_420, c->quality, TJFLAG_ACCURATEDCT) : -1;
    enum tipc_status st = TIPC_OK;
    if (rc != 0) st = error_msg(TIPC_EDATA, "jpeg encoding failed: %s", tj ? tjGetErrorStr2(tj) : "no turbojpeg handle");
    if (tj) tjDestroy(tj);
    free(rgb);
    return st;
}

static enum tipc_status write_file(const char *path, const void *data, size_t n)
{
    FILE *f = fopen(path, "wb");
    if (!f) return error_msg(TIPC_EDATA, "cannot write '%s': %s", path, strerror(errno));
    size_t w = fwrite(data, 1, n, f);
    int err = w != n ? (errno ? errno : EIO) : 0;
    if (fclose(f) != 0 && !err) err = errno;
    if (err) return error_msg(TIPC_EDATA, "cannot write '%s': %s", path, strerror(err));
    return TIPC_OK;
}

/* One split: ROOT/<split>/<class>/<i>.jpg and ROOT/<split>_list.txt. */
static enum tipc_status write_split(const char *tmp, const struct synth_config *c, const char *split, int per_class, uint64_t salt)
{
    char *list_path = xasprintf("%s/%s_list.txt", tmp, split);
    FILE *list = fopen(list_path, "w");
    enum tipc_status st = list ? TIPC_OK : error_msg(TIPC_EDATA, "cannot write '%s': %s", list_path, strerror(errno));
    for (int i = 0; st == TIPC_OK && i < per_class; i++) {
        for (int cls = 0; st == TIPC_OK && cls < c->classes; cls++) {  /* interleaved: list is class-mixed */
            char name[64];
            synth_class_name(c, cls, name, sizeof name);
            char *dir = xasprintf("%s/%s/%s", tmp, split, name);
            char *rel = xasprintf("%s/%s/%05d.jpg", split, name, i);
            char *full = xasprintf("%s/%s", tmp, rel);
            unsigned char *jpg = NULL;
            unsigned long n = 0;
            st = mkdir_p(dir) == TIPC_OK ? TIPC_OK : TIPC_EDATA;
            if (st == TIPC_OK) st = synth_jpeg(c, cls, salt + (uint64_t)i, 0, 0, &jpg, &n);
            if (st == TIPC_OK) st = write_file(full, jpg, n);
            if (st == TIPC_OK) fprintf(list, "%s %d\n", rel, cls);
            tjFree(jpg);
            free(dir); free(rel); free(full);
        }
    }
    if (list && (ferror(list) | fclose(list)) != 0 && st == TIPC_OK)
        st = error_msg(TIPC_EDATA, "cannot write '%s': %s", list_path, strerror(errno));
    free(list_path);
    return st;
}

void synth_describe(const struct synth_config *c, char *buf, size_t n)
{
    snprintf(buf, n, "synthetic classes=%d train_per_class=%d val_per_class=%d quality=%d seed=%llu", c->classes,
             c->train_per_class, c->val_per_class, c->quality, (unsigned long long)c->seed);
}

enum tipc_status synth_dataset(const char *root, const struct synth_config *c)
{
    if (c->classes < 1 || c->classes > 1000 || c->train_per_class < 1 || c->val_per_class < 1)
        return error_msg(TIPC_EDATA, "bad synthetic dataset size (%d classes, %d+%d per class)", c->classes,
                         c->train_per_class, c->val_per_class);
    TRY(check_replaceable(root));   /* before the work: a user's folder is never replaced */
    char *tmp = mkdtemp_beside(root);
    if (!tmp) return TIPC_EDATA;
    enum tipc_status st = write_split(tmp, c, "train", c->train_per_class, 0);
    if (st == TIPC_OK) st = write_split(tmp, c, "val", c->val_per_class, 1u << 20);
    if (st == TIPC_OK) {
        char *path = xasprintf("%s/label_list.txt", tmp);
        FILE *f = fopen(path, "w");
        if (!f) st = error_msg(TIPC_EDATA, "cannot write '%s': %s", path, strerror(errno));
        for (int cls = 0; f && cls < c->classes; cls++) {
            char name[64];
            synth_class_name(c, cls, name, sizeof name);
            fprintf(f, "%d %s\n", cls, name);
        }
        if (f && (ferror(f) | fclose(f)) != 0) st = error_msg(TIPC_EDATA, "cannot write '%s': %s", path, strerror(errno));
        free(path);
    }
    char desc[256];
    synth_describe(c, desc, sizeof desc);
    if (st == TIPC_OK && publish_dir(tmp, root, desc) != TIPC_OK) st = TIPC_EDATA;
    if (st != TIPC_OK) rm_rf(tmp);
    free(tmp);
    return st;
}
