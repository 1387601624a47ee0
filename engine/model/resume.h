/* resume.h: which checkpoint a run continues from on its own: `tipc train --resume auto`, and
 * every attempt after the first under `tipc launch --max_restarts` (TIPC_RESTART_COUNT > 0).
 *
 * The candidates are the complete checkpoints in the output folder (latest.ckpt, epoch_N.ckpt,
 * step_N.ckpt; each was published whole by a rename, so any present is complete). Each rank takes
 * its folder's newest (by global step); with collectives the ranks then agree on the oldest of
 * those (the nodes each keep their own folder, and a node may have died between its save and
 * another node's), and each loads its file of that step. A rank with no checkpoint makes every
 * rank start from the beginning. */
#ifndef TIPC_RESUME_H
#define TIPC_RESUME_H
#include "../../core/status.h"

struct comm;

/* *path: the checkpoint to resume from (malloc'ed), or NULL to start from the beginning.
 * comm may be NULL (one rank). TIPC_EIO when the agreed step is missing in this rank's folder. */
enum tipc_status resume_find(const char *dir, struct comm *comm, int rank, char **path);

#endif
