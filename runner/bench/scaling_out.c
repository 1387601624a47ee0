/* scaling_out.c: the scaling table on stdout and as OUTPUT/scaling.json, scaling.md and
 * scaling.svg (two charts drawn by report/svg.c's svg_plot_from_zero, y axes from 0: throughput
 * against ranks with the linear ideal, and efficiency and exposed communication share against
 * ranks). Each file is written whole through core/staged (write_file_atomic). */
#include "scaling.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../report/svg.h"
#include "../../core/check.h"
#include "../../core/staged.h"
#include "../../core/banned.h"

static const char *const header[] = {"ranks", "global img/s", "per-rank img/s", "speed-up", "efficiency",
                                     "exposed comm", "allreduce via"};

/* The rows whose ranks x threads exceed the host's CPUs: their speed-up cannot pass cpus / threads,
 * so their efficiency measures the host, not the scaling. "" when none is. */
static void oversubscribed(const struct scaling_table *t, char *buf, size_t n)
{
    int tpr = t->o->threads > 0 ? t->o->threads : t->cpus, len = 0, k = 0;
    buf[0] = 0;
    for (int i = 0; i < t->n && len >= 0 && (size_t)len < n; i++)
        if ((long)t->row[i].ranks * tpr > t->cpus)
            len += snprintf(buf + len, n - (size_t)len, "%s%d", k++ ? ", " : "", t->row[i].ranks);
    if (!k || len < 0 || (size_t)len >= n) return;
    snprintf(buf + len, n - (size_t)len, " ranks x %d thread%s oversubscribe this host's %d CPUs: there the speed-up "
             "cannot pass %.2gx and the efficiency measures the host, not the scaling", tpr, tpr == 1 ? "" : "s",
             t->cpus, (double)t->cpus / tpr / (t->n ? t->row[0].ranks : 1));
}

void scaling_print(const struct scaling_table *t)
{
    const struct scaling_opts *o = t->o;
    printf("# tipc bench scaling %s, per-rank batch %d, %d px, %d timed steps after %d, %d thread%s per rank, "
           "%d MB buckets %s\n", t->when, o->batch, o->res, o->steps, o->warmup, o->threads, o->threads == 1 ? "" : "s",
           o->bucket_mb, o->overlap ? "overlapping backward" : "after backward (blocking)");
    printf("# network: %s; load average at the start %.2f %.2f %.2f\n", t->network, t->load[0], t->load[1],
           t->load[2]);
    printf("%5s %14s %15s %9s %11s %13s  %s\n", header[0], header[1], header[2], header[3], header[4], header[5],
           header[6]);
    for (int i = 0; i < t->n; i++) {
        const struct scaling_row *r = &t->row[i];
        printf("%5d %14.2f %15.2f %8.2fx %10.1f%% %12.1f%%  %s\n", r->ranks, r->global_ips, r->per_rank_ips,
               r->speedup, 100 * r->efficiency, 100 * r->comm_share, r->transport);
    }
    char note[256];
    oversubscribed(t, note, sizeof note);
    if (note[0]) printf("# note: %s\n", note);
    fflush(stdout);
}

static char *table_json(const struct scaling_table *t)
{
    const struct scaling_opts *o = t->o;
    json_t *rows = json_array();
    for (int i = 0; i < t->n; i++) {
        const struct scaling_row *r = &t->row[i];
        json_array_append_new(rows, json_pack("{s:i, s:f, s:f, s:f, s:f, s:f, s:f, s:s}", "ranks", r->ranks,
                                              "global_ips", r->global_ips, "per_rank_ips", r->per_rank_ips, "speedup",
                                              r->speedup, "efficiency", r->efficiency, "exposed_comm_share",
                                              r->comm_share, "rank0_median_step_seconds", r->median_step_s,
                                              "allreduce_via", r->transport));
    }
    json_t *j = json_pack("{s:s, s:s, s:i, s:[f,f,f], s:{s:i, s:i, s:i, s:i, s:i, s:i, s:i, s:b}, s:o}", "when",
                          t->when, "network", t->network, "cpus", t->cpus, "load_average", t->load[0], t->load[1],
                          t->load[2], "settings",
                          "batch_per_rank", o->batch, "resolution", o->res, "steps", o->steps, "warmup", o->warmup,
                          "threads_per_rank", o->threads, "num_classes", o->classes, "bucket_mb", o->bucket_mb,
                          "overlap", o->overlap, "rows", rows);
    char *s = j ? json_dumps(j, JSON_INDENT(2)) : NULL;
    json_decref(j);
    CHECK(s, "out of memory");
    return s;
}

