/* cluster.h: check `tipc run`'s plan against a scheduler's view of the job (cluster_env.h). */
#ifndef TIPC_RUN_CLUSTER_H
#define TIPC_RUN_CLUSTER_H

#include "../plan/plan.h"

/* Say on stderr which scheduler placed this node; TIPC_EUSAGE (nothing run) when the scheduler gave
 * the job N > 1 nodes and no training of the plan runs on exactly N nodes, or one runs on another
 * count M > 1. */
enum tipc_status run_check_cluster(const struct plan *p, const char *config);

#endif
