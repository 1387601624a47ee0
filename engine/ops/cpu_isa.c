/* cpu_isa.c: the CPU kernels' ISA dispatch (cpu_isa.h): CPUID detection, the running level's
 * table (picked once at start-up, before main; cpu_isa_select may force another), and the public
 * kernel names as one call each through that table. Built for the baseline like the rest. */
#include <stdio.h>
#include <string.h>

#include "cpu_isa.h"
#include "cpu_kernels.h"
#include "../../core/check.h"
#include "../../core/banned.h"

#if defined(__x86_64__)
static const struct cpu_kernels *K = &cpu_kernels_v2;
static enum cpu_isa cur = CPU_ISA_V2;
#elif defined(__aarch64__)
static const struct cpu_kernels *K = &cpu_kernels_neon;
static enum cpu_isa cur = CPU_ISA_NEON;
#else
#error "CPU kernels are built for x86-64 and aarch64 only"
#endif

static const struct {
    const char *name, *alias;
    enum cpu_isa l;
} LEVELS[] = {{"auto", NULL, CPU_ISA_AUTO},         {"x86-64-v2", "v2", CPU_ISA_V2},
              {"x86-64-v3", "v3", CPU_ISA_V3},       {"x86-64-v4", "v4", CPU_ISA_V4},
              {"aarch64", "neon", CPU_ISA_NEON}};

bool cpu_isa_parse(const char *s, enum cpu_isa *out)
{
    for (size_t i = 0; i < sizeof LEVELS / sizeof LEVELS[0]; i++)
        if (!strcmp(s, LEVELS[i].name) || (LEVELS[i].alias && !strcmp(s, LEVELS[i].alias)))
            return *out = LEVELS[i].l, true;
    return false;
}

const char *cpu_isa_name(enum cpu_isa l)
{
    for (size_t i = 0; i < sizeof LEVELS / sizeof LEVELS[0]; i++)
        if (LEVELS[i].l == l) return LEVELS[i].name;
    return "?";
}

const char *cpu_isa_alias(enum cpu_isa l)
{
    for (size_t i = 0; i < sizeof LEVELS / sizeof LEVELS[0]; i++)
        if (LEVELS[i].l == l) return LEVELS[i].alias ? LEVELS[i].alias : LEVELS[i].name;
    return "?";
}

bool cpu_isa_built(enum cpu_isa l)
{
#if defined(__x86_64__)
    return l == CPU_ISA_V2 || l == CPU_ISA_V3 || l == CPU_ISA_V4;
#else
    return l == CPU_ISA_NEON;
#endif
}

static const struct cpu_kernels *table_of(enum cpu_isa l)
{
#if defined(__x86_64__)
    return l == CPU_ISA_V4 ? &cpu_kernels_v4 : l == CPU_ISA_V3 ? &cpu_kernels_v3 : &cpu_kernels_v2;
#else
    (void)l;
    return &cpu_kernels_neon;
#endif
}

bool cpu_isa_runs(enum cpu_isa l)
{
    if (!cpu_isa_built(l)) return false;
#if defined(__x86_64__)
    __builtin_cpu_init(); /* libgcc's CPUID reading, which also checks the OS saves the registers */
    if (l == CPU_ISA_V4) return __builtin_cpu_supports("x86-64-v4");
    if (l == CPU_ISA_V3) return __builtin_cpu_supports("x86-64-v3");
    return __builtin_cpu_supports("x86-64-v2");
#else
    return true; /* NEON (Advanced SIMD) is part of ARMv8-A */
#endif
}

enum cpu_isa cpu_isa_best(void)
{
    const enum cpu_isa order[] = {CPU_ISA_V4, CPU_ISA_V3, CPU_ISA_V2, CPU_ISA_NEON};
    for (size_t i = 0; i < sizeof order / sizeof order[0]; i++)
        if (cpu_isa_runs(order[i])) return order[i];
    return cur; /* a pre-v2 x86-64 CPU: the baseline is all there is (and it needs v2) */
}

enum tipc_status cpu_isa_select(enum cpu_isa l)
{
    if (l == CPU_ISA_AUTO) l = cpu_isa_best();
    if (!cpu_isa_built(l))
        return error_msg(TIPC_EUSAGE, "TIPC_CPU_ISA=%s: this tipc is built for %s kernels only", cpu_isa_alias(l),
                         cpu_isa_built(CPU_ISA_NEON) ? "aarch64" : "x86-64 (v2, v3, v4)");
    if (!cpu_isa_runs(l))
        return error_msg(TIPC_EUSAGE, "TIPC_CPU_ISA=%s: this CPU cannot run it (the best it runs is %s; unset "
                         "TIPC_CPU_ISA or set it to auto)", cpu_isa_alias(l), cpu_isa_name(cpu_isa_best()));
    K = table_of(l);
    cur = l;
    return TIPC_OK;
}

