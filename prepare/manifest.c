/* manifest.c: libyaml's document API (the file is a few dozen lines), then a strict walk that
 * keeps every node's line for messages. See manifest.h for the format. */
#include "manifest.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#include "../core/sha256.h"
#include "../core/check.h"
#include "../core/regfile.h"
#include "../core/parse.h"
#include "../core/banned.h"

struct ctx { const char *path; yaml_document_t *doc; };

static int line_of(const yaml_node_t *n) { return (int)n->start_mark.line + 1; }

static yaml_node_t *node(struct ctx *c, int id) { return yaml_document_get_node(c->doc, id); }

static const char *scalar(const yaml_node_t *n)
{
    return n && n->type == YAML_SCALAR_NODE ? (const char *)n->data.scalar.value : NULL;
}

/* Value of `key` in mapping `map`, or NULL. */
static yaml_node_t *get(struct ctx *c, yaml_node_t *map, const char *key)
{
    if (!map || map->type != YAML_MAPPING_NODE) return NULL;
    for (yaml_node_pair_t *p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top; p++) {
        const char *k = scalar(node(c, p->key));
        if (k && !strcmp(k, key)) return node(c, p->value);
    }
    return NULL;
}

/* Every key of `map` must be one of `allowed` (NULL-terminated). */
static enum tipc_status only_keys(struct ctx *c, yaml_node_t *map, const char *const *allowed, const char *what)
{
    if (!map || map->type != YAML_MAPPING_NODE)
        return error_at(TIPC_EUSAGE, c->path, map ? line_of(map) : 0, "%s must be a mapping", what);
    for (yaml_node_pair_t *p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top; p++) {
        yaml_node_t *kn = node(c, p->key);
        const char *k = scalar(kn);
        int ok = 0;
        for (int i = 0; k && allowed[i]; i++) ok |= !strcmp(k, allowed[i]);
        if (!ok) return error_at(TIPC_EUSAGE, c->path, line_of(kn), "unknown key '%s' in %s", k ? k : "?", what);
    }
    return TIPC_OK;
}

static enum tipc_status get_int(struct ctx *c, yaml_node_t *map, const char *key, int min, int max, int *out)
{
    yaml_node_t *n = get(c, map, key);
    if (!n) return TIPC_OK;
    if (!scalar(n) || !parse_int(scalar(n), min, max, out))
        return error_at(TIPC_EUSAGE, c->path, line_of(n), "'%s' must be an integer in [%d, %d]", key, min, max);
    return TIPC_OK;
}

static enum tipc_status load_synth(struct ctx *c, yaml_node_t *n, struct synth_config *s)
{
    static const char *const keys[] = {"classes", "train_per_class", "val_per_class", "quality", "seed", NULL};
    synth_config_default(s);
    if (!n) return TIPC_OK;
    TRY(only_keys(c, n, keys, "'synthetic'"));
    int seed = (int)s->seed;
    TRY(get_int(c, n, "classes", 1, 1000, &s->classes));
    TRY(get_int(c, n, "train_per_class", 1, 100000, &s->train_per_class));
    TRY(get_int(c, n, "val_per_class", 1, 100000, &s->val_per_class));
    TRY(get_int(c, n, "quality", 1, 100, &s->quality));
    TRY(get_int(c, n, "seed", 0, 1 << 30, &seed));
    s->seed = (uint64_t)seed;
    return TIPC_OK;
}

static enum tipc_status load_urls(struct ctx *c, yaml_node_t *n, struct manifest_item *it)
{
    if (!n) return TIPC_OK;
    if (scalar(n)) {
        it->urls = xmalloc(sizeof *it->urls);
        it->urls[it->n_urls++] = xstrdup(scalar(n));
        return TIPC_OK;
    }
    if (n->type != YAML_SEQUENCE_NODE)
        return error_at(TIPC_EUSAGE, c->path, line_of(n), "'url' must be a string or a list of strings");
    int cnt = (int)(n->data.sequence.items.top - n->data.sequence.items.start);
    it->urls = xcalloc((size_t)cnt + 1, sizeof *it->urls);
    for (yaml_node_item_t *i = n->data.sequence.items.start; i < n->data.sequence.items.top; i++) {
        const char *u = scalar(node(c, *i));
        if (!u) return error_at(TIPC_EUSAGE, c->path, line_of(n), "'url' list must hold strings");
        it->urls[it->n_urls++] = xstrdup(u);
    }
    return TIPC_OK;
}

static char *dup_or_null(const char *s) { return s ? xstrdup(s) : NULL; }

