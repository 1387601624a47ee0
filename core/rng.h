/* rng.h: the one random-number module (no global state, not for cryptography).
 *
 *  - splitmix64_mix: splitmix64's finaliser (Steele, Lea, Flood 2014), the one definition of it;
 *    usable from CUDA device code too (dropout masks hash seed+index with it on both backends).
 *  - struct rng: xoshiro256** (Blackman & Vigna) seeded through splitmix64, with uniform and
 *    normal draws; its state is 4 words, saved in checkpoints (weights init, dropout seeds).
 *  - struct data_rng: one splitmix64 stream; any key (seed, epoch, sample index) hashes to an
 *    independent stream, which is what the input pipeline's per-sample determinism and the
 *    synthetic data generator need. */
#ifndef TIPC_RNG_H
#define TIPC_RNG_H
#include <stdint.h>

#ifdef __CUDACC__
#define TIPC_HOST_DEVICE __host__ __device__
#else
#define TIPC_HOST_DEVICE
#endif

#define SPLITMIX64_GAMMA 0x9e3779b97f4a7c15ULL

static inline TIPC_HOST_DEVICE uint64_t splitmix64_mix(uint64_t z)
{
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

#ifdef __cplusplus
extern "C" {
#endif

/* ---- xoshiro256** ------------------------------------------------------------------------- */
struct rng { uint64_t s[4]; };

void rng_seed(struct rng *r, uint64_t seed);
uint64_t rng_u64(struct rng *r);
double rng_uniform(struct rng *r);            /* [0, 1) */
double rng_normal(struct rng *r);             /* N(0, 1), Box-Muller */
uint64_t rng_mix64(uint64_t z);               /* one splitmix64 step from z, for hashing seeds */
/* A fresh name nobody else draws (a run's id): 2 * nbytes hex digits from the kernel's entropy
 * (getrandom), NUL-terminated in out[2 * nbytes + 1]. Unique, not secret. */
void random_hex(char *out, int nbytes);

/* ---- splitmix64 streams ------------------------------------------------------------------- */
struct data_rng { uint64_t s; };

/* A stream keyed by up to three numbers (e.g. seed, epoch, sample index). */
static inline struct data_rng data_rng_key(uint64_t a, uint64_t b, uint64_t c)
{
    uint64_t s = splitmix64_mix(a + SPLITMIX64_GAMMA);
    s = splitmix64_mix(s ^ (b + 0x632be59bd9b4e019ULL));
    s = splitmix64_mix(s ^ (c + 0x85157af5c6f4a9e1ULL));
    struct data_rng r = {s};
    return r;
}

static inline uint64_t data_rng_next(struct data_rng *r)
{
    r->s += SPLITMIX64_GAMMA;
    return splitmix64_mix(r->s);
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

#ifdef __cplusplus
}
#endif
#endif
