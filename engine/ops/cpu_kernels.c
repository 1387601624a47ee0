/* cpu_kernels.c: this ISA level's table of the CPU kernels (cpu_kernels.h), compiled once per
 * level like the kernels themselves: the build renames `cpu_kernels` and every kernel it points at
 * with the level's suffix (cpu_kernels_v3 -> conv2d_forward_cpu_v3...). */
#include "cpu_kernels.h"
#include "../../core/banned.h"

#if defined(__AVX512F__)
#define USES "avx-512, fma"
#elif defined(__AVX2__)
#define USES "avx2, fma"
#elif defined(__aarch64__)
#define USES "neon"
#else
#define USES "sse4.2"
#endif

#define CPU_KERNEL_INIT(f) .f = f,
const struct cpu_kernels cpu_kernels = {.uses = USES, CPU_KERNELS(CPU_KERNEL_INIT)};
