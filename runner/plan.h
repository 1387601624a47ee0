/* plan.h: expand a TIPC config + MODE into the ordered stages the original harness runs.
 *
 * Each stage carries the command STRING exactly as the original builds it (spacing included: it is
 * what the status line prints) and the same string parsed into argv + redirections (cmdline.h).
 * Step6's harness is followed for 32-line files, PaddleOCR's for 51-line files (tipc-spec.md 3.x),
 * including the CUDA_VISIBLE_DEVICES the original's `eval $env` / `unset` leave for each command.
 * For our own configs (`python:tipc`) the interpreter is this tipc binary and
 * `-m paddle.distributed.launch` becomes `launch`; gpu_list items are parsed structurally. */
#ifndef TIPC_PLAN_H
#define TIPC_PLAN_H
#include <stdbool.h>
#include "cmdline.h"
#include "config.h"

enum stage_kind { STAGE_TRAIN, STAGE_EVAL, STAGE_EXPORT, STAGE_INFER, STAGE_NOTE };
enum cvd_action { CVD_INHERIT, CVD_SET, CVD_UNSET }; /* CUDA_VISIBLE_DEVICES for a stage */

struct stage {
    enum stage_kind kind;
    char *cmd;             /* exact command string (STAGE_NOTE: the text echoed) */
    struct cmdline cl;     /* parsed cmd (empty for STAGE_NOTE) */
    char *log_path;        /* where the command's output goes, NULL when not redirected */
    bool cat_log;          /* print the log after the run, as the original's `cat` */
    enum cvd_action cvd;
    char *cvd_value;       /* CVD_SET */
    int line;              /* config line of the script that made this stage */
    char *ips;             /* train on several nodes: the --ips list, else NULL */
    char *rank_log_dir;    /* train stages: where `tipc launch` writes workerlog.RANK (TIPC_LOG_DIR) */
    char *matrix;          /* the loop values that make this stage, "norm_train gpus=0 autocast=False bs=1":
                            * stable across runs and output dirs, for short report names */
    int dep;               /* index of the stage whose output this one consumes (train for eval/export,
                            * export or else train for infer), -1 for none: skipped when that one fails */
};

struct plan {
    char *model;           /* model_name */
    char *mode;
    char *log_dir;         /* LOG_PATH */
    char *status_log;      /* LOG_PATH/results_python.log */
    bool ours;             /* python:tipc */
    enum cfg_family family;
    struct stage *st;
    int n;
};

struct plan_opts {
    const char *output_dir; /* NULL: ./test_tipc/output/MODEL/MODE or ./logs/MODEL/MODE */
    const char *gpuid;      /* whole_infer's optional 3rd argument, NULL if absent */
};

/* No real config comes near these; a runaway '|' list (lists multiply) does. */
#define PLAN_MAX_STAGES 4096
#define PLAN_MAX_BYTES (8 << 20) /* total length of all command strings */

extern const char *const plan_modes[]; /* NULL-terminated list of known MODEs */

/* Build the plan. Errors (unknown mode, unknown trainer, malformed gpu_list, shell syntax in a
 * command) print `file:line: ...` and return TIPC_EUSAGE with *p empty. */
enum tipc_status plan_build(struct plan *p, const struct tipc_config *cfg, const char *mode,
                            const struct plan_opts *o);
void plan_free(struct plan *p);
/* Number of stages that run a command (all but STAGE_NOTE). */
int plan_count_runs(const struct plan *p);
const char *stage_kind_name(enum stage_kind k);

#endif
