/* config.c: the TIPC line-keyed config reader (see config.h for the exact semantics). */
#include "config.h"
#include "../../core/regfile.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../core/check.h"
#include "../../core/sha256.h"
#include "../../core/strv.h"
#include "../../core/banned.h"

#define CFG_MAX_BYTES (4 << 20) /* a TIPC config is a few KB; refuse anything absurd */

static const struct cfg_entry empty_entry = {"", "", "", false, 0};

const struct cfg_entry *cfg_at(const struct tipc_config *cfg, int i)
{
    if (i < 0 || i >= cfg->n) return &empty_entry;
    return &cfg->e[i];
}

void cfg_free(struct tipc_config *cfg)
{
    if (!cfg) return;
    for (int i = 0; i < cfg->n; i++) {
        free(cfg->e[i].raw);
        free(cfg->e[i].key);
        free(cfg->e[i].value);
    }
    free(cfg->e);
    free(cfg->path);
    memset(cfg, 0, sizeof *cfg);
}

static void add_entry(struct tipc_config *cfg, size_t *cap, const char *s, size_t len, int line)
{
    cfg->e = xgrow(cfg->e, sizeof *cfg->e, (size_t)cfg->n + 1, cap);
    struct cfg_entry *e = &cfg->e[cfg->n++];
    e->raw = xstrndup(s, len);
    e->line = line;
    const char *colon = memchr(s, ':', len);
    e->has_colon = colon != NULL;
    if (colon) {
        e->key = xstrndup(s, (size_t)(colon - s));
        e->value = xstrndup(colon + 1, len - (size_t)(colon - s) - 1);
    } else {
        e->key = xstrndup(s, len);
        e->value = xstrdup("");
    }
}

/* The layout is told by where `trainer:` sits: entry 12 (line 13) in Step6 files, entry 14
 * (line 15) in the 51-line template. */
static int find_family(const struct tipc_config *cfg)
{
    if (cfg->n > 12 && !strcmp(cfg->e[12].key, "trainer")) return CFG_STEP6;
    if (cfg->n > 14 && !strcmp(cfg->e[14].key, "trainer")) return CFG_FULL;
    return 0;
}

enum tipc_status cfg_parse(struct tipc_config *cfg, const char *path, const char *text, size_t len)
{
    return cfg_parse_opts(cfg, path, text, len, 0);
}

enum tipc_status cfg_parse_opts(struct tipc_config *cfg, const char *path, const char *text, size_t len,
                                unsigned flags)
{
    memset(cfg, 0, sizeof *cfg);
    sha256_hex(text, len, cfg->sha256);
    size_t cap = 0;
    int line = 0;
    size_t pos = 0;
    while (pos < len) {
        line++;
        const char *s = text + pos;
        const char *nl = memchr(s, '\n', len - pos);
        size_t l = nl ? (size_t)(nl - s) : len - pos;
        pos += l + (nl ? 1 : 0);
        if (memchr(s, '\0', l)) {
            cfg_free(cfg);
            return error_at(TIPC_EUSAGE, path, line, "NUL byte in line; is this a text config file?");
        }
        if (l == 0) continue; /* empty lines vanish in the original's word splitting */
        add_entry(cfg, &cap, s, l, line);
    }
    cfg->nlines = line;
    cfg->path = xstrdup(path);

    int fam = find_family(cfg);
    if (!fam) {
        int at = cfg->n > 12 ? cfg->e[12].line : (cfg->n ? cfg->e[cfg->n - 1].line : 1);
        int n = cfg->n;
        cfg_free(cfg);
        if (n < 13)
            return error_at(TIPC_EUSAGE, path, at,
                            "too few lines: %d non-empty line%s, a TIPC train config has 32 or 51", n,
                            n == 1 ? "" : "s");
        return error_at(TIPC_EUSAGE, path, at,
                        "not a TIPC train config: expected 'trainer:' on non-empty line 13 (32-line "
                        "Step6 layout) or 15 (51-line layout)");
    }
    cfg->family = (enum cfg_family)fam;
    /* The harness reads physical lines 1..N only; later lines (benchmark sections) are ignored.
     * PaddleClas's and PaddleOCR f773's harnesses read the whole file. */
    int keep = 0;
    while (keep < cfg->n && (cfg->e[keep].line <= fam || (flags & CFG_ALL_LINES))) keep++;
    for (int i = keep; i < cfg->n; i++) {
        free(cfg->e[i].raw);
        free(cfg->e[i].key);
        free(cfg->e[i].value);
    }
    cfg->n = keep;
    if (cfg->n < fam && fam == CFG_FULL && (flags & CFG_ALLOW_SHORT)) {
        cfg->short_layout = true; /* a train-only config: what is missing reads as empty */
        return TIPC_OK;
    }
    if (cfg->n < fam) {
        int at = cfg->n ? cfg->e[cfg->n - 1].line : 1;
        int n = cfg->n;
        cfg_free(cfg);
        return error_at(TIPC_EUSAGE, path, at,
                        "too few lines: %d non-empty lines in the first %d, the %d-line layout needs %d "
                        "(empty lines do not count)%s", n, fam, fam, fam,
                        fam == CFG_FULL ? "; PaddleClas's train-only configs run with --dialect clas" : "");
    }
    return TIPC_OK;
}

