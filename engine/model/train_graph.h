/* train_graph.h: the staged and the graph-captured training step (train_step.h's STEP_STAGED and
 * STEP_GRAPH): each step's inputs (struct step_scalars, labels, uint8 images) are staged in one of
 * two slots of backend memory (backend.h stage_put: on CUDA a pinned twin and a copy on a side
 * stream, ordered by events), then net_train_step_staged runs on them: op by op (STAGED, the
 * warm-up) or replayed from the slot's CUDA Graph, captured once at the slot's first step after
 * TRAIN_GRAPH_WARMUP staged steps (GRAPH). A graph is valid for one shape and one set of
 * constants (batch, momentum, weight decay, label smoothing): when one changes, the graphs are
 * dropped and the next steps warm up and capture again; a slot's graph is captured again too when
 * a workspace it uses has moved (grown by a bigger op since, e.g. an eval batch). Everything else
 * that varies per step is
 * read from the slot, never baked into a graph.
 * Not here: the ops of the step (train_step.c), the slots' copies (the backend). */
#ifndef TIPC_TRAIN_GRAPH_H
#define TIPC_TRAIN_GRAPH_H
#include <stdbool.h>

#include "train_step.h"

#define TRAIN_GRAPH_WARMUP 1

/* One staged step from s->mb[0] (images and labels in host memory). Waits for the loss unless
 * s->loss_unread; TIPC_ENUMERIC when it is not finite (the update was skipped on the device). */
enum tipc_status train_graph_step(struct net *net, struct dp *dp, struct train_step *s);
/* Steps replayed from a graph so far (0 on a backend without graphs). */
long train_graph_replays(const struct net *net);
/* Frees what the first staged step made (net_free calls it). */
void train_graph_free(struct net *net);

#endif
