/* dp_overlap.h: the data-parallel strategy whose gradient allreduce overlaps backward (dp.h's
 * "overlap"), and the piece of dp.c it shares. Only dp.c uses this header. */
#ifndef TIPC_DP_OVERLAP_H
#define TIPC_DP_OVERLAP_H
#include <stdbool.h>
#include <stddef.h>

#include "dp.h"

extern const struct dp_strategy dp_allreduce_overlap;
/* Whether dp->o asks for overlap and the buffers allow it (Gloo: host memory; NCCL: the backend's
 * stream); if so, the bucket plan and comm_async are set up in dp. */
bool dp_overlap_init(struct dp *dp, const struct net *net);
void dp_overlap_describe(const struct dp *dp, char *buf, size_t n);
void dp_overlap_free(struct dp *dp);
/* dp.c: the parameter identity check every check_every steps (timed as exposed communication) */
enum tipc_status dp_check_params(struct dp *dp, struct net *net, long step);

#endif
