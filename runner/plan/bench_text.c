/* bench_text.c: the config copy that benchmark_train.sh edits with sed, as lines in memory
 * (bench_text.h). Only the edits the scripts make are here: one physical line replaced (sed's
 * `N s` command, func_sed_params's KEY:VALUE or a text), and `sed -i 's/A/B/g'` over the file. */
#include "bench_text.h"

#include <stdlib.h>
#include <string.h>

#include "../../core/check.h"
#include "../../core/banned.h"

void btext_init(struct btext *t, const char *text, size_t len)
{
    memset(t, 0, sizeof *t);
    size_t cap = 0, pos = 0;
    while (pos < len) {
        const char *s = text + pos, *nl = memchr(s, '\n', len - pos);
        size_t l = nl ? (size_t)(nl - s) : len - pos;
        t->line = xgrow(t->line, sizeof *t->line, (size_t)t->n + 1, &cap);
        t->line[t->n++] = xstrndup(s, l);
        pos += l + (nl ? 1 : 0);
        t->final_newline = nl != NULL;
    }
}

void btext_free(struct btext *t)
{
    for (int i = 0; i < t->n; i++) free(t->line[i]);
    free(t->line);
    memset(t, 0, sizeof *t);
}

char *btext_join(const struct btext *t, size_t *len)
{
    size_t n = 0;
    for (int i = 0; i < t->n; i++) n += strlen(t->line[i]) + 1;
    char *s = xmalloc(n + 1), *o = s;
    for (int i = 0; i < t->n; i++) {
        size_t l = strlen(t->line[i]);
        memcpy(o, t->line[i], l);
        o += l;
        if (i + 1 < t->n || t->final_newline) *o++ = '\n';
    }
    *o = 0;
    *len = (size_t)(o - s);
    return s;
}

const char *btext_get(const struct btext *t, int line)
{
    return line >= 1 && line <= t->n ? t->line[line - 1] : NULL;
}

/* sed's replacement text: `&` is the matched text, `\c` is c. */
static char *sed_replacement(const char *repl, const char *match, size_t mlen)
{
    size_t cap = strlen(repl) * (mlen + 1) + 1;
    char *out = xmalloc(cap), *o = out;
    for (const char *p = repl; *p; p++) {
        if (*p == '\\' && p[1]) *o++ = *++p;
        else if (*p == '&') memcpy(o, match, mlen), o += mlen;
        else *o++ = *p;
    }
    *o = 0;
    return out;
}

void btext_put(struct btext *t, int line, const char *text)
{
    if (line < 1 || line > t->n) return;
    free(t->line[line - 1]);
    t->line[line - 1] = xstrdup(text);
}

bool btext_set(struct btext *t, int line, const char *text)
{
    /* sed sees the '/' of the text as the end of its s command: `sed: unknown option to s'`, no edit */
    if (line < 1 || line > t->n || strchr(text, '/')) return false;
    char *r = sed_replacement(text, t->line[line - 1], strlen(t->line[line - 1]));
    free(t->line[line - 1]);
    t->line[line - 1] = r;
    return true;
}

bool btext_set_value(struct btext *t, int line, const char *value)
{
    const char *old = btext_get(t, line);
    if (!old) return false;
    const char *colon = strchr(old, ':');
    char *s = xasprintf("%.*s:%s", (int)(colon ? (size_t)(colon - old) : strlen(old)), old, value);
    bool ok = btext_set(t, line, s);
    free(s);
    return ok;
}

bool btext_replace_all(struct btext *t, const char *from, const char *to)
{
    if (strchr(from, '/') || strchr(to, '/') || !*from) return false;
    size_t fl = strlen(from);
    char *repl = sed_replacement(to, from, fl);
    size_t rl = strlen(repl);
    for (int i = 0; i < t->n; i++) {
        const char *s = t->line[i], *hit = strstr(s, from);
        if (!hit) continue;
        size_t cnt = 0;
        for (const char *q = hit; q; q = strstr(q + fl, from)) cnt++;
        char *out = xmalloc(strlen(s) + cnt * rl + 1), *o = out;
        for (const char *q; (q = strstr(s, from)); s = q + fl) {
            memcpy(o, s, (size_t)(q - s));
            o += q - s;
            memcpy(o, repl, rl);
            o += rl;
        }
        memcpy(o, s, strlen(s) + 1);
        free(t->line[i]);
        t->line[i] = out;
    }
    free(repl);
    return true;
}

bool btext_has(const struct btext *t, const char *text)
{
    for (int i = 0; i < t->n; i++)
        if (strstr(t->line[i], text)) return true;
    return false;
}
