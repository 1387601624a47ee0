/* html.c: the HTML report (report.h: report_html), from the report and the metrics file. */
#include "svg.h"
#include "html.h"

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "compare.h"
#include "xml.h"
#include "../../core/check.h"
#include "../../core/banned.h"

#define MAX_RANKS_PLOTTED 256   /* every rank of any job this report is read for */

static void el_text(struct xw *h, const char *el, const char *cls, const char *text)
{
    xw_start(h, el);
    if (cls) xw_attr(h, "class", cls);
    xw_text(h, text);
    xw_end_full(h);
}

/* ---- what the metrics file says about each training stage ---- */

struct pt { int rank; double step, loss, top1, ips; };
struct tstage {
    char *name;
    char *data_origin;         /* which data it trained on (train_start), NULL: not said */
    bool data_synthetic;
    int spe, world;
    struct pt *p;
    int n;
    size_t cap;
    double *ev_step, *ev_top1; /* eval results during training */
    int nev;
    size_t evcap;
};
struct mdata {
    struct tstage *t;
    int nt;
    size_t cap;
    json_t *run;               /* the run event (environment) */
    char **eval_name;          /* eval-only stages: their top-1 */
    double *eval_top1;
    int neval;
    size_t ecap, ecap2;
};

static struct tstage *tstage_get(struct mdata *d, const char *name)
{
    for (int i = 0; i < d->nt; i++)
        if (!strcmp(d->t[i].name, name)) return &d->t[i];
    d->t = xgrow(d->t, sizeof *d->t, (size_t)d->nt + 1, &d->cap);
    struct tstage *t = &d->t[d->nt++];
    memset(t, 0, sizeof *t);
    t->name = xstrdup(name);
    return t;
}

static double num(json_t *o, const char *k) { return json_number_value(json_object_get(o, k)); }

static void read_metrics(struct mdata *d, const char *path)
{
    FILE *f = path ? fopen(path, "r") : NULL;
    if (!f) return;
    char *line = NULL;
    size_t cap = 0;
    while (getline(&line, &cap, f) > 0) {
        json_t *o = json_loads(line, 0, NULL);
        if (!json_is_object(o)) { /* a line cut by a crash: skip it */
            json_decref(o);
            continue;
        }
        const char *ev = json_string_value(json_object_get(o, "event"));
        const char *stage = json_string_value(json_object_get(o, "stage"));
        if (ev && !strcmp(ev, "run") && !d->run) {
            d->run = json_incref(o);
        } else if (ev && stage && !strcmp(ev, "train_start")) {
            struct tstage *t = tstage_get(d, stage);
            t->spe = (int)num(o, "steps_per_epoch");
            t->world = (int)num(o, "world");
            const char *origin = json_string_value(json_object_get(o, "data_origin"));
            if (origin && !t->data_origin) t->data_origin = xstrdup(origin);
            t->data_synthetic |= json_is_true(json_object_get(o, "data_synthetic"));
        } else if (ev && stage && !strcmp(ev, "train_step")) {
            struct tstage *t = tstage_get(d, stage);
            t->p = xgrow(t->p, sizeof *t->p, (size_t)t->n + 1, &t->cap);
            t->p[t->n++] = (struct pt){(int)num(o, "rank"), num(o, "step"), num(o, "loss"), num(o, "top1"),
                                       num(o, "ips")};
        } else if (ev && stage && !strcmp(ev, "eval")) {
            int k = -1;
            for (int i = 0; i < d->nt; i++)
                if (!strcmp(d->t[i].name, stage)) k = i;
            if (k >= 0) { /* during training */
                struct tstage *t = &d->t[k];
                size_t c1 = t->evcap, c2 = t->evcap;
                t->ev_step = xgrow(t->ev_step, sizeof(double), (size_t)t->nev + 1, &c1);
                t->ev_top1 = xgrow(t->ev_top1, sizeof(double), (size_t)t->nev + 1, &c2);
                t->evcap = c1;
                t->ev_step[t->nev] = num(o, "epoch") * (t->spe > 0 ? t->spe : 1);
                t->ev_top1[t->nev++] = num(o, "top1");
            } else {
                d->eval_name = xgrow(d->eval_name, sizeof(char *), (size_t)d->neval + 1, &d->ecap);
                d->eval_top1 = xgrow(d->eval_top1, sizeof(double), (size_t)d->neval + 1, &d->ecap2);
                d->eval_name[d->neval] = xstrdup(stage);
                d->eval_top1[d->neval++] = num(o, "top1");
            }
        }
        json_decref(o);
    }
    free(line);
    fclose(f);
}

