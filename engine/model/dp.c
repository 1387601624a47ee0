/* dp.c: the data-parallel strategies of dp.h, one small vtable each, and the collectives on the
 * net's buffers they share. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dp.h"
#include "dp_overlap.h"
#include "../../core/check.h"
#include "../../core/time.h"
#include "../dist/comm.h"
#include "../../core/banned.h"

/* ---- collectives on the net's buffers ----------------------------------------------------------
 * NCCL takes device buffers as they are; Gloo works on host memory, so with a device backend the
 * buffer makes a round trip through a host copy. The identity check hashes bytes on the host, so
 * it always reads a host copy (a plain pointer when the backend's memory is host memory). */
enum dp_op { DP_AVG_BUCKETS, DP_BROADCAST0, DP_CHECK_SAME };
static enum tipc_status collective(struct dp *dp, struct net *net, enum dp_op op, float *buf, size_t n,
                                   const char *what)
{
    struct comm *c = dp->o.comm;
    bool direct = net_host_memory(net) || (comm_device_buffers(c) && op != DP_CHECK_SAME);
    float *h = direct ? buf : xmalloc(sizeof(float) * (n ? n : 1));
    if (!direct) net_to_host(net, h, buf, n);
    enum tipc_status st = TIPC_OK;
    switch (op) {
    case DP_AVG_BUCKETS: st = comm_allreduce_buckets(c, h, n, COMM_F32, COMM_AVG, dp->o.bucket_bytes); break;
    case DP_BROADCAST0: st = comm_broadcast(c, h, n * sizeof(float), 0); break;
    case DP_CHECK_SAME: st = comm_check_same(c, h, n * sizeof(float), what); break;
    }
    if (!direct) {
        if (st == TIPC_OK && op != DP_CHECK_SAME) net_from_host(net, buf, h, n);
        free(h);
    }
    return st;
}

/* average net->grads or net->params over the ranks, tagged with the step, timed (the step blocks
 * in it: all of it is exposed) */
static enum tipc_status average(struct dp *dp, struct net *net, float *buf, long step)
{
    double t0 = now_seconds();
    comm_set_step(dp->o.comm, step);
    enum tipc_status st = collective(dp, net, DP_AVG_BUCKETS, buf, net->nparams, NULL);
    double t = now_seconds() - t0;
    dp->comm_seconds += t;
    dp->comm_exposed_seconds += t;
    return st;
}

enum tipc_status dp_check_params(struct dp *dp, struct net *net, long step)
{
    if (dp->o.check_every <= 0 || step % dp->o.check_every != 0) return TIPC_OK;
    double t0 = now_seconds();
    comm_set_step(dp->o.comm, step);
    enum tipc_status st = collective(dp, net, DP_CHECK_SAME, net->params, net->nparams, "parameters");
    dp->comm_exposed_seconds += now_seconds() - t0;
    return st;
}

static enum tipc_status nothing_k(struct dp *dp, struct net *net, int k)
{
    (void)dp, (void)net, (void)k;
    return TIPC_OK;
}
static enum tipc_status nothing(struct dp *dp, struct net *net, long step)
{
    (void)dp, (void)net, (void)step;
    return TIPC_OK;
}

/* ---- single: one process, one micro-batch ------------------------------------------------------ */
static const struct dp_strategy single = {.name = "single", .grads_ready = nothing_k, .reduce = nothing,
                                          .updated = nothing};

/* ---- allreduce: gradients averaged before the update ------------------------------------------- */
static enum tipc_status allreduce_reduce(struct dp *dp, struct net *net, long step)
{
    return average(dp, net, net->grads, step);
}
static const struct dp_strategy allreduce = {.name = "allreduce", .grads_ready = nothing_k, .reduce = allreduce_reduce,
                                             .updated = dp_check_params};

