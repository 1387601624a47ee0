/* cluster_env.h: where a scheduler or launcher placed this node, read from its environment, so a
 * job that a scheduler spread over N nodes never runs as N silent one-node jobs (issue #12 s.3).
 *
 * Read, first scheduler present wins (docs/distributed.md "Schedulers"):
 *   OpenPAI   PAI_TASK_INDEX, PAI_TASK_ROLE_TASK_COUNT_<role>, PAI_HOST_IP_<role>_<i>
 *   Slurm     SLURM_JOB_NODELIST (a hostlist: node[1-2,5],b7), SLURM_NNODES, SLURM_NODEID,
 *             SLURM_PROCID, SLURM_LOCALID (one tipc per node: a second task on a node is an error)
 *   Paddle    PADDLE_NNODES, PADDLE_RANK, PADDLE_TRAINER_ID, PADDLE_TRAINERS, PADDLE_MASTER
 *   torchrun  PET_NNODES, PET_NODE_RANK, PET_MASTER_ADDR, PET_MASTER_PORT, PET_NPROC_PER_NODE,
 *             NODE_RANK, MASTER_ADDR, MASTER_PORT (Kubeflow's PyTorchJob sets these)
 * MASTER_ADDR/MASTER_PORT also name the master under Slurm when set (torchrun-on-Slurm scripts);
 * else the first node of the list, port 15000 + SLURM_JOB_ID % 10000 (jobs sharing a node differ).
 * POD_IP (Paddle, Kubernetes) is this node's address. TIPC_SCHEDULER=none ignores all of them.
 * Every value kept remembers the variable it came from, for the messages. */
#ifndef TIPC_CLUSTER_ENV_H
#define TIPC_CLUSTER_ENV_H

#include "../../core/status.h"

#define CLUSTER_MAX_HOSTS 1024   /* = LAUNCH_MAX_NODES: a longer node list is refused */

struct cluster_place {
    const char *scheduler;    /* "Slurm", "OpenPAI", "Paddle", "torchrun"; NULL: none found */
    int nnodes;               /* -1 unknown */
    const char *nnodes_var;   /* the variable it came from ("SLURM_NNODES"), or NULL */
    int node_rank;            /* -1 unknown */
    const char *rank_var;
    char **hosts;             /* the job's nodes in node order (owned), NULL when not given */
    int nhosts;
    const char *hosts_var;
    char *master_host;        /* owned; NULL unknown */
    const char *master_var;
    int master_port;          /* -1 unknown */
    const char *port_var;
    int nproc;                /* ranks per node (PET_NPROC_PER_NODE), -1 unknown */
    const char *nproc_var;
};

/* Read the environment. TIPC_EUSAGE with a message naming the variable when a value is malformed
 * (not a number, a bad hostlist, counts that disagree, two Slurm tasks on one node). */
enum tipc_status cluster_detect(struct cluster_place *c);
void cluster_place_free(struct cluster_place *c);

/* One line for stderr: "Slurm: node 1 of 2 (SLURM_NODEID, SLURM_NNODES), hosts from
 * SLURM_JOB_NODELIST, master 'a1' (SLURM_JOB_NODELIST)". malloc'ed. */
char *cluster_describe(const struct cluster_place *c);

/* Expand a Slurm hostlist ("a[01-03],b7", "r[1-2]-n[1,3]") into names, in order, zero padding
 * kept: *out is NULL-terminated (free it with strv_free, core/strv.h). TIPC_EUSAGE (message names
 * `var`) on bad syntax or more than CLUSTER_MAX_HOSTS names. */
enum tipc_status hostlist_expand(const char *var, const char *s, char ***out, int *n);

#endif
