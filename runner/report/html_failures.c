/* html_failures.c: the failures section of the HTML report and links to stage logs (html.h).
 * A person opening the page of a red run reads why first: the error line and the log's end, as
 * junit2html's page of the JUnit file shows its failure bodies. */
#include "html.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "../../core/check.h"
#include "../../core/fs.h"
#include "../../core/banned.h"

#define FAIL_TAIL_BYTES 4096   /* of a failed stage's log, on the page */

/* `to` relative to folder `from` (both absolute and clean, as realpath gives them). */
static char *relative(const char *from, const char *to)
{
    size_t i = 0, last = 0;   /* last: the last '/' both share */
    for (; from[i] && from[i] == to[i]; i++)
        if (from[i] == '/') last = i;
    const char *rest, *up;
    if (!from[i] && to[i] == '/') rest = to + i + 1, up = "";   /* `to` is inside `from` */
    else rest = to + last + 1, up = from + last + 1;
    size_t ups = *up ? 1 : 0;
    for (const char *p = up; *p; p++) ups += *p == '/';
    size_t cap = ups * 3 + strlen(rest) + 1;
    char *s = xmalloc(cap), *o = s;
    for (size_t k = 0; k < ups; k++) memcpy(o, "../", 3), o += 3;
    memcpy(o, rest, strlen(rest) + 1);
    return s;
}

/* A path as a URL path: bytes other than unreserved ones and '/' percent-encoded (a '#', '?', '%'
 * or space in a folder name must not end or change the link). */
static char *url_path(const char *p)
{
    static const char hex[] = "0123456789ABCDEF";
    char *out = xmalloc(strlen(p) * 3 + 1), *o = out;
    for (const unsigned char *c = (const unsigned char *)p; *c; c++) {
        if ((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') ||
            strchr("/-._~,=+", *c)) {
            *o++ = (char)*c;
        } else {
            *o++ = '%', *o++ = hex[*c >> 4], *o++ = hex[*c & 15];
        }
    }
    *o = 0;
    return out;
}

void html_log_link(struct xw *h, const char *page_path, const char *log_path)
{
    char *dir = page_path ? path_dirname(page_path) : NULL;
    char *from = dir ? realpath(dir, NULL) : NULL, *to = log_path ? realpath(log_path, NULL) : NULL;
    if (from && to) {
        char *rel = relative(from, to), *href = url_path(rel);
        xw_start(h, "a");
        xw_attr(h, "href", href);
        xw_text(h, log_path);
        xw_end_full(h);
        free(rel);
        free(href);
    } else {
        xw_text(h, log_path ? log_path : "-");
    }
    free(dir);
    free(from);
    free(to);
}

void html_failures(struct xw *h, const struct report *r, const char *page_path)
{
    if (!report_count(r, CASE_FAILED)) return;
    xw_start(h, "h2");
    xw_text(h, "Failures");
    xw_end_full(h);
    for (int i = 0; i < r->n; i++) {
        const struct report_case *c = &r->c[i];
        if (c->outcome != CASE_FAILED) continue;
        xw_start(h, "div");
        xw_attr(h, "class", "failure");
        xw_attrf(h, "id", "failure-%d", i + 1);
        xw_start(h, "h3");
        xw_textf(h, "%d %s%s%s%s", i + 1, c->kind, *c->matrix ? "[" : "", c->matrix, *c->matrix ? "]" : "");
        xw_end_full(h);
        xw_start(h, "p");
        xw_start(h, "span");
        xw_attr(h, "class", "failed");
        xw_text(h, c->reason ? c->reason : "failed");
        xw_end_full(h);
        xw_end_full(h);
        if (c->error) {
            xw_start(h, "pre");
            xw_attr(h, "class", "error");
            xw_text(h, c->error);
            xw_end_full(h);
        }
        bool cut = false;
        char *tail = xml_text_file_tail(c->log_path, FAIL_TAIL_BYTES, &cut);
        xw_start(h, "p");
        xw_text(h, !c->log_path ? "no log" : !tail ? "log (cannot be read): " : cut ? "the end of the log " : "the log ");
        if (c->log_path) html_log_link(h, page_path, c->log_path);
        xw_end_full(h);
        if (tail && *tail) {
            xw_start(h, "pre");
            xw_attr(h, "class", "log");
            xw_text(h, tail);
            xw_end_full(h);
        }
        free(tail);
        xw_end_full(h);
    }
}
