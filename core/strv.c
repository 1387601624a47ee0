/* strv.c: see strv.h. */
#include "strv.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "banned.h"

void strv_push_owned(struct strv *s, char *str)
{
    s->v = xgrow(s->v, sizeof *s->v, s->n + 2, &s->cap);
    s->v[s->n++] = str;
    s->v[s->n] = NULL;
}

void strv_push(struct strv *s, const char *str) { strv_push_owned(s, xstrdup(str)); }

void strv_pushf(struct strv *s, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *str = NULL;
    if (vasprintf(&str, fmt, ap) < 0) BUG("out of memory");
    va_end(ap);
    strv_push_owned(s, str);
}

void strv_split(struct strv *s, const char *str, char sep, bool keep_empty)
{
    for (const char *p = str; *p;) {
        const char *e = strchr(p, sep);
        size_t len = e ? (size_t)(e - p) : strlen(p);
        if (len || keep_empty) strv_push_owned(s, xstrndup(p, len));
        if (!e) break;
        p = e + 1;
    }
}

void strv_setenv(struct strv *s, char *kv)
{
    size_t kl = strcspn(kv, "=");
    for (size_t i = 0; i < s->n; i++)
        if (!strncmp(s->v[i], kv, kl) && s->v[i][kl] == '=') {
            free(s->v[i]);
            s->v[i] = kv;
            return;
        }
    strv_push_owned(s, kv);
}

char *strv_join(char *const *v, long n, const char *sep)
{
    size_t len = 1, sl = strlen(sep);
    long k = 0;
    for (; n < 0 ? v && v[k] : k < n; k++) len += strlen(v[k]) + (k ? sl : 0);
    char *out = xmalloc(len), *o = out;
    for (long i = 0; i < k; i++) {
        if (i) memcpy(o, sep, sl), o += sl;
        size_t l = strlen(v[i]);
        memcpy(o, v[i], l);
        o += l;
    }
    *o = 0;
    return out;
}

char **strv_detach(struct strv *s)
{
    char **v = s->v ? s->v : xcalloc(1, sizeof *v);
    *s = (struct strv)STRV_INIT;
    return v;
}

void strv_clear(struct strv *s)
{
    for (size_t i = 0; i < s->n; i++) free(s->v[i]);
    free(s->v);
    *s = (struct strv)STRV_INIT;
}

void strv_free(char **v)
{
    for (char **p = v; p && *p; p++) free(*p);
    free(v);
}
