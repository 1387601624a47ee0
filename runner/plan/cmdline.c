/* cmdline.c: a small, strict shell-word parser (see cmdline.h). */
#include "cmdline.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../core/check.h"
#include "../../core/banned.h"

/* Word separators of the shell: blank (space, tab) and newline. '\r', '\v', '\f' are ordinary
 * characters to bash (a CRLF config's '\r' stays in the last word), so not isspace(). */
static bool is_sep(char c) { return c == ' ' || c == '\t' || c == '\n'; }

struct word {
    char *s;
    size_t len, cap;
    bool quoted;    /* any part was quoted: not a redirection operator or assignment */
    bool any;       /* a word was started (even an empty quoted one) */
};

static void wpush(struct word *w, char c)
{
    w->s = xgrow(w->s, 1, w->len + 2, &w->cap);
    w->s[w->len++] = c;
    w->s[w->len] = 0;
    w->any = true;
}

static enum tipc_status fail(char *err, size_t errlen, char *bad, char c, const char *fmt, ...)
    TIPC_PRINTF(5, 6);
static enum tipc_status fail(char *err, size_t errlen, char *bad, char c, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
    *bad = c;
    return TIPC_EUSAGE;
}

static bool is_assignment(const char *w)
{
    if (!(isalpha((unsigned char)w[0]) || w[0] == '_')) return false;
    const char *p = w;
    while (isalnum((unsigned char)*p) || *p == '_') p++;
    return *p == '=';
}

/* {a,b} brace expansion: an unquoted '{' followed by ',' before the matching '}' in one word.
 * *end is where the scan stopped: '{'s before it were already covered (keeps a word linear). */
static bool brace_expansion_at(const char *p, const char **end)
{
    int depth = 0;
    bool comma = false;
    for (; *p && !is_sep(*p); p++) {
        if (*p == '{') depth++;
        else if (*p == ',' && depth == 1) comma = true;
        else if (*p == '}' && --depth == 0) break;
    }
    *end = p;
    return comma && *p == '}';
}

/* Is the text at p a redirection operator? Fills r (without the path) and returns its length. */
static size_t redir_op(const char *p, struct redirect *r)
{
    const char *q = p;
    int fd = 1;
    if (*q == '&' && q[1] == '>') { /* &>FILE: both streams */
        r->fd = 3;
        r->kind = REDIR_TRUNC;
        return 2;
    }
    if (*q == '1' || *q == '2') {
        if (q[1] != '>') return 0;
        fd = *q - '0';
        q++;
    }
    if (*q != '>') return 0;
    q++;
    r->fd = fd;
    if (*q == '>') { r->kind = REDIR_APPEND; q++; }
    else if (*q == '&') {
        if (q[1] != '1' && q[1] != '2') return 0;
        r->kind = REDIR_DUP;
        r->dup_fd = q[1] - '0';
        q += 2;
    } else r->kind = REDIR_TRUNC;
    return (size_t)(q - p);
}

static void add_redirect(struct cmdline *c, size_t *cap, const struct redirect *r)
{
    c->redir = xgrow(c->redir, sizeof *c->redir, (size_t)c->nredir + 1, cap);
    c->redir[c->nredir++] = *r;
}

/* Read one word starting at *pp into w (quotes and escapes resolved). */
static enum tipc_status read_word(const char **pp, struct word *w, char *err, size_t errlen, char *bad)
{
    const char *p = *pp;
    const char *brace_end = p;
    static const char refused[] = "|&;<()`$";
    if (*p == '#') return fail(err, errlen, bad, '#', "a word starting with '#' is a shell comment");
    if (*p == '~' && (p[1] == '/' || p[1] == 0 || is_sep(p[1]))) {
        const char *home = getenv("HOME");
        for (const char *h = home ? home : "~"; *h; h++) wpush(w, *h);
        p++;
    }
    while (*p && !is_sep(*p)) {
        if (*p == '\'') {
            const char *e = strchr(p + 1, '\'');
            if (!e) return fail(err, errlen, bad, '\'', "unterminated single quote");
            w->quoted = w->any = true;
            for (p++; p < e; p++) wpush(w, *p);
            p++;
        } else if (*p == '"') {
            w->quoted = w->any = true;
            for (p++; *p && *p != '"'; p++) {
                if (*p == '$' || *p == '`')
                    return fail(err, errlen, bad, *p, "'%c' (expansion) is not supported in a command", *p);
                if (*p == '\\' && (p[1] == '"' || p[1] == '\\')) p++;
                wpush(w, *p);
            }
            if (*p != '"') return fail(err, errlen, bad, '"', "unterminated double quote");
            p++;
        } else if (*p == '\\') {
            if (!p[1]) return fail(err, errlen, bad, '\\', "trailing backslash");
            w->quoted = true;
            wpush(w, p[1]);
            p += 2;
        } else if (strchr(refused, *p)) {
            return fail(err, errlen, bad, *p, "shell syntax '%c' is not supported in a command "
                        "(tipc runs commands without a shell)", *p);
        } else if (*p == '{' && p >= brace_end && brace_expansion_at(p, &brace_end)) {
            return fail(err, errlen, bad, '{', "brace expansion '{a,b}' is not supported in a command");
        } else if (*p == '>') {
            break; /* a redirection glued to the word ends it: `a>log` */
        } else {
            wpush(w, *p++);
        }
    }
    *pp = p;
    return TIPC_OK;
}

