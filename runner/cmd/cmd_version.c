/* cmd_version.c: `tipc version`: version and the features compiled in (llm.c-style report). */
#include <stdio.h>
#include <string.h>

#include "../cmds.h"
#include "../../core/version.h"
#include "../../core/check.h"
#include "../../core/options.h"
#include "../../engine/ops/cpu_isa.h"
#include "../../core/banned.h"

#ifdef TIPC_HAVE_CUDA
#define HAVE_CUDA_MARK "yes"
#else
#define HAVE_CUDA_MARK "no"
#endif

int cmd_version(int argc, char **argv)
{
    const struct opt_cmd cmd = {.name = "version", .synopsis = "",
                                .about = "Print the version, which optional features were compiled in, the CPU kernels\n"
                                         "that run here and the ISA levels this CPU runs (TIPC_CPU_ISA).\n"};
    struct opt_result r;
    TRY(opt_parse(&cmd, argc, argv, NULL, &r));
    if (r.help) return TIPC_OK;
    printf("tipc %s\n", TIPC_VERSION);
    printf("cuda: %s\n", HAVE_CUDA_MARK);
    char kernels[96], built[64] = "", runs[64] = "";
    cpu_isa_describe(kernels, sizeof kernels); /* the auto choice; TIPC_CPU_ISA forces another in train/bench/infer */
    printf("cpu kernels: %s\n", kernels);
    for (enum cpu_isa l = CPU_ISA_V2; l <= CPU_ISA_NEON; l++) {
        size_t nb = strlen(built), nr = strlen(runs);
        if (cpu_isa_built(l)) snprintf(built + nb, sizeof built - nb, " %s", cpu_isa_alias(l));
        if (cpu_isa_runs(l)) snprintf(runs + nr, sizeof runs - nr, " %s", cpu_isa_alias(l));
    }
    printf("cpu levels: built%s; this CPU runs%s\n", built, runs);
    return 0;
}