enum tipc_status cfg_load(struct tipc_config *cfg, const char *path)
{
    return cfg_load_opts(cfg, path, 0);
}

enum tipc_status cfg_load_opts(struct tipc_config *cfg, const char *path, unsigned flags)
{
    memset(cfg, 0, sizeof *cfg);
    char why[160];
    FILE *f = fopen_regular(path, 0, why, sizeof why);   /* size: bounded below, CFG_MAX_BYTES */
    if (!f) return error_at(TIPC_EUSAGE, path, 0, "cannot open config: %s", why);
    char *buf = NULL;
    size_t len = 0, cap = 0;
    for (;;) {
        buf = xgrow(buf, 1, len + 4096, &cap);
        size_t r = fread(buf + len, 1, cap - len, f);
        len += r;
        if (r == 0) break;
        if (len > CFG_MAX_BYTES) {
            fclose(f);
            free(buf);
            return error_at(TIPC_EUSAGE, path, 0, "config is larger than %d bytes", CFG_MAX_BYTES);
        }
    }
    int err = ferror(f);
    fclose(f);
    if (err) {
        free(buf);
        return error_at(TIPC_EUSAGE, path, 0, "cannot read config: %s", strerror(errno ? errno : EIO));
    }
    enum tipc_status st = cfg_parse_opts(cfg, path, buf, len, flags);
    free(buf);
    return st;
}

int cfg_split(const char *s, char sep, char ***out)
{
    struct strv v = STRV_INIT;
    strv_split(&v, s, sep, true);   /* a trailing separator ends it with no extra field */
    *out = v.v;
    return (int)v.n;
}

char *cfg_mode_value(const char *value, const char *mode)
{
    char **items;
    int n = cfg_split(value, '|', &items);
    char *res = NULL;
    for (int i = 0; i < n && !res; i++) {
        char **kv;
        int m = cfg_split(items[i], '=', &kv);
        if (m >= 1 && !strcmp(kv[0], mode)) res = xstrdup(m >= 2 ? kv[1] : "");
        strv_free(kv);
    }
    strv_free(items);
    return res ? res : xstrdup("");
}

char *cfg_set_param(const char *key, const char *value)
{
    if (!strcmp(key, "null") || !strcmp(value, "null") || !strcmp(value, " ") || !*value)
        return xstrdup(" ");
    return xasprintf("%s=%s", key, value);
}

int cfg_line_of(const struct tipc_config *cfg, const char *word, int fallback)
{
    if (!word || !*word) return fallback;
    size_t n = strcspn(word, "=");
    for (int i = 0; i < cfg->n; i++)
        if (strlen(cfg->e[i].key) == n && !strncmp(cfg->e[i].key, word, n)) return cfg->e[i].line;
    size_t len = strlen(word);
    for (int i = 0; i < cfg->n; i++)
        for (const char *v = strstr(cfg->e[i].value, word); v; v = strstr(v + 1, word)) {
            char after = v[len];
            if ((v == cfg->e[i].value || v[-1] == ' ') && (after == 0 || after == ' ')) return cfg->e[i].line;
        }
    return fallback;
}
