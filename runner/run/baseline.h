/* baseline.h: the gate at the end of `tipc run ... --baseline DIR` (baseline.c). */
#ifndef TIPC_RUN_BASELINE_H
#define TIPC_RUN_BASELINE_H
#include "run.h"
#include "../plan/plan.h"
#include "../report/compare.h"

/* Compare DIR (a->baseline) with this run: its speed records (benchmark_train) or its metrics file;
 * print the table on stdout. The result is for the JUnit and HTML reports (compare_free it). */
enum tipc_status run_baseline(const struct plan *p, const struct run_opts *a, const char *metrics,
                              struct cmp_result *res);

#endif
