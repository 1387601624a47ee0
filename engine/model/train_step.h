/* train_step.h: one optimizer step, named once (llm.c's train loop body):
 *
 *     for each micro-batch k:  forward; loss; zero_grad; strategy->backward_begin(k);
 *                              backward (buckets start as they complete); strategy->grads_ready(k)
 *     strategy->reduce         (allreduce or the wait for the buckets in flight, simulated ranks'
 *                              average, or nothing)
 *     update                   (momentum SGD)
 *     strategy->updated        (LocalSGD's parameter average, identity checks)
 *
 * Used by the trainer (trainer.c), `tipc bench train` and tests/unit/test_model.c; the
 * data-parallel strategies are the pieces of dp.h (NULL: one process, one micro-batch).
 *
 * Allreduce overlapping backward (dp_overlap.c): backward_begin installs net->grads_done, which
 * net_backward calls after each layer (the walk is in reverse layer order and the gradients are
 * one contiguous buffer, so buckets complete back to front); the strategy starts each complete
 * bucket there, and its reduce() only waits for the outstanding ones.
 * AMP (engine/ops/precision.h has the design): the net's policy (net->amp, fixed at net_alloc)
 * rounds activations, activation gradients and conv/linear weights to bf16/fp16; net_backward
 * starts from the scaled loss; update (net_sgd_update) unscales after the strategy's reduce (so
 * every rank unscales the same averaged gradients and takes the same skip decision), skips the
 * step when a gradient is not finite (the step reports "skipped", it is not an error) and backs
 * the scale off or grows it. Master weights and momentum stay fp32 in net->params / net->mom.
 * A bf16/fp16 net runs the EAGER step (the staged update has no AMP variant yet).
 *
 * How the step runs (struct train_step.mode; train_graph.h does the staging and the capture):
 *   STEP_EAGER   op by op as above; the loss crosses to the host between forward and backward
 *   STEP_STAGED  the step's inputs (uint8 images, labels, lr, dropout seed) are staged in the
 *                backend's memory first (two slots used in turn, uploaded on a side stream), then
 *                forward, loss, zero_grad, backward and update run reading them there: nothing
 *                crosses to the host until the step is done (the loss is read after the update,
 *                which a non-finite loss skips on the device). Same arithmetic as EAGER, bit for bit.
 *   STEP_GRAPH   STAGED for a warm-up step, then each slot's step captured once as a CUDA Graph
 *                and replayed every step with that slot's new inputs; STAGED where the backend
 *                has no graphs or a capture fails (the warning says why).
 * train_step_mode() chooses for a run and says why; the dp strategy must be single, or the
 * overlapped allreduce on NCCL's stream (its buckets are only enqueued, after an event, and
 * joined back with another: a capture records that fork/join); the others wait on the host. */
#ifndef TIPC_TRAIN_STEP_H
#define TIPC_TRAIN_STEP_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dp.h"
#include "net.h"
#include "../../core/status.h"

/* One micro-batch in host memory (labels checked by the caller). */
struct micro_batch {
    const uint8_t *images;    /* (n, H, W, 3) uint8; NULL: the input slot already holds the batch */
    const int32_t *labels;    /* (n) */
    int n;
    uint64_t dropout_seed;
};

enum step_mode { STEP_EAGER, STEP_STAGED, STEP_GRAPH };

struct train_step {
    enum step_mode mode;      /* STEP_EAGER unless set (train_step_mode()); a micro-batch without
                                 images, or dp->micro > 1, runs eagerly whatever it says */
    bool loss_unread;         /* STAGED/GRAPH: do not wait for this step's loss (s->loss is NaN and
                                 a non-finite one is not reported; benchmarks) */
    const struct micro_batch *mb; /* dp->micro of them (1 when dp is NULL) */
    float lr, momentum, weight_decay, label_smoothing;
    long step;                /* global optimizer steps done before this one */
    float *logits_host;       /* optional (n, K): micro-batch 0's logits copied here (top-k) */
    float loss;               /* out: micro-batch 0's mean loss; on TIPC_ENUMERIC the loss that
                                 was not finite (nothing was updated) */
    bool amp_report;          /* in: fill the AMP outputs below on a device backend too (a wait
                                 for the device; a host-memory backend always fills them) */
    bool skipped;             /* out (AMP): a gradient was not finite; the update was skipped */
    float loss_scale;         /* out (AMP): the loss scale for the next step (0 in fp32) */
    long skipped_total;       /* out (AMP): steps skipped so far */
};

/* Run the step on the net (train mode). TIPC_ENUMERIC (no message: the caller knows where it
 * is) when a loss is not finite; a strategy's collective error as it comes. */
enum tipc_status net_train_step(struct net *net, struct dp *dp, struct train_step *s);

/* The mode for a run's steps: STEP_GRAPH when want_graph, the net's backend has graphs and dp
 * (may be NULL) is the single strategy; else STEP_EAGER. why (the log line's text) says which
 * and why not. */
enum step_mode train_step_mode(const struct net *net, const struct dp *dp, bool want_graph, char *why, size_t n);

/* The staged step's ops on net->staged's inputs (train_graph.c calls it, directly or inside a
 * capture): forward, loss, zero_grad, backward (dp's backward_begin / grads_ready around it), dp's
 * reduce, update; nothing waits for the device. dp: NULL, single, or a strategy whose collectives
 * are enqueued on the backend's stream (the overlapped NCCL buckets). Its updated() is the
 * caller's, after the step. */
enum tipc_status net_train_step_staged(struct net *net, struct dp *dp, int n, const struct train_step *s);

#endif
