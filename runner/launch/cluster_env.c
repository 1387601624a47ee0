/* cluster_env.c: read where Slurm, OpenPAI, Paddle's launcher/operator or torchrun/Kubeflow placed
 * this node (cluster_env.h). Only reads the environment; sched.c applies it to `tipc launch`
 * and run/cluster.c checks `tipc run`'s config against it. */
#include "cluster_env.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../core/check.h"
#include "../../core/parse.h"
#include "../../core/strv.h"
#include "../../core/banned.h"

extern char **environ;

/* ---- Slurm hostlists ------------------------------------------------------------------------- */
static enum tipc_status bad_list(const char *var, const char *why, const char *s)
{
    error_msg(TIPC_EUSAGE, "env %s='%s': %s", var, s, why);
    error_hint("a Slurm hostlist looks like 'node[1-2,5]' or 'a[01-03],b7'");
    return TIPC_EUSAGE;
}

/* "07" -> 7 with width 2; digits only, at most 9 of them. */
static bool range_number(const char *p, size_t len, unsigned long *v)
{
    if (len == 0 || len > 9) return false;
    *v = 0;
    for (size_t i = 0; i < len; i++) {
        if (p[i] < '0' || p[i] > '9') return false;
        *v = *v * 10 + (unsigned long)(p[i] - '0');
    }
    return true;
}

/* Expand s[0..len) (no top-level commas; any number of [..] groups) onto out, in order. */
static enum tipc_status expand_item(const char *var, const char *whole, const char *s, size_t len, struct strv *out)
{
    const char *lb = memchr(s, '[', len);
    if (!lb) {
        if (memchr(s, ']', len)) return bad_list(var, "']' without '['", whole);
        strv_push_owned(out, xstrndup(s, len));
        return TIPC_OK;
    }
    const char *end = s + len, *rb = memchr(lb, ']', (size_t)(end - lb));
    if (!rb) return bad_list(var, "'[' without ']'", whole);
    if (memchr(lb + 1, '[', (size_t)(rb - lb - 1))) return bad_list(var, "nested '['", whole);
    if (memchr(s, ']', (size_t)(lb - s))) return bad_list(var, "']' without '['", whole);
    struct strv tails = STRV_INIT;
    TRY(expand_item(var, whole, rb + 1, (size_t)(end - rb - 1), &tails));
    enum tipc_status st = TIPC_OK;
    const char *p = lb + 1;
    while (!st && p <= rb) {
        const char *q = memchr(p, ',', (size_t)(rb - p));
        if (!q) q = rb;
        const char *dash = memchr(p, '-', (size_t)(q - p));
        unsigned long lo, hi;
        size_t lolen = (size_t)((dash ? dash : q) - p);
        if (!range_number(p, lolen, &lo) || (dash ? !range_number(dash + 1, (size_t)(q - dash - 1), &hi) : (hi = lo, false)))
            st = bad_list(var, "a range is 'N' or 'N-M' with digits", whole);
        else if (hi < lo)
            st = bad_list(var, "a range goes down", whole);
        else if (hi - lo >= CLUSTER_MAX_HOSTS)
            st = bad_list(var, "more than 1024 nodes", whole);
        int width = lolen > 1 && p[0] == '0' ? (int)lolen : 0;   /* Slurm pads to the low bound's width */
        for (unsigned long v = lo; !st && v <= hi; v++)
            for (size_t t = 0; !st && t < tails.n; t++) {
                if (out->n >= CLUSTER_MAX_HOSTS) st = bad_list(var, "more than 1024 nodes", whole);
                else strv_push_owned(out, xasprintf("%.*s%0*lu%s", (int)(lb - s), s, width, v, tails.v[t]));
            }
        p = q + 1;
    }
    strv_clear(&tails);
    return st;
}

enum tipc_status hostlist_expand(const char *var, const char *s, char ***out, int *n)
{
    struct strv r = STRV_INIT;
    enum tipc_status st = TIPC_OK;
    const char *item = s;
    int depth = 0;
    for (const char *p = s;; p++) {
        if (*p == '[') depth++;
        else if (*p == ']') depth--;
        if ((*p == ',' && depth == 0) || !*p) {
            if (p == item) st = bad_list(var, "an empty name", s);
            else st = expand_item(var, s, item, (size_t)(p - item), &r);
            if (!st && r.n > CLUSTER_MAX_HOSTS) st = bad_list(var, "more than 1024 nodes", s);
            if (st || !*p) break;
            item = p + 1;
        }
    }
    if (st) {
        strv_clear(&r);
        return st;
    }
    *out = r.v;
    *n = (int)r.n;
    return TIPC_OK;
}

/* ---- reading variables ----------------------------------------------------------------------- */
static const char *env(const char *k)
{
    const char *v = getenv(k);
    return v && *v ? v : NULL;
}

