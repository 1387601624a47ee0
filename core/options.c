/* options.c: see options.h. */
#include "options.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "check.h"
#include "parse.h"
#include "strv.h"
#include "banned.h"

/* ---- matching -------------------------------------------------------------------------------- */
/* Same spelling, '-' and '_' being one character (`--amp_level` = `--amp-level`). */
static bool same_name(const char *a, size_t alen, const char *b, size_t blen)
{
    if (alen != blen) return false;
    for (size_t i = 0; i < alen; i++) {
        char x = a[i] == '_' ? '-' : a[i], y = b[i] == '_' ? '-' : b[i];
        if (x != y) return false;
    }
    return true;
}

/* Does `word` (len bytes) name opt o, by its name or one of its aliases? */
static bool opt_matches(const struct opt *o, const char *word, size_t len)
{
    if (same_name(o->name, strlen(o->name), word, len)) return true;
    for (const char *p = o->alias; p && *p;) {
        size_t n = strcspn(p, " ");
        if (n && same_name(p, n, word, len)) return true;
        p += n;
        while (*p == ' ') p++;
    }
    return false;
}

/* An environment-only setting: its name is not an option word ("TIPC_OFFLINE"). */
static bool env_only(const struct opt *o) { return o->name[0] != '-'; }

static const struct opt *find_opt(const struct opt *tbl, const char *word, size_t len)
{
    for (const struct opt *o = tbl; o && o->name; o++)
        if (!env_only(o) && opt_matches(o, word, len)) return o;
    return NULL;
}

static bool is_help(const char *w, size_t len)
{
    return same_name(w, len, "--help", 6) || same_name(w, len, "-h", 2);
}

static bool takes_value(const struct opt *o) { return o->type != OPT_SWITCH && o->type != OPT_FLAG; }

/* An option word: "-x..." but not "-" alone (a positional, e.g. stdin). */
static bool is_option_word(const char *w) { return w[0] == '-' && w[1]; }

/* ---- did you mean ---------------------------------------------------------------------------- */
int opt_edit_distance(const char *a, const char *b)
{
    size_t n = strlen(a), m = strlen(b);
    int *d = xcalloc((n + 1) * (m + 1), sizeof *d);
#define D(i, j) d[(i) * (m + 1) + (j)]
    for (size_t i = 0; i <= n; i++) D(i, 0) = (int)i;
    for (size_t j = 0; j <= m; j++) D(0, j) = (int)j;
    for (size_t i = 1; i <= n; i++)
        for (size_t j = 1; j <= m; j++) {
            int cost = a[i - 1] != b[j - 1];
            int v = D(i - 1, j) + 1;
            if (D(i, j - 1) + 1 < v) v = D(i, j - 1) + 1;
            if (D(i - 1, j - 1) + cost < v) v = D(i - 1, j - 1) + cost;
            if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] && D(i - 2, j - 2) + 1 < v)
                v = D(i - 2, j - 2) + 1;   /* transposition: "--dyr-run" */
            D(i, j) = v;
        }
    int r = D(n, m);
#undef D
    free(d);
    return r;
}

/* Lower case, '_' as '-', leading dashes dropped: what a typo is measured on. */
static char *typo_key(const char *s, size_t len)
{
    while (len && *s == '-') s++, len--;
    char *k = xstrndup(s, len);
    for (char *p = k; *p; p++) {
        if (*p == '_') *p = '-';
        if (*p >= 'A' && *p <= 'Z') *p = (char)(*p - 'A' + 'a');
    }
    return k;
}

const char *opt_suggest(const char *word, const char *const *candidates)
{
    char *w = typo_key(word, strlen(word));
    size_t wl = strlen(w);
    const char *best = NULL;
    int best_d = 1 << 30, prefix_hits = 0;
    const char *prefix_of = NULL;
    for (const char *const *c = candidates; *c; c++) {
        char *k = typo_key(*c, strlen(*c));
        int dist = opt_edit_distance(w, k);
        if (dist < best_d) best_d = dist, best = *c;
        if (wl >= 3 && strncmp(k, w, wl) == 0) prefix_hits++, prefix_of = *c;
        free(k);
    }
    free(w);
    /* a plausible typo: one edit for short words, two from 6 characters on (git's spirit) */
    int limit = wl >= 6 ? 2 : 1;
    if (best_d == 0) return NULL;   /* an exact match is no typo */
    if (best && best_d <= limit) return best;
    if (prefix_hits == 1) return prefix_of;   /* "--epo" -> "--epochs" */
    return NULL;
}

