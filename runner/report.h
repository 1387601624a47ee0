/* report.h: what `tipc run` tells the world: the original's status lines (stdout + appended to
 * results_python.log), the closing `N passed, N failed` line, and JUnit XML for CI. */
#ifndef TIPC_REPORT_H
#define TIPC_REPORT_H
#include <stdbool.h>
#include <stdio.h>
#include "../core/status.h"

struct report_case {
    char *kind;       /* train / eval / export / infer */
    char *cmd;        /* exact command string */
    char *log_path;   /* NULL when not redirected */
    int status;       /* exit status (0 = passed) */
    double seconds;
    int line;         /* config line */
};

struct report {
    char *model, *mode, *config;
    char *status_log;         /* results_python.log path */
    bool color;               /* stdout is a terminal */
    struct report_case *c;
    int n;
    size_t cap;
};

/* Start a report; `status_log` is appended to, never truncated (as the original's `tee -a`). */
void report_init(struct report *r, const char *config, const char *model, const char *mode, const char *status_log);
void report_free(struct report *r);

/* The status line for one finished command, as Step6's status_check prints it:
 * `Run successfully with command - MODEL - CMD!` (or `Run failed ...`). Printed to stdout (yellow
 * with the original's exact escapes on a terminal, plain otherwise) and appended, plain, to the
 * results log. Returns TIPC_EIO if the log cannot be written. */
enum tipc_status report_stage(struct report *r, const char *kind, const char *cmd, const char *log_path,
                              int status, double seconds, int line);

/* Format one status line (without colour or newline) into a malloc'ed string. */
char *report_status_line(const char *model, const char *cmd, bool ok);

int report_failed(const struct report *r);
/* Print `N passed, N failed` to stdout. */
void report_summary(const struct report *r, FILE *out);
/* Write JUnit XML atomically (temp file + rename). */
enum tipc_status report_junit(const struct report *r, const char *path);

#endif
