/* engine_flags.c: see engine_flags.h. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine_flags.h"
#include "../core/check.h"
#include "../core/parse.h"
#include "../core/banned.h"

void flag_list_free(struct flag_list *l)
{
    if (!l) return;
    free(l->v);
    memset(l, 0, sizeof *l);
}

static const struct flag *find_flag(const struct flag *tbl, const char *arg, size_t len)
{
    for (const struct flag *f = tbl; f->name; f++) {
        if (strlen(f->name) == len && !strncmp(f->name, arg, len)) return f;
        if (f->alias && strlen(f->alias) == len && !strncmp(f->alias, arg, len)) return f;
        /* underscores and dashes are the same (--amp_level / --amp-level) */
        if (strlen(f->name) == len) {
            size_t i = 0;
            for (; i < len; i++) {
                char a = arg[i] == '_' ? '-' : arg[i], b = f->name[i] == '_' ? '-' : f->name[i];
                if (a != b) break;
            }
            if (i == len) return f;
        }
    }
    return NULL;
}

static enum tipc_status set_value(const char *cmd, const struct flag *f, const char *v)
{
    switch (f->type) {
    case FLAG_STR: *(const char **)f->dst = v; break;
    case FLAG_INT:
        if (!parse_int(v, -2000000000, 2000000000, f->dst))
            return error_msg(TIPC_EUSAGE, "%s: option '%s' needs an integer, got '%s'", cmd, f->name, v);
        if (f->min < f->max && (*(int *)f->dst < f->min || *(int *)f->dst > f->max))
            return error_msg(TIPC_EUSAGE, "%s: option '%s' must be in %.0f..%.0f, got %s", cmd, f->name, f->min,
                             f->max, v);
        break;
    case FLAG_DOUBLE:
        if (!parse_double(v, f->dst))
            return error_msg(TIPC_EUSAGE, "%s: option '%s' needs a number, got '%s'", cmd, f->name, v);
        if (f->min < f->max && !(*(double *)f->dst >= f->min && *(double *)f->dst <= f->max))
            return error_msg(TIPC_EUSAGE, "%s: option '%s' must be in %.15g..%.15g, got %s", cmd, f->name, f->min, f->max,
                             v);
        break;
    case FLAG_BOOL:
    case FLAG_SWITCH:
        if (!parse_bool(v, f->dst))
            return error_msg(TIPC_EUSAGE, "%s: option '%s' needs True or False, got '%s'", cmd, f->name, v);
        break;
    case FLAG_LIST: {
        struct flag_list *l = f->dst;
        l->v = xgrow(l->v, sizeof *l->v, (size_t)l->n + 1, &l->cap);
        l->v[l->n++] = (char *)v;
        break;
    }
    }
    if (f->seen) *f->seen = true;
    return TIPC_OK;
}

enum tipc_status flags_parse(const char *cmd, const char *usage, int argc, char **argv,
                             const struct flag *tbl, bool *help)
{
    int npos = 0;
    return flags_parse_args(cmd, usage, argc, argv, tbl, help, NULL, 0, &npos);
}

enum tipc_status flags_parse_args(const char *cmd, const char *usage, int argc, char **argv,
                                  const struct flag *tbl, bool *help, const char **pos, int maxpos, int *npos)
{
    *help = false;
    *npos = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            fputs(usage, stdout);
            *help = true;
            return TIPC_OK;
        }
        if (a[0] != '-') {
            if (*npos >= maxpos) return error_msg(TIPC_EUSAGE, "%s: unexpected argument '%s'", cmd, a);
            pos[(*npos)++] = a;
            continue;
        }
        const char *eq = strchr(a, '=');
        size_t len = eq ? (size_t)(eq - a) : strlen(a);
        const struct flag *f = find_flag(tbl, a, len);
        if (!f) {
            error_msg(TIPC_EUSAGE, "%s: unknown option '%.*s'", cmd, (int)len, a);
            error_hint("see 'tipc help %s'", cmd);
            return TIPC_EUSAGE;
        }
        const char *v;
        if (eq)
            v = eq + 1;
        else if (f->type == FLAG_SWITCH)
            v = "true";
        else if (i + 1 < argc)
            v = argv[++i];
        else
            return error_msg(TIPC_EUSAGE, "%s: option '%s' needs a value", cmd, f->name);
        TRY(set_value(cmd, f, v));
    }
    return TIPC_OK;
}
