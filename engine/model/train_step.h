/* train_step.h: one optimizer step, named once (llm.c's train loop body):
 *
 *     for each micro-batch k:  forward; loss; zero_grad; backward; strategy->grads_ready(k)
 *     strategy->reduce         (allreduce, simulated ranks' average, or nothing)
 *     update                   (momentum SGD)
 *     strategy->updated        (LocalSGD's parameter average, identity checks)
 *
 * Used by the trainer (trainer.c), `tipc bench train` and tests/unit/test_model.c; the
 * data-parallel strategies are the pieces of dp.h (NULL: one process, one micro-batch).
 *
 * Where the next changes go without reshaping this:
 * - allreduce overlapping backward (bucketed): net_backward gets a hook called as each bucket of
 *   parameter gradients is complete (the walk is in reverse layer order and the gradients are one
 *   contiguous buffer, so buckets complete back to front); the allreduce strategy starts the
 *   bucket's allreduce there, and its reduce() only waits for the outstanding ones. The step's
 *   sequence is unchanged; grads_ready/reduce keep their meaning.
 *
 * AMP (engine/ops/precision.h has the design): the net's policy (net->amp, fixed at net_alloc)
 * rounds activations, activation gradients and conv/linear weights to bf16/fp16; net_backward
 * starts from the scaled loss; update (net_sgd_update) unscales after the strategy's reduce (so
 * every rank unscales the same averaged gradients and takes the same skip decision), skips the
 * step when a gradient is not finite (the step reports "skipped", it is not an error) and backs
 * the scale off or grows it. Master weights and momentum stay fp32 in net->params / net->mom. */
#ifndef TIPC_TRAIN_STEP_H
#define TIPC_TRAIN_STEP_H
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

struct train_step {
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

#endif