static void mdata_free(struct mdata *d)
{
    for (int i = 0; i < d->nt; i++) {
        free(d->t[i].name);
        free(d->t[i].data_origin);
        free(d->t[i].p);
        free(d->t[i].ev_step);
        free(d->t[i].ev_top1);
    }
    for (int i = 0; i < d->neval; i++) free(d->eval_name[i]);
    free(d->eval_name);
    free(d->eval_top1);
    free(d->t);
    json_decref(d->run);
}

/* ---- the document ---- */

static const char css[] =
    "body{font:14px/1.4 system-ui,sans-serif;margin:24px;color:#222}"
    "table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:2px 8px;text-align:left}"
    ".passed{color:#1a7f37}.failed{color:#c62828;font-weight:bold}.skipped{color:#8a6d00}"
    ".verdict{font-size:20px}.charttitle{font-weight:bold}svg{display:block;margin:8px 0}"
    "svg text{font-size:11px}.warn{color:#c62828}"
    "code.error,pre.error{color:#c62828;white-space:pre-wrap}"
    "pre.log{background:#f6f6f6;border:1px solid #ddd;padding:6px;max-height:24em;overflow:auto;"
    "white-space:pre-wrap;font-size:12px}.failure h3{margin-bottom:4px}"
    "td:nth-child(5){word-break:break-all}";

static const char *outcome_name(enum case_outcome o)
{
    return o == CASE_PASSED ? "passed" : o == CASE_FAILED ? "failed" : "skipped";
}

static void stage_table(struct xw *h, const struct report *r, const char *page_path)
{
    xw_start(h, "table");
    xw_start(h, "tr");
    const char *cols[] = {"#", "stage", "status", "seconds", "log", "reason"};
    for (int i = 0; i < 6; i++) el_text(h, "th", NULL, cols[i]);
    xw_end_full(h);
    for (int i = 0; i < r->n; i++) {
        const struct report_case *c = &r->c[i];
        char buf[64];
        xw_start(h, "tr");
        snprintf(buf, sizeof buf, "%d", i + 1);
        el_text(h, "td", NULL, buf);
        char *name = report_case_name(r, c);
        el_text(h, "td", NULL, name + strlen(r->model) + strlen(r->mode) + 2);
        free(name);
        if (c->outcome == CASE_FAILED) snprintf(buf, sizeof buf, "failed (exit %d)", c->status);
        else snprintf(buf, sizeof buf, "%s", outcome_name(c->outcome));
        el_text(h, "td", outcome_name(c->outcome), buf);
        if (c->outcome == CASE_SKIPPED) snprintf(buf, sizeof buf, "-");
        else snprintf(buf, sizeof buf, "%.1f", c->seconds);
        el_text(h, "td", NULL, buf);
        xw_start(h, "td");
        html_log_link(h, page_path, c->log_path);
        xw_end_full(h);
        xw_start(h, "td");
        if (c->outcome == CASE_FAILED) {   /* to its section: the error line and the log's end */
            xw_start(h, "a");
            xw_attrf(h, "href", "#failure-%d", i + 1);
            xw_text(h, c->reason ? c->reason : "failed");
            xw_end_full(h);
        } else {
            xw_text(h, c->reason ? c->reason : "");
        }
        if (c->error) {
            xw_start(h, "br");
            xw_end(h);
            el_text(h, "code", "error", c->error);
        }
        xw_end_full(h);
        xw_end_full(h);
    }
    xw_end_full(h);
}