static char *table_md(const struct scaling_table *t)
{
    const struct scaling_opts *o = t->o;
    size_t cap = 4096 + 160 * (size_t)t->n, len = 0;
    char *s = xmalloc(cap);
#define ADD(...) len += (size_t)snprintf(s + len, cap - len, __VA_ARGS__)
    ADD("Scaling, %s: per-rank batch %d, %d px, %d timed steps after %d warm-up, %d thread(s) per rank, "
        "gradient buckets of %d MB %s; network: %s; load average at the start %.2f %.2f %.2f.\n\n",
        t->when, o->batch, o->res, o->steps, o->warmup, o->threads, o->bucket_mb,
        o->overlap ? "overlapping backward" : "after backward (blocking)", t->network, t->load[0], t->load[1],
        t->load[2]);
    ADD("| %s | %s | %s | %s | %s | %s | %s |\n|---|---|---|---|---|---|---|\n", header[0], header[1], header[2],
        header[3], header[4], header[5], header[6]);
    for (int i = 0; i < t->n; i++) {
        const struct scaling_row *r = &t->row[i];
        ADD("| %d | %.2f | %.2f | %.2fx | %.1f%% | %.1f%% | %s |\n", r->ranks, r->global_ips, r->per_rank_ips,
            r->speedup, 100 * r->efficiency, 100 * r->comm_share, r->transport);
    }
    char note[256];
    oversubscribed(t, note, sizeof note);
    if (note[0]) ADD("\nNote: %s.\n", note);
#undef ADD
    CHECK(len < cap, "scaling table overflow");
    return s;
}

static enum tipc_status table_svg(const struct scaling_table *t, const char *path)
{
    double x[SCALING_MAX_RUNS], ips[SCALING_MAX_RUNS], ideal[SCALING_MAX_RUNS], eff[SCALING_MAX_RUNS],
        comm[SCALING_MAX_RUNS];
    for (int i = 0; i < t->n; i++) {
        const struct scaling_row *r = &t->row[i];
        x[i] = r->ranks, ips[i] = r->global_ips, eff[i] = 100 * r->efficiency, comm[i] = 100 * r->comm_share;
        ideal[i] = t->row[0].global_ips * r->ranks / t->row[0].ranks;
    }
    const struct svg_series thr[] = {{"measured", x, ips, t->n, false}, {"linear", x, ideal, t->n, false}};
    const struct svg_series pct[] = {{"efficiency", x, eff, t->n, false}, {"exposed comm", x, comm, t->n, false}};
    struct xw h;
    TRY(xw_open(&h, path, "the scaling chart"));
    xw_start(&h, "svg");
    xw_attr(&h, "xmlns", "http://www.w3.org/2000/svg");
    xw_attr(&h, "width", "640");
    xw_attr(&h, "height", "540");
    xw_attr(&h, "viewBox", "0 0 640 540");
    xw_attr(&h, "font-family", "sans-serif");
    xw_attr(&h, "font-size", "12");
    xw_start(&h, "rect");
    xw_attr(&h, "width", "100%");
    xw_attr(&h, "height", "100%");
    xw_attr(&h, "fill", "white");
    xw_end(&h);
    char title[200];
    snprintf(title, sizeof title, "global img/s (batch %d per rank, %s)", t->o->batch, t->network);
    svg_plot_from_zero(&h, "throughput", title, "ranks", "img/s", thr, 2);
    xw_start(&h, "g");
    xw_attr(&h, "transform", "translate(0,270)");
    svg_plot_from_zero(&h, "efficiency", "scaling efficiency and exposed communication (% of the step)", "ranks", "%",
                       pct, 2);
    xw_end_full(&h);
    xw_end_full(&h);
    return xw_save(&h);
}

enum tipc_status scaling_write(const struct scaling_table *t)
{
    char *json = table_json(t), *md = table_md(t);
    char *pj = xasprintf("%s/scaling.json", t->o->output), *pm = xasprintf("%s/scaling.md", t->o->output),
         *ps = xasprintf("%s/scaling.svg", t->o->output);
    enum tipc_status st = write_file_atomic(pj, json, strlen(json));
    if (st == TIPC_OK) st = write_file_atomic(pm, md, strlen(md));
    if (st == TIPC_OK) st = table_svg(t, ps);
    if (st == TIPC_OK) fprintf(stderr, "bench scaling: wrote %s, %s and %s\n", pj, pm, ps);
    free(json), free(md), free(pj), free(pm), free(ps);
    return st;
}