/* Every spelling of every option, NULL-terminated (caller frees the array and its strings). */
static char **all_spellings(const struct opt *tbl)
{
    char **v = NULL;
    size_t n = 0, cap = 0;
    for (const struct opt *o = tbl; o && o->name; o++) {
        if (env_only(o)) continue;
        v = xgrow(v, sizeof *v, n + 1, &cap);
        v[n++] = xstrdup(o->name);
        for (const char *p = o->alias; p && *p;) {
            size_t k = strcspn(p, " ");
            if (k) {
                v = xgrow(v, sizeof *v, n + 1, &cap);
                v[n++] = xstrndup(p, k);
            }
            p += k;
            while (*p == ' ') p++;
        }
    }
    v = xgrow(v, sizeof *v, n + 1, &cap);
    v[n] = NULL;
    return v;
}

static enum tipc_status unknown_option(const struct opt_cmd *c, const char *word, size_t len)
{
    char *w = xstrndup(word, len);
    error_msg(TIPC_EUSAGE, "%s: unknown option '%s'", c->name, w);
    char **sp = all_spellings(c->opts);
    const char *s = opt_suggest(w, (const char *const *)sp);
    if (s) error_hint("did you mean '%s'? (see 'tipc help %s')", s, c->name);
    else error_hint("see 'tipc help %s'", c->name);
    for (char **p = sp; *p; p++) free(*p);
    free(sp);
    free(w);
    return TIPC_EUSAGE;
}

/* ---- values ---------------------------------------------------------------------------------- */
static bool has_range(const struct opt *o) { return o->min < o->max; }

/* `what` names the source in messages: "option '--epochs'" or "TIPC_RETRIES (environment, ...)". */
static enum tipc_status bad_number(const struct opt_cmd *c, const struct opt *o, const char *what, const char *v)
{
    return error_msg(TIPC_EUSAGE, "%s: %s needs %s, got '%s'", c->name, what,
                     o->type == OPT_DOUBLE ? "a number" : "an integer", v);
}

/* A parsed value outside [min, max]: exit 2 naming the option and the range. */
static enum tipc_status check_range(const struct opt_cmd *c, const struct opt *o, const char *what, const char *v,
                                    double x)
{
    if (!has_range(o) || (x >= o->min && x <= o->max)) return TIPC_OK;
    return error_msg(TIPC_EUSAGE, "%s: %s must be in %.15g..%.15g, got %s", c->name, what, o->min, o->max, v);
}

static enum tipc_status set_value(const struct opt_cmd *c, const struct opt *o, const char *what, const char *v)
{
    switch (o->type) {
    case OPT_STR: *(const char **)o->dst = v; break;
    case OPT_INT: {
        int x;
        if (!parse_int(v, -2147483647 - 1, 2147483647, &x)) return bad_number(c, o, what, v);
        TRY(check_range(c, o, what, v, x));
        *(int *)o->dst = x;
        break;
    }
    case OPT_LONG: {
        long x;
        if (!parse_long(v, -(1L << 62), 1L << 62, &x)) return bad_number(c, o, what, v);
        TRY(check_range(c, o, what, v, (double)x));
        *(long *)o->dst = x;
        break;
    }
    case OPT_DOUBLE: {
        double x;
        if (!parse_double(v, &x)) return bad_number(c, o, what, v);
        TRY(check_range(c, o, what, v, x));   /* NaN is outside every range */
        *(double *)o->dst = x;
        break;
    }
    case OPT_FLAG: *(bool *)o->dst = true; break;
    case OPT_BOOL:
    case OPT_SWITCH:
        if (!parse_bool(v, o->dst))
            return error_msg(TIPC_EUSAGE, "%s: %s needs True or False, got '%s'", c->name, what, v);
        break;
    case OPT_LIST: strv_push(o->dst, v); break;
    case OPT_FN: TRY(o->fn(o, v, o->dst)); break;
    }
    if (o->seen) *o->seen = true;
    return TIPC_OK;
}

enum tipc_status opt_on_off(const struct opt *o, const char *value, void *dst)
{
    bool *b = dst;
    if (!strcasecmp(value, "on")) *b = true;
    else if (!strcasecmp(value, "off")) *b = false;
    else if (!parse_bool(value, b))
        return error_msg(TIPC_EUSAGE, "%s needs on or off, got '%s'", o->name, value);
    return TIPC_OK;
}

enum tipc_status opt_auto_on_off(const struct opt *o, const char *value, void *dst)
{
    int *m = dst;
    bool b;
    if (!strcasecmp(value, "auto")) *m = 0;
    else if (!strcasecmp(value, "on")) *m = 2;
    else if (!strcasecmp(value, "off")) *m = 1;
    else if (parse_bool(value, &b)) *m = b ? 2 : 1;
    else return error_msg(TIPC_EUSAGE, "%s needs auto, on or off, got '%s'", o->name, value);
    return TIPC_OK;
}