/* One chart of `what` (loss, top1, ips) with a line per rank (at most MAX_RANKS_PLOTTED). */
static void rank_chart(struct xw *h, const struct tstage *t, int what, const char *cls, const char *title,
                       const char *ylabel)
{
    int nr = 0;
    for (int i = 0; i < t->n; i++)
        if (t->p[i].rank + 1 > nr) nr = t->p[i].rank + 1;
    if (nr > MAX_RANKS_PLOTTED) nr = MAX_RANKS_PLOTTED;
    struct svg_series s[MAX_RANKS_PLOTTED + 1];
    double *xs = xmalloc(sizeof(double) * ((size_t)t->n + 1) * (size_t)(nr + 1));
    double *ys = xmalloc(sizeof(double) * ((size_t)t->n + 1) * (size_t)(nr + 1));
    char labels[MAX_RANKS_PLOTTED][32];
    int ns = 0;
    for (int k = 0; k < nr; k++) {
        double *x = xs + (size_t)k * ((size_t)t->n + 1), *y = ys + (size_t)k * ((size_t)t->n + 1);
        int n = 0;
        for (int i = 0; i < t->n; i++) {
            if (t->p[i].rank != k) continue;
            x[n] = t->p[i].step;
            y[n++] = what == 0 ? t->p[i].loss : what == 1 ? t->p[i].top1 : t->p[i].ips;
        }
        if (!n) continue;
        snprintf(labels[ns], sizeof labels[ns], "rank %d%s", k, what == 1 ? " (train)" : "");
        s[ns] = (struct svg_series){labels[ns], x, y, n, false};
        ns++;
    }
    if (what == 1 && t->nev) s[ns++] = (struct svg_series){"eval top-1", t->ev_step, t->ev_top1, t->nev, true};
    if (ns && what == 2) svg_plot_from_zero(h, cls, title, "global step", ylabel, s, ns);   /* read by its size */
    else if (ns) svg_plot(h, cls, title, "global step", ylabel, s, ns);
    free(xs);
    free(ys);
}

/* A sentence a person reads first: did the loss fall, what did eval say. */
static void health(struct xw *h, const struct tstage *t)
{
    double first = NAN, last = NAN, ips = 0;
    int nips = 0;
    for (int i = 0; i < t->n; i++) {
        if (t->p[i].rank != 0) continue;
        if (isnan(first)) first = t->p[i].loss;
        last = t->p[i].loss;
        ips += t->p[i].ips, nips++;
    }
    xw_start(h, "p");
    if (isnan(first)) {
        xw_text(h, "no training steps were recorded");
    } else {
        bool fell = last < first;
        xw_start(h, "span");
        xw_attr(h, "class", fell ? "passed" : "warn");
        xw_textf(h, "loss %s from %.4f to %.4f (%+.1f%%)", fell ? "fell" : "did not fall", first, last,
                 first != 0 ? 100 * (last - first) / first : 0.0);
        xw_end_full(h);
        xw_textf(h, "; %d rank%s, %.1f img/s per rank (rank 0 average)", t->world > 0 ? t->world : 1,
                 t->world > 1 ? "s" : "", nips ? ips / nips : 0.0);
        if (t->nev) xw_textf(h, "; last eval top-1 %.2f%%", t->ev_top1[t->nev - 1]);
    }
    xw_end_full(h);
    if (t->data_origin) {   /* which data: a synthetic run is not a run on the dataset */
        xw_start(h, "p");
        xw_text(h, "data: ");
        xw_start(h, "span");
        if (t->data_synthetic) xw_attr(h, "class", "warn");
        xw_text(h, t->data_origin);
        xw_end_full(h);
        xw_end_full(h);
    }
}

