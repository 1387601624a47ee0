/* rank_env.c: which launcher started this rank, and where its job's store is (rank_env.h). Every
 * number is read strictly: a variable that is set must parse, or the rank stops naming it. */
#include "rank_env.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../core/check.h"
#include "../../core/parse.h"
#include "../../core/banned.h"

#define MAX_WORLD (1 << 20)

static const char *env(const char *name)
{
    const char *v = getenv(name);
    return v && *v ? v : NULL;
}

/* The first of the names that is set: its value, and *which its name. */
static const char *env_any(const char *a, const char *b, const char **which)
{
    const char *v = env(a);
    if (v) return *which = a, v;
    v = b ? env(b) : NULL;
    return *which = v ? b : NULL, v;
}

static enum tipc_status bad(const struct rank_env *e, const char *var, const char *val, const char *want)
{
    error_msg(TIPC_EUSAGE, "%s='%s' (%s): %s", var, val, e->launcher ? e->launcher : "launcher", want);
    error_hint("fix the launcher's variables, or unset them to train in one process");
    return TIPC_EUSAGE;
}

/* *out = the variable's number in [min, max] if it is set (else left alone). */
static enum tipc_status num(const struct rank_env *e, const char *var, int min, int max, int *out)
{
    const char *v = env(var);
    if (!v) return TIPC_OK;
    if (!parse_int(v, min, max, out)) {
        char want[80];
        snprintf(want, sizeof want, "want a whole number in [%d, %d]", min, max);
        return bad(e, var, v, want);
    }
    return TIPC_OK;
}

/* Rank and world from the first variable of each pair that is set; both must be. */
static enum tipc_status rank_world(struct rank_env *e, const char *r1, const char *r2, const char *w1, const char *w2)
{
    const char *wv = env_any(w1, w2, &e->world_var), *rv = env_any(r1, r2, &e->rank_var);
    if (!wv && rv && !strcmp(rv, "0")) return e->rank = 0, TIPC_OK;   /* rank 0 of one */
    if (!wv) return error_msg(TIPC_EUSAGE, "%s sets %s but not %s: which world is this rank in?", e->launcher,
                              e->rank_var ? e->rank_var : r1, w1);
    TRY(num(e, e->world_var, 1, MAX_WORLD, &e->world));
    if (!rv) {
        if (e->world == 1) return e->rank = 0, TIPC_OK;
        return error_msg(TIPC_EUSAGE, "%s=%d (%s) but %s is not set: which rank is this?", e->world_var, e->world,
                         e->launcher, r1);
    }
    TRY(num(e, e->rank_var, 0, MAX_WORLD, &e->rank));
    if (e->rank >= e->world) {
        char want[96];
        snprintf(want, sizeof want, "a rank must be below %s=%d", e->world_var, e->world);
        return bad(e, e->rank_var, rv, want);
    }
    return TIPC_OK;
}

static enum tipc_status set_host(struct rank_env *e, const char *host, size_t n, const char *var)
{
    if (n == 0 || n >= sizeof e->host) return bad(e, var, getenv(var), "want a host name or address");
    memcpy(e->host, host, n);
    e->host[n] = 0;
    e->host_var = var;
    return TIPC_OK;
}

/* MASTER_ADDR and MASTER_PORT (dflt_host when unset and not NULL). */
static enum tipc_status master(struct rank_env *e, const char *dflt_host)
{
    const char *h = env("MASTER_ADDR");
    if (!h && !dflt_host)
        return error_msg(TIPC_EUSAGE, "%s=%d (%s) but MASTER_ADDR is not set: where do the ranks meet?", e->world_var,
                         e->world, e->launcher);
    if (h) TRY(set_host(e, h, strlen(h), "MASTER_ADDR"));
    else snprintf(e->host, sizeof e->host, "%s", dflt_host), e->host_var = "default";
    if (!env("MASTER_PORT"))
        return error_msg(TIPC_EUSAGE, "%s=%d (%s) but MASTER_PORT is not set: where do the ranks meet?", e->world_var,
                         e->world, e->launcher);
    e->port_var = "MASTER_PORT";
    return num(e, "MASTER_PORT", 1, 65535, &e->port);
}

