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
#include "../../core/status.h"

#define LAUNCH_DEFAULT_PORT 6170   /* master port when nnodes > 1 and none is given */
#define LAUNCH_MAX_NODES 1024
#define LAUNCH_MAX_NPROC 256
#define LAUNCH_DEFAULT_WATCHDOG 120   /* s: a rank stuck this long is named and the job stopped */

struct launch_opts {
    /* as given (NULL / -1 when absent) */
    char **ips;          /* --ips, split on ',' (owned, NULL-terminated: core/strv.h) */
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
    bool log_append;     /* --log_overwrite=false (Paddle's default): workerlog.N goes on, not replaced */
    char *job_id;        /* --job_id, else env TIPC_JOB_ID, else "default" */
    int join_timeout_s;  /* --join_timeout, default 60 */
    int heartbeat_s;     /* --heartbeat_timeout: a silent node is declared dead after this, default 10 */
    int grace_s;         /* --grace: SIGTERM to SIGKILL, default 3 */
    int watchdog_s;      /* --watchdog (env TIPC_LAUNCH_WATCHDOG): name a rank stuck this long, 0 off; default 120 */
    bool echo_all;       /* --echo=all: every rank on the console, not only local rank 0 */
    bool standalone;     /* torchrun --standalone: one node, local store */
    int max_restarts;    /* --max_restarts / --max-restarts / --max_restart: failures the job survives */
    char *metrics, *stage; /* env TIPC_METRICS, TIPC_STAGE (set by tipc run): where restarts are recorded */
    char **cmd;          /* CMD ARGS... (points into argv) */
    int ncmd;
    /* from a scheduler's environment (sched.c), -1 / NULL when none */
    int sched_rank;      /* this node's index as the scheduler says */
    char *sched_rank_src;/* "SLURM_NODEID (Slurm)" */
    char *sched_master;  /* the scheduler's master host */
    int sched_port;
    /* resolved by launch_resolve() */
    char *token;         /* the job's secret: launch_secret() */
    char *self_ip;       /* this node's address, given to ranks for the collectives' transport */
    bool is_subcommand;  /* cmd[0] is a tipc subcommand: exec /proc/self/exe */
    bool help;           /* --help was given: the usage was printed, nothing else parsed */
};

/* Parse `tipc launch` arguments (argv[0] = "launch"; the table is flags.c). is_command(CMD)
 * says whether CMD is a tipc subcommand, run by this binary (cmd_exists; NULL: none is). TIPC_EUSAGE
 * with a message on bad input. */
enum tipc_status launch_parse(struct launch_opts *o, int argc, char **argv, bool (*is_command)(const char *word));
/* HOST:PORT or [V6]:PORT into *host (replaced, owned) and *port; `flag` names it in errors. */
enum tipc_status launch_parse_hostport(const char *flag, const char *s, char **host, int *port);
/* Fill in nnodes, nproc, gpus, node_rank, master, token, self_ip. TIPC_EUSAGE or TIPC_EDIST (node
 * not found in --ips, found twice, master unresolvable) with a message listing what was seen. */
enum tipc_status launch_resolve(struct launch_opts *o);
/* Join, spawn, watch; returns the exit code (0, a failing rank's code, TIPC_EDIST, TIPC_EINTR). */
int launch_run(struct launch_opts *o);
/* secret.c: the job's token from TIPC_JOB_TOKEN, TIPC_JOB_TOKEN_FILE (0600), a random one for
 * one node, this user's host secret when every node is on this host; else TIPC_EUSAGE. */
enum tipc_status launch_secret(struct launch_opts *o);
/* The job's fingerprint (16 hex digits, malloc'ed): what every node of a job must agree on and what
 * tells two jobs apart. TIPC_JOB_FINGERPRINT when set (`tipc run` derives one from its config, mode
 * and stage), else the command's words, except the values of per-node output flags (nodes may each
 * write their own folder). */
char *launch_fingerprint(const struct launch_opts *o);
void launch_opts_free(struct launch_opts *o);

/* hosts.c: */
/* This host's interface addresses (getifaddrs, numeric, IPv4 and IPv6), NULL-terminated, owned. */
char **launch_host_addrs(void);
/* Does `host` (address or name) resolve to any of addrs (NULL-terminated)? */
bool launch_host_is_one_of(const char *host, char **addrs);
/* Index of this host in ips[] given its addresses: >= 0, -1 none, -2 more than one. */
int launch_match_node(char **ips, int nips, char **addrs);
/* Do two host names/addresses resolve to a common address? */
bool launch_same_host(const char *a, const char *b);
/* sched.c: take nnodes/ips/node/master defaults from a scheduler's environment (Slurm,
 * OpenPAI, Paddle, torchrun: cluster_env.h); a flag that disagrees with it is TIPC_EUSAGE. */
enum tipc_status launch_apply_cluster(struct launch_opts *o);


#endif
