/* jpeg.c: read a JPEG and decode only what the crop box needs, then one bilinear pass
 * box -> (crop, crop). See jpeg.h, augment.h.
 *
 * libjpeg-turbo's libjpeg API rather than TurboJPEG's tjDecompress2: besides the same DCT scaling
 * (scale_num/8, the smallest that keeps the box >= crop pixels), it can crop columns
 * (jpeg_crop_scanline: no IDCT/colour conversion outside the box), skip the rows above the box
 * (jpeg_skip_scanlines: entropy decoding only) and stop after its last row (nothing below is
 * decoded). Random-resized crops use about half the image on average, so this is most of the
 * speed-up over a full decode (docs/benchmarks.md, "Data pipeline"). */
#include "jpeg.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <jpeglib.h>
#include <math.h>
#include <setjmp.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../../core/check.h"
#include "../../core/regfile.h"
#include "../../core/banned.h"

static void jdec_free(void *jd);

void image_decoder_init(struct image_decoder *d) { memset(d, 0, sizeof *d); }

void image_decoder_free(struct image_decoder *d)
{
    jdec_free(d->jd);
    free(d->file);
    free(d->rgb);
    free(d->scratch);
    memset(d, 0, sizeof *d);
}

/* The file's bytes into d->file (reused across images): a regular file of at most
 * REGFILE_MAX_IMAGE bytes, so a FIFO or /dev/zero in a list is an error, not a hang or an OOM. */
static enum tipc_status read_file(struct image_decoder *d, const char *path)
{
    char why[200];
    int fd = open_regular(path, REGFILE_MAX_IMAGE, why, sizeof why);
    if (fd < 0) {
        snprintf(d->err, sizeof d->err, "cannot open: %s", why);
        return TIPC_EDATA;
    }
    struct stat st;
    size_t want = fstat(fd, &st) == 0 ? (size_t)st.st_size : 0;
    if (want + 1 > d->file_cap) {
        d->file_cap = want + 1;
        d->file = xrealloc(d->file, d->file_cap);
    }
    d->file_len = 0;
    while (d->file_len < d->file_cap) {   /* one byte more than fstat said: notice a growing file */
        ssize_t n = read(fd, d->file + d->file_len, d->file_cap - d->file_len);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) {
            if (n < 0) snprintf(d->err, sizeof d->err, "read error: %s", strerror(errno));
            close(fd);
            return n < 0 ? TIPC_EDATA : TIPC_OK;
        }
        d->file_len += (size_t)n;
    }
    close(fd);
    snprintf(d->err, sizeof d->err, "changed while being read");
    return TIPC_EDATA;
}

bool image_size_ok(long w, long h, char *why, size_t n)
{
    if (w > 0 && h > 0 && w <= IMAGE_MAX_SIDE && h <= IMAGE_MAX_SIDE && w * h <= IMAGE_MAX_PIXELS) return true;
    snprintf(why, n, "declares %ldx%ld pixels, more than tipc decodes (at most %d per side and %d megapixels)", w, h,
             IMAGE_MAX_SIDE, IMAGE_MAX_PIXELS / 1000000);
    return false;
}

/* Smallest scaling factor s in {1/8, 1/4, 1/2, 1} with s * min(box w, box h) >= need. Only the
 * power-of-two factors: libjpeg-turbo has SIMD IDCTs for them, while n/8 factors such as 7/8 or
 * 3/4 run plain-C IDCTs (and 14x14 chroma IDCTs) that cost more than the pixels they save. */
static void pick_scale(struct crop_box b, int need, unsigned *num, unsigned *denom)
{
    float side = b.w < b.h ? b.w : b.h;
    *num = 1;
    *denom = 1;
    for (unsigned d = 2; d <= 8; d *= 2)
        if (side / (float)d >= (float)need) *denom = d;
}

static void grow(void **p, size_t *cap, size_t need)
{
    if (*cap >= need) return;
    free(*p);
    *p = xmalloc(need);
    *cap = need;
}

/* libjpeg reports errors by calling error_exit, which must not return: longjmp back. */
struct jdec {
    struct jpeg_decompress_struct ci;
    struct jpeg_error_mgr mgr;
    jmp_buf jb;
    char msg[JMSG_LENGTH_MAX];
    bool warned;   /* msg is a warning (on_message), not an error */
};

static void on_error(j_common_ptr c)
{
    struct jdec *j = (struct jdec *)c->client_data;
    (*c->err->format_message)(c, j->msg);
    j->warned = false;
    longjmp(j->jb, 1);
}

/* libjpeg's warnings (level -1: "Premature end of JPEG file", "Corrupt JPEG data: bad Huffman
 * code", ...) are errors: it would go on and hand back gray or smeared pixels as if the file were
 * whole. Trace messages (level >= 0) are not warnings and stay quiet. */
static void on_message(j_common_ptr c, int level)
{
    if (level >= 0) return;
    struct jdec *j = (struct jdec *)c->client_data;
    (*c->err->format_message)(c, j->msg);
    j->warned = true;
    longjmp(j->jb, 1);
}

static struct jdec *jdec_new(void)
{
    struct jdec *j = xcalloc(1, sizeof *j);
    j->ci.err = jpeg_std_error(&j->mgr);
    j->mgr.error_exit = on_error;
    j->mgr.emit_message = on_message;
    jpeg_create_decompress(&j->ci);
    j->ci.client_data = j;
    return j;
}

static void jdec_free(void *jd)
{
    struct jdec *j = jd;
    if (!j) return;
    jpeg_destroy_decompress(&j->ci);
    free(j);
}

/* Rows [y0, y1) of the scaled image, columns from *xoff (widened to an iMCU boundary by
 * libjpeg), into d->rgb; rows below y1 are never entropy-decoded. */
