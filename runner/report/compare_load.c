/* compare_load.c: one side of `tipc compare` (compare.h): the speed records or metrics files a path
 * holds, as (case, figure, value) samples, one run per file. */
#include "compare.h"

#include <dirent.h>
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "../../core/check.h"
#include "../../core/regfile.h"
#include "../../core/banned.h"

#define WALK_DEPTH 8
#define WALK_MAX_FILES 100000

struct paths { char **p; int n; size_t cap; };

static void paths_add(struct paths *ps, const char *p)
{
    ps->p = xgrow(ps->p, sizeof *ps->p, (size_t)ps->n + 1, &ps->cap);
    ps->p[ps->n++] = xstrdup(p);
}

static bool is_record_name(const char *path)
{
    const char *slash = strrchr(path, '/'), *base = slash ? slash + 1 : path;
    size_t n = strlen(base);
    if (n <= 6 || strcmp(base + n - 6, "_speed")) return false;
    /* ... in a folder named index */
    return slash && slash - path >= 5 && !strncmp(slash - 5, "index", 5) && (slash - path == 5 || slash[-6] == '/');
}

/* Every speed record and metrics.jsonl under dir (symbolic links not followed). */
static void walk(const char *dir, int depth, struct paths *rec, struct paths *met)
{
    if (depth > WALK_DEPTH || rec->n + met->n > WALK_MAX_FILES) return;
    DIR *d = opendir(dir);
    if (!d) return;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
        char *p = xasprintf("%s/%s", dir, e->d_name);
        struct stat sb;
        if (lstat(p, &sb) == 0 && S_ISDIR(sb.st_mode)) walk(p, depth + 1, rec, met);
        else if (S_ISREG(sb.st_mode) && is_record_name(p)) paths_add(rec, p);
        else if (S_ISREG(sb.st_mode) && !strcmp(e->d_name, "metrics.jsonl")) paths_add(met, p);
        free(p);
    }
    closedir(d);
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

static void add(struct cmp_set *set, const char *case_name, enum cmp_figure fig, double v, const char *unit)
{
    set->s = xgrow(set->s, sizeof *set->s, (size_t)set->n + 1, &set->cap);
    set->s[set->n++] = (struct cmp_sample){xstrdup(case_name), fig, v, xstrdup(unit ? unit : ""), set->runs};
}

static enum tipc_status load_record(struct cmp_set *set, const char *path)
{
    json_error_t err;
    json_t *o = json_load_file(path, 0, &err);
    const char *model = json_string_value(json_object_get(o, "model_name"));
    const char *dev = json_string_value(json_object_get(o, "device_num"));
    json_t *ips = json_object_get(o, "ips");
    if (!json_is_object(o) || !model || !json_is_number(ips)) {
        json_decref(o);
        return error_at(TIPC_EUSAGE, path, err.line > 0 ? err.line : 0, "not a speed record (a JSON object with "
                        "model_name and ips, as `tipc speed` and analysis.py write): %s",
                        json_is_object(o) ? "model_name or ips missing" : err.text);
    }
    const char *slash = strrchr(path, '/');
    bool d2s = strstr(slash ? slash : path, "_d2sT_speed") != NULL;
    char *name = xasprintf("%s %s%s", model, dev ? dev : "", d2s ? " d2sT" : "");
    const char *unit = json_string_value(json_object_get(o, "speed_unit"));
    double v = json_number_value(ips);
    /* ips 0 with no unit: analysis found too few values; not a speed */
    add(set, name, FIG_IPS, v > 0 && isfinite(v) && unit && *unit ? v : NAN, unit);
    json_t *loss = json_object_get(o, "convergence_value");
    const char *ls = json_string_value(loss);
    char *end;
    double lv = ls ? strtod(ls, &end) : NAN;
    if (ls && *ls && !*end) add(set, name, FIG_LOSS, lv, "");
    free(name);
    json_decref(o);
    set->runs++;
    return TIPC_OK;
}

/* The per-stage figures of one metrics file. Ranks: this node's (a node's file holds its ranks). */
struct ep { int rank; double secs, images; };
struct mstage {
    char *name;
    struct ep *ep;
    int nep;
    size_t cap;
    int low_rank, world, nranks;
    unsigned long long seen[4];    /* ranks 0..255 seen in train_start */
    double loss, top1, cpu;
    int loss_rank;
    bool has_loss, has_top1;
};

