/* rng.h: the small deterministic RNG of the input pipeline and the synthetic data generator.
 * splitmix64 (Steele, Lea, Flood 2014): one 64-bit state, passes BigCrush, and any key (seed,
 * epoch, index) hashes to an independent stream, which is what per-sample determinism needs.
 * Not for cryptography. */
#ifndef TIPC_DATA_RNG_H
#define TIPC_DATA_RNG_H
#include <stdint.h>

struct data_rng { uint64_t s; };

static inline uint64_t data_rng_mix(uint64_t z)
{
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

/* A stream keyed by up to three numbers (e.g. seed, epoch, sample index). */
static inline struct data_rng data_rng_key(uint64_t a, uint64_t b, uint64_t c)
{
    uint64_t s = data_rng_mix(a + 0x9e3779b97f4a7c15ULL);
    s = data_rng_mix(s ^ (b + 0x632be59bd9b4e019ULL));
    s = data_rng_mix(s ^ (c + 0x85157af5c6f4a9e1ULL));
    return (struct data_rng){s};
}

static inline uint64_t data_rng_next(struct data_rng *r)
{
    r->s += 0x9e3779b97f4a7c15ULL;
    return data_rng_mix(r->s);
}

/* Uniform in [0, 1) with 53 random bits. */
static inline double data_rng_uniform(struct data_rng *r)
{
    return (double)(data_rng_next(r) >> 11) * (1.0 / 9007199254740992.0);
}

/* Uniform integer in [0, n), n > 0 (multiply-shift; bias < 2^-32 for our n). */
static inline uint32_t data_rng_below(struct data_rng *r, uint32_t n)
{
    return (uint32_t)(((data_rng_next(r) >> 32) * (uint64_t)n) >> 32);
}

#endif
