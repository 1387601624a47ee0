/* rank_env.h: which launcher started this rank, read from its environment (docs/distributed.md
 * "Launchers"), and where the job's ranks meet. First match wins:
 *   torchrun        TORCHELASTIC_RUN_ID; RANK, WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE, GROUP_RANK,
 *                   GROUP_WORLD_SIZE; the agent's c10d store at MASTER_ADDR:MASTER_PORT
 *                   (TORCHELASTIC_USE_AGENT_STORE=True; else rank 0 serves it there)
 *   tipc launch     TIPC_JOB_TOKEN and TIPC_NODE_RANK; its HTTP store at MASTER_ADDR:MASTER_PORT
 *   Paddle          PADDLE_TRAINER_ID, PADDLE_TRAINERS_NUM (paddle.distributed.launch); rank 0 serves
 *                   a c10d store at PADDLE_MASTER, else at the first of PADDLE_TRAINER_ENDPOINTS
 *   mpirun          OMPI_COMM_WORLD_RANK/SIZE (Open MPI), PMI_RANK/PMI_SIZE (MPICH, Intel MPI); rank 0
 *                   serves at MASTER_ADDR (default 127.0.0.1 when every rank is local):MASTER_PORT
 *   Slurm           srun's SLURM_STEP_NUM_TASKS > 1 (one task per rank; not with TIPC_SCHEDULER=none),
 *                   SLURM_PROCID, SLURM_LOCALID,
 *                   SLURM_NODEID; rank 0 serves at MASTER_ADDR:MASTER_PORT, else the step's first
 *                   node, port 15000 + SLURM_JOB_ID mod 10000
 *   env://          RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT alone (Kubeflow's PyTorchJob, a script):
 *                   rank 0 serves there, as torch's env:// init does
 * Also read here, the rank's other variables from its launcher: TIPC_JOB_ID, TIPC_JOB_TOKEN, TIPC_NODE_IP,
 * TIPC_LAUNCH_WATCHDOG.
 * WORLD_SIZE absent or 1 under none of them: one process, no store. A variable that is set but
 * malformed (WORLD_SIZE=abc, RANK >= WORLD_SIZE, a port out of range) is a usage error naming it,
 * never a silent one-rank job. */
#ifndef TIPC_RANK_ENV_H
#define TIPC_RANK_ENV_H

#include "../../core/status.h"

enum rank_store {
    RANK_STORE_NONE,       /* world 1 */
    RANK_STORE_HTTP,       /* tipc launch's rendezvous store (core/kv.h) */
    RANK_STORE_C10D,       /* a c10d TCPStore that the launcher runs (torchrun's agent) */
    RANK_STORE_C10D_HOST,  /* a c10d TCPStore that rank 0 serves, the others join */
};

struct rank_env {
    const char *launcher;      /* "torchrun", "tipc launch", "Paddle", "mpirun", "Slurm", "env://"; NULL: none */
    int rank, world;
    const char *rank_var, *world_var;   /* the variables they came from, for messages */
    int local_rank, local_world;        /* -1 unknown */
    int node, nnodes;                   /* -1 unknown */
    enum rank_store store;
    char host[256];                     /* the store's host and port */
    int port;
    const char *host_var, *port_var;
    int restart;                        /* the launcher's attempt (TIPC_RESTART_COUNT, TORCHELASTIC_RESTART_COUNT) */
    const char *job_id, *token;         /* tipc launch's TIPC_JOB_ID (default "default"), TIPC_JOB_TOKEN */
    const char *node_ip;                /* TIPC_NODE_IP: the address Gloo binds; NULL: found from the store's route */
    int watchdog_s;                     /* TIPC_LAUNCH_WATCHDOG (default 120, 0 off): the ranks' job watchdog
                                           where no tipc launch runs one (comm_watch.h) */
};

/* Read the environment. TIPC_EUSAGE, with a message naming the variable, on a malformed value or
 * when a launcher's variables say world > 1 but not where the store is. */
enum tipc_status rank_env_read(struct rank_env *e);

/* "torchrun, c10d store at 127.0.0.1:29500" / "tipc launch, rendezvous store at ..." (static buffer). */
const char *rank_env_describe(const struct rank_env *e);

#endif
