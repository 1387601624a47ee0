/* cpu_isa.h: which build of the CPU kernels runs (OpenBLAS DYNAMIC_ARCH, ggml's CPU variants).
 *
 * The hot CPU kernels (engine/ops/cpu: convs, BN/activation, elementwise, SGD, AMP rounding; the
 * data pipeline's resampler) are compiled once per ISA level, each with its own -march and
 * register blocking (ops/cpu/simd.h), their symbols suffixed with the level (`_v3`); the rest of
 * the binary is built for the baseline (x86-64-v2), so one binary runs on any x86-64-v2 CPU and
 * uses AVX2 or AVX-512 where the CPU has them. The level is picked once at start-up from CPUID
 * (the best one the CPU runs), or forced with TIPC_CPU_ISA (engine settings, backend_open), and
 * the public kernel names (conv2d_forward_cpu...) call the chosen build (cpu_isa.c).
 * Levels: x86-64-v2 (SSE4.2), x86-64-v3 (AVX2, FMA, F16C), x86-64-v4 (AVX-512 F/BW/CD/DQ/VL);
 * an aarch64 build has one, NEON. The Makefile's ISA_SRCS lists the files built per level. */
#ifndef TIPC_CPU_ISA_H
#define TIPC_CPU_ISA_H
#include <stdbool.h>
#include <stddef.h>

#include "../../core/status.h"

enum cpu_isa { CPU_ISA_AUTO, CPU_ISA_V2, CPU_ISA_V3, CPU_ISA_V4, CPU_ISA_NEON };

/* "auto", "v2" | "x86-64-v2", "v3" | "x86-64-v3", "v4" | "x86-64-v4", "neon"; false otherwise */
bool cpu_isa_parse(const char *s, enum cpu_isa *out);
/* "x86-64-v3", "aarch64" ("auto" for CPU_ISA_AUTO) */
const char *cpu_isa_name(enum cpu_isa l);
/* "v3", "neon": the short name TIPC_CPU_ISA takes ("auto" for CPU_ISA_AUTO) */
const char *cpu_isa_alias(enum cpu_isa l);
/* this binary has kernels for level l (x86-64 builds: v2..v4; aarch64 builds: neon) */
bool cpu_isa_built(enum cpu_isa l);
/* this CPU runs level l (CPUID, and the OS saves the registers); false for a level not built */
bool cpu_isa_runs(enum cpu_isa l);
/* the best built level this CPU runs */
enum cpu_isa cpu_isa_best(void);
/* Run level l from now on (AUTO: cpu_isa_best()). TIPC_EUSAGE with a message naming
 * TIPC_CPU_ISA and the best level when this CPU cannot run l or it is not built. Call it before
 * any kernel runs in another thread (commands: backend_open). */
enum tipc_status cpu_isa_select(enum cpu_isa l);
/* the level running now (cpu_isa_best() until something selected another) */
enum cpu_isa cpu_isa_current(void);
/* "x86-64-v3 (avx2, fma)": the running level and what it uses, for logs and `tipc version` */
void cpu_isa_describe(char *buf, size_t n);
/* OpenBLAS's kernel family for level l (v3: "Haswell", v2: "Nehalem"), so a forced level also
 * runs OpenBLAS's matching kernels (OPENBLAS_CORETYPE); NULL for v4 and neon (OpenBLAS's own
 * detection picks the best there) */
const char *cpu_isa_blas_core(enum cpu_isa l);

#endif