static enum tipc_status load_item(struct ctx *c, const char *name, int line, yaml_node_t *n, struct manifest_item *it)
{
    static const char *const keys[] = {"kind", "url", "sha256", "size", "archive", "archive_root", "dest",
                                       "fallback", "synthetic", "note", NULL};
    char what[128];
    snprintf(what, sizeof what, "item '%s'", name);
    it->name = xstrdup(name);
    it->line = line;
    TRY(only_keys(c, n, keys, what));
    const char *kind = scalar(get(c, n, "kind")), *fb = scalar(get(c, n, "fallback"));
    const char *ar = scalar(get(c, n, "archive"));
    if (kind && strcmp(kind, "dataset") && strcmp(kind, "weights"))
        return error_at(TIPC_EUSAGE, c->path, it->line, "%s: kind must be 'dataset' or 'weights', not '%s'", what, kind);
    it->weights = kind && !strcmp(kind, "weights");
    if (ar && strcmp(ar, "none") && strcmp(ar, "tar") && strcmp(ar, "tar.gz") && strcmp(ar, "zip"))
        return error_at(TIPC_EUSAGE, c->path, it->line, "%s: archive must be none, tar, tar.gz or zip, not '%s'", what, ar);
    it->archive = xstrdup(ar ? ar : "none");
    if (!fb || !strcmp(fb, "error")) it->fallback = FALLBACK_ERROR;
    else if (!strcmp(fb, "synthetic")) it->fallback = FALLBACK_SYNTHETIC;
    else if (!strcmp(fb, "none")) it->fallback = FALLBACK_NONE;
    else return error_at(TIPC_EUSAGE, c->path, it->line, "%s: fallback must be synthetic, none or error, not '%s'", what, fb);
    if (it->fallback == FALLBACK_SYNTHETIC && it->weights)
        return error_at(TIPC_EUSAGE, c->path, it->line, "%s: weights cannot fall back to synthetic data", what);
    it->dest = dup_or_null(scalar(get(c, n, "dest")));
    if (!it->dest) return error_at(TIPC_EUSAGE, c->path, it->line, "%s has no 'dest'", what);
    it->archive_root = dup_or_null(scalar(get(c, n, "archive_root")));
    it->note = dup_or_null(scalar(get(c, n, "note")));
    it->sha256 = dup_or_null(scalar(get(c, n, "sha256")));
    const char *size = scalar(get(c, n, "size"));
    long sz = 0;
    if (size && !parse_long(size, 1, 1L << 50, &sz))
        return error_at(TIPC_EUSAGE, c->path, it->line, "%s: size must be a byte count in [1, 2^50], not '%s'", what, size);
    it->size = sz;
    TRY(load_urls(c, get(c, n, "url"), it));
    TRY(load_synth(c, get(c, n, "synthetic"), &it->synth));
    if (it->n_urls > 0 && (!it->sha256 || !sha256_is_hex(it->sha256)))
        return error_at(TIPC_EDATA, c->path, it->line, "%s has a url but no valid sha256 (64 hex digits); "
                        "refusing to use unverified downloads", what);
    if (it->n_urls > 0 && !it->weights && !strcmp(it->archive, "none"))
        return error_at(TIPC_EUSAGE, c->path, it->line, "%s: a dataset download needs 'archive' (tar, tar.gz or zip)", what);
    return TIPC_OK;
}

static int item_index(const struct manifest *m, const char *name)
{
    for (int i = 0; i < m->n_items; i++)
        if (!strcmp(m->items[i].name, name)) return i;
    return -1;
}

static enum tipc_status load_modes(struct ctx *c, yaml_node_t *n, struct manifest *m)
{
    if (!n || n->type != YAML_MAPPING_NODE)
        return error_at(TIPC_EUSAGE, c->path, n ? line_of(n) : 0, "model '%s': 'modes' must be a mapping", m->model);
    size_t cnt = (size_t)(n->data.mapping.pairs.top - n->data.mapping.pairs.start);
    m->modes = xcalloc(cnt, sizeof *m->modes);
    for (yaml_node_pair_t *p = n->data.mapping.pairs.start; p < n->data.mapping.pairs.top; p++) {
        struct manifest_mode *md = &m->modes[m->n_modes++];
        yaml_node_t *v = node(c, p->value);
        md->name = xstrdup(scalar(node(c, p->key)) ? scalar(node(c, p->key)) : "?");
        md->line = line_of(v);
        if (v->type != YAML_SEQUENCE_NODE)
            return error_at(TIPC_EUSAGE, c->path, md->line, "mode '%s' must list item names", md->name);
        md->items = xcalloc((size_t)(v->data.sequence.items.top - v->data.sequence.items.start) + 1, sizeof(int));
        for (yaml_node_item_t *i = v->data.sequence.items.start; i < v->data.sequence.items.top; i++) {
            const char *name = scalar(node(c, *i));
            int idx = name ? item_index(m, name) : -1;
            if (idx < 0)
                return error_at(TIPC_EUSAGE, c->path, md->line, "mode '%s' names unknown item '%s'", md->name, name ? name : "?");
            md->items[md->n++] = idx;
        }
    }
    return TIPC_OK;
}