static struct mstage *mstage_get(struct mstage **ms, int *n, size_t *cap, const char *name)
{
    for (int i = 0; i < *n; i++)
        if (!strcmp((*ms)[i].name, name)) return &(*ms)[i];
    *ms = xgrow(*ms, sizeof **ms, (size_t)*n + 1, cap);
    struct mstage *m = &(*ms)[(*n)++];
    memset(m, 0, sizeof *m);
    m->name = xstrdup(name);
    m->low_rank = m->loss_rank = 1 << 30;
    m->cpu = -1;
    return m;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* A benchmark_train training stage, MODEL.benchmark_train.train[bsN_FP_RUN_NxCy[_d2sT][ repeat=K]], is
 * named like its speed record's case, MODEL_bsN_FP_RUN NxCy[ d2sT], so both files' figures meet. The
 * profiling runs keep their stage names. Malloc'ed. */
static char *case_of_stage(const char *stage)
{
    const char *mid = strstr(stage, ".benchmark_train.train["), *end = strrchr(stage, ']');
    if (!mid || !end || end < mid) return xstrdup(stage);
    const char *tag = mid + strlen(".benchmark_train.train[");
    size_t tl = (size_t)(end - tag);
    const char *sp = memchr(tag, ' ', tl);
    if (sp && strncmp(sp, " repeat=", 8)) return xstrdup(stage);   /* " profiling" */
    if (sp) tl = (size_t)(sp - tag);
    char *t = xstrndup(tag, tl);
    bool d2s = tl > 5 && !strcmp(t + tl - 5, "_d2sT");
    if (d2s) t[tl - 5] = 0;
    char *us = strrchr(t, '_'), *res;
    if (!us) res = xstrdup(stage);
    else *us = 0, res = xasprintf("%.*s_%s %s%s", (int)(mid - stage), stage, t, us + 1, d2s ? " d2sT" : "");
    free(t);
    return res;
}

static void metrics_event(struct mstage **ms, int *nms, size_t *mcap, json_t *o)
{
    const char *ev = json_string_value(json_object_get(o, "event"));
    const char *stage = json_string_value(json_object_get(o, "stage"));
    if (ev && !strcmp(ev, "stage")) {   /* tipc run's own: the stage's CPU seconds */
        const char *name = json_string_value(json_object_get(o, "name"));
        const char *kind = json_string_value(json_object_get(o, "kind"));
        json_t *cpu = json_object_get(o, "cpu_s");
        if (name && kind && !strcmp(kind, "train") && json_is_number(cpu))
            mstage_get(ms, nms, mcap, name)->cpu = json_number_value(cpu);
        return;
    }
    if (!ev || !stage) return;
    struct mstage *m = mstage_get(ms, nms, mcap, stage);
    int rank = (int)json_integer_value(json_object_get(o, "rank"));
    if (!strcmp(ev, "train_start")) {
        m->world = (int)json_integer_value(json_object_get(o, "world"));
        if (rank >= 0 && rank < 256 && !(m->seen[rank / 64] >> (rank % 64) & 1)) m->seen[rank / 64] |= 1ull << (rank % 64), m->nranks++;
        if (rank < m->low_rank) m->low_rank = rank;
    } else if (!strcmp(ev, "epoch")) {
        m->ep = xgrow(m->ep, sizeof *m->ep, (size_t)m->nep + 1, &m->cap);
        m->ep[m->nep++] = (struct ep){rank, json_number_value(json_object_get(o, "seconds")),
                                     json_number_value(json_object_get(o, "images"))};
    } else if (!strcmp(ev, "train_step") && rank <= m->loss_rank) {   /* the lowest rank's last */
        m->loss = json_number_value(json_object_get(o, "loss")), m->has_loss = true, m->loss_rank = rank;
    } else if (!strcmp(ev, "eval")) {
        m->top1 = json_number_value(json_object_get(o, "top1")), m->has_top1 = true;
    }
}

/* ips: the node's lowest rank's epochs (images of all ranks / seconds), the median of those after
 * the first when there are several; cpu_ips: this node's share of the images per CPU second. */
static void metrics_figures(struct cmp_set *set, struct mstage *m, bool cpu_only)
{
    double *v = xmalloc(sizeof *v * (size_t)(m->nep + 1)), images = 0;
    int k = 0;
    for (int i = 0; i < m->nep; i++)
        if (m->ep[i].rank == m->low_rank && m->ep[i].secs > 0) v[k++] = m->ep[i].images / m->ep[i].secs, images += m->ep[i].images;
    char *name = case_of_stage(m->name);
    if (k && !cpu_only) {
        int skip = k > 1;
        qsort(v + skip, (size_t)(k - skip), sizeof *v, cmp_double);
        int c = k - skip;
        add(set, name, FIG_IPS, c % 2 ? v[skip + c / 2] : (v[skip + c / 2 - 1] + v[skip + c / 2]) / 2, "images/s");
    }
    if (k && m->cpu > 0 && m->world > 0 && m->nranks > 0)
        add(set, name, FIG_CPU, images * m->nranks / m->world / m->cpu, "images/cpu-s");
    if (m->has_loss && !cpu_only) add(set, name, FIG_LOSS, m->loss, "");
    if (m->has_top1) add(set, name, FIG_TOP1, m->top1, "%");
    free(name);
    free(v);
}

static enum tipc_status load_metrics(struct cmp_set *set, const char *path, bool cpu_only)
{
    char why[160];
    FILE *f = fopen_regular(path, 1u << 30, why, sizeof why);
    if (!f) return error_at(TIPC_EIO, path, 0, "cannot read metrics: %s", why);
    struct mstage *ms = NULL;
    int nms = 0;
    size_t mcap = 0, cap = 0;
    char *line = NULL;
    while (getline(&line, &cap, f) > 0) {
        json_t *o = json_loads(line, 0, NULL);
        if (json_is_object(o)) metrics_event(&ms, &nms, &mcap, o);
        json_decref(o);
    }
    free(line);
    fclose(f);
    for (int i = 0; i < nms; i++) {
        metrics_figures(set, &ms[i], cpu_only);
        free(ms[i].name);
        free(ms[i].ep);
    }
    free(ms);
    if (!set->metrics) set->metrics = xstrdup(path);
    if (!cpu_only) set->runs++;
    return TIPC_OK;
}

/* A file: a record is one JSON object with model_name; anything else is read as metrics lines. */
static enum tipc_status load_file(struct cmp_set *set, const char *path)
{
    json_error_t err;
    json_t *o = json_load_file(path, JSON_DISABLE_EOF_CHECK, &err);
    bool record = json_is_object(o) && json_object_get(o, "model_name") && !json_object_get(o, "event");
    json_decref(o);
    if (record) set->records = true;
    /* after records, a metrics file adds only what records lack: CPU time (and top-1) */
    return record ? load_record(set, path) : load_metrics(set, path, set->records);
}

enum tipc_status compare_load(const char *path, struct cmp_set *set)
{
    memset(set, 0, sizeof *set);
    struct stat sb;
    if (stat(path, &sb) != 0) return error_msg(TIPC_EUSAGE, "compare: '%s': %s", path, strerror(errno));
    if (!S_ISDIR(sb.st_mode)) return load_file(set, path);
    struct paths rec = {0}, met = {0};
    walk(path, 0, &rec, &met);
    struct paths *use = rec.n ? &rec : &met;
    set->records = rec.n > 0;
    if (use->n > 1) qsort(use->p, (size_t)use->n, sizeof *use->p, cmp_str);
    enum tipc_status st = TIPC_OK;
    for (int i = 0; i < use->n && st == TIPC_OK; i++)
        st = rec.n ? load_record(set, use->p[i]) : load_metrics(set, use->p[i], false);
    /* beside records, the run's metrics give the CPU seconds of each training (and the curves) */
    if (met.n > 1) qsort(met.p, (size_t)met.n, sizeof *met.p, cmp_str);
    for (int i = 0; rec.n && i < met.n && st == TIPC_OK; i++) st = load_metrics(set, met.p[i], true);
    for (int i = 0; i < rec.n; i++) free(rec.p[i]);
    for (int i = 0; i < met.n; i++) free(met.p[i]);
    free(rec.p), free(met.p);
    if (st == TIPC_OK && !set->runs)
        st = error_msg(TIPC_EUSAGE, "compare: '%s' holds no speed record (index/*_speed) and no metrics.jsonl", path);
    return st;
}

enum tipc_status compare_load_files(const char *const *files, int n, struct cmp_set *set)
{
    memset(set, 0, sizeof *set);
    enum tipc_status st = TIPC_OK;
    for (int i = 0; i < n && st == TIPC_OK; i++) st = load_file(set, files[i]);
    return st;
}

void cmp_set_free(struct cmp_set *set)
{
    for (int i = 0; i < set->n; i++) free(set->s[i].case_name), free(set->s[i].unit);
    free(set->s);
    free(set->metrics);
    memset(set, 0, sizeof *set);
}
