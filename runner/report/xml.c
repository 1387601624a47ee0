/* xml.c: see xml.h: the cleaner, then the writer built on it. */
#include "xml.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../core/check.h"
#include "../../core/staged.h"   /* defines: write_file_atomic */
#include "../../core/banned.h"

struct sbuf { char *p; size_t n, cap; };

static void put(struct sbuf *b, const char *s, size_t n)
{
    b->p = xgrow(b->p, 1, b->n + n + 1, &b->cap);
    memcpy(b->p + b->n, s, n);
    b->n += n;
    b->p[b->n] = 0;
}

static const char replacement[] = "\xEF\xBF\xBD"; /* U+FFFD */

/* Length of the well-formed UTF-8 sequence at s (n bytes left), 0 when it is not one
 * (Unicode 15, table 3-7), and its code point. */
static size_t utf8_seq(const unsigned char *s, size_t n, uint32_t *cp)
{
    unsigned char c = s[0];
    size_t len;
    unsigned char lo = 0x80, hi = 0xBF; /* allowed range of the second byte */
    if (c < 0x80) return *cp = c, 1;
    if (c >= 0xC2 && c <= 0xDF) len = 2, *cp = c & 0x1F;
    else if (c >= 0xE0 && c <= 0xEF) {
        len = 3, *cp = c & 0x0F;
        if (c == 0xE0) lo = 0xA0;      /* no overlong forms */
        if (c == 0xED) hi = 0x9F;      /* no surrogates */
    } else if (c >= 0xF0 && c <= 0xF4) {
        len = 4, *cp = c & 0x07;
        if (c == 0xF0) lo = 0x90;
        if (c == 0xF4) hi = 0x8F;      /* nothing past U+10FFFF */
    } else return 0;
    if (n < len || s[1] < lo || s[1] > hi) return 0;
    for (size_t i = 1; i < len; i++) {
        if ((s[i] & 0xC0) != 0x80) return 0;
        *cp = (*cp << 6) | (s[i] & 0x3F);
    }
    return len;
}

/* Length of a terminal control sequence ESC [ params intermediates final at s, 0 if none. */
static size_t csi_len(const unsigned char *s, size_t n)
{
    if (n < 2 || s[0] != 0x1B || s[1] != '[') return 0;
    size_t i = 2;
    while (i < n && s[i] >= 0x30 && s[i] <= 0x3F) i++;
    while (i < n && s[i] >= 0x20 && s[i] <= 0x2F) i++;
    return i < n && s[i] >= 0x40 && s[i] <= 0x7E ? i + 1 : 0;
}

char *xml_text_clean(const char *str, size_t n)
{
    const unsigned char *s = (const unsigned char *)str;
    struct sbuf b = {0};
    put(&b, "", 0);
    size_t i = 0;
    while (i < n) {
        uint32_t cp;
        size_t len = utf8_seq(s + i, n - i, &cp), skip;
        if (len == 0) {
            put(&b, replacement, 3);
            i++;
        } else if (cp < 0x20 && cp != 0x9 && cp != 0xA && cp != 0xD) {
            if ((skip = csi_len(s + i, n - i)) > 0) {
                i += skip;
                continue;
            }
            char esc[8];
            snprintf(esc, sizeof esc, "\\x%02X", (unsigned)cp);
            put(&b, esc, 4);
            i++;
        } else if (cp == 0xFFFE || cp == 0xFFFF) {
            put(&b, replacement, 3);
            i += len;
        } else {
            put(&b, (const char *)s + i, len);
            i += len;
        }
    }
    return b.p;
}

char *xml_text_clean_str(const char *s)
{
    return xml_text_clean(s ? s : "", s ? strlen(s) : 0);
}

char *xml_text_file_tail(const char *path, size_t max, bool *cut)
{
    *cut = false;
    FILE *f = path ? fopen(path, "rb") : NULL;
    if (!f) return NULL;
    long size = fseek(f, 0, SEEK_END) == 0 ? ftell(f) : -1;
    if (size < 0) {
        fclose(f);
        return NULL;
    }
    size_t from = (size_t)size > max ? (size_t)size - max : 0;
    if (fseek(f, (long)from, SEEK_SET) != 0) {
        fclose(f);
        return NULL;
    }
    size_t want = (size_t)size - from;
    char *buf = xmalloc(want + 1);
    size_t got = fread(buf, 1, want, f);
    fclose(f);
    size_t start = 0;
    if (from > 0) {
        *cut = true;
        /* never start inside a character: skip up to 3 continuation bytes */
        while (start < got && start < 3 && ((unsigned char)buf[start] & 0xC0) == 0x80) start++;
        /* and start on a line when one begins near the cut (half the tail, at most 512 bytes) */
        size_t near = got / 2 < 512 ? got / 2 : 512;
        const char *nl = memchr(buf + start, '\n', got - start);
        if (nl && (size_t)(nl - buf) < near) start = (size_t)(nl - buf) + 1;
    }
    char *out = xml_text_clean(buf + start, got - start);
    free(buf);
    return out;
}

/* ---- the writer ------------------------------------------------------------------------------- */

enum tipc_status xw_open(struct xw *x, const char *path, const char *what)
{
    *x = (struct xw){.buf = xmlBufferCreate(), .path = path, .what = what};
    x->w = x->buf ? xmlNewTextWriterMemory(x->buf, 0) : NULL;
    if (x->w) return TIPC_OK;
    if (x->buf) xmlBufferFree(x->buf);
    return error_at(TIPC_EIO, path, 0, "cannot write %s: out of memory", what);
}

void xw_declaration(struct xw *x)
{
    x->bad |= xmlTextWriterSetIndent(x->w, 1) < 0;
    x->bad |= xmlTextWriterStartDocument(x->w, NULL, "UTF-8", NULL) < 0;
}

void xw_raw(struct xw *x, const char *s) { x->bad |= xmlTextWriterWriteRaw(x->w, BAD_CAST s) < 0; }
void xw_start(struct xw *x, const char *el) { x->bad |= xmlTextWriterStartElement(x->w, BAD_CAST el) < 0; }
void xw_end(struct xw *x) { x->bad |= xmlTextWriterEndElement(x->w) < 0; }
void xw_end_full(struct xw *x) { x->bad |= xmlTextWriterFullEndElement(x->w) < 0; }

void xw_attr(struct xw *x, const char *name, const char *value)
{
    char *v = xml_text_clean_str(value);
    x->bad |= xmlTextWriterWriteAttribute(x->w, BAD_CAST name, BAD_CAST v) < 0;
    free(v);
}

void xw_attrf(struct xw *x, const char *name, const char *fmt, ...)
{
    char buf[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    xw_attr(x, name, buf);
}

void xw_text(struct xw *x, const char *raw)
{
    char *v = xml_text_clean_str(raw);
    x->bad |= xmlTextWriterWriteString(x->w, BAD_CAST v) < 0;
    free(v);
}

void xw_textf(struct xw *x, const char *fmt, ...)
{
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    xw_text(x, buf);
}

enum tipc_status xw_save(struct xw *x)
{
    x->bad |= xmlTextWriterEndDocument(x->w) < 0; /* closes every open element */
    x->bad |= xmlTextWriterFlush(x->w) < 0;
    xmlFreeTextWriter(x->w);
    enum tipc_status st;
    if (x->bad) st = error_at(TIPC_EIO, x->path, 0, "cannot write %s: the XML writer failed (out of memory?)", x->what);
    else st = write_file_atomic(x->path, xmlBufferContent(x->buf), (size_t)xmlBufferLength(x->buf));
    xmlBufferFree(x->buf);
    *x = (struct xw){0};
    return st;
}
