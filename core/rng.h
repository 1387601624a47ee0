/* rng.h: a small deterministic random generator (xoshiro256** seeded by splitmix64) with
 * uniform and normal draws. Its state is 4 words, saved in checkpoints. No global state. */
#ifndef TIPC_RNG_H
#define TIPC_RNG_H
#include <stdint.h>

struct rng { uint64_t s[4]; };

void rng_seed(struct rng *r, uint64_t seed);
uint64_t rng_u64(struct rng *r);
double rng_uniform(struct rng *r);            /* [0, 1) */
double rng_normal(struct rng *r);             /* N(0, 1), Box-Muller */
uint64_t rng_mix64(uint64_t z);               /* splitmix64 finaliser, for hashing seeds */

#endif
