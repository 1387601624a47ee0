/* dp.h: data-parallel strategies: how the micro-batch gradients of one optimizer step become the
 * step's gradient, and what happens to the parameters after the update. Each is a small piece
 * behind a tiny vtable (nccl-tests' struct testColl) that net_train_step (train_step.h) calls:
 *
 *   single     one process, one micro-batch: nothing to do
 *   allreduce  gradients averaged over the ranks in fixed-order buckets before the update;
 *              parameters checked bit-identical every check_every steps
 *   overlap    the same average, but each bucket (grad_buckets.h: reverse layer order, DDP's
 *              packing) is started by net_backward's grads_done hook as soon as its gradients are
 *              final, on comm_async's thread (Gloo) or stream (NCCL); reduce only waits for what
 *              is still in flight (dp_overlap.c)
 *   localsgd   LocalSGD: plain allreduce for the first local_sgd_warm steps, then no gradient
 *              allreduce; parameters averaged every local_sgd_steps steps (and checked right
 *              after an average: between averages the ranks differ by design)
 *   simulated  one process runs the micro-batches of W ranks in rank order, sums their gradients
 *              and scales by 1/W exactly as comm_allreduce(COMM_AVG) does, and keeps rank 0's BN
 *              statistics: what W ranks without SyncBN compute (gradient accumulation)
 *
 * Around the steps (dp_start, dp_epoch_end): every rank starts from rank 0's parameters and BN
 * statistics, and at each epoch end LocalSGD averages the parameters and BN statistics are
 * rank 0's again (as DDP's broadcast_buffers), both proven by an identity check.
 * Collectives run on the net's buffers directly when the backend's memory is host memory or the
 * collective library takes device buffers (NCCL); otherwise through a host copy.
 * Not here: the step itself (train_step.c), the collectives (engine/dist/comm.h). */
#ifndef TIPC_DP_H
#define TIPC_DP_H
#include <stddef.h>

#include "grad_buckets.h"
#include "net.h"
#include "../../core/status.h"

struct comm;

struct dp_opts {
    struct comm *comm;        /* collectives; NULL: one process (single or simulated) */
    size_t bucket_bytes;      /* gradient allreduce bucket (0: one call) */
    bool overlap;             /* start the buckets during backward (when the buffers allow it) */
    bool per_tensor;          /* one bucket per parameter tensor (fuse_all_reduce_ops = false) */
    long check_every;         /* parameter identity check period in steps (0: epoch ends only) */
    int local_sgd_steps;      /* > 0: LocalSGD, parameters averaged every N steps */
    int local_sgd_warm;       /* LocalSGD: plain gradient allreduce for the first N global steps */
    int simulate_world;       /* > 1 (no comm): simulated ranks */
};

struct dp;
struct dp_strategy {
    const char *name;
    /* micro-batch k's gradients are in net->grads (its backward wrote them) */
    enum tipc_status (*grads_ready)(struct dp *dp, struct net *net, int k);
    /* optional: right before micro-batch k's net_backward (step: global steps done before) */
    enum tipc_status (*backward_begin)(struct dp *dp, struct net *net, int k, long step);
    /* every micro-batch done: make net->grads the step's gradient (step: global steps done before) */
    enum tipc_status (*reduce)(struct dp *dp, struct net *net, long step);
    /* after the update (step: global steps done, this one included) */
    enum tipc_status (*updated)(struct dp *dp, struct net *net, long step);
    /* at an epoch end, before the BN statistics are made rank 0's (NULL: nothing) */
    enum tipc_status (*epoch_end)(struct dp *dp, struct net *net, long step);
};

struct dp {
    const struct dp_strategy *s;
    struct dp_opts o;
    int micro;                /* micro-batches per step: W simulated ranks, else 1 */
    double comm_seconds;      /* time the gradient / parameter averages ran (on the communication
                                 thread when they overlap backward; the caller resets it) */
    double comm_exposed_seconds; /* time the steps waited on communication: blocking collectives,
                                 and the wait for buckets still in flight (the caller resets it) */
    /* overlap (dp_overlap.c) */
    struct comm_async *async;
    struct grad_plan plan;
    int next_bucket;          /* the next bucket to start in this backward */
    float *grads;             /* the net's gradient buffer the buckets index */
    float *acc, *host, *stats; /* simulated: (nparams) gradient sum and one rank's gradients,
                                  (nstats) rank 0's BN statistics */
};

/* Pick the strategy for o (the net sizes the simulated ranks' buffers and the bucket plan). */
void dp_init(struct dp *dp, const struct dp_opts *o, const struct net *net);
void dp_free(struct dp *dp);
/* Every rank takes rank 0's parameters (when params) and BN statistics, then proves it. */
enum tipc_status dp_sync_from_rank0(struct dp *dp, struct net *net, bool params);
/* "12 buckets (fuse_grad_size_in_MB, largest 4.00 MB) overlapping backward on a communication
 * thread": how the gradients are reduced */
void dp_describe(const struct dp *dp, char *buf, size_t n);
/* At an epoch end: the strategy's agreement (LocalSGD's average), then dp_sync_from_rank0(false). */
enum tipc_status dp_epoch_end(struct dp *dp, struct net *net, long step);

#endif