/* "HOST:PORT" or "[V6]:PORT" (the first item of a comma-separated list). */
static enum tipc_status endpoint(struct rank_env *e, const char *var)
{
    const char *v = env(var), *end = v + strcspn(v, ","), *colon = NULL;
    for (const char *p = v; p < end; p++)
        if (*p == ':') colon = p;
    const char *h = v, *he = colon;
    if (colon && *v == '[' && colon > v && colon[-1] == ']') h = v + 1, he = colon - 1;
    char port[8];
    if (!colon || he <= h || (size_t)(end - colon - 1) >= sizeof port)
        return bad(e, var, v, "want HOST:PORT");
    memcpy(port, colon + 1, (size_t)(end - colon - 1));
    port[end - colon - 1] = 0;
    if (!parse_int(port, 1, 65535, &e->port)) return bad(e, var, v, "want HOST:PORT with a port in [1, 65535]");
    e->port_var = var;
    return set_host(e, h, (size_t)(he - h), var);
}

/* The first name of a Slurm hostlist: "n[01-03,7],b" -> "n01", "r[1-2]-n[1,3]" -> "r1-n1". */
static enum tipc_status slurm_first_host(struct rank_env *e, const char *var)
{
    const char *v = env(var);
    char out[256];
    size_t n = 0;
    for (const char *p = v; *p && *p != ','; p++) {
        if (*p == '[') {
            const char *q = p + 1;
            while (*q && *q != ']' && *q != '-' && *q != ',') {
                if (n + 1 < sizeof out) out[n++] = *q;
                q++;
            }
            p = strchr(q, ']');
            if (!p) return bad(e, var, v, "a Slurm host list with an unclosed '['");
            continue;
        }
        if (n + 1 < sizeof out) out[n++] = *p;
    }
    return set_host(e, out, n, var);
}

/* SLURM_STEP_TASKS_PER_NODE ("2(x3),1"): the tasks on node `node`. */
static int slurm_tasks_on(const char *s, int node)
{
    for (int at = 0; s && *s;) {
        char *end;
        long k = strtol(s, &end, 10), reps = 1;
        if (end == s || k < 1) return -1;
        if (!strncmp(end, "(x", 2)) {
            reps = strtol(end + 2, &end, 10);
            if (*end++ != ')' || reps < 1) return -1;
        }
        if (node < at + reps) return (int)k;
        at += (int)reps;
        s = *end == ',' ? end + 1 : NULL;
    }
    return -1;
}

static enum tipc_status read_torchrun(struct rank_env *e)
{
    TRY(rank_world(e, "RANK", NULL, "WORLD_SIZE", NULL));
    TRY(num(e, "LOCAL_RANK", 0, MAX_WORLD, &e->local_rank));
    TRY(num(e, "LOCAL_WORLD_SIZE", 1, MAX_WORLD, &e->local_world));
    TRY(num(e, "GROUP_RANK", 0, MAX_WORLD, &e->node));
    TRY(num(e, "GROUP_WORLD_SIZE", 1, MAX_WORLD, &e->nnodes));
    TRY(num(e, "TORCHELASTIC_RESTART_COUNT", 0, MAX_WORLD, &e->restart));
    const char *agent = env("TORCHELASTIC_USE_AGENT_STORE");
    e->store = agent && !strcmp(agent, "True") ? RANK_STORE_C10D : RANK_STORE_C10D_HOST;
    return master(e, NULL);
}

static enum tipc_status read_tipc_launch(struct rank_env *e)
{
    TRY(rank_world(e, "RANK", "PADDLE_TRAINER_ID", "WORLD_SIZE", "PADDLE_TRAINERS_NUM"));
    TRY(num(e, "LOCAL_RANK", 0, MAX_WORLD, &e->local_rank));
    TRY(num(e, "LOCAL_WORLD_SIZE", 1, MAX_WORLD, &e->local_world));
    TRY(num(e, "TIPC_NODE_RANK", 0, MAX_WORLD, &e->node));
    TRY(num(e, "TIPC_NNODES", 1, MAX_WORLD, &e->nnodes));
    TRY(num(e, "TIPC_RESTART_COUNT", 0, MAX_WORLD, &e->restart));
    e->store = RANK_STORE_HTTP;
    return master(e, NULL);
}

