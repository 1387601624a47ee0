/* report.h: what `tipc run` tells the world.
 *  - stdout: the original's status lines (also appended to results_python.log) and, at the end,
 *    `N passed, N failed, N skipped`;
 *  - stderr: `[k/N] kind name` as each stage starts, and the end-of-run table (stage, status,
 *    seconds, log, reason);
 *  - files: JUnit XML (junit.c) and the HTML report (html.c).
 * Colour (pass green, fail red) only on a terminal, never with NO_COLOR set. */
#ifndef TIPC_REPORT_H
#define TIPC_REPORT_H
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include "../../core/status.h"

enum case_outcome { CASE_PASSED, CASE_FAILED, CASE_SKIPPED };

/* A stage that passed with warnings ("the weights did not change in 4 training steps") passed, but
 * the warnings are part of the verdict: the end table shows them under the stage, JUnit puts them in
 * its system-out. The first ones of each log are kept. */
#define REPORT_MAX_WARNINGS 20

struct report_case {
    char *kind;       /* train / eval / export / infer */
    char *matrix;     /* loop values: "norm_train gpus=0 autocast=False" (may be "") */
    char *cmd;        /* exact command string */
    char *log_path;   /* the stage's log (its own redirection, or the copy tipc kept); NULL if none */
    char *reason;     /* why it failed or was skipped ("exit status 4", "train[...] failed"); NULL when passed */
    char *warnings;   /* the `warning: ` lines of its log (at most REPORT_MAX_WARNINGS), '\n'-joined; NULL: none */
    enum case_outcome outcome;
    int status;       /* exit status as the shell reports it (0 = passed; skipped: -1) */
    double started;   /* wall clock, seconds since the epoch */
    double seconds;
    double cpu_s;     /* CPU seconds (user + system) of the stage and every process it started, on this
                         node; -1: not measured */
    int line;         /* config line */
    char *error;      /* failed: the line that says why (report_why), NULL when none was found */
    bool requested;   /* skipped because the run was told to (--skip-gpu), not because of a failure:
                       * it does not fail the run */
};

struct metrics;

/* Which data the run used (tipc prepare's record of each item). */
struct report_data {
    char *name, *dest, *origin;
    bool synthetic, absent;
};

struct report {
    char *model, *mode, *config;
    struct report_data *data;   /* (ndata) what the run's prepare made ready; none: not prepared by the run */
    int ndata;
    size_t data_cap;
    char *status_log;         /* results_python.log path */
    bool color;               /* colour on stdout (a terminal, NO_COLOR unset) */
    bool color_err;           /* colour on stderr */
    double started;           /* wall clock at report_init */
    char hostname[256];
    struct report_case *c;
    int n;
    size_t cap;
    const struct cmp_result *baseline; /* --baseline: the comparison (compare.h), in JUnit and HTML; NULL: none */
};

/* Start a report; `status_log` is appended to, never truncated (as the original's `tee -a`). */
void report_init(struct report *r, const char *config, const char *model, const char *mode, const char *status_log);
void report_free(struct report *r);

/* True when colour may be written to fd: NO_COLOR unset or empty (no-color.org), and fd a terminal
 * or FORCE_COLOR set to anything but "", "0" or "false" (force-color.org: a CI console that shows
 * colours from a pipe). */
bool report_use_color(int fd);

/* Record one item of the run's data (copied). */
void report_add_data(struct report *r, const char *name, const char *dest, const char *origin, bool synthetic,
                     bool absent);
/* One line for a person: "DEST: ORIGIN; DEST2: ORIGIN2" (malloc'ed), or NULL when nothing was recorded. */
char *report_data_line(const struct report *r);
/* Append each data item to the metrics file ("data" events). */
enum tipc_status report_emit_data(const struct report *r, struct metrics *m);

/* The short, stable test name: MODEL.MODE.kind[matrix] (no paths, same in every output dir). */
char *report_case_name(const struct report *r, const struct report_case *c);

/* `[k/N] kind matrix` on stderr as a stage starts. */
void report_begin(const struct report *r, int k, int total, const char *kind, const char *matrix);