static enum tipc_status load_model(struct ctx *c, yaml_node_t *mn, struct manifest *m)
{
    static const char *const keys[] = {"items", "modes", NULL};
    TRY(only_keys(c, mn, keys, "a model"));
    yaml_node_t *items = get(c, mn, "items");
    if (!items || items->type != YAML_MAPPING_NODE)
        return error_at(TIPC_EUSAGE, c->path, line_of(mn), "model '%s' has no 'items' mapping", m->model);
    size_t cnt = (size_t)(items->data.mapping.pairs.top - items->data.mapping.pairs.start);
    m->items = xcalloc(cnt, sizeof *m->items);
    for (yaml_node_pair_t *p = items->data.mapping.pairs.start; p < items->data.mapping.pairs.top; p++) {
        const char *name = scalar(node(c, p->key));
        TRY(load_item(c, name ? name : "?", line_of(node(c, p->key)), node(c, p->value), &m->items[m->n_items++]));
    }
    return load_modes(c, get(c, mn, "modes"), m);
}

static enum tipc_status parse_doc(struct ctx *c, struct manifest *m)
{
    static const char *const keys[] = {"version", "models", NULL};
    yaml_node_t *root = yaml_document_get_root_node(c->doc);
    if (!root) return error_at(TIPC_EUSAGE, c->path, 0, "empty manifest");
    TRY(only_keys(c, root, keys, "the manifest"));
    const char *ver = scalar(get(c, root, "version"));
    if (ver && strcmp(ver, "1"))
        return error_at(TIPC_EUSAGE, c->path, line_of(root), "manifest version %s is not supported (this tipc reads 1)", ver);
    yaml_node_t *mn = get(c, get(c, root, "models"), m->model);
    if (!mn) {
        error_at(TIPC_EUSAGE, c->path, 0, "no entry for model '%s'", m->model);
        error_hint("add it under 'models:' (see docs/data.md), or pass --manifest FILE");
        return TIPC_EUSAGE;
    }
    return load_model(c, mn, m);
}

enum tipc_status manifest_load(struct manifest *m, const char *path, const char *model)
{
    memset(m, 0, sizeof *m);
    m->path = xstrdup(path);
    m->model = xstrdup(model);
    char why[160];
    FILE *f = fopen_regular(path, REGFILE_MAX_TEXT, why, sizeof why);
    if (!f) return error_msg(TIPC_EUSAGE, "cannot read manifest '%s': %s", path, why);
    yaml_parser_t parser;
    yaml_document_t doc;
    yaml_parser_initialize(&parser);
    yaml_parser_set_input_file(&parser, f);
    enum tipc_status st;
    if (!yaml_parser_load(&parser, &doc)) {
        st = error_at(TIPC_EUSAGE, path, (int)parser.problem_mark.line + 1, "bad YAML: %s",
                      parser.problem ? parser.problem : "parse error");
    } else {
        struct ctx c = {path, &doc};
        st = parse_doc(&c, m);
        yaml_document_delete(&doc);
    }
    yaml_parser_delete(&parser);
    fclose(f);
    return st;
}

const struct manifest_mode *manifest_find_mode(const struct manifest *m, const char *mode)
{
    for (int i = 0; i < m->n_modes; i++)
        if (!strcmp(m->modes[i].name, mode)) return &m->modes[i];
    return NULL;
}

void manifest_free(struct manifest *m)
{
    for (int i = 0; i < m->n_items; i++) {
        struct manifest_item *it = &m->items[i];
        for (int j = 0; j < it->n_urls; j++) free(it->urls[j]);
        free(it->urls); free(it->name); free(it->sha256); free(it->archive);
        free(it->archive_root); free(it->dest); free(it->note);
    }
    for (int i = 0; i < m->n_modes; i++) { free(m->modes[i].name); free(m->modes[i].items); }
    free(m->items); free(m->modes); free(m->path); free(m->model);
    memset(m, 0, sizeof *m);
}