static enum tipc_status read_paddle(struct rank_env *e)
{
    TRY(rank_world(e, "PADDLE_TRAINER_ID", "PADDLE_GLOBAL_RANK", "PADDLE_TRAINERS_NUM", "PADDLE_GLOBAL_SIZE"));
    TRY(num(e, env("PADDLE_LOCAL_RANK") ? "PADDLE_LOCAL_RANK" : "PADDLE_RANK_IN_NODE", 0, MAX_WORLD, &e->local_rank));
    TRY(num(e, "PADDLE_LOCAL_SIZE", 1, MAX_WORLD, &e->local_world));
    TRY(num(e, "PADDLE_NNODES", 1, MAX_WORLD, &e->nnodes));
    if (e->local_world > 0 && e->local_rank >= 0 && (e->rank - e->local_rank) % e->local_world == 0)
        e->node = (e->rank - e->local_rank) / e->local_world;   /* replicas are node-major and equal */
    e->store = RANK_STORE_C10D_HOST;
    if (e->world == 1) return TIPC_OK;
    if (env("PADDLE_MASTER")) return endpoint(e, "PADDLE_MASTER");
    if (env("PADDLE_TRAINER_ENDPOINTS")) return endpoint(e, "PADDLE_TRAINER_ENDPOINTS");
    return error_msg(TIPC_EUSAGE, "%s=%d (Paddle) but neither PADDLE_MASTER nor PADDLE_TRAINER_ENDPOINTS is set: "
                     "where do the ranks meet?", e->world_var, e->world);
}

static enum tipc_status read_mpi(struct rank_env *e)
{
    bool ompi = env("OMPI_COMM_WORLD_SIZE") != NULL;
    TRY(rank_world(e, ompi ? "OMPI_COMM_WORLD_RANK" : "PMI_RANK", NULL, ompi ? "OMPI_COMM_WORLD_SIZE" : "PMI_SIZE", NULL));
    TRY(num(e, ompi ? "OMPI_COMM_WORLD_LOCAL_RANK" : "MPI_LOCALRANKID", 0, MAX_WORLD, &e->local_rank));
    TRY(num(e, ompi ? "OMPI_COMM_WORLD_LOCAL_SIZE" : "MPI_LOCALNRANKS", 1, MAX_WORLD, &e->local_world));
    e->store = RANK_STORE_C10D_HOST;
    if (e->local_world == e->world) e->node = 0, e->nnodes = 1;
    if (e->world == 1) return TIPC_OK;
    enum tipc_status st = master(e, e->local_world == e->world ? "127.0.0.1" : NULL);
    if (st) error_hint("pass the store's address to every rank: mpirun -x MASTER_ADDR=HOST -x MASTER_PORT=PORT ...");
    return st;
}

static enum tipc_status read_slurm(struct rank_env *e)
{
    TRY(rank_world(e, "SLURM_PROCID", NULL, "SLURM_STEP_NUM_TASKS", NULL));
    TRY(num(e, "SLURM_LOCALID", 0, MAX_WORLD, &e->local_rank));
    TRY(num(e, "SLURM_NODEID", 0, MAX_WORLD, &e->node));
    TRY(num(e, env("SLURM_STEP_NUM_NODES") ? "SLURM_STEP_NUM_NODES" : "SLURM_NNODES", 1, MAX_WORLD, &e->nnodes));
    const char *tpn = env("SLURM_STEP_TASKS_PER_NODE");
    if (tpn && e->node >= 0 && (e->local_world = slurm_tasks_on(tpn, e->node)) < 0)
        return bad(e, "SLURM_STEP_TASKS_PER_NODE", tpn, "want counts such as 2(x3),1 covering SLURM_NODEID");
    e->store = RANK_STORE_C10D_HOST;
    if (e->world == 1) return TIPC_OK;
    if (env("MASTER_ADDR")) return master(e, NULL);
    const char *list = NULL;
    if (!env_any("SLURM_STEP_NODELIST", "SLURM_JOB_NODELIST", &list))
        return error_msg(TIPC_EUSAGE, "SLURM_STEP_NUM_TASKS=%d but neither MASTER_ADDR nor SLURM_STEP_NODELIST "
                         "is set: where do the ranks meet?", e->world);
    TRY(slurm_first_host(e, list));
    int job = 0;
    if (!env("MASTER_PORT")) {
        TRY(num(e, "SLURM_JOB_ID", 0, 2147483647, &job));
        e->port = 15000 + job % 10000, e->port_var = "SLURM_JOB_ID";
        return TIPC_OK;
    }
    e->port_var = "MASTER_PORT";
    return num(e, "MASTER_PORT", 1, 65535, &e->port);
}

