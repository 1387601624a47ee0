/* loader.h: the training/eval input pipeline: per-rank sharding, decode + augment in a thread
 * pool, prefetch, uint8 HWC batches. Normalisation to float happens later, in the engine. */
#ifndef TIPC_LOADER_H
#define TIPC_LOADER_H
#include <stdbool.h>
#include <stdint.h>
#include "dataset.h"

struct loader_config {
    int batch_size;     /* per rank */
    int crop;           /* output side, e.g. 224 */
    int resize;         /* eval: short side resized to this, then center crop `crop` */
    bool train;         /* true: random-resized-crop + flip + epoch-seeded shuffle; false: eval, fixed order */
    int rank, world;    /* shard = items of this rank (DistributedSampler-style) */
    uint64_t seed;      /* same seed, rank and epoch -> same batches */
    int threads;        /* decode threads (0 = auto) */
    int prefetch;       /* batches decoded ahead (>= 1) */
    bool drop_last;     /* drop the last partial batch of an epoch */
    bool skip_bad;      /* skip and count unreadable images instead of failing */
    int start_epoch;    /* first epoch to produce (a resumed run continues the same order) */
    int start_step;     /* first step inside start_epoch (a run resumed mid-epoch) */
};

struct batch {
    uint8_t *images;    /* (n, crop, crop, 3) RGB, HWC */
    int32_t *labels;    /* (n) */
    int n;              /* <= batch_size (last eval batch may be short) */
    int epoch;          /* 0-based epoch this batch belongs to */
    int step_in_epoch;  /* 0-based */
};

struct loader; /* opaque */

/* ds must outlive the loader. Errors: TIPC_EUSAGE (bad settings), TIPC_EDATA (too few items). */
enum tipc_status loader_init(struct loader **L, const struct dataset *ds, const struct loader_config *c);
/* Next batch; infinite across epochs. *out stays valid until the next call. */
enum tipc_status loader_next(struct loader *L, const struct batch **out);
int loader_steps_per_epoch(const struct loader *L);
long loader_skipped(const struct loader *L);
/* Decode threads actually running (threads = 0 resolves to min(online CPUs, 8)). */
int loader_threads(const struct loader *L);
void loader_free(struct loader *L);

#endif