/* ---- parsing --------------------------------------------------------------------------------- */
/* Is --help among the options (before `--`, and before the first positional word of a
 * stop_at_pos command, whose words belong to its CMD)? Values of options are skipped. */
static bool wants_help(const struct opt_cmd *c, int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--")) return false;
        if (!is_option_word(a)) {
            if (c->stop_at_pos) return false;
            continue;
        }
        const char *eq = strchr(a, '=');
        size_t len = eq ? (size_t)(eq - a) : strlen(a);
        if (is_help(a, len) && !eq) return true;
        const struct opt *o = find_opt(c->opts, a, len);
        if (o && !eq && takes_value(o)) i++;
    }
    return false;
}

static enum tipc_status add_pos(const struct opt_cmd *c, const char *a, const char **pos, struct opt_result *r)
{
    if (r->npos >= c->max_pos) {
        error_msg(TIPC_EUSAGE, "%s: unexpected argument '%s'", c->name, a);
        error_hint("see 'tipc help %s'", c->name);
        return TIPC_EUSAGE;
    }
    pos[r->npos++] = a;
    return TIPC_OK;
}

/* Options not given take their environment variable, when set and not empty. */
static enum tipc_status apply_env(const struct opt_cmd *c, const bool *given)
{
    for (const struct opt *o = c->opts; o && o->name; o++) {
        if (!o->env || given[o - c->opts]) continue;
        const char *v = getenv(o->env);
        if (!v || !*v) continue;
        char *what = env_only(o) ? xasprintf("%s (environment)", o->env)
                                 : xasprintf("%s (environment, for %s)", o->env, o->name);
        enum tipc_status st = set_value(c, o, what, v);
        free(what);
        TRY(st);
    }
    return TIPC_OK;
}

static opt_describe_fn describe_fn;
static void *describe_ctx;

void opt_describe(opt_describe_fn fn, void *ctx) { describe_fn = fn, describe_ctx = ctx; }
bool opt_takes_value(const struct opt *o) { return takes_value(o); }
bool opt_env_only(const struct opt *o) { return env_only(o); }

static bool check_mode;
static struct opt_check check_result;

void opt_check_mode(bool on) { check_mode = on; }
const struct opt_check *opt_check_result(void) { return &check_result; }

static enum tipc_status parse_words(const struct opt_cmd *c, int argc, char **argv, const char **pos,
                                    struct opt_result *r, bool *given)
{
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        check_result.bad = a;   /* the word an error below is about */
        if (!strcmp(a, "--")) {
            if (c->stop_at_pos) return r->rest = i + 1, TIPC_OK;
            for (i++; i < argc; i++) TRY(add_pos(c, argv[i], pos, r));
            return TIPC_OK;
        }
        if (!is_option_word(a)) {
            if (c->stop_at_pos) return r->rest = i, TIPC_OK;
            TRY(add_pos(c, a, pos, r));
            continue;
        }
        const char *eq = strchr(a, '=');
        size_t len = eq ? (size_t)(eq - a) : strlen(a);
        if (is_help(a, len))   /* only --help=VALUE gets here: wants_help() took plain --help */
            return error_msg(TIPC_EUSAGE, "%s: '%s' takes no value; see 'tipc help %s'", c->name, a, c->name);
        const struct opt *o = find_opt(c->opts, a, len);
        if (!o) return unknown_option(c, a, len);
        if (eq && o->type == OPT_FLAG)
            return error_msg(TIPC_EUSAGE, "%s: '%s' takes no value; see 'tipc help %s'", c->name, a, c->name);
        const char *v;
        if (eq) v = eq + 1;
        else if (!takes_value(o)) v = "true";
        else if (i + 1 < argc) v = argv[++i];
        else return error_msg(TIPC_EUSAGE, "%s: option '%s' needs a value", c->name, o->name);
        char *what = xasprintf("option '%s'", o->name);
        enum tipc_status st = set_value(c, o, what, v);
        free(what);
        TRY(st);
        given[o - c->opts] = true;
    }
    return TIPC_OK;
}