enum cpu_isa cpu_isa_current(void) { return cur; }

void cpu_isa_describe(char *buf, size_t n) { snprintf(buf, n, "%s (%s)", cpu_isa_name(cur), K->uses); }

const char *cpu_isa_blas_core(enum cpu_isa l)
{
    /* v4: OpenBLAS's own choice (SkylakeX, Cooperlake, SapphireRapids: the best AVX-512 one) */
    return l == CPU_ISA_V3 ? "Haswell" : l == CPU_ISA_V2 ? "Nehalem" : NULL;
}

/* picked once at start-up: the best level this CPU runs */
__attribute__((constructor)) static void cpu_isa_init(void)
{
    enum cpu_isa b = cpu_isa_best();
    K = table_of(b);
    cur = b;
}

/* ---- the public names: one call through the running level's table -------------------------- */
size_t conv2d_scratch_floats(const struct conv2d_desc *d) { return K->conv2d_scratch_floats(d); }
void conv2d_forward_cpu(struct backend_ctx *cx, float *out, const float *in, const float *w,
                        const struct conv2d_desc *d, float *scratch)
{
    K->conv2d_forward_cpu(cx, out, in, w, d, scratch);
}
void conv2d_backward_cpu(struct backend_ctx *cx, float *din, float *dw, const float *dout, const float *in,
                         const float *w, const struct conv2d_desc *d, float *scratch, int acc)
{
    K->conv2d_backward_cpu(cx, din, dw, dout, in, w, d, scratch, acc);
}
size_t conv2d_packed_floats(const struct conv2d_desc *d) { return K->conv2d_packed_floats(d); }
void conv2d_pack_cpu(float *packed, const float *w, const float *bias, const struct conv2d_desc *d)
{
    K->conv2d_pack_cpu(packed, w, bias, d);
}
bool conv2d_has_parts(const struct conv2d_desc *d) { return K->conv2d_has_parts(d); }
void conv2d_bias_act_part_cpu(float *out, const float *in, const float *packed, const float *bias, enum act_kind act,
                              const struct conv2d_desc *d, int part, int nparts)
{
    K->conv2d_bias_act_part_cpu(out, in, packed, bias, act, d, part, nparts);
}

void batchnorm_forward_cpu(struct backend_ctx *cx, float *out, float *save_mean, float *save_rstd, const float *in,
                           const float *gamma, const float *beta, float *run_mean, float *run_var,
                           const struct bn_desc *d)
{
    K->batchnorm_forward_cpu(cx, out, save_mean, save_rstd, in, gamma, beta, run_mean, run_var, d);
}
void batchnorm_backward_cpu(struct backend_ctx *cx, float *din, float *dgamma, float *dbeta, const float *dout,
                            const float *in, const float *save_mean, const float *save_rstd, const float *gamma,
                            const float *run_var, const struct bn_desc *d, int acc)
{
    K->batchnorm_backward_cpu(cx, din, dgamma, dbeta, dout, in, save_mean, save_rstd, gamma, run_var, d, acc);
}
void batchnorm_act_forward_cpu(struct backend_ctx *cx, float *out, float *save_mean, float *save_rstd,
                               const float *in, const float *gamma, const float *beta, float *run_mean,
                               float *run_var, const struct bn_desc *d, enum act_kind act)
{
    K->batchnorm_act_forward_cpu(cx, out, save_mean, save_rstd, in, gamma, beta, run_mean, run_var, d, act);
}
void batchnorm_act_backward_cpu(struct backend_ctx *cx, float *din, float *dgamma, float *dbeta, const float *dout,
                                const float *in, const float *save_mean, const float *save_rstd, const float *gamma,
                                const float *beta, const float *run_var, const struct bn_desc *d, int acc,
                                enum act_kind act)
{
    K->batchnorm_act_backward_cpu(cx, din, dgamma, dbeta, dout, in, save_mean, save_rstd, gamma, beta, run_var, d,
                                  acc, act);
}

void act_forward_part_cpu(float *out, const float *in, size_t n, enum act_kind k, int part, int nparts)
{
    K->act_forward_part_cpu(out, in, n, k, part, nparts);
}
void act_forward_cpu(struct backend_ctx *cx, float *out, const float *in, size_t n, enum act_kind k)
{
    K->act_forward_cpu(cx, out, in, n, k);
}
void act_backward_cpu(struct backend_ctx *cx, float *din, const float *dout, const float *in, size_t n,
                      enum act_kind k, int acc)
{
    K->act_backward_cpu(cx, din, dout, in, n, k, acc);
}
void bias_act_block_cpu(float *y, size_t ldy, const float *b, int rows, int cols, enum act_kind k)
{
    K->bias_act_block_cpu(y, ldy, b, rows, cols, k);
}
void bias_act_forward_cpu(struct backend_ctx *cx, float *y, const float *b, size_t M, int C, enum act_kind k)
{
    K->bias_act_forward_cpu(cx, y, b, M, C, k);
}

