/* rng.c: xoshiro256** (Blackman & Vigna) seeded through splitmix64. */
#include <math.h>
#include <stdio.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "rng.h"
#include "banned.h"

uint64_t rng_mix64(uint64_t z) { return splitmix64_mix(z + SPLITMIX64_GAMMA); }

void rng_seed(struct rng *r, uint64_t seed)
{
    for (int i = 0; i < 4; i++) {
        seed = rng_mix64(seed);
        r->s[i] = seed;
    }
}

static inline uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

uint64_t rng_u64(struct rng *r)
{
    uint64_t *s = r->s;
    uint64_t res = rotl(s[1] * 5, 7) * 9, t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 45);
    return res;
}

double rng_uniform(struct rng *r) { return (double)(rng_u64(r) >> 11) * (1.0 / 9007199254740992.0); }

double rng_normal(struct rng *r)
{
    double u1 = rng_uniform(r), u2 = rng_uniform(r);
    if (u1 < 1e-300) u1 = 1e-300;
    return sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
}

void random_hex(char *out, int nbytes)
{
    unsigned char b[64];
    if (nbytes > 64) nbytes = 64;
    if (getrandom(b, (size_t)nbytes, 0) != (ssize_t)nbytes) {   /* no entropy source: time, pid, address */
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        uint64_t z = (uint64_t)ts.tv_nsec ^ ((uint64_t)ts.tv_sec << 30) ^ ((uint64_t)getpid() << 48) ^ (uint64_t)(uintptr_t)b;
        for (int i = 0; i < nbytes; i++) b[i] = (unsigned char)(rng_mix64(z + (uint64_t)i) >> 24);
    }
    for (int i = 0; i < nbytes; i++) snprintf(out + 2 * i, 3, "%02x", b[i]);
    out[2 * nbytes] = 0;
}
