/* sampler.h: which dataset items a rank sees in an epoch, like torch's DistributedSampler.
 *
 * Every rank computes the same permutation of [0, n) (train: Fisher-Yates keyed by (seed, epoch);
 * eval: identity), pads it by wrap-around to per_rank * world items (so every rank has the same
 * number of samples and steps, which collectives need), and takes positions rank, rank + world,
 * rank + 2 world, ... Shards are disjoint except for the padding; together they cover every item.
 * Dropping an incomplete last batch is the loader's business (drop_last), not the sampler's. */
#ifndef TIPC_SAMPLER_H
#define TIPC_SAMPLER_H
#include <stdbool.h>
#include <stdint.h>

struct sampler {
    int n;            /* dataset size */
    int rank, world;
    bool shuffle;
    uint64_t seed;
    int per_rank;     /* ceil(n / world) */
};

void sampler_init(struct sampler *s, int n, int rank, int world, bool shuffle, uint64_t seed);
/* This rank's items for `epoch`: idx[k] dataset index, pos[k] global position (rank + k * world),
 * both (per_rank). perm is (n) scratch. */
void sampler_epoch(const struct sampler *s, int epoch, int *idx, int *pos, int *perm);

#endif
