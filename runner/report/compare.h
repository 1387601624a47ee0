/* compare.h: the speed and convergence gate: a baseline's figures against a new run's
 * (`tipc compare BASELINE NEW`, and `tipc run ... --baseline DIR` at the end of a run).
 *
 * Each side is a speed record (index/..._speed, report/speed.h), a run's tipc/metrics.jsonl, or a
 * folder: every speed record under it (files NAME_speed in an index/ folder, at any depth: a
 * benchmark_train output, its repeat_K/ folders, several runs' folders), else every metrics.jsonl
 * under it. Each record or
 * metrics file is one run; runs of the same case are its repeats.
 *
 * Figures per case: ips (higher is better), cpu_ips (images per CPU-second of the training's
 * processes on this node, from the run's metrics: `tipc run` measures each stage's CPU time; higher is
 * better), final loss (lower is better), eval top-1 (higher is better). On a shared machine the CPU
 * time a step takes moves far less than its wall time, so cpu_ips is the steadier speed figure. A record's case is `MODEL_bsN_FP_RUNMODE NxCy` (+ `_d2sT`); a metrics file's cases are
 * its stages (`MODEL.MODE.train[...]`): ips = images/s over each epoch of rank 0 (the median of the
 * epochs after the first when there are several), loss = rank 0's last logged loss, top-1 = the
 * stage's last eval. Peak memory is not in either file: not compared.
 *
 * Noise: a side's value is the median of its repeats and its spread the range of its repeats
 * ((max - min) / median; top-1: max - min points). A figure regresses when it is worse than the
 * threshold AND than the larger of the two sides' spreads: a change the repeats themselves show is
 * reported `within noise`, not as a regression. One run per side has no spread: the threshold alone. */
#ifndef TIPC_REPORT_COMPARE_H
#define TIPC_REPORT_COMPARE_H
#include <stdbool.h>
#include <stdio.h>
#include "../../core/status.h"

enum cmp_figure { FIG_IPS, FIG_CPU, FIG_LOSS, FIG_TOP1, FIG_COUNT };
enum cmp_verdict { CMP_OK, CMP_NOISE, CMP_REGRESSION, CMP_MISSING, CMP_INVALID, CMP_NEW };

struct cmp_thresholds {
    double ips_drop;     /* percent, default 5 */
    double cpu_drop;     /* percent, default 5 */
    double loss_rise;    /* percent, default 5 */
    double top1_drop;    /* points, default 1 */
};

struct cmp_side {
    double *v;           /* (n) one value per run; NaN: that run has no valid figure (ips 0) */
    int n;
    double median, spread;
};

struct cmp_row {
    char *case_name;
    enum cmp_figure fig;
    char *unit;          /* "images/s", "" */
    struct cmp_side base, now;
    double change;       /* percent (ips, loss) or points (top-1), new against baseline */
    double limit;        /* the change allowed: max(threshold, spread), signed like a regression */
    enum cmp_verdict verdict;
};

struct cmp_result {
    struct cmp_row *row;
    int n;
    size_t cap;
    struct cmp_thresholds th;
    char *base_what, *new_what;   /* what each side was read from ("3 speed records under DIR") */
    char *base_metrics;           /* the baseline's metrics.jsonl (for the report's curves), or NULL */
    int regressions, invalid, missing, noise;
};

void cmp_thresholds_default(struct cmp_thresholds *t);
/* Read both sides and judge every figure. TIPC_EUSAGE / TIPC_EIO with a message when a side cannot be
 * read or holds nothing to compare. */
enum tipc_status compare_paths(const char *base, const char *now, const struct cmp_thresholds *th,
                               struct cmp_result *res);
/* The same with the new side given as exactly these files (`tipc run --baseline`: this run's own
 * speed records or metrics file, not older ones lying beside them); `what` names them. */
enum tipc_status compare_with_files(const char *base, const char *const *now, int n, const char *what,
                                    const struct cmp_thresholds *th, struct cmp_result *res);
void compare_free(struct cmp_result *res);
/* Failing rows: regressions, invalid new figures, cases the new run lacks. */
int compare_failures(const struct cmp_result *res);

/* The table: `#` header with the thresholds and the noise rule, one row per figure, `#` verdict line. */
void compare_print(const struct cmp_result *res, FILE *out);
const char *cmp_figure_name(enum cmp_figure f);
const char *cmp_verdict_name(enum cmp_verdict v);
/* One line for a row's verdict ("ips 19.5 -> 15.2 images/s (-21.9%, limit -5.0%)"), malloc'ed. */
char *compare_row_text(const struct cmp_row *r);

/* ---- inputs (compare_load.c) ---- */
struct cmp_sample { char *case_name; enum cmp_figure fig; double value; char *unit; int run; };
struct cmp_set {
    struct cmp_sample *s;
    int n;
    size_t cap;
    int runs;                     /* records or metrics files read */
    bool records;                 /* speed records (else metrics files) */
    char *metrics;                /* the first metrics.jsonl found, or NULL */
};
enum tipc_status compare_load(const char *path, struct cmp_set *set);
/* Exactly these files (a run's own speed records, or its metrics file); unreadable ones: TIPC_EIO. */
enum tipc_status compare_load_files(const char *const *files, int n, struct cmp_set *set);
void cmp_set_free(struct cmp_set *set);

#endif
