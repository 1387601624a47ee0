/* cpu_kernels.h: the CPU kernels built once per ISA level (cpu_isa.h), as one table per level:
 * CPU_KERNELS lists every entry point of the per-level sources that code outside them calls
 * (ops.h's CPU ops, the inference parts, the resampler); each field has its function's type.
 * cpu_kernels.c (compiled per level) fills a table; cpu_isa.c keeps the running level's table
 * and defines the public names as calls through it. Internal to engine/ops. */
#ifndef TIPC_CPU_KERNELS_H
#define TIPC_CPU_KERNELS_H
#include "ops.h"
#include "../data/augment.h"

#define CPU_KERNELS(X)                                                                                  \
    X(conv2d_scratch_floats) X(conv2d_forward_cpu) X(conv2d_backward_cpu) X(conv2d_packed_floats)        \
    X(conv2d_pack_cpu) X(conv2d_has_parts) X(conv2d_bias_act_part_cpu)                                  \
    X(batchnorm_forward_cpu) X(batchnorm_backward_cpu) X(batchnorm_act_forward_cpu)                     \
    X(batchnorm_act_backward_cpu)                                                                       \
    X(act_forward_part_cpu) X(act_forward_cpu) X(act_backward_cpu) X(bias_act_block_cpu)                \
    X(bias_act_forward_cpu)                                                                             \
    X(add_forward_part_cpu) X(add_forward_cpu) X(add_backward_cpu)                                      \
    X(dropout_forward_cpu) X(dropout_backward_cpu) X(dropout_forward_dev_cpu)                           \
    X(normalize_u8_part_cpu) X(normalize_u8_cpu)                                                        \
    X(avgpool_forward_part_cpu) X(avgpool_forward_cpu) X(avgpool_backward_cpu)                          \
    X(scale_forward_part_cpu) X(scale_forward_cpu) X(scale_backward_cpu)                                \
    X(sgd_step_cpu) X(sgd_step_dev_cpu)                                                                 \
    X(amp_round_cpu) X(amp_scale_cpu) X(amp_unscale_check_cpu) X(sgd_step_amp_cpu) X(amp_update_cpu)   \
    X(resize_bilinear_rgb)

#define CPU_KERNEL_FIELD(f) __typeof__(f) *f;
struct cpu_kernels {
    const char *uses; /* what the level's build uses: "avx2, fma" */
    CPU_KERNELS(CPU_KERNEL_FIELD)
};
#undef CPU_KERNEL_FIELD

/* one per built level (cpu_kernels.c compiled per level; the build suffixes each name) */
extern const struct cpu_kernels cpu_kernels_v2, cpu_kernels_v3, cpu_kernels_v4, cpu_kernels_neon;

#endif
