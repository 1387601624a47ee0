/* grad_buckets.h: the gradient bucket plan of the overlapped allreduce (PyTorch DDP's
 * compute_bucket_assignment_by_size, on our one contiguous gradient buffer).
 *
 * Parameter tensors are taken in reverse layer order (the order net_backward finishes them) and
 * packed into buckets: a bucket is closed as soon as it holds at least bucket_bytes (so every
 * bucket but the last, the first layers', holds >= bucket_bytes; a tensor is never split).
 * bucket_bytes 0 means one bucket for everything (the recipe's fuse_grad_size_in_MB = 0);
 * per_tensor (fuse_all_reduce_ops = false) gives each tensor its own bucket. Because tensors lie
 * in layer order in the buffer, every bucket is one contiguous range [off, off + n).
 * The plan depends only on the net's shapes and the two knobs, so every rank builds the same
 * plan and issues the same allreduces in the same order (anchors #15).
 * Not here: running the allreduces (dp_overlap.c, comm.h's comm_async). */
#ifndef TIPC_GRAD_BUCKETS_H
#define TIPC_GRAD_BUCKETS_H
#include <stdbool.h>
#include <stddef.h>

struct net;

/* One parameter tensor: floats [off, off + n) of the gradient buffer, written by layer `layer`. */
struct grad_tensor {
    size_t off, n;
    int layer;
};

struct grad_bucket {
    size_t off, n;     /* floats of the gradient buffer */
    int ready_layer;   /* the lowest layer with a tensor here: once net_backward has finished it,
                          every gradient of the bucket is final */
    int ntensors;
};

struct grad_plan {
    struct grad_bucket *b;   /* in launch order: b[0] holds the last layers' gradients */
    int nb;
    size_t total;            /* floats covered (the sum of the buckets' n) */
};

/* Build the plan over t[0..nt) (layer order: ascending, adjacent offsets; tensors of n 0 are
 * skipped). No tensors: no buckets. */
void grad_plan_build(struct grad_plan *p, const struct grad_tensor *t, int nt, size_t bucket_bytes, bool per_tensor);
/* The net's parameter tensors (conv weight; BN gamma, beta; linear weight, bias): *t allocated,
 * returns their number. */
int grad_tensors_of_net(const struct net *net, struct grad_tensor **t);
/* grad_tensors_of_net + grad_plan_build. */
void grad_plan_of_net(struct grad_plan *p, const struct net *net, size_t bucket_bytes, bool per_tensor);
void grad_plan_free(struct grad_plan *p);

#endif