/* One finished command. Prints the status line as Step6's status_check does:
 * `Run successfully with command - MODEL - CMD!` (or `Run failed ...`), green or red on a
 * terminal, and appends it, plain, to the results log. `reason` (may be NULL) says why it
 * failed; by default "exit status N" / "killed by signal N". Returns TIPC_EIO if the log cannot
 * be written. */
enum tipc_status report_stage(struct report *r, const char *kind, const char *matrix, const char *cmd,
                              const char *log_path, int status, const char *reason, double started,
                              double seconds, int line);
/* A failed case in one line: its reason, then ": " and its error line when there is one
 * ("exit status 2 (tipc: usage): -o: bad value 'abc' for 'Optimizer.momentum'"); malloc'ed. */
char *report_failure_message(const struct report_case *c);
/* The line that says why the last stage reported failed (report_why; taken over, may be NULL). */
void report_stage_error(struct report *r, char *error);
/* Why a stage failed, in one line: the first error line a tipc process of the stage wrote to
 * `error_log` (TIPC_ERROR_LOG, core/check.h), else from the end of `stage_log` the last Python
 * exception line ("ValueError: ..."), else the last line with the word "error". Without the
 * "tipc: error: " prefix, cleaned as xml.h cleans text, at most 300 bytes; NULL when none. */
char *report_why(const char *error_log, const char *stage_log);
/* A stage that did not run: because one it depends on failed, or (`requested`) because the run was
 * told not to run it (--skip-gpu). No status line (it did not run), a `[k/N] ... skipped: reason`
 * line on stderr. */
void report_skip(struct report *r, int k, int total, const char *kind, const char *matrix, const char *cmd,
                 const char *reason, int line, bool requested);

/* A failing case for the run itself (kind "run"), printed nowhere: a run that did not end, was
 * refused, or stopped with an error is never a passing report (`cmd`: the run's own command line). */
void report_fail_run(struct report *r, const char *cmd, const char *reason, int status);

/* Format one status line (without colour or newline) into a malloc'ed string; control characters
 * of model and command (a newline in --output) are written visibly (\n), so it is one line. */
char *report_status_line(const char *model, const char *cmd, bool ok);

int report_count(const struct report *r, enum case_outcome o);
int report_failed(const struct report *r);
/* Does the run fail: a stage failed, or one was skipped because of a failure (a requested skip
 * does not count)? */
bool report_run_failed(const struct report *r);
/* Wall clock now, seconds since the epoch (the clock of `started`). */
double report_now(void);
/* The end-of-run table (to `table`, usually stderr) with a last `total` row (the run's wall clock
 * so far), then `N passed, N failed, N skipped` to `out`. */
void report_summary(const struct report *r, FILE *table, FILE *out);
/* Append the run's environment ("run"), case i ("stage") or the counts ("summary") to the metrics
 * file (engine/io/metrics.h). Strings are cleaned to valid UTF-8 first. */
enum tipc_status report_emit_run(const struct report *r, struct metrics *m);
enum tipc_status report_emit_stage(const struct report *r, int i, struct metrics *m);
enum tipc_status report_emit_summary(const struct report *r, struct metrics *m);

/* Write JUnit XML atomically (temp file + rename); see junit.c. With r->baseline, a second testsuite
 * MODEL.MODE.baseline holds one testcase per compared figure. */
enum tipc_status report_junit(const struct report *r, const char *path);
struct cmp_result;
/* `tipc compare --junit`: the comparison alone, testsuite tipc.compare. */
enum tipc_status report_compare_junit(const struct cmp_result *c, const char *path);
/* The single-file HTML report of a run (OUTPUT/tipc/report.html), readable offline: the verdict,
 * the stage table, a stage timeline, and for each training stage its loss, accuracy and throughput
 * curves per rank as inline SVG (no script, no network). Built from the report and the run's
 * metrics file (the stages append to it, so the file is the channel); see html.c. */
enum tipc_status report_html(const struct report *r, const char *metrics_path, const char *path);

#endif