/* An integer variable: absent leaves *out; malformed is an error naming it. */
static enum tipc_status env_int(const char *k, int min, int max, int *out, const char **var)
{
    const char *v = env(k);
    if (!v) return TIPC_OK;
    if (!parse_int(v, min, max, out))
        return error_msg(TIPC_EUSAGE, "env %s='%s' is not a number in [%d, %d]", k, v, min, max);
    *var = k;
    return TIPC_OK;
}

/* torchrun/Paddle node counts: "N", or elastic "N:N"; "MIN:MAX" with MIN != MAX is refused. */
static enum tipc_status env_nnodes(const char *k, struct cluster_place *c)
{
    const char *v = env(k);
    if (!v) return TIPC_OK;
    const char *colon = strchr(v, ':');
    int a = 0, b = 0;
    char *lo = xstrndup(v, colon ? (size_t)(colon - v) : strlen(v));
    bool ok = parse_int(lo, 1, CLUSTER_MAX_HOSTS, &a) && (!colon || parse_int(colon + 1, 1, CLUSTER_MAX_HOSTS, &b));
    free(lo);
    if (!ok) return error_msg(TIPC_EUSAGE, "env %s='%s' is not a node count", k, v);
    if (colon && a != b)
        return error_msg(TIPC_EUSAGE, "env %s='%s': elastic node counts are not supported; give one number", k, v);
    c->nnodes = a;
    c->nnodes_var = k;
    return TIPC_OK;
}

static enum tipc_status env_hostport(const char *k, struct cluster_place *c)
{
    const char *v = env(k), *colon = v ? strrchr(v, ':') : NULL;
    if (!v) return TIPC_OK;
    int port;
    if (!colon || colon == v || !parse_int(colon + 1, 0, 65535, &port))
        return error_msg(TIPC_EUSAGE, "env %s='%s' is not HOST:PORT", k, v);
    c->master_host = xstrndup(v, (size_t)(colon - v));
    c->master_var = c->port_var = k;
    c->master_port = port;
    return TIPC_OK;
}

static void master_from_env(struct cluster_place *c, const char *addr_var, const char *port_var)
{
    if (!c->master_host && env(addr_var)) c->master_host = xstrdup(env(addr_var)), c->master_var = addr_var;
    if (c->master_port < 0 && env(port_var)) {
        int p;
        if (parse_int(env(port_var), 0, 65535, &p)) c->master_port = p, c->port_var = port_var;
    }
}

/* ---- the schedulers -------------------------------------------------------------------------- */
static enum tipc_status detect_slurm(struct cluster_place *c)
{
    const char *list_var = env("SLURM_STEP_NODELIST") ? "SLURM_STEP_NODELIST"
                           : env("SLURM_JOB_NODELIST") ? "SLURM_JOB_NODELIST"
                           : env("SLURM_NODELIST")     ? "SLURM_NODELIST" : NULL;
    const char *count_var = env("SLURM_STEP_NUM_NODES") ? "SLURM_STEP_NUM_NODES"
                            : env("SLURM_NNODES")       ? "SLURM_NNODES"
                            : env("SLURM_JOB_NUM_NODES") ? "SLURM_JOB_NUM_NODES" : NULL;
    if (!list_var && !count_var && !env("SLURM_NODEID") && !env("SLURM_PROCID")) return TIPC_OK;
    c->scheduler = "Slurm";
    if (list_var) {
        TRY(hostlist_expand(list_var, env(list_var), &c->hosts, &c->nhosts));
        c->hosts_var = list_var;
    }
    if (count_var) TRY(env_int(count_var, 1, CLUSTER_MAX_HOSTS, &c->nnodes, &c->nnodes_var));
    else if (c->hosts) c->nnodes = c->nhosts, c->nnodes_var = list_var;
    if (c->hosts && c->nnodes != c->nhosts)
        return error_msg(TIPC_EUSAGE, "env %s=%d but %s='%s' names %d nodes", count_var, c->nnodes, list_var,
                         env(list_var), c->nhosts);
    int local = 0;
    const char *local_var = NULL;
    TRY(env_int("SLURM_LOCALID", 0, 1 << 20, &local, &local_var));
    if (local > 0) {
        error_msg(TIPC_EUSAGE, "Slurm started more than one task on this node (SLURM_LOCALID=%d)", local);
        error_hint("tipc starts the node's ranks itself: run one tipc per node (srun --ntasks-per-node=1)");
        return TIPC_EUSAGE;
    }
    TRY(env_int("SLURM_NODEID", 0, CLUSTER_MAX_HOSTS - 1, &c->node_rank, &c->rank_var));
    int ntasks = -1;
    const char *ntasks_var = NULL;
    TRY(env_int("SLURM_NTASKS", 1, 1 << 20, &ntasks, &ntasks_var));
    if (c->node_rank < 0 && (ntasks < 0 || ntasks == c->nnodes))   /* one task per node: PROCID = node */
        TRY(env_int("SLURM_PROCID", 0, CLUSTER_MAX_HOSTS - 1, &c->node_rank, &c->rank_var));
    master_from_env(c, "MASTER_ADDR", "MASTER_PORT");   /* torchrun-on-Slurm scripts export them */
    if (!c->master_host && c->hosts) c->master_host = xstrdup(c->hosts[0]), c->master_var = list_var;
    int job;   /* two jobs sharing a node 0 must not meet on one port: 15000 + job id mod 10000 */
    if (c->master_port < 0 && env("SLURM_JOB_ID") && parse_int(env("SLURM_JOB_ID"), 0, 2147483647, &job))
        c->master_port = 15000 + job % 10000, c->port_var = "SLURM_JOB_ID";
    return TIPC_OK;
}