enum tipc_status cmdline_parse(const char *s, struct cmdline *c, char *err, size_t errlen, char *bad)
{
    memset(c, 0, sizeof *c);
    *bad = 0;
    err[0] = 0;
    size_t acap = 0, ecap = 0, rcap = 0;
    const char *p = s;
    enum tipc_status st = TIPC_OK;
    for (;;) {
        while (*p == ' ' || *p == '\t') p++;
        if (!*p) break;
        if (*p == '\n') { st = fail(err, errlen, bad, '\n', "newline in a command"); break; }
        struct redirect r = {0};
        size_t oplen = redir_op(p, &r);
        if (oplen) {
            p += oplen;
            if (r.kind != REDIR_DUP) {
                while (*p == ' ' || *p == '\t') p++;
                struct word w = {0};
                if (!*p || *p == '>') { st = fail(err, errlen, bad, '>', "redirection without a file name"); break; }
                st = read_word(&p, &w, err, errlen, bad);
                if (st != TIPC_OK) { free(w.s); break; }
                r.path = w.s ? w.s : xstrdup("");
            }
            if (r.fd == 3) { /* &>FILE == >FILE 2>&1 */
                r.fd = 1;
                add_redirect(c, &rcap, &r);
                struct redirect d = {.fd = 2, .kind = REDIR_DUP, .dup_fd = 1};
                add_redirect(c, &rcap, &d);
            } else add_redirect(c, &rcap, &r);
            continue;
        }
        if (*p == '>') { st = fail(err, errlen, bad, '>', "unsupported redirection (only >, >>, 2>&1, &> are)"); break; }
        struct word w = {0};
        const char *start = p;
        st = read_word(&p, &w, err, errlen, bad);
        if (st != TIPC_OK) { free(w.s); break; }
        CHECK(p > start, "cmdline_parse made no progress at '%c'", *p);
        if (*p == '>' && !w.quoted && w.s && strspn(w.s, "0123456789") == w.len) { /* `3>x`: fd 3 */
            free(w.s);
            st = fail(err, errlen, bad, '>', "unsupported redirection (only >, >>, 2>&1, &> are)");
            break;
        }
        if (!w.any) continue;
        if (!w.s) w.s = xstrdup("");
        if (c->argc == 0 && !w.quoted && is_assignment(w.s)) {
            c->env = xgrow(c->env, sizeof *c->env, (size_t)c->nenv + 1, &ecap);
            c->env[c->nenv++] = w.s;
            continue;
        }
        c->argv = xgrow(c->argv, sizeof *c->argv, (size_t)c->argc + 2, &acap);
        c->argv[c->argc++] = w.s;
        c->argv[c->argc] = NULL;
    }
    if (st == TIPC_OK && c->argc == 0) st = fail(err, errlen, bad, 0, "empty command");
    if (st != TIPC_OK) cmdline_free(c);
    return st;
}

void cmdline_free(struct cmdline *c)
{
    if (!c) return;
    for (int i = 0; i < c->argc; i++) free(c->argv[i]);
    free(c->argv);
    for (int i = 0; i < c->nenv; i++) free(c->env[i]);
    free(c->env);
    for (int i = 0; i < c->nredir; i++) free(c->redir[i].path);
    free(c->redir);
    memset(c, 0, sizeof *c);
}
