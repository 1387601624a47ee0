/* sched.c: `tipc launch` under a scheduler (cluster_env.h): the scheduler's node count, node
 * list, node index and master become the defaults of --nnodes/--ips, --node_rank and --master, and a
 * flag that disagrees with the scheduler is an error, so a job the scheduler spread over N nodes
 * never runs as N separate one-node jobs. Says on stderr which variables placed the node. */
#include "internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cluster_env.h"
#include "../../core/check.h"
#include "../../core/strv.h"
#include "../../core/banned.h"

static enum tipc_status count_mismatch(const struct launch_opts *o, const struct cluster_place *c, int flag_n)
{
    const char *what = o->nips ? "--ips lists" : o->standalone ? "--standalone means" : "--nnodes says";
    error_msg(TIPC_EUSAGE, "launch: %s runs this job on %d node%s (%s) but %s %d: that would be %s", c->scheduler,
              c->nnodes, c->nnodes == 1 ? "" : "s", c->nnodes_var, what, flag_n,
              flag_n < c->nnodes ? "separate smaller jobs, each unaware of the others" : "a job waiting for nodes that never come");
    error_hint("make them agree (--nnodes=%d, or --ips / the config's gpu_list with the job's %d nodes), or set "
               "TIPC_SCHEDULER=none to ignore the scheduler's variables", c->nnodes, c->nnodes);
    return TIPC_EUSAGE;
}

/* The scheduler's host for this node, found in the user's --ips (names resolved): its index. */
static enum tipc_status rank_in_user_ips(struct launch_opts *o, const struct cluster_place *c, int *idx)
{
    const char *h = c->hosts[c->node_rank];
    int hits = 0;
    for (int i = 0; i < o->nips; i++)
        if (!strcmp(o->ips[i], h) || launch_same_host(o->ips[i], h)) *idx = i, hits++;
    if (hits == 1) return TIPC_OK;
    error_msg(TIPC_EUSAGE, "launch: %s places this task on '%s' (entry %d of %s, %s), which %s --ips", c->scheduler, h,
              c->node_rank, c->hosts_var, c->rank_var, hits ? "matches more than one entry of" : "is not in");
    fprintf(stderr, "  --ips:");
    for (int i = 0; i < o->nips; i++) fprintf(stderr, "%s%s", i ? "," : " ", o->ips[i]);
    fprintf(stderr, "\n  %s:", c->hosts_var);
    for (int i = 0; i < c->nhosts; i++) fprintf(stderr, "%s%s", i ? "," : " ", c->hosts[i]);
    fputc('\n', stderr);
    error_hint("list the scheduler's nodes in --ips (the config's gpu_list), or give --node_ip");
    return TIPC_EUSAGE;
}

static enum tipc_status apply(struct launch_opts *o, const struct cluster_place *c)
{
    int flag_n = o->nips ? o->nips : o->nnodes > 0 ? o->nnodes : o->standalone ? 1 : -1;
    if (c->nnodes > 0 && flag_n > 0 && flag_n != c->nnodes) return count_mismatch(o, c, flag_n);
    bool ips_from_sched = false;
    if (flag_n < 0 && c->nnodes > 0) {
        if (c->hosts && c->nnodes > 1) {   /* Slurm's node list, Paddle's trainers, OpenPAI's hosts */
            struct strv ips = STRV_INIT;
            for (int i = 0; i < c->nhosts; i++) strv_push(&ips, c->hosts[i]);
            o->ips = ips.v;
            o->nips = c->nhosts;
            ips_from_sched = true;
        } else {
            o->nnodes = c->nnodes;
        }
    }
    if (c->node_rank >= 0) {
        int idx = c->node_rank;
        if (o->nips && !ips_from_sched && c->hosts) TRY(rank_in_user_ips(o, c, &idx));
        o->sched_rank = idx;
        o->sched_rank_src = xasprintf("%s (%s)", c->rank_var, c->scheduler);
    }
    /* Node 0 serves the store: the scheduler's master only when its node numbering is ours. */
    if (c->master_host && (!o->nips || ips_from_sched)) o->sched_master = xstrdup(c->master_host);
    if (c->master_port >= 0) o->sched_port = c->master_port;
    if (c->nproc > 0 && o->nproc < 0 && !o->ngpus) o->nproc = c->nproc;
    return TIPC_OK;
}

enum tipc_status launch_apply_cluster(struct launch_opts *o)
{
    o->sched_rank = o->sched_port = -1;
    struct cluster_place c;
    TRY(cluster_detect(&c));
    enum tipc_status st = c.scheduler ? apply(o, &c) : TIPC_OK;
    if (!st && c.scheduler) {
        char *d = cluster_describe(&c);
        fprintf(stderr, "launch: placed by %s\n", d);
        free(d);
    }
    cluster_place_free(&c);
    return st;
}
