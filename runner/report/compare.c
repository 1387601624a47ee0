/* compare.c: the gate's judgement and its table (compare.h). The rule a person can check by hand:
 * change = new median against baseline median; limit = the larger of the threshold and the spread
 * either side's repeats show; worse than the limit is a regression. */
#include "compare.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../../core/check.h"
#include "../../core/banned.h"

void cmp_thresholds_default(struct cmp_thresholds *t)
{
    t->ips_drop = 5, t->cpu_drop = 5, t->loss_rise = 5, t->top1_drop = 1;
}

const char *cmp_figure_name(enum cmp_figure f)
{
    return f == FIG_IPS ? "ips" : f == FIG_CPU ? "cpu_ips" : f == FIG_LOSS ? "loss" : f == FIG_TOP1 ? "top1" : "?";
}

const char *cmp_verdict_name(enum cmp_verdict v)
{
    switch (v) {
    case CMP_OK: return "ok";
    case CMP_NOISE: return "within noise";
    case CMP_REGRESSION: return "REGRESSION";
    case CMP_MISSING: return "MISSING";
    case CMP_INVALID: return "INVALID";
    case CMP_NEW: return "new";
    }
    return "?";
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* Median and spread of the finite values; NaN median when there is none. */
static void side_stats(struct cmp_side *s, enum cmp_figure fig)
{
    double *v = xmalloc(sizeof *v * (size_t)(s->n + 1));
    int k = 0;
    for (int i = 0; i < s->n; i++)
        if (isfinite(s->v[i])) v[k++] = s->v[i];
    s->median = NAN, s->spread = 0;
    if (k) {
        qsort(v, (size_t)k, sizeof *v, cmp_double);
        s->median = k % 2 ? v[k / 2] : (v[k / 2 - 1] + v[k / 2]) / 2;
        double range = v[k - 1] - v[0];
        s->spread = fig == FIG_TOP1 ? range : s->median != 0 ? 100 * range / fabs(s->median) : 0;
    }
    free(v);
}

static struct cmp_row *row_get(struct cmp_result *res, const char *name, enum cmp_figure fig, const char *unit)
{
    for (int i = 0; i < res->n; i++)
        if (res->row[i].fig == fig && !strcmp(res->row[i].case_name, name)) return &res->row[i];
    res->row = xgrow(res->row, sizeof *res->row, (size_t)res->n + 1, &res->cap);
    struct cmp_row *r = &res->row[res->n++];
    memset(r, 0, sizeof *r);
    r->case_name = xstrdup(name);
    r->fig = fig;
    r->unit = xstrdup(unit);
    return r;
}

static void side_add(struct cmp_side *s, double v)
{
    s->v = xrealloc(s->v, sizeof *s->v * (size_t)(s->n + 1));
    s->v[s->n++] = v;
}

static void judge(struct cmp_row *r, const struct cmp_thresholds *th)
{
    side_stats(&r->base, r->fig);
    side_stats(&r->now, r->fig);
    if (!r->now.n) { r->verdict = CMP_MISSING; return; }
    if (!r->base.n || isnan(r->base.median)) { r->verdict = CMP_NEW; return; }
    if (isnan(r->now.median)) { r->verdict = CMP_INVALID; return; }
    double noise = r->base.spread > r->now.spread ? r->base.spread : r->now.spread;
    bool worse, beyond_th;
    if (r->fig == FIG_TOP1) {
        r->change = r->now.median - r->base.median;
        r->limit = -(th->top1_drop > noise ? th->top1_drop : noise);
        worse = r->change < r->limit, beyond_th = r->change < -th->top1_drop;
    } else {
        double b = r->base.median;
        r->change = b != 0 ? 100 * (r->now.median - b) / fabs(b) : r->now.median == b ? 0 : INFINITY;
        if (r->fig == FIG_IPS || r->fig == FIG_CPU) {   /* lower is worse */
            double t = r->fig == FIG_IPS ? th->ips_drop : th->cpu_drop;
            r->limit = -(t > noise ? t : noise);
            worse = r->change < r->limit, beyond_th = r->change < -t;
        } else {                   /* loss: higher is worse */
            r->limit = th->loss_rise > noise ? th->loss_rise : noise;
            worse = r->change > r->limit, beyond_th = r->change > th->loss_rise;
        }
    }
    r->verdict = worse ? CMP_REGRESSION : beyond_th ? CMP_NOISE : CMP_OK;
}

static char *describe(const char *path, const struct cmp_set *s)
{
    return xasprintf("%s (%d %s)", path, s->runs, s->records ? (s->runs == 1 ? "speed record" : "speed records")
                                                             : (s->runs == 1 ? "metrics file" : "metrics files"));
}

static enum tipc_status judge_sets(const char *base, struct cmp_set *b, const char *now, struct cmp_set *n,
                                   const struct cmp_thresholds *th, struct cmp_result *res)
{
    memset(res, 0, sizeof *res);
    res->th = *th;
    if (b->records != n->records)
        return error_msg(TIPC_EUSAGE, "compare: '%s' holds %s but '%s' holds %s: compare records with records, "
                         "metrics with metrics", base, b->records ? "speed records" : "metrics files", now,
                         n->records ? "speed records" : "metrics files");
    /* one value per run and figure: every sample is one run of its case */
    for (int i = 0; i < b->n; i++) side_add(&row_get(res, b->s[i].case_name, b->s[i].fig, b->s[i].unit)->base, b->s[i].value);
    for (int i = 0; i < n->n; i++) side_add(&row_get(res, n->s[i].case_name, n->s[i].fig, n->s[i].unit)->now, n->s[i].value);
    for (int i = 0; i < res->n; i++) {
        judge(&res->row[i], th);
        enum cmp_verdict v = res->row[i].verdict;
        res->regressions += v == CMP_REGRESSION, res->invalid += v == CMP_INVALID;
        res->missing += v == CMP_MISSING, res->noise += v == CMP_NOISE;
    }
    res->base_what = describe(base, b), res->new_what = describe(now, n);
    if (b->metrics) res->base_metrics = xstrdup(b->metrics);
    return TIPC_OK;
}

enum tipc_status compare_paths(const char *base, const char *now, const struct cmp_thresholds *th,
                               struct cmp_result *res)
{
    memset(res, 0, sizeof *res);
    struct cmp_set b, n;
    TRY(compare_load(base, &b));
    enum tipc_status st = compare_load(now, &n);
    if (st == TIPC_OK) st = judge_sets(base, &b, now, &n, th, res);
    cmp_set_free(&b);
    cmp_set_free(&n);
    return st;
}

enum tipc_status compare_with_files(const char *base, const char *const *now, int n, const char *what,
                                    const struct cmp_thresholds *th, struct cmp_result *res)
{
    memset(res, 0, sizeof *res);
    struct cmp_set b, s;
    TRY(compare_load(base, &b));
    enum tipc_status st = compare_load_files(now, n, &s);
    if (st == TIPC_OK) st = judge_sets(base, &b, what, &s, th, res);
    cmp_set_free(&b);
    cmp_set_free(&s);
    return st;
}

void compare_free(struct cmp_result *res)
{
    for (int i = 0; i < res->n; i++) {
        struct cmp_row *r = &res->row[i];
        free(r->case_name), free(r->unit), free(r->base.v), free(r->now.v);
    }
    free(res->row);
    free(res->base_what), free(res->new_what), free(res->base_metrics);
    memset(res, 0, sizeof *res);
}

int compare_failures(const struct cmp_result *res) { return res->regressions + res->invalid + res->missing; }

static char *side_text(const struct cmp_side *s, enum cmp_figure fig)
{
    if (!s->n) return xstrdup("-");
    if (isnan(s->median)) return xasprintf("none (%d run%s)", s->n, s->n == 1 ? "" : "s");
    const char *fmt = fig == FIG_IPS || fig == FIG_CPU ? "%.3f" : fig == FIG_LOSS ? "%.5f" : "%.2f";
    char v[48];
    snprintf(v, sizeof v, fmt, s->median);
    if (s->n == 1) return xstrdup(v);
    return fig == FIG_TOP1 ? xasprintf("%s (%d runs, range %.2f)", v, s->n, s->spread)
                           : xasprintf("%s (%d runs, range %.1f%%)", v, s->n, s->spread);
}

char *compare_row_text(const struct cmp_row *r)
{
    char *b = side_text(&r->base, r->fig), *n = side_text(&r->now, r->fig), *s;
    const char *u = *r->unit && (r->fig == FIG_IPS || r->fig == FIG_CPU) ? r->unit : "", *pct = r->fig == FIG_TOP1 ? " points" : "%";
    if (r->verdict == CMP_MISSING) s = xasprintf("%s %s %s: the new run has no such figure", cmp_figure_name(r->fig), b, u);
    else if (r->verdict == CMP_NEW) s = xasprintf("%s %s %s: no baseline", cmp_figure_name(r->fig), n, u);
    else if (r->verdict == CMP_INVALID) s = xasprintf("%s %s %s -> %s: no valid value in the new run", cmp_figure_name(r->fig), b, u, n);
    else s = xasprintf("%s %s -> %s %s (%+.1f%s, limit %+.1f%s)", cmp_figure_name(r->fig), b, n, u, r->change, pct,
                       r->limit, pct);
    free(b), free(n);
    return s;
}

void compare_print(const struct cmp_result *res, FILE *out)
{
    fprintf(out, "# tipc compare: baseline %s\n#               new      %s\n", res->base_what, res->new_what);
    fprintf(out, "# limits: ips -%g%%, cpu_ips -%g%%, loss +%g%%, top-1 -%g points, or the range of either side's "
            "repeats when wider\n", res->th.ips_drop, res->th.cpu_drop, res->th.loss_rise, res->th.top1_drop);
    int w = 4;
    for (int i = 0; i < res->n; i++)
        if ((int)strlen(res->row[i].case_name) > w) w = (int)strlen(res->row[i].case_name);
    fprintf(out, "# %-*s  %-7s %-30s %-30s %9s %9s  %s\n", w, "case", "figure", "baseline", "new", "change", "limit",
            "verdict");
    for (int i = 0; i < res->n; i++) {
        const struct cmp_row *r = &res->row[i];
        char *b = side_text(&r->base, r->fig), *n = side_text(&r->now, r->fig), ch[24] = "-", lim[24] = "-";
        bool judged = r->verdict == CMP_OK || r->verdict == CMP_NOISE || r->verdict == CMP_REGRESSION;
        const char *pct = r->fig == FIG_TOP1 ? "pt" : "%";
        if (judged) snprintf(ch, sizeof ch, "%+.1f%s", r->change, pct), snprintf(lim, sizeof lim, "%+.1f%s", r->limit, pct);
        fprintf(out, "  %-*s  %-7s %-30s %-30s %9s %9s  %s\n", w, r->case_name, cmp_figure_name(r->fig), b, n, ch, lim,
                cmp_verdict_name(r->verdict));
        free(b), free(n);
    }
    int f = compare_failures(res);
    fprintf(out, "# %d figure%s: %d regression%s, %d invalid, %d missing, %d within noise -> %s\n", res->n,
            res->n == 1 ? "" : "s", res->regressions, res->regressions == 1 ? "" : "s", res->invalid, res->missing,
            res->noise, f ? "FAILED" : "OK");
}
