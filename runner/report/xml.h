/* xml.h: arbitrary bytes (a stage's log, a command, a host name) made into text that any XML
 * 1.0 parser accepts, so one hostile byte in a log can never cost a CI server the whole report.
 *
 * The result is valid UTF-8 holding only XML 1.0 characters (#x9 #xA #xD #x20-#xD7FF
 * #xE000-#xFFFD #x10000-#x10FFFF):
 *  - each byte that does not start a well-formed UTF-8 sequence (stray continuation bytes,
 *    overlong forms, surrogates, values past U+10FFFF, a sequence cut short) becomes U+FFFD;
 *    U+FFFE and U+FFFF become U+FFFD as well;
 *  - terminal colour/cursor sequences (ESC [ ... final byte) are dropped: they are noise in a CI page;
 *  - other control characters XML forbids (NUL, ESC, form feed, ...) are written as the visible
 *    text `\xNN`.
 * The writer (libxml2) then escapes <, >, & and quotes. */
#ifndef TIPC_XML_TEXT_H
#define TIPC_XML_TEXT_H
#include <libxml/xmlwriter.h>
#include <stdbool.h>
#include <stddef.h>
#include "../../core/status.h"

/* Clean n bytes of s (which may hold NULs). Returns a malloc'ed NUL-terminated string. */
char *xml_text_clean(const char *s, size_t n);
/* Same for a C string; NULL gives "". */
char *xml_text_clean_str(const char *s);

/* The last `max` bytes of the file at `path`, cleaned. The cut is moved forward to the start of a
 * character (never half a multibyte character) and, when one begins near the cut, to the start of a line.
 * *cut is set when the file was longer. NULL when the file cannot be read. */
char *xml_text_file_tail(const char *path, size_t max, bool *cut);

/* ---- the writer: JUnit, HTML and SVG ------------------------------------------------------------
 * libxml2's xmlTextWriter into memory, with one sticky failure flag (each libxml2 call returns < 0
 * on failure, out of memory); the document is written to its file whole (write_file_atomic), or
 * not at all. Every attribute and text is cleaned first (above). */
struct xw {
    xmlBufferPtr buf;
    xmlTextWriterPtr w;
    int bad;
    const char *path, *what; /* the file, and what it is ("JUnit report") for messages */
};
/* TIPC_EIO "PATH: cannot write WHAT: out of memory" when the writer cannot be made. */
enum tipc_status xw_open(struct xw *x, const char *path, const char *what);
/* `<?xml version="1.0" encoding="UTF-8"?>` and indented elements from here on (JUnit). */
void xw_declaration(struct xw *x);
void xw_raw(struct xw *x, const char *s);   /* as is, e.g. "<!DOCTYPE html>\n" */
void xw_start(struct xw *x, const char *el);
void xw_end(struct xw *x);                  /* </el>, or <el/> when it holds nothing (XML, SVG, void HTML) */
void xw_end_full(struct xw *x);             /* </el> always (HTML) */
void xw_attr(struct xw *x, const char *name, const char *value);
void xw_attrf(struct xw *x, const char *name, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
void xw_text(struct xw *x, const char *raw);
void xw_textf(struct xw *x, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Close every open element, free the writer and write the file (write_file_atomic); TIPC_EIO with a
 * message when the writer failed at any point or the file cannot be written. */
enum tipc_status xw_save(struct xw *x);

#endif
