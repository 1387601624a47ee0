/* why.c: the one line that says why a stage failed (report.h: report_why), for the end table,
 * JUnit's failure message and the HTML report: the exit code names the kind of failure, this line
 * the failure itself ("-o: bad value 'abc' for 'Optimizer.momentum'"). */
#include "report.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "xml.h"
#include "../../core/check.h"
#include "../../core/banned.h"

#define WHY_MAX 300              /* bytes of the line kept (a UTF-8 character is never cut) */
#define LOG_SCAN_BYTES (64 << 10) /* of a stage log's end, searched for an error line */

/* Cleaned (xml.h: colour codes dropped, control characters visible, valid UTF-8), without the
 * "tipc: error: " every tipc error starts with, cut to WHY_MAX bytes. */
static char *tidy(const char *line, size_t n)
{
    char *raw = xstrndup(line, n), *c = xml_text_clean_str(raw);
    free(raw);
    const char *tag = "tipc: error: ", *p = strstr(c, tag);
    /* at the start, or after a launcher's "[node 0:rank 1] " prefix */
    if (p && (p == c || (p[-1] == ' ' && p[-2] == ']'))) memmove((char *)p, p + strlen(tag), strlen(p + strlen(tag)) + 1);
    size_t len = strlen(c);
    while (len && isspace((unsigned char)c[len - 1])) c[--len] = 0;
    if (len > WHY_MAX) {
        size_t k = WHY_MAX;
        while (k && ((unsigned char)c[k] & 0xC0) == 0x80) k--;
        c[k] = 0;
        char *t = xasprintf("%s...", c);
        free(c);
        c = t;
    }
    if (!*c) {
        free(c);
        return NULL;
    }
    return c;
}

/* The last `max` bytes of a file (NUL-terminated, may hold NULs), or NULL. */
static char *file_tail(const char *path, size_t max, size_t *n)
{
    FILE *f = path ? fopen(path, "rb") : NULL;
    if (!f) return NULL;
    char *b = NULL;
    if (fseek(f, 0, SEEK_END) == 0) {
        long end = ftell(f);
        long from = end > (long)max ? end - (long)max : 0;
        if (end >= 0 && fseek(f, from, SEEK_SET) == 0) {
            b = xmalloc((size_t)(end - from) + 1);
            *n = fread(b, 1, (size_t)(end - from), f);
            b[*n] = 0;
        }
    }
    fclose(f);
    return b;
}

/* A Python exception line: "ValueError: ...", "paddle.base.core.EnforceNotMet: ...", "KeyboardInterrupt". */
static bool exception_line(const char *s, size_t n)
{
    size_t i = 0, last = 0;   /* last: where the name's last dotted part starts (the class) */
    for (; i < n && (isalnum((unsigned char)s[i]) || s[i] == '_' || s[i] == '.'); i++)
        if (s[i] == '.') last = i + 1;
    if (!i || last >= i || !isupper((unsigned char)s[last]) || (i < n && s[i] != ':')) return false;
    static const char *const ends[] = {"Error", "Exception", "Exit", "Interrupt", "NotMet"};
    for (size_t k = 0; k < sizeof ends / sizeof ends[0]; k++) {
        size_t e = strlen(ends[k]);
        if (i >= e && !strncmp(s + i - e, ends[k], e)) return true;
    }
    return false;
}

/* "error" as a word, in any case ("tipc: error:", "ERROR:", "Error in ..."; not "error_rate"). */
static bool says_error(const char *s, size_t n)
{
    for (size_t i = 0; i + 5 <= n; i++) {
        if (strncasecmp(s + i, "error", 5)) continue;
        bool before = i == 0 || !(isalnum((unsigned char)s[i - 1]) || s[i - 1] == '_');
        bool after = i + 5 == n || !(isalnum((unsigned char)s[i + 5]) || s[i + 5] == '_');
        if (before && after) return true;
    }
    return false;
}

char *report_why(const char *error_log, const char *stage_log)
{
    size_t n = 0;
    char *b = file_tail(error_log, 4096, &n);
    if (b) { /* the first error a tipc process of the stage reported */
        char *r = tidy(b, strcspn(b, "\n"));
        free(b);
        if (r) return r;
    }
    b = file_tail(stage_log, LOG_SCAN_BYTES, &n);
    if (!b) return NULL;
    const char *exc = NULL, *err = NULL;
    size_t exc_n = 0, err_n = 0;
    for (size_t i = 0; i < n;) {   /* the last exception line, else the last line that says error */
        const char *s = b + i;
        size_t k = 0;
        while (i + k < n && s[k] != '\n') k++;
        size_t len = k && s[k - 1] == '\r' ? k - 1 : k;
        const char *cr = memrchr(s, '\r', len); /* a line redrawn with '\r': what it shows last */
        if (cr) len -= (size_t)(cr + 1 - s), s = cr + 1;
        if (exception_line(s, len)) exc = s, exc_n = len;
        else if (says_error(s, len)) err = s, err_n = len;
        i += k + 1;
    }
    char *r = exc ? tidy(exc, exc_n) : err ? tidy(err, err_n) : NULL;
    free(b);
    return r;
}
