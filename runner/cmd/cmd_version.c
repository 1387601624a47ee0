/* cmd_version.c: `tipc version`: version, the commit it is built from, and the features compiled in
 * (llm.c-style report): for CUDA, whether this build has it and whether this machine has a device. */
#include <stdio.h>
#include <string.h>

#include "../cmds.h"
#include "commit.h"   /* build/gen/commit.h (Makefile): TIPC_COMMIT */
#include "../../core/version.h"
#include "../../core/check.h"
#include "../../core/options.h"
#include "../../engine/ops/cpu_isa.h"
#ifdef TIPC_HAVE_CUDA
#include "../../engine/ops/cuda/ops_cuda.h"   /* cuda_device_count */
#endif
#include "../../core/banned.h"

int cmd_version(int argc, char **argv)
{
    const struct opt_cmd cmd = {.name = "version", .synopsis = "",
                                .about = "Print the version, the commit it was built from, which optional features were\n"
                                         "compiled in (and, for CUDA, whether this machine has a device), the CPU kernels\n"
                                         "that run here and the ISA levels this CPU runs (TIPC_CPU_ISA).\n"};
    struct opt_result r;
    TRY(opt_parse(&cmd, argc, argv, NULL, &r));
    if (r.help) return TIPC_OK;
    printf("tipc %s (commit %s)\n", TIPC_VERSION, TIPC_COMMIT);
#ifdef TIPC_HAVE_CUDA
    const char *why = "";
    int n = cuda_device_count(&why);
    if (n > 0) printf("cuda: built with CUDA; %d device%s visible\n", n, n == 1 ? "" : "s");
    else printf("cuda: built with CUDA; no device found (%s)\n", why);
#else
    printf("cuda: not built (no CUDA toolkit at build time, or USE_CUDA=0): --device gpu exits 7\n");
#endif
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
