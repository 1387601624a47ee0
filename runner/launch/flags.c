/* flags.c: `tipc launch`'s option table (Paddle's and torchrun's spellings; adding a flag is
 * one line) and launch_parse(). The command is cmd_launch.c, finding the node and the master
 * node.c, the running part agent.c. */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "launch.h"
#include "../../core/check.h"
#include "../../core/options.h"
#include "../../core/parse.h"
#include "../../core/strv.h"
#include "../../engine/backend/backend.h"   /* backend_gpu_count: --nproc_per_node=auto|gpu */
#include "../../core/banned.h"

static const char about[] =
    "Run CMD once per device on this node as one rank of a data-parallel job spanning every node in\n"
    "--ips. Run the same command on each node. CMD is a tipc subcommand (train, export, ...) run by\n"
    "this tipc binary, or a program found on PATH; it is executed directly, never through a shell.\n"
    "Everything from CMD on is CMD's: `tipc launch --gpus=0,1 train --help` shows train's help.\n"
    "`--` ends launch's options (for a CMD that starts with '-').\n";
static const char footer[] =
    "Options take `--name=value` or `--name value`; '-' and '_' are the same in a name (torchrun's\n"
    "--nproc-per-node is --nproc_per_node).\n"
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
    "If any rank fails on any node, every node stops its ranks within seconds; with --max_restarts N\n"
    "the job then re-forms (a fresh rendezvous round) and resumes, at most N times (docs/distributed.md).\n"
    "Exit: 0 all ranks of all nodes succeeded; the code of this node's first failing rank (128+N for\n"
    "signal N); 2 bad usage; 4 distributed set-up failed or a rank on another node failed; 130\n"
    "interrupted. See docs/distributed.md.\n";

/* ---- values that need more than a number ----------------------------------------------------- */
static enum tipc_status set_owned_str(const struct opt *op, const char *v, void *dst)
{
    (void)op;
    char **s = dst;
    free(*s);
    *s = xstrdup(v);
    return TIPC_OK;
}

static enum tipc_status set_ips(const struct opt *op, const char *v, void *dst)
{
    (void)op;
    struct launch_opts *o = dst;
    strv_free(o->ips);
    struct strv ips = STRV_INIT;
    strv_split(&ips, v, ',', false);
    o->ips = ips.v;
    o->nips = (int)ips.n;
    return TIPC_OK;
}

static enum tipc_status set_gpus(const struct opt *op, const char *v, void *dst)
{
    (void)op;
    struct launch_opts *o = dst;
    struct strv items = STRV_INIT;
    strv_split(&items, v, ',', false);
    int n = (int)items.n;
    if (n > LAUNCH_MAX_NPROC) {
        strv_clear(&items);
        return error_msg(TIPC_EUSAGE, "launch: --gpus lists %d entries; at most %d ranks per node", n,
                         LAUNCH_MAX_NPROC);
    }
    free(o->gpus);
    o->gpus = xcalloc((size_t)n + 1, sizeof *o->gpus);
    o->ngpus = n;
    enum tipc_status st = TIPC_OK;
    for (int i = 0; i < n && !st; i++)
        if (!parse_int(items.v[i], 0, 4095, &o->gpus[i]))
            st = error_msg(TIPC_EUSAGE, "launch: --gpus '%s' is not an integer in [0, 4095]", items.v[i]);
    strv_clear(&items);
    return st;
}

static enum tipc_status set_nnodes(const struct opt *op, const char *v, void *dst)
{
    (void)op;
    if (strchr(v, ':'))
        return error_msg(TIPC_EUSAGE, "launch: elastic --nnodes '%s' is not supported; give one number", v);
    if (!parse_int(v, 1, LAUNCH_MAX_NODES, dst))
        return error_msg(TIPC_EUSAGE, "launch: option '--nnodes' must be in 1..%d, got %s", LAUNCH_MAX_NODES, v);
    return TIPC_OK;
}

/* torchrun's --nproc_per_node: N, or gpu (one rank per CUDA device), cpu (one per CPU), auto (gpu
 * when there is a device, else cpu). */
static enum tipc_status set_nproc(const struct opt *op, const char *v, void *dst)
{
    (void)op;
    int *n = dst, gpus = -1;
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    if (!strcmp(v, "gpu") || !strcmp(v, "auto")) gpus = backend_gpu_count();
    if (!strcmp(v, "gpu") && gpus < 1)
        return error_msg(TIPC_EUSAGE, "launch: --nproc_per_node=gpu but this tipc sees no CUDA device%s",
                         gpus < 0 ? "" : " (a build without CUDA, or no GPU)");
    if (gpus > 0) *n = gpus;
    else if (!strcmp(v, "cpu") || !strcmp(v, "auto")) *n = cpus < 1 ? 1 : cpus > LAUNCH_MAX_NPROC ? LAUNCH_MAX_NPROC : (int)cpus;
    else if (!parse_int(v, 1, LAUNCH_MAX_NPROC, n))
        return error_msg(TIPC_EUSAGE, "launch: --nproc_per_node '%s': want 1..%d, auto, cpu or gpu", v, LAUNCH_MAX_NPROC);
    return TIPC_OK;
}

