/* inputs.c: resolve and check the input files of our configs' commands (inputs.h). */
#include "inputs.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config.h"
#include "../../core/check.h"
#include "../../core/banned.h"

static bool exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
}

/* The config's path made absolute and cleaned lexically ("a/./b/../c" -> "a/c"), symlinks kept: a
 * checkout's configs/ linked into a working directory belongs to that working directory. */
static char *absolute_clean(const char *path)
{
    char cwd[PATH_MAX];
    if (path[0] != '/' && !getcwd(cwd, sizeof cwd)) return NULL;
    char *joined = path[0] == '/' ? xstrdup(path) : xasprintf("%s/%s", cwd, path);
    size_t cap = strlen(joined) + 2, len = 0;
    char *out = xcalloc(1, cap), *save = NULL;
    for (char *part = strtok_r(joined, "/", &save); part; part = strtok_r(NULL, "/", &save)) {
        if (!strcmp(part, ".")) continue;
        if (!strcmp(part, "..")) {
            while (len > 0 && out[len - 1] != '/') len--;
            if (len > 0) len--;
            out[len] = 0;
            continue;
        }
        len += (size_t)snprintf(out + len, cap - len, "/%s", part);
    }
    if (!len) out[0] = '/';
    free(joined);
    return out;
}

/* The nearest folder at or above the config's that holds rel (absolute, malloc'ed), or NULL. */
static char *find_base(const char *config_path, const char *rel)
{
    char *abs = absolute_clean(config_path);
    if (!abs) return NULL;
    char *slash = strrchr(abs, '/');
    while (slash) {
        *slash = 0;
        char *cand = xasprintf("%s/%s", abs, rel);
        bool hit = exists(cand);
        free(cand);
        if (hit) return *abs ? abs : (free(abs), xstrdup("/"));
        slash = strrchr(abs, '/');
    }
    free(abs);
    return NULL;
}

static bool same_dir(const char *a, const char *b)
{
    struct stat sa, sb;
    return stat(a, &sa) == 0 && stat(b, &sb) == 0 && sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

/* Replace the first "<lead><old>" in *cmd by "<lead><new>" (the status line shows what runs). */
static void replace_in_cmd(char **cmd, const char *lead, const char *old, const char *new_path)
{
    char *pat = xasprintf("%s%s", lead, old), *hit = strstr(*cmd, pat);
    if (hit) {
        char *s = xasprintf("%.*s%s%s%s", (int)(hit - *cmd), *cmd, lead, new_path, hit + strlen(pat));
        free(*cmd);
        *cmd = s;
    }
    free(pat);
}

struct missing {
    char **v;   /* paths already reported: each once, however many commands read it */
    size_t n, cap;
};

static bool report_missing(struct missing *m, const struct stage *s, const struct tipc_config *cfg, const char *path)
{
    const char *config_path = cfg->path;
    int line = cfg_line_of(cfg, path, s->line);   /* the line that names it, not the command's first */
    for (size_t i = 0; i < m->n; i++)
        if (!strcmp(m->v[i], path)) return false;
    m->v = xgrow(m->v, sizeof *m->v, m->n + 1, &m->cap);
    m->v[m->n++] = xstrdup(path);
    if (path[0] == '/') error_at(TIPC_EUSAGE, config_path, line, "'%s' does not exist", path);
    else error_at(TIPC_EUSAGE, config_path, line, "'%s' does not exist in the config's folder, any folder above it "
                  "or the working directory", path);
    error_hint("paths in a config are relative to the folder that holds its configs/ (the repository root or "
               "PREFIX/share/tipc); see README \"Running from anywhere\"");
    return false;
}

/* One input word: resolve it in place; false (message printed once) when it is nowhere. */
static bool resolve_one(struct stage *s, const struct tipc_config *cfg, char **word, const char *prefix,
                        const char *lead, struct missing *m)
{
    const char *config_path = cfg->path;
    const char *path = *word + strlen(prefix);
    if (!*path) return true;
    if (path[0] == '/') return exists(path) || report_missing(m, s, cfg, path);
    char *base = find_base(config_path, path);
    if (!base)   /* the last place, where the original harness looks first: the working directory */
        return exists(path) || report_missing(m, s, cfg, path);
    if (!same_dir(base, ".")) {
        char *abs = xasprintf("%s%s%s", base, strcmp(base, "/") ? "/" : "", path);
        replace_in_cmd(&s->cmd, lead, path, abs);
        char *w = xasprintf("%s%s", prefix, abs);
        free(*word);
        *word = w;
        free(abs);
    }
    free(base);
    return true;
}

enum tipc_status plan_resolve_inputs(struct plan *p, const struct tipc_config *cfg)
{
    if (!p->ours) return TIPC_OK;
    int bad = 0;
    struct missing m = {0};
    for (int i = 0; i < p->n; i++) {
        struct stage *s = &p->st[i];
        if (s->kind == STAGE_NOTE) continue;
        char **av = s->cl.argv;
        for (int k = 0; k < s->cl.argc; k++) {
            if ((!strcmp(av[k], "-c") || !strcmp(av[k], "--img-path")) && k + 1 < s->cl.argc) {
                char *lead = xasprintf("%s ", av[k]);
                bad += !resolve_one(s, cfg, &av[k + 1], "", lead, &m);
                free(lead);
                k++;
            } else if (!strncmp(av[k], "--img-path=", 11)) {
                bad += !resolve_one(s, cfg, &av[k], "--img-path=", "--img-path=", &m);
            }
        }
    }
    for (size_t i = 0; i < m.n; i++) free(m.v[i]);
    free(m.v);
    return bad ? TIPC_EUSAGE : TIPC_OK;
}
