/* cuda_test.h: what the CUDA-vs-CPU op tests share (every test_cuda_*.c): the group set-up
 * that opens the CUDA backend once (TF32 off: fp32 against fp32), NEED_GPU() (without a CUDA
 * build or a device: prints `SKIP: no CUDA device (reason)` and skips; a device that cannot be
 * opened fails), a failing CUDA call failing the test instead of exiting, and random data /
 * device buffers / a compare of a device buffer with the CPU's. */
#ifndef TIPC_CUDA_TEST_H
#define TIPC_CUDA_TEST_H
#include "testutil.h"

#include "../../engine/backend/backend.h"
#ifdef TIPC_HAVE_CUDA
#include "../../engine/ops/cuda/ops_cuda.h"
#endif

static struct backend G;               /* the CUDA backend, when there is a device */
static const struct backend_ops *C __attribute__((unused)) = &backend_cpu_ops;
static const char *why = "";
static bool have, broken; /* broken: a device is there but the backend would not open on it */

static inline void gpu_die(const char *msg, int code) { fail_msg("died (exit %d): %s", code, msg); }

static int group_setup(void **state)
{
    (void)state;
    setenv("NVIDIA_TF32_OVERRIDE", "0", 1); /* fp32 parity: no TF32 in cuBLAS / cuDNN */
#ifdef TIPC_HAVE_CUDA
    if (cuda_device_count(&why) == 0) return 0;
    if (backend_cuda_init(&G, 0, &(struct backend_settings){0}) != TIPC_OK) {
        why = "backend_cuda_init failed on a present device (message above)";
        broken = true;
        return 0;
    }
    have = true;
    tipc_set_die_routine(gpu_die);
#else
    why = "built without CUDA (USE_CUDA=0 or no toolkit found)";
#endif
    return 0;
}
static int group_teardown(void **state)
{
    (void)state;
    tipc_set_die_routine(NULL);
    if (have) backend_cuda_free(&G);
    return 0;
}

#define NEED_GPU()                                                  \
    do {                                                            \
        if (broken) fail_msg("%s", why);                            \
        if (!have) {                                                \
            printf("SKIP: no CUDA device (%s)\n", why);             \
            skip();                                                 \
        }                                                           \
    } while (0)

static uint64_t rs = 0x9e3779b97f4a7c15ULL;
static inline float frand(void) /* uniform [-1, 1) */
{
    rs ^= rs << 13; rs ^= rs >> 7; rs ^= rs << 17;
    return (float)((rs >> 40) * (1.0 / 8388608.0)) - 1.0f;
}
static inline float *rnd(size_t n, float scale)
{
    float *p = malloc((n ? n : 1) * sizeof(float));
    for (size_t i = 0; i < n; i++) p[i] = scale * frand();
    return p;
}
static inline float *copy(const float *h, size_t n)
{
    float *p = malloc((n ? n : 1) * sizeof(float));
    memcpy(p, h, n * sizeof(float));
    return p;
}
static inline float *dev(const float *h, size_t n)
{
    float *d = G.ops->alloc(G.ctx, n);
    G.ops->upload(G.ctx, d, h, n);
    return d;
}
/* Compare device buffer d with the host reference: |got - want| <= atol + rtol |want|, atol =
 * rtol * max|want| / 10 (cancellation in sums makes tiny entries relatively noisy). */
static inline void expect(const float *d, const float *want, size_t n, double rtol, const char *label)
{
    float *got = malloc((n ? n : 1) * sizeof(float));
    G.ops->download(G.ctx, got, d, n);
    double mx = 0;
    for (size_t i = 0; i < n; i++) mx = fmax(mx, fabs((double)want[i]));
    assert_allclose(got, want, n, rtol * mx / 10 + 1e-7, rtol, label);
    free(got);
}
#define FWD 1e-4
#define BWD 1e-3

#endif