/* ---- LocalSGD: after the warm-up, parameters averaged every N steps instead ---------------------- */
static bool localsgd_local(const struct dp *dp, long step) { return step >= dp->o.local_sgd_warm; }
static enum tipc_status localsgd_reduce(struct dp *dp, struct net *net, long step)
{
    return localsgd_local(dp, step) ? TIPC_OK : average(dp, net, net->grads, step);
}
static enum tipc_status localsgd_updated(struct dp *dp, struct net *net, long step)
{
    if (!localsgd_local(dp, step - 1)) return dp_check_params(dp, net, step);
    if ((step - dp->o.local_sgd_warm) % dp->o.local_sgd_steps != 0) return TIPC_OK; /* ranks differ by design */
    TRY(average(dp, net, net->params, step));
    return dp_check_params(dp, net, step);
}
/* agree before eval and save (the epoch's last average may be steps ago) */
static enum tipc_status localsgd_epoch_end(struct dp *dp, struct net *net, long step)
{
    if (step <= dp->o.local_sgd_warm) return TIPC_OK;
    return collective(dp, net, DP_AVG_BUCKETS, net->params, net->nparams, NULL);
}
static const struct dp_strategy localsgd = {.name = "localsgd", .grads_ready = nothing_k, .reduce = localsgd_reduce,
                                            .updated = localsgd_updated, .epoch_end = localsgd_epoch_end};

/* ---- simulated ranks: W micro-batches, gradients averaged on the host, rank 0's BN statistics --- */
static enum tipc_status simulated_grads_ready(struct dp *dp, struct net *net, int k)
{
    if (k == 0) {
        net_to_host(net, dp->stats, net->stats, net->nstats);
        net_to_host(net, dp->acc, net->grads, net->nparams);
        return TIPC_OK;
    }
    net_to_host(net, dp->host, net->grads, net->nparams);
    for (size_t i = 0; i < net->nparams; i++) dp->acc[i] += dp->host[i];
    return TIPC_OK;
}
/* the average (sum * (1/W), as comm.c's COMM_AVG) into net->grads, rank 0's BN statistics back */
static enum tipc_status simulated_reduce(struct dp *dp, struct net *net, long step)
{
    (void)step;
    float s = 1.0f / (float)dp->micro;
    for (size_t i = 0; i < net->nparams; i++) dp->acc[i] *= s;
    net_from_host(net, net->grads, dp->acc, net->nparams);
    net_from_host(net, net->stats, dp->stats, net->nstats);
    return TIPC_OK;
}
static const struct dp_strategy simulated = {.name = "simulated", .grads_ready = simulated_grads_ready,
                                             .reduce = simulated_reduce, .updated = nothing};

/* ---- choosing, and what happens around the steps ------------------------------------------------ */
void dp_init(struct dp *dp, const struct dp_opts *o, const struct net *net)
{
    memset(dp, 0, sizeof *dp);
    dp->o = *o;
    dp->micro = 1;
    if (o->simulate_world > 1) {
        CHECK(!o->comm, "simulated ranks run in one process");
        dp->s = &simulated;
        dp->micro = o->simulate_world;
        dp->acc = xmalloc(sizeof(float) * (net->nparams + 1));
        dp->host = xmalloc(sizeof(float) * (net->nparams + 1));
        dp->stats = xmalloc(sizeof(float) * (net->nstats + 1));
    } else if (!o->comm) {
        dp->s = &single;
    } else if (o->local_sgd_steps > 0) {
        dp->s = &localsgd;
    } else {
        dp->s = dp_overlap_init(dp, net) ? &dp_allreduce_overlap : &allreduce;
    }
}

void dp_describe(const struct dp *dp, char *buf, size_t n)
{
    if (dp->s == &dp_allreduce_overlap)
        dp_overlap_describe(dp, buf, n);
    else if (dp->s == &allreduce && dp->o.bucket_bytes)
        snprintf(buf, n, "blocking allreduce after backward in chunks of %zu MB", dp->o.bucket_bytes >> 20);
    else
        snprintf(buf, n, "%s", dp->s == &allreduce ? "one blocking allreduce after backward" : dp->s->name);
}

void dp_free(struct dp *dp)
{
    if (!dp) return;
    dp_overlap_free(dp);
    free(dp->acc);
    free(dp->host);
    free(dp->stats);
    memset(dp, 0, sizeof *dp);
}

enum tipc_status dp_sync_from_rank0(struct dp *dp, struct net *net, bool params)
{
    if (!dp->o.comm) return TIPC_OK;
    if (params) TRY(collective(dp, net, DP_BROADCAST0, net->params, net->nparams, NULL));
    TRY(collective(dp, net, DP_BROADCAST0, net->stats, net->nstats, NULL));
    return collective(dp, net, DP_CHECK_SAME, net->params, net->nparams, "parameters");
}

enum tipc_status dp_epoch_end(struct dp *dp, struct net *net, long step)
{
    if (dp->s->epoch_end) TRY(dp->s->epoch_end(dp, net, step));
    return dp_sync_from_rank0(dp, net, false);
}