static enum tipc_status read_env_init(struct rank_env *e)
{
    TRY(rank_world(e, "RANK", "PADDLE_TRAINER_ID", "WORLD_SIZE", "PADDLE_TRAINERS_NUM"));
    TRY(num(e, "LOCAL_RANK", 0, MAX_WORLD, &e->local_rank));
    TRY(num(e, "LOCAL_WORLD_SIZE", 1, MAX_WORLD, &e->local_world));
    if (e->world == 1) return TIPC_OK;
    e->store = RANK_STORE_C10D_HOST;
    return master(e, NULL);
}

/* TIPC_SCHEDULER=none: the scheduler's variables are not this job's (cluster_env.h); Slurm's are inherited
 * by everything a job step runs, so they place no rank either. */
static bool scheduler_off(void)
{
    const char *v = env("TIPC_SCHEDULER");
    return v && !strcmp(v, "none");
}

enum tipc_status rank_env_read(struct rank_env *e)
{
    memset(e, 0, sizeof *e);
    e->world = 1, e->local_rank = e->local_world = e->node = e->nnodes = -1;
    e->job_id = env("TIPC_JOB_ID") ? env("TIPC_JOB_ID") : "default";
    e->token = env("TIPC_JOB_TOKEN") ? env("TIPC_JOB_TOKEN") : "";
    e->node_ip = env("TIPC_NODE_IP");
    e->watchdog_s = 120;
    enum tipc_status st = num(e, "TIPC_LAUNCH_WATCHDOG", 0, 86400, &e->watchdog_s);
    if (st) return st;
    if (env("TORCHELASTIC_RUN_ID")) e->launcher = "torchrun", st = read_torchrun(e);
    else if (env("TIPC_JOB_TOKEN") && env("TIPC_NODE_RANK")) e->launcher = "tipc launch", st = read_tipc_launch(e);
    else if (env("PADDLE_TRAINER_ENDPOINTS") || env("PADDLE_MASTER")) e->launcher = "Paddle", st = read_paddle(e);
    else if (env("OMPI_COMM_WORLD_SIZE") || env("PMI_SIZE")) e->launcher = "mpirun", st = read_mpi(e);
    else if (env("SLURM_STEP_NUM_TASKS") && env("SLURM_PROCID") && !scheduler_off())   /* an outer allocation's */
        e->launcher = "Slurm", st = read_slurm(e);
    else if (env("WORLD_SIZE") || env("RANK") || env("PADDLE_TRAINERS_NUM") || env("PADDLE_TRAINER_ID"))
        e->launcher = "env://", st = read_env_init(e);
    if (st) return st;
    if (e->world == 1) {   /* one process: nothing to meet */
        e->store = RANK_STORE_NONE;
        if (e->local_rank < 0) e->local_rank = 0;
        e->local_world = e->nnodes = 1, e->node = 0;
        return TIPC_OK;
    }
    if (e->local_rank < 0) e->local_rank = e->local_world > 0 ? e->rank % e->local_world : e->rank;
    if (e->local_world > 0 && e->local_rank >= e->local_world)
        return error_msg(TIPC_EUSAGE, "local rank %d is not below the %d ranks on this node (%s)", e->local_rank,
                         e->local_world, e->launcher);
    return TIPC_OK;
}

const char *rank_env_describe(const struct rank_env *e)
{
    static char buf[400];
    const char *what = e->store == RANK_STORE_HTTP ? "rendezvous store" : "c10d store";
    bool v6 = strchr(e->host, ':') != NULL;
    snprintf(buf, sizeof buf, "%s, %s at %s%s%s:%d%s", e->launcher ? e->launcher : "no launcher", what, v6 ? "[" : "",
             e->host, v6 ? "]" : "", e->port, e->store == RANK_STORE_C10D_HOST ? " (served by rank 0)" : "");
    return buf;
}