static void read_window(struct image_decoder *d, struct jpeg_decompress_struct *ci, JDIMENSION *xoff,
                        JDIMENSION *cw, int y0, int y1)
{
    jpeg_crop_scanline(ci, xoff, cw);
    if (y0 > 0) jpeg_skip_scanlines(ci, (JDIMENSION)y0);
    size_t stride = (size_t)*cw * (size_t)ci->output_components;
    grow((void **)&d->rgb, &d->rgb_cap, stride * (size_t)(y1 - y0 + 1));   /* + the last row (read_to_end) */
    while ((int)ci->output_scanline < y1) {
        JSAMPROW rows[16];
        int n = y1 - (int)ci->output_scanline;
        if (n > 16) n = 16;
        for (int i = 0; i < n; i++) rows[i] = d->rgb + stride * (size_t)((int)ci->output_scanline - y0 + i);
        jpeg_read_scanlines(ci, rows, (JDIMENSION)n);
    }
    if (ci->output_components == 4) {   /* CMYK as Adobe stores it (inverted), converted like PIL */
        size_t npx = (size_t)*cw * (size_t)(y1 - y0);
        uint8_t *px = d->rgb;
        for (size_t i = 0; i < npx; i++) {   /* in place: writes at 3i never pass reads at 4i */
            int c = px[4 * i], m = px[4 * i + 1], y = px[4 * i + 2], k = px[4 * i + 3];
            px[3 * i] = (uint8_t)(c + k > 255 ? c + k - 255 : 0);
            px[3 * i + 1] = (uint8_t)(m + k > 255 ? m + k - 255 : 0);
            px[3 * i + 2] = (uint8_t)(y + k > 255 ? y + k - 255 : 0);
        }
    }
}

/* The rows below the window are entropy-decoded too and the file is read to its end marker, so
 * damage anywhere in it is a warning (an error, on_message) whichever crop an epoch draws, not only
 * when the window reaches it. jpeg_skip_scanlines to the very end decodes nothing (it just marks
 * the input done), so all rows but the last are skipped (entropy decoding only: no IDCT, no colour
 * conversion) and the last is read into the spare row after the window's. */
static void read_to_end(struct image_decoder *d, struct jpeg_decompress_struct *ci, JDIMENSION cw, int rows)
{
    JDIMENSION left = ci->output_height - ci->output_scanline;
    if (left > 1) jpeg_skip_scanlines(ci, left - 1);
    if (left > 0) {
        JSAMPROW row = d->rgb + (size_t)cw * (size_t)ci->output_components * (size_t)rows;
        jpeg_read_scanlines(ci, &row, 1);
    }
    jpeg_finish_decompress(ci);
}

enum tipc_status image_decoder_load(struct image_decoder *d, const char *path, bool train, int resize,
                                    int crop, struct data_rng *r, uint8_t *out)
{
    d->err[0] = 0;
    if (!d->jd) d->jd = jdec_new();
    TRY(read_file(d, path));
    struct jdec *j = d->jd;
    struct jpeg_decompress_struct *ci = &j->ci;
    if (setjmp(j->jb)) {
        jpeg_abort_decompress(ci);
        snprintf(d->err, sizeof d->err, j->warned ? "a damaged JPEG (libjpeg: %s)" : "not a readable JPEG (%s)", j->msg);
        return TIPC_EDATA;
    }
    jpeg_mem_src(ci, d->file, (unsigned long)d->file_len);
    jpeg_read_header(ci, TRUE);   /* markers up to SOS only: nothing sized by the image is allocated yet */
    int w = (int)ci->image_width, h = (int)ci->image_height;
    if (!image_size_ok(w, h, d->err, sizeof d->err)) {
        jpeg_abort_decompress(ci);
        return TIPC_EDATA;
    }
    struct crop_box b = train ? rrc_params(w, h, r) : eval_box(w, h, resize, crop);
    bool flip = train && data_rng_uniform(r) < 0.5;
    pick_scale(b, crop, &ci->scale_num, &ci->scale_denom);
    bool cmyk = ci->jpeg_color_space == JCS_CMYK || ci->jpeg_color_space == JCS_YCCK;
    ci->out_color_space = cmyk ? JCS_CMYK : JCS_RGB;
    ci->dct_method = JDCT_IFAST;
    jpeg_start_decompress(ci);
    int sw = (int)ci->output_width, sh = (int)ci->output_height;
    float fx = (float)sw / (float)w, fy = (float)sh / (float)h;
    struct crop_box sb = {b.x * fx, b.y * fy, b.w * fx, b.h * fy};
    /* the window the bilinear taps can touch: the box plus one pixel */
    int x0 = (int)floorf(sb.x) - 1, x1 = (int)ceilf(sb.x + sb.w) + 1;
    int y0 = (int)floorf(sb.y) - 1, y1 = (int)ceilf(sb.y + sb.h) + 1;
    x0 = x0 < 0 ? 0 : x0; y0 = y0 < 0 ? 0 : y0;
    x1 = x1 > sw ? sw : x1; y1 = y1 > sh ? sh : y1;
    JDIMENSION xoff = (JDIMENSION)x0, cw = (JDIMENSION)(x1 - x0);
    read_window(d, ci, &xoff, &cw, y0, y1);
    read_to_end(d, ci, cw, y1 - y0);
    sb.x -= (float)xoff;
    sb.y -= (float)y0;
    grow(&d->scratch, &d->scratch_cap, resize_scratch_size(crop, crop));
    resize_bilinear_rgb(out, crop, crop, d->rgb, (int)cw, y1 - y0, sb, flip, d->scratch);
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