void add_forward_part_cpu(float *out, const float *a, const float *b, size_t n, int part, int nparts)
{
    K->add_forward_part_cpu(out, a, b, n, part, nparts);
}
void add_forward_cpu(struct backend_ctx *cx, float *out, const float *a, const float *b, size_t n)
{
    K->add_forward_cpu(cx, out, a, b, n);
}
void add_backward_cpu(struct backend_ctx *cx, float *da, float *db, const float *dout, size_t n, int acc_a, int acc_b)
{
    K->add_backward_cpu(cx, da, db, dout, n, acc_a, acc_b);
}

void dropout_forward_cpu(struct backend_ctx *cx, float *out, float *mask, const float *in, size_t n, float p,
                         uint64_t seed)
{
    K->dropout_forward_cpu(cx, out, mask, in, n, p, seed);
}
void dropout_backward_cpu(struct backend_ctx *cx, float *din, const float *dout, const float *mask, size_t n, int acc)
{
    K->dropout_backward_cpu(cx, din, dout, mask, n, acc);
}
void dropout_forward_dev_cpu(struct backend_ctx *cx, float *out, float *mask, const float *in, size_t n, float p,
                             const uint64_t *seed, uint64_t offset)
{
    K->dropout_forward_dev_cpu(cx, out, mask, in, n, p, seed, offset);
}

void normalize_u8_part_cpu(float *out, const uint8_t *in, size_t npix, int part, int nparts)
{
    K->normalize_u8_part_cpu(out, in, npix, part, nparts);
}
void normalize_u8_cpu(struct backend_ctx *cx, float *out, const uint8_t *in, size_t npix)
{
    K->normalize_u8_cpu(cx, out, in, npix);
}

void avgpool_forward_part_cpu(float *out, const float *in, int N, int P, int C, int part, int nparts)
{
    K->avgpool_forward_part_cpu(out, in, N, P, C, part, nparts);
}
void avgpool_forward_cpu(struct backend_ctx *cx, float *out, const float *in, int N, int P, int C)
{
    K->avgpool_forward_cpu(cx, out, in, N, P, C);
}
void avgpool_backward_cpu(struct backend_ctx *cx, float *din, const float *dout, int N, int P, int C, int acc)
{
    K->avgpool_backward_cpu(cx, din, dout, N, P, C, acc);
}

void scale_forward_part_cpu(float *out, const float *x, const float *g, int N, int P, int C, int part, int nparts)
{
    K->scale_forward_part_cpu(out, x, g, N, P, C, part, nparts);
}
void scale_forward_cpu(struct backend_ctx *cx, float *out, const float *x, const float *g, int N, int P, int C)
{
    K->scale_forward_cpu(cx, out, x, g, N, P, C);
}
void scale_backward_cpu(struct backend_ctx *cx, float *dx, float *dg, const float *dout, const float *x, const float *g,
                        int N, int P, int C, int acc_x, int acc_g)
{
    K->scale_backward_cpu(cx, dx, dg, dout, x, g, N, P, C, acc_x, acc_g);
}

void sgd_step_cpu(struct backend_ctx *cx, float *p, float *m, const float *g, size_t n, float lr, float mu, float wd)
{
    K->sgd_step_cpu(cx, p, m, g, n, lr, mu, wd);
}
void sgd_step_dev_cpu(struct backend_ctx *cx, float *p, float *m, const float *g, size_t n, const float *lr, float mu,
                      float wd, const float *loss)
{
    K->sgd_step_dev_cpu(cx, p, m, g, n, lr, mu, wd, loss);
}

void amp_round_cpu(struct backend_ctx *cx, float *out, const float *in, size_t n, enum precision p)
{
    K->amp_round_cpu(cx, out, in, n, p);
}
void amp_scale_cpu(struct backend_ctx *cx, float *x, size_t n, const float *state, enum precision p)
{
    K->amp_scale_cpu(cx, x, n, state, p);
}
void amp_unscale_check_cpu(struct backend_ctx *cx, float *g, size_t n, float *state)
{
    K->amp_unscale_check_cpu(cx, g, n, state);
}
void sgd_step_amp_cpu(struct backend_ctx *cx, float *p, float *m, const float *g, size_t n, float lr, float mu,
                      float wd, const float *state)
{
    K->sgd_step_amp_cpu(cx, p, m, g, n, lr, mu, wd, state);
}
void amp_update_cpu(struct backend_ctx *cx, float *state, const struct loss_scaler *ls)
{
    K->amp_update_cpu(cx, state, ls);
}

void resize_bilinear_rgb(uint8_t *out, int ow, int oh, const uint8_t *in, int iw, int ih, struct crop_box b, bool flip,
                         void *tmp)
{
    K->resize_bilinear_rgb(out, ow, oh, in, iw, ih, b, flip, tmp);
}
