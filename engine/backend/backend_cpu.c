/* backend_cpu.c: the CPU backend: struct backend_ops entries that forward to the kernels in ops/cpu.
 * Memory is plain 64-byte aligned host memory. Not here: the kernels themselves. */
#include <cblas.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include <stdbool.h>
#include <stdio.h>

#include "backend.h"
#include "../../core/check.h"
#include "../../core/banned.h"

static float *cpu_alloc(void *ctx, size_t n)
{
    (void)ctx;
    size_t bytes = ((n ? n : 1) * sizeof(float) + 63) / 64 * 64;
    float *p = aligned_alloc(64, bytes);
    CHECK(p != NULL, "out of memory allocating %zu bytes", bytes);
    memset(p, 0, bytes);
    return p;
}
static void cpu_free(void *ctx, float *p) { (void)ctx; free(p); }
static void cpu_zero(void *ctx, float *p, size_t n) { (void)ctx; memset(p, 0, n * sizeof(float)); }
static void cpu_copy(void *ctx, float *dst, const float *src, size_t n)
{
    (void)ctx;
    if (dst != src) memcpy(dst, src, n * sizeof(float));
}
static void cpu_sync(void *ctx) { (void)ctx; }

static void cpu_conv2d_forward(void *ctx, float *out, const float *in, const float *w,
                               const struct conv2d_desc *d, float *scratch)
{
    (void)ctx;
    conv2d_forward_cpu(out, in, w, d, scratch);
}
static void cpu_conv2d_backward(void *ctx, float *din, float *dw, const float *dout, const float *in,
                                const float *w, const struct conv2d_desc *d, float *scratch, int acc)
{
    (void)ctx;
    conv2d_backward_cpu(din, dw, dout, in, w, d, scratch, acc);
}
static void cpu_bn_forward(void *ctx, float *out, float *sm, float *sr, const float *in, const float *g,
                           const float *b, float *rm, float *rv, const struct bn_desc *d)
{
    (void)ctx;
    batchnorm_forward_cpu(out, sm, sr, in, g, b, rm, rv, d);
}
static void cpu_bn_backward(void *ctx, float *din, float *dg, float *db, const float *dout, const float *in,
                            const float *sm, const float *sr, const float *g, const float *rv,
                            const struct bn_desc *d, int acc)
{
    (void)ctx;
    batchnorm_backward_cpu(din, dg, db, dout, in, sm, sr, g, rv, d, acc);
}
static void cpu_bn_act_forward(void *ctx, float *out, float *sm, float *sr, const float *in, const float *g,
                               const float *b, float *rm, float *rv, const struct bn_desc *d, enum act_kind act)
{
    (void)ctx;
    batchnorm_act_forward_cpu(out, sm, sr, in, g, b, rm, rv, d, act);
}
static void cpu_bn_act_backward(void *ctx, float *din, float *dg, float *db, const float *dout, const float *in,
                                const float *sm, const float *sr, const float *g, const float *b, const float *rv,
                                const struct bn_desc *d, int acc, enum act_kind act)
{
    (void)ctx;
    batchnorm_act_backward_cpu(din, dg, db, dout, in, sm, sr, g, b, rv, d, acc, act);
}
static void cpu_act_forward(void *ctx, float *out, const float *in, size_t n, enum act_kind k)
{
    (void)ctx;
    act_forward_cpu(out, in, n, k);
}
static void cpu_act_backward(void *ctx, float *din, const float *dout, const float *in, size_t n,
                             enum act_kind k, int acc)
{
    (void)ctx;
    act_backward_cpu(din, dout, in, n, k, acc);
}
static void cpu_bias_act(void *ctx, float *y, const float *b, size_t M, int C, enum act_kind k)
{
    (void)ctx;
    bias_act_forward_cpu(y, b, M, C, k);
}
static void cpu_softmax(void *ctx, float *out, const float *in, int N, int K)
{
    (void)ctx;
    softmax_forward_cpu(out, in, N, K);
}
static void cpu_normalize(void *ctx, float *out, const uint8_t *img, size_t npix)
{
    (void)ctx;
    normalize_u8_cpu(out, img, npix);
}
static void cpu_add_forward(void *ctx, float *out, const float *a, const float *b, size_t n)
{
    (void)ctx;
    add_forward_cpu(out, a, b, n);
}
static void cpu_add_backward(void *ctx, float *da, float *db, const float *dout, size_t n, int aa, int ab)
{
    (void)ctx;
    add_backward_cpu(da, db, dout, n, aa, ab);
}
static void cpu_scale_forward(void *ctx, float *out, const float *x, const float *g, int N, int P, int C)
{
    (void)ctx;
    scale_forward_cpu(out, x, g, N, P, C);
}
static void cpu_scale_backward(void *ctx, float *dx, float *dg, const float *dout, const float *x,
                               const float *g, int N, int P, int C, int ax, int ag)
{
    (void)ctx;
    scale_backward_cpu(dx, dg, dout, x, g, N, P, C, ax, ag);
}
static void cpu_pool_forward(void *ctx, float *out, const float *in, int N, int P, int C)
{
    (void)ctx;
    avgpool_forward_cpu(out, in, N, P, C);
}
static void cpu_pool_backward(void *ctx, float *din, const float *dout, int N, int P, int C, int acc)
{
    (void)ctx;
    avgpool_backward_cpu(din, dout, N, P, C, acc);
}
static void cpu_linear_forward(void *ctx, float *out, const float *in, const float *w, const float *b,
                               int N, int Ci, int Co)
{
    (void)ctx;
    linear_forward_cpu(out, in, w, b, N, Ci, Co);
}
static void cpu_linear_backward(void *ctx, float *din, float *dw, float *db, const float *dout,
                                const float *in, const float *w, int N, int Ci, int Co, int acc)
{
    (void)ctx;
    linear_backward_cpu(din, dw, db, dout, in, w, N, Ci, Co, acc);
}
static void cpu_dropout_forward(void *ctx, float *out, float *mask, const float *in, size_t n, float p,
                                uint64_t seed)
{
    (void)ctx;
    dropout_forward_cpu(out, mask, in, n, p, seed);
}
static void cpu_dropout_backward(void *ctx, float *din, const float *dout, const float *mask, size_t n, int acc)
{
    (void)ctx;
    dropout_backward_cpu(din, dout, mask, n, acc);
}
static float cpu_xent_forward(void *ctx, float *probs, const float *logits, const int32_t *labels, int N,
                              int K, float eps)
{
    (void)ctx;
    return xent_forward_cpu(probs, logits, labels, N, K, eps);
}
static void cpu_xent_backward(void *ctx, float *dl, const float *probs, const int32_t *labels, int N, int K,
                              float eps)
{
    (void)ctx;
    xent_backward_cpu(dl, probs, labels, N, K, eps);
}
static void cpu_sgd(void *ctx, float *p, float *m, const float *g, size_t n, float lr, float mu, float wd)
{
    (void)ctx;
    sgd_step_cpu(p, m, g, n, lr, mu, wd);
}