static void header(struct xw *h, const struct report *r, const struct mdata *d)
{
    int np = report_count(r, CASE_PASSED), nf = report_count(r, CASE_FAILED), ns = report_count(r, CASE_SKIPPED);
    xw_start(h, "h1");
    xw_textf(h, "%s \xC2\xB7 %s", r->model, r->mode);
    xw_end_full(h);
    xw_start(h, "p");
    xw_attr(h, "class", report_run_failed(r) ? "verdict failed" : "verdict passed");
    xw_textf(h, "%d passed, %d failed, %d skipped", np, nf, ns);
    xw_end_full(h);
    char ts[40];
    time_t t0 = (time_t)r->started;
    struct tm tm;
    strftime(ts, sizeof ts, "%Y-%m-%d %H:%M:%S UTC", gmtime_r(&t0, &tm));
    xw_start(h, "p");
    xw_textf(h, "host %s, started %s, config %s", r->hostname, ts, r->config);
    if (d->run) {
        const char *os = json_string_value(json_object_get(d->run, "os"));
        const char *ver = json_string_value(json_object_get(d->run, "tipc_version"));
        xw_textf(h, "; %s, %d CPUs, tipc %s", os ? os : "?", (int)num(d->run, "cpus"), ver ? ver : "?");
    }
    xw_end_full(h);
    xw_start(h, "p");   /* which data the run used (its prepare's record) */
    xw_attr(h, "class", "data");
    xw_text(h, "data: ");
    if (!r->ndata) xw_text(h, "not prepared by this run (--no-prepare, or a Paddle config)");
    for (int i = 0; i < r->ndata; i++) {
        if (i) xw_text(h, "; ");
        xw_start(h, "span");
        if (r->data[i].synthetic || r->data[i].absent) xw_attr(h, "class", "warn");
        xw_textf(h, "%s: %s", r->data[i].dest, r->data[i].origin);
        xw_end_full(h);
    }
    xw_end_full(h);
}

/* ---- --baseline: the gate's table, and the baseline's curves beside this run's ---- */

/* Rank 0's `what` (0 loss, 2 ips) of stage t as x, y (malloc'ed); the count. */
static int rank0_series(const struct tstage *t, int what, double **x, double **y)
{
    *x = xmalloc(sizeof(double) * ((size_t)t->n + 1)), *y = xmalloc(sizeof(double) * ((size_t)t->n + 1));
    int n = 0;
    for (int i = 0; i < t->n; i++) {
        if (t->p[i].rank != 0) continue;
        (*x)[n] = t->p[i].step;
        (*y)[n++] = what == 0 ? t->p[i].loss : t->p[i].ips;
    }
    return n;
}

static void overlay_chart(struct xw *h, const struct tstage *base, const struct tstage *now, int what)
{
    double *bx, *by, *nx, *ny;
    int nb = rank0_series(base, what, &bx, &by), nn = rank0_series(now, what, &nx, &ny);
    struct svg_series s[2] = {{"baseline (rank 0)", bx, by, nb, false}, {"this run (rank 0)", nx, ny, nn, false}};
    if (nb && nn) {
        if (what == 0) svg_plot(h, "baseline-loss", "loss per step: baseline and this run", "global step", "loss", s, 2);
        else svg_plot_from_zero(h, "baseline-throughput", "throughput per step (images/s): baseline and this run",
                                "global step", "img/s", s, 2);
    }
    free(bx), free(by), free(nx), free(ny);
}

