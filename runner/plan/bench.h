/* bench.h: `tipc run CONFIG benchmark_train [PARAMS]`: the plan that Paddle's
 * test_tipc/benchmark_train.sh runs.
 *
 * The original copies the config to test_tipc/benchmark_train.txt, reads its train_benchmark_params
 * section (batch sizes, precisions, epochs, model types, workers, profiler options, FLAGS_* env),
 * then for each batch size x precision x device layout (N1C1, N1C4, N2C4: nodes x cards) x model type
 * rewrites lines of that copy with sed and runs the repo's own harness on it in MODE benchmark_train
 * (output to train_log/REPO_MODEL_bsB_FP_DP_NxCy_log; a profiling run first on one card), then
 * Paddle's analysis.py, which turns the log into the speed record index/..._speed. Each repo's
 * script differs (the table in bench.c); 32-line configs (ours) follow a layout of our own (README).
 *
 * Here the same edits are made to the config's text in memory, the dialect's own builder builds
 * each edited config's benchmark_train plan, and its training stages go into one plan with, after
 * each, a STAGE_SPEED running `tipc speed` with analysis.py's arguments (report/speed.h). */
#ifndef TIPC_PLAN_BENCH_H
#define TIPC_PLAN_BENCH_H
#include <stddef.h>
#include "plan.h"

struct bench_opts {
    const char *params;      /* the third word: MODELTYPE_bsN_FP_RUNMODE_NxCy or dynamicTostatic; NULL: none */
    const char *repo_name;   /* the log names' first part: the current folder's name, as the original */
    const char *save_log;    /* SAVE_LOG: BENCHMARK_LOG_DIR, else the current folder (ours: the output) */
    const char *timer_only;  /* PROFILING_TIMER_ONLY: "no" skips the profiling run; default "True" */
    int repeat;              /* every case this many times (>1: under SAVE_LOG/repeat_K/) */
};

/* Build the plan for `text` (the config file's `len` bytes, read from `path`). Errors print
 * `path:line: ...` and return TIPC_EUSAGE with *p empty. */
enum tipc_status plan_build_benchmark(struct plan *p, const char *path, const char *text, size_t len,
                                      const struct plan_opts *o, const struct bench_opts *bo);

/* `set_gpu_id NxCy`: the devices a layout uses on one node, "0,1,..": (C-1)/N+1 of them. NULL (and
 * a message in err) when the layout is not N<int>C<int>. Malloc'ed. */
char *bench_gpu_ids(const char *layout, char *err, size_t errlen);

#endif
