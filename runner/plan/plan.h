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
#include "dialect.h"
#include "../../core/strv.h"

/* STAGE_NOTE: a line the original echoes; STAGE_LINKS: PaddleClas's `ln -s model.* inference.*` in the
 * folder `cmd` (made only when that folder exists); STAGE_COPY: PaddleDetection's `cp CMD/(all) APPEND_TO/`
 * (the files of folder `cmd` into folder `append_to`). None runs a command or gets a status line. */
enum stage_kind { STAGE_TRAIN, STAGE_EVAL, STAGE_EXPORT, STAGE_INFER, STAGE_SPEED, STAGE_NOTE, STAGE_LINKS, STAGE_COPY,
                  STAGE_APPEND };
/* STAGE_SPEED: benchmark_train's analysis of a training log into a speed record (`tipc speed`, in
 * place of Paddle's analysis.py; plan/bench.c). It runs a command and gets a status line. */
/* STAGE_APPEND: PaddleSeg's `cat CMD >> APPEND_TO` after a launched train (no status line). */

/* PaddleSeg decides the weights' name only after a train has run: commands carry this token, which
 * `tipc run` replaces with plan.seg_model, or the train stage's model_fallback once SAVE/NAME is
 * found missing (the original's `[ ! -f SAVE/NAME ] && NAME=iter_N/model.pdparams`). */
#define PB_MODEL_TOKEN "\001MODEL\001"
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
    bool launched;         /* a train through a launcher (`tipc launch`, Paddle's launch module) */
    char *rank_log_dir;    /* train stages: where `tipc launch` writes workerlog.RANK (TIPC_LOG_DIR) */
    char *matrix;          /* the loop values that make this stage, "norm_train gpus=0 autocast=False bs=1":
                            * stable across runs and output dirs, for short report names */
    bool needs_gpu;        /* runs on a GPU: an inference with use_gpu True, a Paddle config's
                            * training on a device (`tipc run --skip-gpu` skips it) */
    int dep;               /* index of the stage whose output this one consumes (train for eval/export,
                            * export or else train for infer), -1 for none: skipped when that one fails */
    char *cwd[2];          /* folders the original `cd`s into first, in order; a missing one is
                              skipped as the shell goes on after a failed cd (NULL: none) */
    char *status_file;     /* the status is whether this file can be read, as the original's
                              `cat FILE >> append_to` decides it (PaddleClas, PaddleOCR f773 train) */
    char *append_to;       /* ... and the file's text is appended there (created even when missing) */
    char *exec;            /* the string `cl` was parsed from, when it is not `cmd` (NULL: cmd) */
    char *model_probe;     /* after this train: if MODEL_PROBE/<weights name> is no file ... */
    char *model_fallback;  /* ... the weights name becomes this (PaddleSeg) */
    /* benchmark_train (plan/bench.c): */
    char *tee_log;         /* the stage's whole output also goes here (the original's `bash HARNESS > LOG
                              2>&1`), appended when tee_append, else truncated first; NULL: none */
    bool tee_append;
    char *status_log;      /* its status line goes to this results log, not the plan's (NULL: the plan's) */
    double timeout_s;      /* the original's own `timeout 5m` (0: none; --stage-timeout wins) */
    char *record;          /* STAGE_SPEED: the speed record it writes (--speed_log_file) */
};

struct plan {
    char *model;           /* model_name */
    char *mode;
    char *log_dir;         /* LOG_PATH */
    char *status_log;      /* LOG_PATH/results_python.log */
    bool ours;             /* python:tipc */
    enum cfg_family family;
    const struct dialect *dialect;
    const char *dialect_why; /* what chose the dialect (not owned) */
    char *results_header;  /* a line the harness appends to results_python.log first, or NULL */
    char *seg_model;       /* PB_MODEL_TOKEN's first value, or NULL */
    int max_restarts;      /* the restart budget of the launched trains (`tipc launch --max_restarts`):
                            * > 0 only for python:tipc configs given one (plan_opts) */
    struct stage *st;
    int n;
    struct strv env;       /* benchmark_train: the section's `flags:` as NAME=value, set for every stage */
    char *save_log;        /* benchmark_train: SAVE_LOG (train_log/, index/, benchmark_log/), else NULL */
};

struct plan_opts {
    const char *output_dir; /* NULL: ./test_tipc/output/MODEL/MODE or ./logs/MODEL/MODE */
    const char *gpuid;      /* whole_infer's optional 3rd argument, NULL if absent */
    const struct dialect *dialect; /* NULL: the reference dialect */
    const char *dialect_why;
    int max_restarts;       /* > 0: our configs' launched trains get `tipc launch --max_restarts=N` */
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
/* The output directory plan_build would give this config (--output, else the dialect's default),
 * malloc'ed; NULL when the config cannot say (no model_name). For a run refused before its plan
 * exists: the folder whose reports must not stay green. */
char *plan_output_dir(const struct tipc_config *cfg, const char *mode, const struct plan_opts *o);
/* Number of stages that run a command (train, eval, export, infer, speed; not NOTE, LINKS, COPY, APPEND). */
int plan_count_runs(const struct plan *p);
const char *stage_kind_name(enum stage_kind k);

#endif
