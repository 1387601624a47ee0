/* run.h: `tipc run CONFIG MODE` below its option table (cmd/cmd_run.c): read the config, build the
 * plan (plan/), check its inputs and the cluster, then print it (--dry-run) or run every stage the
 * way the original harness does (proc.c, tee.c, steps.c) and report (report/). */
#ifndef TIPC_RUN_H
#define TIPC_RUN_H
#include <stdbool.h>
#include "../../core/status.h"
#include "../../prepare/prepare.h"   /* struct prepare_opts */
#include "optcheck.h"                    /* run_find_cmd */
#include "../report/compare.h"         /* struct cmp_thresholds */

struct run_opts {
    const char *config, *mode, *gpuid; /* the positional words; gpuid NULL when absent */
    const char *node_ip, *output, *junit, *dialect;   /* NULL when not given */
    const char *skip_gpu;       /* --skip-gpu REASON: skip the stages that need a GPU; NULL: run them */
    const char *timeout_text;   /* --stage-timeout as written (messages); timeout_s its value, 0: none */
    double timeout_s;
    bool dry_run, no_prepare, prepare;
    int max_restarts;           /* --max-restarts / TIPC_MAX_RESTARTS: the train stages' launcher's */
    int repeat;                 /* benchmark_train: run every case this many times (0, 1: once) */
    const char *baseline;       /* --baseline DIR: compare this run's figures with DIR's at the end */
    struct cmp_thresholds th;   /* the gate's limits (--max-ips-drop ...) */
    struct prepare_opts prep;   /* for python:tipc configs: offline unless TIPC_OFFLINE=0 */
    run_find_cmd find_cmd;      /* tipc's commands by name: their option tables check the plan (optcheck.h) */
};

/* The run's status: TIPC_OK when every stage passed or was skipped on request (--skip-gpu),
 * TIPC_EFAIL when one failed or was skipped because of a failure,
 * TIPC_EINTR when interrupted, or the error that stopped it (config, plan, output folder). */
enum tipc_status run_config(const struct run_opts *o);
/* The command line was refused (st) before run_config: a failing --junit report saying so, in
 * place of whatever an earlier run left there (pending.h). */
void run_refused(const struct run_opts *o, enum tipc_status st);

#endif