const struct backend_ops backend_cpu_ops = {
    .name = "cpu",
    .alloc = cpu_alloc, .free = cpu_free, .zero = cpu_zero, .upload = cpu_copy, .download = cpu_copy,
    .sync = cpu_sync,
    .conv2d_forward = cpu_conv2d_forward, .conv2d_backward = cpu_conv2d_backward,
    .batchnorm_forward = cpu_bn_forward, .batchnorm_backward = cpu_bn_backward,
    .batchnorm_act_forward = cpu_bn_act_forward, .batchnorm_act_backward = cpu_bn_act_backward,
    .act_forward = cpu_act_forward, .act_backward = cpu_act_backward,
    .bias_act_forward = cpu_bias_act, .softmax_forward = cpu_softmax,
    .normalize_u8 = cpu_normalize, .add_forward = cpu_add_forward, .add_backward = cpu_add_backward,
    .scale_forward = cpu_scale_forward, .scale_backward = cpu_scale_backward,
    .avgpool_forward = cpu_pool_forward, .avgpool_backward = cpu_pool_backward,
    .linear_forward = cpu_linear_forward, .linear_backward = cpu_linear_backward,
    .dropout_forward = cpu_dropout_forward, .dropout_backward = cpu_dropout_backward,
    .xent_forward = cpu_xent_forward, .xent_backward = cpu_xent_backward,
    .sgd_step = cpu_sgd,
};

void backend_cpu_set_threads(int threads)
{
    openblas_set_num_threads(1); /* gemm_cpu splits products across the OpenMP team itself */
    if (threads <= 0) return;
    omp_set_num_threads(threads);
}

void backend_cpu_fix_blas(void)
{
    if (getenv("TIPC_BLAS_REEXEC")) return;
    bool change = false;
    const char *core = openblas_get_corename();
    if (!getenv("OPENBLAS_CORETYPE") && core && !strcasecmp(core, "prescott")) {
        __builtin_cpu_init();
        /* SkylakeX has unpacked small-matrix sgemm kernels: bs=1 inference 4.2 -> 3.3 ms here */
        if (__builtin_cpu_supports("avx512f")) {
            setenv("OPENBLAS_CORETYPE", "SkylakeX", 1);
            change = true;
        } else if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) {
            setenv("OPENBLAS_CORETYPE", "Haswell", 1);
            change = true;
        }
    }
    /* libgomp spins ~300k iterations at each barrier by default; on a loaded machine that
     * burns the core a descheduled team-mate needs (bs=1 inference went 5 ms -> 300 ms) */
    if (!getenv("OMP_WAIT_POLICY") && !getenv("GOMP_SPINCOUNT")) {
        setenv("GOMP_SPINCOUNT", "10000", 1);
        change = true;
    }
    if (!change) return;
    FILE *f = fopen("/proc/self/cmdline", "rb");
    if (!f) return;
    char buf[65536];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    if (n == 0 || n >= sizeof buf - 1) return;
    buf[n] = 0;
    char *argv[1024];
    int argc = 0;
    for (size_t i = 0; i < n && argc < 1023; i += strlen(buf + i) + 1) argv[argc++] = buf + i;
    argv[argc] = NULL;
    setenv("TIPC_BLAS_REEXEC", "1", 1);
    fflush(NULL);
    execv("/proc/self/exe", argv);
    /* exec failed: carry on as we are (the settings only take effect at start-up) */
}
