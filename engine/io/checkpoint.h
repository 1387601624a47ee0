/* checkpoint.h: training checkpoints. One file: magic "TIPCCKP1", version, model name and
 * shape (classes, width, resolution, parameter and statistic counts), dtype (f32), training
 * position (epochs completed, global step, and since version 2 the step inside the current
 * epoch and that epoch's length, for a checkpoint taken mid-epoch), RNG state, best top-1, then
 * parameters, momentum and BN running statistics, then an FNV-1a checksum (binfile.h). Written
 * to a temp file, fsync'ed and renamed: the previous checkpoint survives any failure. Version 1
 * files (no mid-epoch position) are still read, as taken at an epoch end. */
#ifndef TIPC_CHECKPOINT_H
#define TIPC_CHECKPOINT_H
#include <stdint.h>

#include "../../core/rng.h"
#include "../../core/status.h"
#include "../model/net.h"

#define CKPT_VERSION 2

struct ckpt_meta {
    char model[32];          /* "mobilenet_v3_small" */
    int32_t num_classes, resolution;
    float width_mult;
    int32_t epoch;           /* epochs completed */
    int64_t step;            /* global optimizer steps done */
    struct rng rng;          /* trainer RNG (data order, dropout) after `step` */
    double best_acc1;
    int32_t step_in_epoch;   /* optimizer steps done inside epoch `epoch` (0: at an epoch end) */
    int32_t steps_per_epoch; /* that epoch's steps when step_in_epoch > 0 (a resume checks it) */
};

enum tipc_status ckpt_save(const char *path, const struct ckpt_meta *m, const struct net *net);
/* Read the header only (to build the right net before loading). */
enum tipc_status ckpt_read_meta(const char *path, struct ckpt_meta *m);
/* Load into a built net; the shape must match (errors name the file and the mismatch).
 * with_optimizer: also momentum (resume); otherwise weights and BN statistics only. */
enum tipc_status ckpt_load(const char *path, struct ckpt_meta *m, struct net *net, bool with_optimizer);

#endif
