/* trainer.h: the training and evaluation loop of `tipc train` (Step6 train.py's behaviour):
 * epochs over a source, momentum SGD with the recipe's LR schedule, per-N-step logs, top-1 /
 * top-5 eval each epoch, atomic checkpoints each epoch (OUTPUT/epoch_N.ckpt, latest.ckpt,
 * best.ckpt), resume, --test-only evaluation. Single process; the gradient allreduce of data
 * parallel training plugs in through `allreduce` (called on the contiguous gradient buffer
 * after backward, before the optimizer step). */
#ifndef TIPC_TRAINER_H
#define TIPC_TRAINER_H
#include <stdbool.h>
#include <stddef.h>

#include "../io/recipe.h"

struct train_opts {
    struct recipe r;
    const char *pretrained;   /* weights to start from (or to evaluate with test_only) */
    const char *resume;       /* checkpoint to continue from (weights, momentum, position, RNG) */
    bool test_only;
    int rank, world;          /* from the environment */
    int threads;              /* CPU threads (0: default) */
    /* Data-parallel hook: average grads (n floats) over ranks; NULL when world == 1. */
    enum tipc_status (*allreduce)(void *ctx, float *grads, size_t n);
    void *allreduce_ctx;
};

enum tipc_status train_run(const struct train_opts *o);

#endif
