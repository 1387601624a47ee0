/* launch.h: the per-node multi-process launcher behind `tipc launch` (Paddle's
 * paddle.distributed.launch / torchrun, as one C process per node).
 *
 * launch_parse() turns the command line into options; launch_resolve() finds this node (index in
 * --ips by interface address, or --node_ip / POD_IP / scheduler envs), the master endpoint, the job
 * id and token; launch_run() joins the job through the rendezvous store (node 0 serves it), spawns
 * one rank per device, tees output, and watches: any rank failing anywhere stops every node.
 * Flags, env and exit codes: docs/distributed.md. Not a scheduler: it starts nothing on other hosts. */
#ifndef TIPC_LAUNCH_H
#define TIPC_LAUNCH_H

#include <stdbool.h>
#include "../core/status.h"

#define LAUNCH_DEFAULT_PORT 6170   /* master port when nnodes > 1 and none is given */
#define LAUNCH_MAX_NODES 1024
#define LAUNCH_MAX_NPROC 256

struct launch_opts {
    /* as given (NULL / -1 when absent) */
    char **ips;          /* --ips, split on ',' (owned) */
    int nips;
    int *gpus;           /* --gpus / --devices: device ids, one rank each (owned) */
    int ngpus;
    int nproc;           /* --nproc_per_node */
    int nnodes;          /* --nnodes */
    int node_rank;       /* --node_rank */
    char *node_ip;       /* --node_ip (else env POD_IP) */
    char *master_host;   /* --master HOST:PORT, --master-addr, --rdzv-endpoint */
    char *env_master;    /* env TIPC_MASTER=HOST:PORT (how `tipc run` passes --master down) */
    int master_port;
    char *log_dir;       /* --log_dir, default "log" */
    char *job_id;        /* --job_id, else env TIPC_JOB_ID, else "default" */
    int join_timeout_s;  /* --join_timeout, default 60 */
    int heartbeat_s;     /* --heartbeat_timeout: a silent node is declared dead after this, default 10 */
    int grace_s;         /* --grace: SIGTERM to SIGKILL, default 3 */
    bool echo_all;       /* --echo=all: every rank on the console, not only local rank 0 */
    char **cmd;          /* CMD ARGS... (points into argv) */
    int ncmd;
    /* resolved by launch_resolve() */
    char *token;         /* env TIPC_JOB_TOKEN, else generated (1 node) or derived (warned) */
    char *self_ip;       /* this node's address, given to ranks for the collectives' transport */
    bool is_subcommand;  /* cmd[0] is a tipc subcommand: exec /proc/self/exe */
    bool help;           /* --help was given: the usage was printed, nothing else parsed */
};

/* Parse `tipc launch` arguments (argv[0] = "launch"; table in cmd_launch.c). TIPC_EUSAGE with a
 * message on bad input. */
enum tipc_status launch_parse(struct launch_opts *o, int argc, char **argv);
/* HOST:PORT or [V6]:PORT into *host (replaced, owned) and *port; `flag` names it in errors. */
enum tipc_status launch_parse_hostport(const char *flag, const char *s, char **host, int *port);
/* Fill in nnodes, nproc, gpus, node_rank, master, token, self_ip. TIPC_EUSAGE or TIPC_EDIST (node
 * not found in --ips, found twice, master unresolvable) with a message listing what was seen. */
enum tipc_status launch_resolve(struct launch_opts *o);
/* Join, spawn, watch; returns the exit code (0, a failing rank's code, TIPC_EDIST, TIPC_EINTR). */
int launch_run(struct launch_opts *o);
void launch_opts_free(struct launch_opts *o);

/* This host's interface addresses (getifaddrs, numeric, IPv4 and IPv6), NULL-terminated, owned. */
char **launch_host_addrs(void);
/* Index of this host in ips[] given its addresses: >= 0, -1 none, -2 more than one. */
int launch_match_node(char **ips, int nips, char **addrs);


#endif