enum tipc_status opt_parse(const struct opt_cmd *c, int argc, char **argv, const char **pos,
                           struct opt_result *r)
{
    memset(r, 0, sizeof *r);
    r->pos = pos;
    r->rest = argc;
    if (describe_fn) {   /* the table only (tipc help man / completion) */
        describe_fn(c, describe_ctx);
        r->help = true;
        return TIPC_OK;
    }
    if (check_mode) {   /* the words only: no environment, no usage, nothing run */
        const char *scratch[16] = {0};
        size_t n = 0;
        while (c->opts && c->opts[n].name) n++;
        bool *given = xcalloc(n + 1, sizeof *given);
        check_result = (struct opt_check){argc, NULL};
        enum tipc_status st = parse_words(c, argc, argv, pos ? pos : scratch, r, given);
        free(given);
        if (st == TIPC_OK) check_result.bad = NULL;
        check_result.rest = r->rest;
        r->help = true;
        return st;
    }
    if (wants_help(c, argc, argv)) {
        opt_usage(c, stdout);
        r->help = true;
        return TIPC_OK;
    }
    size_t n = 0;
    while (c->opts && c->opts[n].name) n++;
    bool *given = xcalloc(n + 1, sizeof *given);
    enum tipc_status st = parse_words(c, argc, argv, pos, r, given);
    if (st == TIPC_OK) st = apply_env(c, given);
    free(given);
    return st;
}

enum tipc_status opt_usage_error(const struct opt_cmd *c)
{
    opt_usage(c, stderr);
    return TIPC_EUSAGE;
}

/* ---- the usage text -------------------------------------------------------------------------- */
#define HELP_COL 26
#define USAGE_WIDTH 100

/* "-b, --batch-size N": short spellings first, then the name, then the long aliases. */
static char *left_column(const struct opt *o)
{
    char *s = xstrdup("");
    for (int pass = 0; pass < 3; pass++) {
        const char *p = pass == 1 ? o->name : o->alias;
        while (p && *p) {
            size_t k = pass == 1 ? strlen(p) : strcspn(p, " ");
            bool is_short = k == 2 && p[0] == '-';
            if (k && (pass == 1 || (pass == 0) == is_short)) {
                char *t = xasprintf("%s%s%.*s", s, *s ? ", " : "", (int)k, p);
                free(s);
                s = t;
            }
            p += k;
            while (*p == ' ') p++;
        }
    }
    if (takes_value(o)) {
        char *t = xasprintf("%s %s", s, o->arg ? o->arg : "VALUE");
        free(s);
        s = t;
    }
    return s;
}

static void print_opt(const struct opt *o, FILE *f)
{
    char *left = env_only(o) ? xasprintf("%s=%s", o->env, o->arg ? o->arg : "VALUE") : left_column(o);
    fprintf(f, "  %s", left);
    int col = 2 + (int)strlen(left);
    free(left);
    char extra[160] = "";
    if (has_range(o)) snprintf(extra, sizeof extra, "%.15g..%.15g", o->min, o->max);
    if (o->env && !env_only(o))
        snprintf(extra + strlen(extra), sizeof extra - strlen(extra), "%senv %s", *extra ? "; " : "", o->env);
    const char *h = o->help ? o->help : "";
    bool first = true;
    do {
        size_t k = strcspn(h, "\n");
        bool last = h[k] == 0;
        if (first && col >= HELP_COL - 1) fprintf(f, "\n%*s", HELP_COL, ""), col = HELP_COL;
        else if (!first) fprintf(f, "%*s", HELP_COL, "");
        else fprintf(f, "%*s", HELP_COL - col, "");
        fprintf(f, "%.*s", (int)k, h);
        if (last && *extra) {   /* "(1..256; env X)" after the text, or on a line of its own */
            bool fits = HELP_COL + k + strlen(extra) + 3 <= USAGE_WIDTH;
            if (k && !fits) fprintf(f, "\n%*s(%s)", HELP_COL, "", extra);
            else fprintf(f, "%s(%s)", k ? " " : "", extra);
        }
        fputc('\n', f);
        h += k + (last ? 0 : 1);
        first = false;
    } while (*h);
}

void opt_usage(const struct opt_cmd *c, FILE *f)
{
    const char *s = c->synopsis ? c->synopsis : "[options]";
    bool first = true;
    do {
        size_t k = strcspn(s, "\n");
        fprintf(f, "%s tipc %s%s%.*s\n", first ? "usage:" : "   or:", c->name, k ? " " : "", (int)k, s);
        s += k + (s[k] ? 1 : 0);
        first = false;
    } while (*s);
    if (c->about) fprintf(f, "\n%s", c->about);
    fprintf(f, "\noptions:\n");
    bool any_env = false;
    for (const struct opt *o = c->opts; o && o->name; o++) {
        if (env_only(o)) any_env = true;
        else print_opt(o, f);
    }
    fprintf(f, "  -h, --help%*sshow this help\n", HELP_COL - 12, "");
    if (any_env) {
        fprintf(f, "\nenvironment:\n");
        for (const struct opt *o = c->opts; o && o->name; o++)
            if (env_only(o)) print_opt(o, f);
    }
    if (c->footer) fprintf(f, "\n%s", c->footer);
}
