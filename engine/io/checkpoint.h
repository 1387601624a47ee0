/* checkpoint.h: training checkpoints. One file: magic "TIPCCKP1", version, model name and
 * shape (classes, width, resolution, parameter and statistic counts), dtype (f32), training
 * position (epochs completed, global step, and since version 2 the step inside the current
 * epoch and that epoch's length, for a checkpoint taken mid-epoch), RNG state, best top-1, then
 * parameters, momentum and BN running statistics, then an FNV-1a checksum (binfile.h). Written
 * to a temp file, fsync'ed and renamed: the previous checkpoint survives any failure. Version 1
 * files (no mid-epoch position) are still read, as taken at an epoch end.
 *
 * Version 3 adds, after the position, the mixed-precision section: the writer's precision (bf16 or
 * fp16) and its loss scaler's state (precision.h AMP_STATE_FLOATS), so a resumed AMP run goes on
 * with the scale an uninterrupted run has. Mixed-precision nets wrote version 3, fp32 nets version
 * 2 (they have no scaler to keep).
 *
 * Version 4 (every net now) adds, after the position, the run section: the id of the training run
 * that wrote the file (train_opts.run_id: `tipc launch` gives all attempts of one launch the same),
 * then the mixed-precision section when the net is AMP. A restart resumes only from its own run's
 * files, and a fresh training moves other runs' files aside (train_ckpt.h). Versions 1-3 (no run
 * id) are still read; they are another run's to a restart, and --resume loads them as always. */
#ifndef TIPC_CHECKPOINT_H
#define TIPC_CHECKPOINT_H
#include <stdint.h>

#include "../../core/rng.h"
#include "../../core/status.h"
#include "../model/net.h"

#define CKPT_VERSION 4 /* the newest this tipc reads, and the one it writes */
#define CKPT_RUN_ID_MAX 48 /* bytes of the run id, NUL included */

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
    int32_t precision;       /* enum precision of the writer: bf16/fp16 from a file with the AMP section
                                (version 3, or 4 of an AMP net); PREC_FP32 otherwise (an fp32 run, or
                                an AMP run before version 3) */
    bool has_scaler;         /* the file has the AMP section: scaler[] is the writer's loss scaler state */
    float scaler[AMP_STATE_FLOATS];
    char run_id[CKPT_RUN_ID_MAX]; /* version 4: the writing run's id; "" in older files */
};

enum tipc_status ckpt_save(const char *path, const struct ckpt_meta *m, const struct net *net);
/* Read the header only (to build the right net before loading). */
enum tipc_status ckpt_read_meta(const char *path, struct ckpt_meta *m);
/* Load into a built net; the shape must match (errors name the file and the mismatch).
 * with_optimizer: also momentum (resume), and the loss scaler's state when the net is mixed
 * precision of the checkpoint's own precision (a static scale stays the net's setting; any other
 * net keeps the scaler net_alloc set up: resume.h resume_check_precision says so first);
 * otherwise weights and BN statistics only. */
enum tipc_status ckpt_load(const char *path, struct ckpt_meta *m, struct net *net, bool with_optimizer);

#endif