/* OpenPAI: PAI_CURRENT_TASK_ROLE_NAME, else the one role with a PAI_TASK_ROLE_TASK_COUNT_<role>. */
static enum tipc_status detect_openpai(struct cluster_place *c, char **role_out)
{
    static const char COUNT[] = "PAI_TASK_ROLE_TASK_COUNT_";
    const char *role = env("PAI_CURRENT_TASK_ROLE_NAME");
    char *found = NULL;
    int nroles = 0;
    for (char **e = environ; !role && *e; e++)
        if (!strncmp(*e, COUNT, sizeof COUNT - 1)) {
            const char *eq = strchr(*e, '=');
            if (!eq) continue;
            if (nroles++ == 0) found = xstrndup(*e + sizeof COUNT - 1, (size_t)(eq - *e) - (sizeof COUNT - 1));
        }
    if (!env("PAI_TASK_INDEX") && !role && !nroles) return TIPC_OK;
    c->scheduler = "OpenPAI";
    if (nroles > 1) {
        free(found);
        return error_msg(TIPC_EUSAGE, "OpenPAI: %d task roles (PAI_TASK_ROLE_TASK_COUNT_*) and no "
                                      "PAI_CURRENT_TASK_ROLE_NAME to say which one this is", nroles);
    }
    *role_out = role ? xstrdup(role) : found;
    TRY(env_int("PAI_TASK_INDEX", 0, CLUSTER_MAX_HOSTS - 1, &c->node_rank, &c->rank_var));
    if (!*role_out) return TIPC_OK;
    char *count = xasprintf("%s%s", COUNT, *role_out);
    const char *var = NULL;
    enum tipc_status st = env_int(count, 1, CLUSTER_MAX_HOSTS, &c->nnodes, &var);
    if (var) c->nnodes_var = "PAI_TASK_ROLE_TASK_COUNT_<role>";
    free(count);
    TRY(st);
    struct strv hosts = STRV_INIT;
    for (int i = 0; i < c->nnodes; i++) {   /* the hosts, when every PAI_HOST_IP_<role>_<i> is there */
        char *k = xasprintf("PAI_HOST_IP_%s_%d", *role_out, i);
        const char *ip = env(k);
        free(k);
        if (!ip) {
            strv_clear(&hosts);
            break;
        }
        strv_push(&hosts, ip);
    }
    c->hosts = hosts.v, c->nhosts = (int)hosts.n;
    if (c->hosts) {
        c->hosts_var = "PAI_HOST_IP_<role>_<i>";
        c->master_host = xstrdup(c->hosts[0]), c->master_var = "PAI_HOST_IP_<role>_0";
    } else if (env("PAI_HOST_IP_worker_0")) {
        c->master_host = xstrdup(env("PAI_HOST_IP_worker_0")), c->master_var = "PAI_HOST_IP_worker_0";
    }
    return TIPC_OK;
}

static enum tipc_status detect_paddle(struct cluster_place *c)
{
    if (!env("PADDLE_NNODES") && !env("PADDLE_RANK") && !env("PADDLE_TRAINER_ID") && !env("PADDLE_TRAINERS") &&
        !env("PADDLE_MASTER"))
        return TIPC_OK;
    c->scheduler = "Paddle";
    if (env("PADDLE_TRAINERS")) {
        TRY(hostlist_expand("PADDLE_TRAINERS", env("PADDLE_TRAINERS"), &c->hosts, &c->nhosts));
        c->hosts_var = "PADDLE_TRAINERS";
    }
    TRY(env_nnodes("PADDLE_NNODES", c));
    if (c->nnodes < 0 && c->hosts) c->nnodes = c->nhosts, c->nnodes_var = "PADDLE_TRAINERS";
    if (c->hosts && c->nnodes != c->nhosts)
        return error_msg(TIPC_EUSAGE, "env PADDLE_NNODES=%d but PADDLE_TRAINERS='%s' names %d nodes", c->nnodes,
                         env("PADDLE_TRAINERS"), c->nhosts);
    TRY(env_int("PADDLE_RANK", 0, CLUSTER_MAX_HOSTS - 1, &c->node_rank, &c->rank_var));
    if (c->node_rank < 0) TRY(env_int("PADDLE_TRAINER_ID", 0, CLUSTER_MAX_HOSTS - 1, &c->node_rank, &c->rank_var));
    TRY(env_hostport("PADDLE_MASTER", c));
    if (!c->master_host && c->hosts) c->master_host = xstrdup(c->hosts[0]), c->master_var = "PADDLE_TRAINERS";
    return TIPC_OK;
}

