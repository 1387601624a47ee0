/* isa_test.h: a CPU kernel test runs at the ISA level TIPC_CPU_ISA names (tests/run.sh runs each
 * such test once per level, so an AVX-512 machine also checks the AVX2 and SSE kernels); unset or
 * "auto": the best level this CPU runs. A level this CPU cannot run: `SKIP: ...`, exit 77. */
#ifndef TIPC_ISA_TEST_H
#define TIPC_ISA_TEST_H
#include <stdio.h>
#include <stdlib.h>

#include "../../engine/ops/cpu_isa.h"

static inline void isa_test_setup(void)
{
    const char *v = getenv("TIPC_CPU_ISA");
    enum cpu_isa l = CPU_ISA_AUTO;
    if (v && *v && !cpu_isa_parse(v, &l)) {
        fprintf(stderr, "TIPC_CPU_ISA='%s': not a level (auto, v2, v3, v4, neon)\n", v);
        exit(2);
    }
    if (l != CPU_ISA_AUTO && !cpu_isa_runs(l)) {
        printf("SKIP: this CPU cannot run the %s kernels (the best it runs: %s)\n", cpu_isa_name(l),
               cpu_isa_name(cpu_isa_best()));
        exit(77);
    }
    if (cpu_isa_select(l) != TIPC_OK) exit(2);
    char d[96];
    cpu_isa_describe(d, sizeof d);
    printf("cpu kernels: %s\n", d);
}

#endif