static void baseline_section(struct xw *h, const struct cmp_result *c, const struct mdata *now)
{
    int fails = compare_failures(c);
    el_text(h, "h2", NULL, "Against the baseline");
    xw_start(h, "p");
    xw_attr(h, "class", fails ? "verdict failed" : "verdict passed");
    xw_textf(h, "%d regression%s, %d invalid, %d missing, %d within noise of %d figures", c->regressions,
             c->regressions == 1 ? "" : "s", c->invalid, c->missing, c->noise, c->n);
    xw_end_full(h);
    xw_start(h, "p");
    xw_textf(h, "baseline %s; this run %s. Limits: ips -%g%%, cpu_ips -%g%%, loss +%g%%, top-1 -%g points, or the "
             "range of either side's repeats when wider.", c->base_what, c->new_what, c->th.ips_drop, c->th.cpu_drop,
             c->th.loss_rise, c->th.top1_drop);
    xw_end_full(h);
    xw_start(h, "table");
    xw_start(h, "tr");
    const char *cols[] = {"case", "figure", "verdict", "baseline -> this run"};
    for (int i = 0; i < 4; i++) el_text(h, "th", NULL, cols[i]);
    xw_end_full(h);
    for (int i = 0; i < c->n; i++) {
        const struct cmp_row *r = &c->row[i];
        bool bad = r->verdict == CMP_REGRESSION || r->verdict == CMP_INVALID || r->verdict == CMP_MISSING;
        char *text = compare_row_text(r);
        xw_start(h, "tr");
        el_text(h, "td", NULL, r->case_name);
        el_text(h, "td", NULL, cmp_figure_name(r->fig));
        el_text(h, "td", bad ? "failed" : r->verdict == CMP_NOISE ? "skipped" : "passed", cmp_verdict_name(r->verdict));
        el_text(h, "td", NULL, text);
        xw_end_full(h);
        free(text);
    }
    xw_end_full(h);
    struct mdata b;
    memset(&b, 0, sizeof b);
    read_metrics(&b, c->base_metrics);
    for (int i = 0; i < now->nt; i++)
        for (int k = 0; k < b.nt; k++) {
            if (strcmp(now->t[i].name, b.t[k].name)) continue;
            el_text(h, "h3", NULL, now->t[i].name);
            overlay_chart(h, &b.t[k], &now->t[i], 0);
            overlay_chart(h, &b.t[k], &now->t[i], 2);
        }
    mdata_free(&b);
}

enum tipc_status report_html(const struct report *r, const char *metrics_path, const char *path)
{
    struct mdata d;
    memset(&d, 0, sizeof d);
    read_metrics(&d, metrics_path);
    struct xw h;
    enum tipc_status st = xw_open(&h, path, "HTML report");
    if (st != TIPC_OK) {
        mdata_free(&d);
        return st;
    }
    xw_raw(&h, "<!DOCTYPE html>\n");
    xw_start(&h, "html");
    xw_attr(&h, "lang", "en");
    xw_start(&h, "head");
    xw_start(&h, "meta");
    xw_attr(&h, "charset", "utf-8");
    xw_end(&h);
    xw_start(&h, "title");
    xw_textf(&h, "tipc: %s %s", r->model, r->mode);
    xw_end_full(&h);
    el_text(&h, "style", NULL, css);
    xw_end_full(&h);
    xw_start(&h, "body");
    header(&h, r, &d);
    html_failures(&h, r, path);
    el_text(&h, "h2", NULL, "Stages");
    stage_table(&h, r, path);
    if (r->n) svg_timeline(&h, r);
    if (r->baseline) baseline_section(&h, r->baseline, &d);
    for (int i = 0; i < d.neval; i++) {
        xw_start(&h, "p");
        xw_textf(&h, "%s: top-1 %.2f%%", d.eval_name[i], d.eval_top1[i]);
        xw_end_full(&h);
    }
    for (int i = 0; i < d.nt; i++) {
        const struct tstage *t = &d.t[i];
        el_text(&h, "h2", NULL, t->name);
        health(&h, t);
        rank_chart(&h, t, 0, "loss", "training loss per rank", "loss");
        rank_chart(&h, t, 1, "accuracy", "top-1 accuracy (%) per rank, eval as dots", "top-1 %");
        rank_chart(&h, t, 2, "throughput", "throughput per rank (images/s)", "img/s");
    }
    xw_end_full(&h);
    xw_end_full(&h);
    mdata_free(&d);
    return xw_save(&h);
}
