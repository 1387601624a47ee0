/* bench_run.h: `tipc run CONFIG benchmark_train [PARAMS]`'s plan and folders (bench_run.c);
 * the plan itself is plan/bench.h's. */
#ifndef TIPC_RUN_BENCH_RUN_H
#define TIPC_RUN_BENCH_RUN_H
#include "run.h"
#include "../plan/plan.h"

/* Read the config and build its benchmark_train plan (PARAMS: a->gpuid, the third word); sha gets
 * the SHA-256 of the config's bytes (the job id's). */
enum tipc_status bench_plan_load(struct plan *p, const struct run_opts *a, const struct plan_opts *po, char sha[65]);
/* The folders a stage's benchmark logs go into (train_log/, profiling_log/, benchmark_log/). */
enum tipc_status bench_stage_dirs(const struct stage *s);
/* A harness run that builds no command still leaves its (empty) log, as the original's `> LOG`. */
enum tipc_status bench_empty_log(const struct stage *s);

#endif
