/* sampler.c: see sampler.h. */
#include "sampler.h"

#include "../../core/rng.h"
#include "../../core/banned.h"

void sampler_init(struct sampler *s, int n, int rank, int world, bool shuffle, uint64_t seed)
{
    *s = (struct sampler){.n = n, .rank = rank, .world = world, .shuffle = shuffle, .seed = seed,
                          .per_rank = (n + world - 1) / world};
}

void sampler_epoch(const struct sampler *s, int epoch, int *idx, int *pos, int *perm)
{
    for (int i = 0; i < s->n; i++) perm[i] = i;
    if (s->shuffle) {
        struct data_rng r = data_rng_key(s->seed, (uint64_t)epoch, 0x5348554646ULL /* "SHUFF" */);
        for (int i = s->n - 1; i > 0; i--) {
            int j = (int)data_rng_below(&r, (uint32_t)i + 1);
            int t = perm[i]; perm[i] = perm[j]; perm[j] = t;
        }
    }
    for (int k = 0; k < s->per_rank; k++) {
        int p = s->rank + k * s->world;
        idx[k] = perm[p % s->n];   /* wrap-around padding */
        pos[k] = p;
    }
}
