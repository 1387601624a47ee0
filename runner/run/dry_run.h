/* dry_run.h: the --dry-run printer of `tipc run` (run/ internal). */
#ifndef TIPC_RUN_DRY_RUN_H
#define TIPC_RUN_DRY_RUN_H

#include "run.h"   /* struct run_opts */

struct plan;
/* Print p as `tipc run` with options a would run it (stdout). */
void run_print_plan(const struct plan *p, const struct run_opts *a);

#endif