/* Paddle's --log_overwrite BOOL: true replaces each workerlog.N (tipc's default), false appends. */
static enum tipc_status set_log_overwrite(const struct opt *op, const char *v, void *dst)
{
    bool overwrite = true;
    TRY(opt_on_off(op, v, &overwrite));
    *(bool *)dst = !overwrite;
    return TIPC_OK;
}

/* Paddle's --run_mode: tipc launch runs collective (data-parallel) jobs only. */
static enum tipc_status set_run_mode(const struct opt *op, const char *v, void *dst)
{
    (void)op, (void)dst;
    if (strcmp(v, "collective"))
        return error_msg(TIPC_EUSAGE, "launch: --run_mode=%s: tipc launch runs collective jobs only (no parameter "
                         "servers or RPC); use --run_mode=collective or leave it out", v);
    return TIPC_OK;
}

static enum tipc_status set_master(const struct opt *op, const char *v, void *dst)
{
    struct launch_opts *o = dst;
    return launch_parse_hostport(op->name, v, &o->master_host, &o->master_port);
}

static enum tipc_status set_echo(const struct opt *op, const char *v, void *dst)
{
    (void)op;
    if (strcmp(v, "all") && strcmp(v, "0"))
        return error_msg(TIPC_EUSAGE, "launch: --echo '%s': expected 'all' or '0'", v);
    *(bool *)dst = !strcmp(v, "all");
    return TIPC_OK;
}

static enum tipc_status accept_unused(const struct opt *op, const char *v, void *dst)
{
    (void)dst;
    fprintf(stderr, "launch: %s=%s is accepted but not used: tipc always meets through its own HTTP store "
                    "on the master (docs/distributed.md)\n", op->name, v);
    return TIPC_OK;
}

enum tipc_status launch_parse_hostport(const char *flag, const char *s, char **host, int *port)
{
    const char *colon = strrchr(s, ':');
    if (!colon || colon == s)
        return error_msg(TIPC_EUSAGE, "launch: %s '%s' is not HOST:PORT", flag, s);
    const char *h = s, *he = colon;
    if (*h == '[' && he[-1] == ']') h++, he--;   /* [v6]:port */
    if (!parse_int(colon + 1, 0, 65535, port))
        return error_msg(TIPC_EUSAGE, "launch: %s '%s': bad port '%s'", flag, s, colon + 1);
    free(*host);
    *host = xstrndup(h, (size_t)(he - h));
    return TIPC_OK;
}