static enum tipc_status detect_torchrun(struct cluster_place *c)
{
    if (!env("PET_NNODES") && !env("PET_NODE_RANK") && !env("PET_MASTER_ADDR") && !env("NODE_RANK")) return TIPC_OK;
    c->scheduler = "torchrun";
    TRY(env_nnodes("PET_NNODES", c));
    TRY(env_int("PET_NODE_RANK", 0, CLUSTER_MAX_HOSTS - 1, &c->node_rank, &c->rank_var));
    if (c->node_rank < 0) TRY(env_int("NODE_RANK", 0, CLUSTER_MAX_HOSTS - 1, &c->node_rank, &c->rank_var));
    master_from_env(c, "PET_MASTER_ADDR", "PET_MASTER_PORT");
    master_from_env(c, "MASTER_ADDR", "MASTER_PORT");
    int n;   /* torchrun also takes "auto", "cpu", "gpu": those leave the count to --nproc_per_node */
    if (env("PET_NPROC_PER_NODE") && parse_int(env("PET_NPROC_PER_NODE"), 1, 256, &n))
        c->nproc = n, c->nproc_var = "PET_NPROC_PER_NODE";
    return TIPC_OK;
}

enum tipc_status cluster_detect(struct cluster_place *c)
{
    memset(c, 0, sizeof *c);
    c->nnodes = c->node_rank = c->master_port = c->nproc = -1;
    const char *mode = env("TIPC_SCHEDULER");
    if (mode && !strcmp(mode, "none")) return TIPC_OK;
    if (mode && strcmp(mode, "auto"))
        return error_msg(TIPC_EUSAGE, "env TIPC_SCHEDULER='%s': expected 'auto' or 'none'", mode);
    char *role = NULL;
    enum tipc_status st = detect_openpai(c, &role);
    free(role);
    if (!st && !c->scheduler) st = detect_slurm(c);
    if (!st && !c->scheduler) st = detect_paddle(c);
    if (!st && !c->scheduler) st = detect_torchrun(c);
    if (!st && c->nnodes > 0 && c->node_rank >= c->nnodes)
        st = error_msg(TIPC_EUSAGE, "%s: node index %d (%s) is out of range for %d nodes (%s)", c->scheduler,
                       c->node_rank, c->rank_var, c->nnodes, c->nnodes_var);
    if (st) cluster_place_free(c);
    return st;
}

void cluster_place_free(struct cluster_place *c)
{
    strv_free(c->hosts);
    free(c->master_host);
    memset(c, 0, sizeof *c);
    c->nnodes = c->node_rank = c->master_port = c->nproc = -1;
}

char *cluster_describe(const struct cluster_place *c)
{
    if (!c->scheduler) return xstrdup("no scheduler");
    char *s = xasprintf("%s:", c->scheduler), *t;
#define APPEND(...) (t = xasprintf(__VA_ARGS__), free(s), s = t)
    if (c->node_rank >= 0) APPEND("%s node %d (%s)", s, c->node_rank, c->rank_var);
    if (c->nnodes > 0) APPEND("%s%s %d node%s (%s)", s, c->node_rank >= 0 ? " of" : "", c->nnodes,
                              c->nnodes == 1 ? "" : "s", c->nnodes_var);
    if (c->hosts) {
        APPEND("%s; nodes %s", s, c->hosts[0]);
        for (int i = 1; i < c->nhosts && i < 8; i++) APPEND("%s,%s", s, c->hosts[i]);
        APPEND("%s%s (%s)", s, c->nhosts > 8 ? ",..." : "", c->hosts_var);
    }
    if (c->master_host) APPEND("%s; master %s (%s)", s, c->master_host, c->master_var);
    if (c->master_port >= 0) APPEND("%s port %d (%s)", s, c->master_port, c->port_var);
    if (c->nproc > 0) APPEND("%s; %d ranks per node (%s)", s, c->nproc, c->nproc_var);
#undef APPEND
    return s;
}
