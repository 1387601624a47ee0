/* backend_cpu.c: the CPU backend: its table (the kernels of ops/cpu, the pass schedule of
 * infer/infer_cpu.c), memory (plain 64-byte aligned host memory), threads and BLAS set-up.
 * Not here: the kernels themselves. */
#include <cblas.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include <stdbool.h>
#include <stdio.h>

#include "backend.h"
#include "../ops/cpu_isa.h"
#include "../../core/check.h"
#include "../../core/banned.h"

static float *cpu_alloc(struct backend_ctx *cx, size_t n)
{
    (void)cx;
    size_t bytes = ((n ? n : 1) * sizeof(float) + 63) / 64 * 64;
    float *p = aligned_alloc(64, bytes);
    CHECK(p != NULL, "out of memory allocating %zu bytes", bytes);
    memset(p, 0, bytes);
    return p;
}
static void cpu_free(struct backend_ctx *cx, float *p) { (void)cx; free(p); }
static void cpu_zero(struct backend_ctx *cx, float *p, size_t n) { (void)cx; memset(p, 0, n * sizeof(float)); }
static void cpu_copy(struct backend_ctx *cx, float *dst, const float *src, size_t n)
{
    (void)cx;
    if (dst != src) memcpy(dst, src, n * sizeof(float));
}
static void cpu_sync(struct backend_ctx *cx) { (void)cx; }
static void cpu_stage_put(struct backend_ctx *cx, int k, void *dst, const struct stage_part *parts, int nparts)
{
    (void)cx, (void)k;
    for (int i = 0; i < nparts; i++) memcpy((char *)dst + parts[i].off, parts[i].src, parts[i].bytes);
}
static void cpu_stage_release(struct backend_ctx *cx, int k) { (void)cx, (void)k; }

const struct backend_ops backend_cpu_ops = {
    .name = "cpu", .host_memory = true, .graphs = false,
    .alloc = cpu_alloc, .free = cpu_free, .zero = cpu_zero, .upload = cpu_copy, .download = cpu_copy,
    .sync = cpu_sync,
    .conv2d_forward = conv2d_forward_cpu, .conv2d_backward = conv2d_backward_cpu,
    .batchnorm_forward = batchnorm_forward_cpu, .batchnorm_backward = batchnorm_backward_cpu,
    .batchnorm_act_forward = batchnorm_act_forward_cpu, .batchnorm_act_backward = batchnorm_act_backward_cpu,
    .act_forward = act_forward_cpu, .act_backward = act_backward_cpu,
    .bias_act_forward = bias_act_forward_cpu, .softmax_forward = softmax_forward_cpu,
    .normalize_u8 = normalize_u8_cpu, .add_forward = add_forward_cpu, .add_backward = add_backward_cpu,
    .scale_forward = scale_forward_cpu, .scale_backward = scale_backward_cpu,
    .avgpool_forward = avgpool_forward_cpu, .avgpool_backward = avgpool_backward_cpu,
    .linear_forward = linear_forward_cpu, .linear_backward = linear_backward_cpu,
    .dropout_forward = dropout_forward_cpu, .dropout_backward = dropout_backward_cpu,
    .xent_forward = xent_forward_cpu, .xent_backward = xent_backward_cpu,
    .sgd_step = sgd_step_cpu,
    .amp_round = amp_round_cpu,
    .amp_scale = amp_scale_cpu,
    .amp_unscale_check = amp_unscale_check_cpu,
    .sgd_step_amp = sgd_step_amp_cpu,
    .amp_update = amp_update_cpu,
    .normalize_u8_dev = normalize_u8_cpu, .xent_forward_dev = xent_forward_dev_cpu,
    .xent_backward_dev = xent_backward_cpu, .dropout_forward_dev = dropout_forward_dev_cpu,
    .sgd_step_dev = sgd_step_dev_cpu, .stage_put = cpu_stage_put, .stage_release = cpu_stage_release,
    .infer_input_u8 = infer_input_u8_cpu, .infer_forward = infer_forward_cpu, .infer_release = infer_release_cpu,
};

void backend_cpu_set_threads(int threads)
{
    openblas_set_num_threads(1); /* gemm_cpu splits products across the OpenMP team itself */
    if (threads <= 0) return;
    omp_set_num_threads(threads);
}

/* Re-execute this process (same argv, TIPC_BLAS_REEXEC=1 marks it) so that the environment
 * variables set before take effect at start-up; returns when exec fails. */
static void reexec(void)
{
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
        if (change) setenv("TIPC_BLAS_CORE_AUTO", "1", 1); /* ours, not the user's: a level may change it */
    }
    /* libgomp spins ~300k iterations at each barrier by default; on a loaded machine that
     * burns the core a descheduled team-mate needs (bs=1 inference went 5 ms -> 300 ms) */
    if (!getenv("OMP_WAIT_POLICY") && !getenv("GOMP_SPINCOUNT")) {
        setenv("GOMP_SPINCOUNT", "10000", 1);
        change = true;
    }
    if (change) reexec();
}

void backend_cpu_blas_for_level(int cpu_isa)
{
    const char *want = cpu_isa_blas_core((enum cpu_isa)cpu_isa), *core = openblas_get_corename();
    if (!want || (core && !strcasecmp(core, want))) return;
    if (getenv("OPENBLAS_CORETYPE") && !getenv("TIPC_BLAS_CORE_AUTO")) return; /* the user's choice */
    if (getenv("TIPC_BLAS_LEVEL_REEXEC")) return; /* done once: this OpenBLAS has no such kernels */
    setenv("OPENBLAS_CORETYPE", want, 1);
    setenv("TIPC_BLAS_LEVEL_REEXEC", "1", 1);
    reexec();
}

void backend_cpu_describe(char *buf, size_t n)
{
    char isa[96];
    cpu_isa_describe(isa, sizeof isa);
    const char *core = openblas_get_corename();
    snprintf(buf, n, "%s, OpenBLAS %s", isa, core ? core : "?");
}
