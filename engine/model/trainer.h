/* trainer.h: the training and evaluation loop of `tipc train` (Step6 train.py's behaviour):
 * epochs over a source, momentum SGD with the recipe's LR schedule, per-N-step logs, top-1 /
 * top-5 eval each epoch, atomic checkpoints each epoch (OUTPUT/epoch_N.ckpt, latest.ckpt,
 * best.ckpt) and every Global.save_interval_steps steps (step_S.ckpt, latest.ckpt), resume at an
 * epoch end or mid-epoch (the same batches, LR, momentum and dropout draws as an uninterrupted
 * run), --test-only evaluation. Each step is net_train_step (train_step.h); the
 * data-parallel strategies are dp.h's. Data parallel when `comm` is set (world > 1):
 * rank 0's parameters and BN statistics are broadcast at the start, gradients are averaged in
 * fixed-order buckets after backward, parameters are checked bit-identical across ranks every
 * `check_every` steps and at each epoch end (a mismatch is a hard error; with LocalSGD the ranks'
 * parameters differ between averages by design, so they are checked right after each average and
 * averaged at every epoch end), BN running statistics
 * are rank 0's (broadcast before each eval, as DDP's broadcast_buffers), eval counts are summed
 * over ranks, and the local rank 0 of EVERY node writes the checkpoints, so each node's own
 * eval/export/infer stages find them without a shared file system. With simulate_world W, one
 * process computes what W such ranks compute (gradient accumulation over their micro-batches). */
#ifndef TIPC_TRAINER_H
#define TIPC_TRAINER_H
#include <stdbool.h>
#include <stddef.h>

#include "../io/recipe.h"
#include "../backend/backend.h"
#include "net.h"

struct comm;
struct train_log;

struct train_opts {
    struct recipe r;
    struct backend be;        /* where the net lives (backend_open) */
    const char *pretrained;   /* weights to start from (or to evaluate with test_only) */
    const char *resume;       /* checkpoint to continue from (weights, momentum, position, RNG) */
    bool resume_auto;         /* continue from the newest complete checkpoint in the output folder
                                 (resume.h); `resume`, then `pretrained`, when there is none */
    int restart;              /* the attempt's number under tipc launch --max_restarts (0: the first) */
    const char *run_id;       /* this run's id, written into every checkpoint (TIPC_RUN_ID: tipc launch
                                 gives every attempt of one launch the same); NULL or "": a fresh
                                 random one. A restart resumes only from its run's checkpoints */
    bool test_only;
    bool real_data;           /* refuse synthetic data (in memory, or a folder tipc prepare synthesised): exit 3 */
    int rank, world;          /* from the environment */
    int threads;              /* CPU threads (0: default) */
    int local_rank;           /* rank within this node (checkpoint writer when 0) */
    struct comm *comm;        /* collectives (engine/dist/comm.h); NULL when world == 1 */
    size_t bucket_bytes;      /* gradient allreduce bucket (0: one call) */
    bool overlap;             /* buckets reduced while backward runs (dp.h "overlap") */
    bool per_tensor;          /* one bucket per parameter tensor */
    long check_every;         /* parameter identity check period in steps (0: epoch ends only) */
    int local_sgd_steps;      /* LocalSGD: 0 off; else average parameters (not gradients) every N steps */
    int local_sgd_warm;       /* LocalSGD: plain gradient allreduce for the first N global steps */
    int simulate_world;       /* > 1 (world 1 only): each step runs the micro-batches of this many
                                 ranks in rank order and accumulates their gradients: what a
                                 data-parallel run without SyncBN computes (rank 0's BN statistics,
                                 checkpoints and log) */
    struct train_log *log;    /* progress display and metrics file (train_log.h); NULL for none */
    struct amp_policy amp;    /* mixed precision (zeroed: fp32); the backend must have the AMP ops */
    bool cuda_graph;          /* capture the step as a CUDA Graph where it can be (train_step.h
                                 train_step_mode; `--cuda-graph on|off`) */
};

enum tipc_status train_run(const struct train_opts *o);

#endif
