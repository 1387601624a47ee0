/* resume.h: which checkpoint a run continues from on its own: `tipc train --resume auto`, and
 * every attempt after the first under `tipc launch --max_restarts` (TIPC_RESTART_COUNT > 0).
 *
 * The candidates are the complete checkpoints in the output folder (latest.ckpt, epoch_N.ckpt,
 * step_N.ckpt; each was published whole by a rename, so any present is complete), on a restart
 * only those of this run (checkpoint.h's run id). Each rank takes
 * its folder's newest (by global step); with collectives the ranks then agree on the oldest of
 * those (the nodes each keep their own folder, and a node may have died between its save and
 * another node's), and each loads its file of that step. A rank with no checkpoint makes every
 * rank start from the beginning. */
#ifndef TIPC_RESUME_H
#define TIPC_RESUME_H
#include <stdbool.h>

#include "../../core/status.h"

struct comm;
struct ckpt_meta;
struct amp_policy;

/* *path: the checkpoint to resume from (malloc'ed), or NULL to start from the beginning.
 * comm may be NULL (one rank). TIPC_EIO when the agreed step is missing in this rank's folder.
 * only_run: consider only the checkpoints this run id wrote (a launcher's restart: another run's
 * files in a reused folder are never adopted; rank 0 names those passed over); NULL: any
 * (--resume auto, an explicit choice). */
enum tipc_status resume_find(const char *dir, struct comm *comm, int rank, const char *only_run, char **path);

/* The trainer's checkpoint names: latest.ckpt, epoch_N.ckpt, step_N.ckpt, and best.ckpt when
 * with_best (it is not a position, so never resumed from). */
bool ckpt_name_ours(const char *name, bool with_best);

/* The checkpoint's precision against this run's (engine/io/checkpoint.h: version 3 files say theirs
 * and carry the loss scaler; versions 1 and 2 are fp32 runs' or AMP runs' from before). Same
 * precision: the scaler is restored (ckpt_load), and rank 0 says so. A version 3 file of another
 * precision found automatically (`automatic`: --resume auto, a launcher's restart) is another
 * run's checkpoint left in the output folder: TIPC_EUSAGE, naming the file and what to do. Given by
 * hand (--resume PATH), a deliberate switch: it goes on, and rank 0 says the scaler starts afresh;
 * so does an AMP run resuming a file with no scaler (its writer's precision is unknown). */
enum tipc_status resume_check_precision(const char *path, const struct ckpt_meta *m, const struct amp_policy *amp,
                                        bool automatic, int rank);

#endif
