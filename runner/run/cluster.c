/* cluster.c: `tipc run` under a scheduler: the config's gpu_list must run on as many nodes as
 * the scheduler gave the job, else each node would run the chain alone and exit 0 (issue #12), or
 * (one node given, a multi-node item) wait for nodes that never come. */
#include "cluster.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../launch/cluster_env.h"
#include "../../core/check.h"
#include "../../core/banned.h"

static int stage_nodes(const struct stage *s)
{
    int n = 1;
    for (const char *p = s->ips; p && *p; p++) n += *p == ',';
    return n;
}

enum tipc_status run_check_cluster(const struct plan *p, const char *config)
{
    struct cluster_place c;
    TRY(cluster_detect(&c));
    enum tipc_status st = TIPC_OK;
    if (c.scheduler) {
        char *d = cluster_describe(&c);
        fprintf(stderr, "tipc: placed by %s\n", d);
        free(d);
    }
    if (c.scheduler && c.nnodes >= 1) {   /* one node given is a count too: a 2-node item would wait forever */
        int match = 0, other = 0, max = 1;
        for (int i = 0; i < p->n; i++) {
            if (p->st[i].kind != STAGE_TRAIN) continue;
            int n = stage_nodes(&p->st[i]);
            if (n == c.nnodes) match++;
            else if (n > 1) other = n;
            if (n > max) max = n;
        }
        if (other || (c.nnodes > 1 && !match)) {
            error_msg(TIPC_EUSAGE, "%s: %s runs this job on %d node%s (%s) but the config's gpu_list trains on %d%s: "
                      "every node would run %s", config, c.scheduler, c.nnodes, c.nnodes == 1 ? "" : "s", c.nnodes_var,
                      other ? other : max, max == 1 ? " (one node)" : "",
                      other ? "a job waiting for nodes that never come" : "the whole chain alone, unaware of the others");
            if (c.nnodes == 1)
                error_hint("ask the scheduler for %d nodes (sbatch --nodes=%d), list only this node in gpu_list, or set "
                           "TIPC_SCHEDULER=none to ignore the scheduler's variables", other, other);
            else
                error_hint("list the job's %d nodes in gpu_list ('IP1,IP2;0,1'), run on one node (srun -N1), or set "
                           "TIPC_SCHEDULER=none to ignore the scheduler's variables", c.nnodes);
            st = TIPC_EUSAGE;
        }
    }
    cluster_place_free(&c);
    return st;
}