/* ---- the table ----------------------------------------------------------------------------- */
enum tipc_status launch_parse(struct launch_opts *o, int argc, char **argv, bool (*is_command)(const char *word))
{
    memset(o, 0, sizeof *o);
    o->nproc = o->nnodes = o->node_rank = o->master_port = o->sched_rank = o->sched_port = -1;
    o->join_timeout_s = 60;
    o->heartbeat_s = 10;
    o->grace_s = 3;
    o->watchdog_s = LAUNCH_DEFAULT_WATCHDOG;
    const struct opt opts[] = {
        {"--ips", NULL, OPT_FN, o, NULL, 0, 0, "IP1,IP2", "the job's nodes; this node is the entry matching one of its\n"
         "addresses (node 0, the first, serves the rendezvous store)", NULL, set_ips},
        {"--gpus", "--devices --selected_gpus", OPT_FN, o, NULL, 0, 0, "0,1", "devices, one rank each (on CPU: slots); sets\n"
         "FLAGS_selected_gpus", NULL, set_gpus},
        {"--nproc_per_node", "--nproc-per-node", OPT_FN, &o->nproc, NULL, 0, 0, "N|auto|cpu|gpu",
         "ranks per node when --gpus is not given (default 1); torchrun's auto\n(a rank per GPU, else per CPU), "
         "cpu, gpu", NULL, set_nproc},
        {"--nnodes", NULL, OPT_FN, &o->nnodes, NULL, 0, 0, "N", "nodes in the job (default: the length of --ips, else 1)", NULL, set_nnodes},
        {"--node_rank", "--node-rank --rank", OPT_INT, &o->node_rank, NULL, 0, LAUNCH_MAX_NODES - 1, "N", "this node's index directly", NULL, NULL},
        {"--node_ip", "--host", OPT_FN, &o->node_ip, NULL, 0, 0, "IP", "say which entry of --ips is this node (else env POD_IP,\n"
         "PAI_TASK_INDEX, SLURM_NODEID, NODE_RANK, else the interface addresses)", NULL, set_owned_str},
        {"--master", "--rdzv-endpoint", OPT_FN, o, NULL, 0, 0, "HOST:PORT", "rendezvous endpoint (else env TIPC_MASTER; default: first of\n"
         "--ips, port 6170; one node: port 0 = a free port)", NULL, set_master},
        {"--master_addr", "--master-addr", OPT_FN, &o->master_host, NULL, 0, 0, "HOST", "the master's host (torchrun)", NULL, set_owned_str},
        {"--master_port", "--master-port", OPT_INT, &o->master_port, NULL, 0, 65535, "PORT", "the master's port (torchrun)", NULL, NULL},
        {"--log_dir", NULL, OPT_FN, &o->log_dir, NULL, 0, 0, "DIR", "per-rank logs DIR/workerlog.RANK (default ./log; `tipc run`\n"
         "sets TIPC_LOG_DIR to the training's output folder + /log)", "TIPC_LOG_DIR", set_owned_str},
        {"--log_overwrite", "--log-overwrite", OPT_FN, &o->log_append, NULL, 0, 0, "BOOL",
         "Paddle's: true replaces each workerlog.RANK (default), false appends to it", NULL, set_log_overwrite},
        {"--run_mode", "--run-mode", OPT_FN, NULL, NULL, 0, 0, "collective", "Paddle's: only collective (data-parallel) "
         "jobs", NULL, set_run_mode},
        {"--job_id", "--rdzv-id", OPT_FN, &o->job_id, NULL, 0, 0, "ID", "job name in the store (default 'default')", "TIPC_JOB_ID", set_owned_str},
        {"--join_timeout", NULL, OPT_INT, &o->join_timeout_s, NULL, 1, 86400, "S", "fail if not every node joined within S seconds (default 60)", NULL, NULL},
        {"--heartbeat_timeout", NULL, OPT_INT, &o->heartbeat_s, NULL, 2, 86400, "S", "declare a silent node dead after S seconds (default 10)", NULL, NULL},
        {"--grace", NULL, OPT_INT, &o->grace_s, NULL, 0, 3600, "S", "SIGTERM to SIGKILL when stopping ranks (default 3)", NULL, NULL},
        {"--watchdog", NULL, OPT_INT, &o->watchdog_s, NULL, 0, 86400, "S", "name a rank stuck S seconds and stop the job; 0 = off\n"
         "(default 120)", "TIPC_LAUNCH_WATCHDOG", NULL},
        {"--standalone", NULL, OPT_FLAG, &o->standalone, NULL, 0, 0, NULL, "torchrun: one node, a store of its own", NULL, NULL},
        {"--rdzv_backend", "--rdzv-backend", OPT_FN, NULL, NULL, 0, 0, "NAME", "torchrun's; accepted, not used (said on stderr)", NULL, accept_unused},
        {"--rdzv_conf", "--rdzv-conf", OPT_FN, NULL, NULL, 0, 0, "CONF", "torchrun's; accepted, not used (said on stderr)", NULL, accept_unused},
        {"--max_restarts", "--max-restarts --max_restart", OPT_INT, &o->max_restarts, NULL, 0, 1000, "N",
         "failures the job survives (default 0): every node stops its ranks,\nthe job re-forms and `tipc train` "
         "resumes from its newest\ncomplete checkpoint (ranks get TIPC_RESTART_COUNT)", NULL, NULL},
        {"--echo", NULL, OPT_FN, &o->echo_all, NULL, 0, 0, "all|0", "all: print every rank's output, not only local rank 0's", NULL, set_echo},
        {"TIPC_METRICS", NULL, OPT_FN, &o->metrics, NULL, 0, 0, "FILE", "record each restart in this metrics file (set by tipc run)",
         "TIPC_METRICS", set_owned_str},
        {"TIPC_STAGE", NULL, OPT_FN, &o->stage, NULL, 0, 0, "NAME", "the stage's name in those records (set by tipc run)",
         "TIPC_STAGE", set_owned_str},
        {"TIPC_MASTER", NULL, OPT_FN, &o->env_master, NULL, 0, 0, "HOST:PORT",
         "the master when no --master/--master_addr is given (`tipc run` passes\nits nodes' master this way)", "TIPC_MASTER", set_owned_str},
        {0},
    };
    const struct opt_cmd cmd = {.name = "launch", .synopsis = "[options] CMD [ARGS...]", .about = about,
                                .opts = opts, .footer = footer, .stop_at_pos = true};
    struct opt_result r;
    TRY(opt_parse(&cmd, argc, argv, NULL, &r));
    if ((o->help = r.help)) return TIPC_OK;
    if (r.rest >= argc)
        return error_msg(TIPC_EUSAGE, "launch: no command to run; e.g. 'tipc launch --gpus=0,1 train ...'");
    o->cmd = argv + r.rest;
    o->ncmd = argc - r.rest;
    o->is_subcommand = is_command && is_command(o->cmd[0]);   /* run by this tipc binary */
    return TIPC_OK;
}

void launch_opts_free(struct launch_opts *o)
{
    strv_free(o->ips);
    free(o->gpus);
    free(o->node_ip);
    free(o->master_host);
    free(o->env_master);
    free(o->metrics);
    free(o->stage);
    free(o->log_dir);
    free(o->job_id);
    free(o->token);
    free(o->self_ip);
    free(o->sched_rank_src);
    free(o->sched_master);
    memset(o, 0, sizeof *o);
}
