/* train_ckpt.h: a training's checkpoint files in its output folder (trainer.c): the folder made
 * ready before any work, epoch and step checkpoints written, and other runs' checkpoints moved
 * aside when a training starts from the beginning. Only local rank 0 of each node writes
 * (trainer.h); the others return TIPC_OK at once.
 *
 * Whose file is it: every checkpoint holds its run's id (checkpoint.h, version 4). A training that
 * starts from the beginning (no --resume, no checkpoint of its own found by a restart) in a folder
 * holding another run's checkpoints (another id, or none: versions 1-3) moves them into
 * OUTPUT/previous_run/ rather than refusing: the default output folder (./logs/MODEL/MODE) is
 * reused by every `tipc run`, so a refusal would fail every second run. One generation is kept:
 * the checkpoints already in previous_run/ (the run before that one) are replaced, which costs
 * no more than the overwrite every run did before, and nothing else there is touched. */
#ifndef TIPC_TRAIN_CKPT_H
#define TIPC_TRAIN_CKPT_H
#include <stdbool.h>
#include <stdint.h>

#include "trainer.h"
#include "../io/checkpoint.h"

/* OUTPUT exists and takes files; temps of an earlier, killed save are removed. */
enum tipc_status train_output_ready(const struct train_opts *o);
/* OUTPUT/epoch_E.ckpt, latest.ckpt, and best.ckpt when `best`. */
enum tipc_status train_save_epoch(const struct train_opts *o, const struct ckpt_meta *m, const struct net *net,
                                  bool best);
/* OUTPUT/step_S.ckpt and latest.ckpt, holding the position in the epoch; the step file of two
 * saves ago (this process wrote it) is removed: kept[] holds the last two steps (-1: none). */
enum tipc_status train_save_step(const struct train_opts *o, const struct ckpt_meta *m, const struct net *net,
                                 int64_t kept[2]);
/* Move the checkpoints of OUTPUT that run_id did not write into OUTPUT/previous_run/ (see above);
 * `keep` (may be NULL) is a file to leave in place (the --pretrained weights, already loaded).
 * A file that cannot be moved is a warning: a restart never resumes from it anyway. */
void train_set_aside_others(const struct train_opts *o, const char *run_id, const char *keep);

#endif
