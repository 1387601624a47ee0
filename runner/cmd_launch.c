/* cmd_launch.c: `tipc launch`, the per-node multi-process launcher (runner/launch*.c). */
#include "cmds.h"

#include <stdio.h>
#include <string.h>

#include "launch.h"
#include "../core/check.h"
#include "../core/banned.h"

const char usage_launch[] =
    "usage: tipc launch [--ips=IP1,IP2,...] [--gpus=0,1,...] [--nproc_per_node=N] [--log_dir=DIR]\n"
    "                   [--master=HOST:PORT] [--node_ip=IP] [--job_id=ID] [--join_timeout=S] CMD [ARGS...]\n"
    "\n"
    "Run CMD once per device on this node as one rank of a data-parallel job spanning every node in\n"
    "--ips. Run the same command on each node. CMD is a tipc subcommand (train, export, ...) run by\n"
    "this tipc binary, or a program found on PATH; it is executed directly, never through a shell.\n"
    "\n"
    "  --ips=IP1,IP2        the job's nodes; this node is the entry matching one of its addresses\n"
    "                       (node 0, the first, serves the rendezvous store)\n"
    "  --gpus=0,1           devices, one rank each (on CPU: slots; at most 256); sets FLAGS_selected_gpus\n"
    "  --nproc_per_node=N   ranks per node when --gpus is not given (default 1)\n"
    "  --log_dir=DIR        per-rank logs DIR/workerlog.RANK (default env TIPC_LOG_DIR, which `tipc run`\n"
    "                       sets to the training's output folder + /log; else ./log)\n"
    "  --master=HOST:PORT   rendezvous endpoint (else env TIPC_MASTER; default: first of --ips, port 6170;\n"
    "                       one node: port 0 = a free port)\n"
    "  --node_ip=IP         say which entry of --ips is this node (else env POD_IP, a scheduler's\n"
    "                       index, else the interface addresses)\n"
    "  --node_rank=N        this node's index directly (Paddle: --rank)\n"
    "  --job_id=ID          job name in the store (default env TIPC_JOB_ID or 'default')\n"
    "  --join_timeout=S     fail if not every node joined within S seconds (default 60)\n"
    "  --heartbeat_timeout=S  declare a silent node dead after S seconds (default 10)\n"
    "  --grace=S            SIGTERM to SIGKILL when stopping ranks (default 3)\n"
    "  --watchdog=S         name a rank stuck S seconds and stop the job; 0 = off (default env\n"
    "                       TIPC_LAUNCH_WATCHDOG, else 120)\n"
    "  --echo=all           print every rank's output, not only local rank 0's\n"
    "torchrun spellings work too: --nnodes --nproc-per-node --node-rank --master-addr --master-port\n"
    "--rdzv-endpoint --rdzv-id --standalone; --rdzv-backend, --rdzv-conf and --max-restarts (Paddle:\n"
    "--max_restart) are accepted, and say on stderr that tipc does not use them.\n"
    "\n"
    "Under Slurm, torchrun/Kubeflow (PET_*), Paddle (PADDLE_*) or OpenPAI, the scheduler's node count,\n"
    "node list, node index and master are the defaults, stderr says which variable placed the node,\n"
    "and a flag that disagrees with the scheduler is an error (TIPC_SCHEDULER=none ignores them).\n"
    "\n"
    "Each rank gets RANK LOCAL_RANK WORLD_SIZE LOCAL_WORLD_SIZE MASTER_ADDR MASTER_PORT TIPC_JOB_ID\n"
    "TIPC_JOB_TOKEN TIPC_NODE_RANK TIPC_NNODES TIPC_NODE_IP TIPC_DEVICE and Paddle's PADDLE_TRAINER_ID\n"
    "PADDLE_TRAINERS_NUM PADDLE_CURRENT_ENDPOINT PADDLE_TRAINER_ENDPOINTS FLAGS_selected_gpus.\n"
    "The job's secret: env TIPC_JOB_TOKEN (the same on every node) or TIPC_JOB_TOKEN_FILE (a 0600 file);\n"
    "one node, or nodes all on this host, make their own; several hosts without one are refused.\n"
    "\n"
    "If any rank fails on any node, every node stops its ranks within seconds.\n"
    "Exit: 0 all ranks of all nodes succeeded; the code of this node's first failing rank (128+N for\n"
    "signal N); 2 bad usage; 4 distributed set-up failed or a rank on another node failed; 130\n"
    "interrupted. See docs/distributed.md.\n";

int cmd_launch(int argc, char **argv)
{
    for (int i = 1; i < argc && !strncmp(argv[i], "-", 1); i++)
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            fputs(usage_launch, stdout);
            return TIPC_OK;
        }
    struct launch_opts o;
    enum tipc_status st = launch_parse(&o, argc, argv);
    if (!st) st = launch_resolve(&o);
    int code = st ? (int)st : launch_run(&o);
    launch_opts_free(&o);
    return code;
}
