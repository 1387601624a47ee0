/* dp_overlap.c: gradient buckets averaged while backward runs (dp.h's "overlap" strategy).
 *
 *   backward_begin   installs net->grads_done; net_backward calls it after each layer, and every
 *                    bucket whose lowest layer is done is handed to comm_async, in plan order
 *   reduce           starts what is left (nothing, normally), then waits for the buckets still
 *                    in flight: that wait is the step's exposed communication
 *
 * Every rank builds the same plan and starts the buckets in the same order, and each bucket is the
 * same in-place COMM_AVG allreduce the blocking strategy issues, so the average of every element is
 * computed exactly as before (with 2 ranks: bit for bit the blocking result). */
#include <stdio.h>

#include "dp_overlap.h"
#include "../../core/check.h"
#include "../dist/comm.h"
#include "../../core/banned.h"

static void bucket_ready(void *ud, int layer)
{
    struct dp *dp = ud;
    const struct grad_plan *p = &dp->plan;
    while (dp->next_bucket < p->nb && layer <= p->b[dp->next_bucket].ready_layer) {
        const struct grad_bucket *b = &p->b[dp->next_bucket++];
        comm_async_allreduce(dp->async, dp->grads + b->off, b->n, COMM_F32, COMM_AVG);
    }
}

static enum tipc_status overlap_backward_begin(struct dp *dp, struct net *net, int k, long step)
{
    (void)k;
    comm_set_step(dp->o.comm, step);
    dp->next_bucket = 0;
    dp->grads = net->grads;
    net->grads_done = bucket_ready;
    net->grads_done_ud = dp;
    return TIPC_OK;
}

static enum tipc_status overlap_grads_ready(struct dp *dp, struct net *net, int k)
{
    (void)dp, (void)k;
    net->grads_done = NULL;   /* backward is over: nothing else may start buckets */
    net->grads_done_ud = NULL;
    return TIPC_OK;
}

static enum tipc_status overlap_reduce(struct dp *dp, struct net *net, long step)
{
    if (dp->next_bucket == 0) {   /* backward_begin did not run (a caller without the hook) */
        comm_set_step(dp->o.comm, step);
        dp->grads = net->grads;
    }
    bucket_ready(dp, -1);
    double waited = 0, busy = 0;
    enum tipc_status st = comm_async_wait(dp->async, &waited, &busy);
    dp->comm_exposed_seconds += waited;
    dp->comm_seconds += busy;
    return st;
}

const struct dp_strategy dp_allreduce_overlap = {.name = "overlap", .backward_begin = overlap_backward_begin,
                                                 .grads_ready = overlap_grads_ready, .reduce = overlap_reduce,
                                                 .updated = dp_check_params};

bool dp_overlap_init(struct dp *dp, const struct net *net)
{
    struct comm *c = dp->o.comm;
    if (!dp->o.overlap || !c) return false;
    void *stream = comm_device_buffers(c) ? backend_stream(&net->be) : NULL;
    /* Gloo reduces host memory in place; NCCL needs the backend's stream to order the buckets
     * (the thread would run NCCL off the CUDA device's thread) */
    if (comm_device_buffers(c) ? !stream || !comm_has_streams(c) : !net_host_memory(net)) return false;
    grad_plan_of_net(&dp->plan, net, dp->o.bucket_bytes, dp->o.per_tensor);
    dp->async = comm_async_open(c, stream);
    return true;
}

void dp_overlap_describe(const struct dp *dp, char *buf, size_t n)
{
    const struct grad_plan *p = &dp->plan;
    size_t largest = 0;
    for (int i = 0; i < p->nb; i++)
        if (p->b[i].n > largest) largest = p->b[i].n;
    snprintf(buf, n, "%d bucket%s (%s, largest %.2f MB) overlapping backward on a communication %s",
             p->nb, p->nb == 1 ? "" : "s",
             dp->o.per_tensor ? "one per tensor" : "fuse_grad_size_in_MB", (double)largest * 4 / (1 << 20),
             comm_async_on_stream(dp->async) ? "stream" : "thread");
}

void dp_overlap_free(struct dp *dp)
{
    comm_async_close(dp->async);
    dp->async = NULL;
    grad_plan_free(&dp->plan);
}
