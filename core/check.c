/* check.c: message printing, the replaceable die routine, and checked allocation. */
#include "check.h"

#include <pthread.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *msg_prefix = "";
static const char *error_log = NULL;   /* tipc_set_error_log */
static int error_log_lines = 0;

void tipc_set_msg_prefix(const char *prefix) { msg_prefix = prefix ? prefix : ""; }

void tipc_set_error_log(const char *path) { error_log = path && *path ? path : NULL; }

static void (*msg_hook)(void);
void tipc_set_msg_hook(void (*fn)(void)) { msg_hook = fn; }

/* One error line appended to the error log (one write: the processes of a stage share the file);
 * best effort, as the message itself is already on stderr. */
static void log_error_line(const char *line)
{
    if (!error_log || error_log_lines >= TIPC_ERROR_LOG_MAX) return;
    error_log_lines++;
    int fd = open(error_log, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK, 0644);
    if (fd < 0) return;
    size_t n = strlen(line);
    char *b = malloc(n + 2);
    if (b) {
        memcpy(b, line, n);
        b[n] = '\n';
        ssize_t w = write(fd, b, n + 1);
        (void)w;
        free(b);
    }
    close(fd);
}

const char *tipc_status_name(enum tipc_status st)
{
    switch (st) {
    case TIPC_OK: return "ok";
    case TIPC_EFAIL: return "failed";
    case TIPC_EUSAGE: return "usage";
    case TIPC_EDATA: return "data";
    case TIPC_EDIST: return "distributed";
    case TIPC_EIO: return "io";
    case TIPC_ENUMERIC: return "numeric";
    case TIPC_ENOTBUILT: return "unavailable";
    case TIPC_EINTERNAL: return "internal";
    case TIPC_EINTR: return "interrupted";
    }
    return "unknown";
}

/* Control characters in a message (most often from a quoted config value: a CRLF file's '\r')
 * are written visibly as \r, \xNN; '\n' and '\t' stay. Returns whether a '\r' was seen. */
static bool make_visible(const char *s, char *out, size_t cap)
{
    bool cr = false;
    size_t o = 0;
    for (; *s && o + 5 < cap; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '\r') {
            cr = true;
            out[o++] = '\\', out[o++] = 'r';
        } else if ((c < 0x20 && c != '\n' && c != '\t') || c == 0x7f) {
            o += (size_t)snprintf(out + o, cap - o, "\\x%02x", c);
        } else {
            out[o++] = (char)c;
        }
    }
    out[o] = 0;
    return cr;
}

static char first_error[1024];   /* error_first(): the process's first error line */
static pthread_once_t first_once = PTHREAD_ONCE_INIT;
static pthread_mutex_t first_mu;
static void first_init(void) { pthread_mutex_init(&first_mu, NULL); }

const char *error_first(void) { return first_error; }

/* One fprintf per message so concurrent ranks do not interleave inside a line. */
static void vreport(const char *head, const char *fmt, va_list ap, bool is_error)
{
    char buf[4096], vis[8192];
    int n = snprintf(buf, sizeof buf, "%s%s", msg_prefix, head);
    if (n < 0 || (size_t)n >= sizeof buf) n = 0;
    vsnprintf(buf + n, sizeof buf - (size_t)n, fmt, ap);
    bool cr = make_visible(buf, vis, sizeof vis);
    if (is_error) {
        pthread_once(&first_once, first_init);
        pthread_mutex_lock(&first_mu);
        if (!first_error[0]) {   /* cut to the buffer: a report needs the start of it */
            size_t len = strlen(vis);
            if (len >= sizeof first_error) len = sizeof first_error - 1;
            memcpy(first_error, vis, len);
            first_error[len] = 0;
        }
        pthread_mutex_unlock(&first_mu);
    }
    if (msg_hook) msg_hook();
    fprintf(stderr, "%s\n", vis);
    if (is_error) log_error_line(vis);
    if (cr)
        fprintf(stderr, "%shint: '\\r' is a carriage return: the file has Windows (CRLF) line endings; convert "
                        "it with `sed -i 's/\\r$//' FILE` (or dos2unix)\n", msg_prefix);
    fflush(stderr);
}

enum tipc_status error_at(enum tipc_status st, const char *file, int line, const char *fmt, ...)
{
    char head[1024];
    if (line > 0)
        snprintf(head, sizeof head, "%s:%d: ", file, line);
    else
        snprintf(head, sizeof head, "%s: ", file);
    va_list ap;
    va_start(ap, fmt);
    vreport(head, fmt, ap, true);
    va_end(ap);
    return st;
}

enum tipc_status error_msg(enum tipc_status st, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vreport("tipc: error: ", fmt, ap, true);
    va_end(ap);
    return st;
}

void error_hint(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vreport("hint: ", fmt, ap, false);
    va_end(ap);
}

void warning_msg(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vreport("tipc: warning: ", fmt, ap, false);
    va_end(ap);
}

static void default_die(const char *msg, int code)
{
    if (msg_hook) msg_hook();
    fprintf(stderr, "%s%s\n", msg_prefix, msg);
    char line[4096];
    snprintf(line, sizeof line, "%s%s", msg_prefix, msg);
    log_error_line(line);
    fflush(stderr);
    exit(code);
}

static tipc_die_fn die_routine = default_die;

void tipc_set_die_routine(tipc_die_fn fn) { die_routine = fn ? fn : default_die; }

void tipc_die_at(const char *src, int line, int code, const char *fmt, ...)
{
    char buf[2048];
    int n = snprintf(buf, sizeof buf, "BUG: %s:%d: ", src, line);
    if (n < 0 || (size_t)n >= sizeof buf) n = 0;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf + n, sizeof buf - (size_t)n, fmt, ap);
    va_end(ap);
    die_routine(buf, code);
    abort(); /* a die routine must not return */
}

void tipc_die_msg(int code, const char *fmt, ...)
{
    char buf[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    die_routine(buf, code);
    abort();
}

static void *oom(size_t n)
{
    tipc_die_at(__FILE__, __LINE__, TIPC_EINTERNAL, "out of memory allocating %zu bytes", n);
}

void *xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    return p ? p : oom(n);
}

void *xcalloc(size_t n, size_t sz)
{
    void *p = calloc(n ? n : 1, sz ? sz : 1);
    return p ? p : oom(n * sz);
}

void *xrealloc(void *p, size_t n)
{
    void *q = realloc(p, n ? n : 1);
    return q ? q : oom(n);
}

char *xstrdup(const char *s)
{
    char *p = strdup(s);
    return p ? p : oom(strlen(s) + 1);
}

char *xstrndup(const char *s, size_t n)
{
    char *p = strndup(s, n);
    return p ? p : oom(n + 1);
}

void *xgrow(void *arr, size_t sz, size_t need, size_t *cap)
{
    if (need <= *cap) return arr;
    size_t c = *cap ? *cap : 8;
    while (c < need) c *= 2;
    *cap = c;
    return xrealloc(arr, c * sz);
}

char *xasprintf(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *s = NULL;
    int n = vasprintf(&s, fmt, ap);
    va_end(ap);
    if (n < 0) oom(0);
    return s;
}
