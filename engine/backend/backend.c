/* backend.c: choosing a backend by device name (`--device cpu|gpu`, `--use-gpu`) and the CUDA
 * device of this process from the launcher's environment. Not here: the backends themselves
 * (backend_cpu.c, backend_cuda.c). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend.h"
#include "../ops/cpu_isa.h"
#include "../../core/check.h"
#include "../../core/options.h"
#include "../../core/parse.h"
#include "../../core/banned.h"

int backend_device_from_env(void)
{
    /* tipc launch's and Paddle's device, else the local rank of torchrun, srun, Open MPI, MPICH */
    const char *names[] = {"TIPC_DEVICE", "FLAGS_selected_gpus", "LOCAL_RANK", "SLURM_LOCALID",
                           "OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        const char *v = getenv(names[i]);
        int d;
        if (v && *v && parse_int(v, 0, 1 << 16, &d)) return d;
    }
    return 0;
}

enum tipc_status backend_open(struct backend *b, const char *device, int quiet, const struct backend_settings *set)
{
    const struct backend_settings none = {0};
    if (!set) set = &none;
    memset(b, 0, sizeof *b);
    TRY(cpu_isa_select((enum cpu_isa)set->cpu_isa));
    if (set->cpu_isa != CPU_ISA_AUTO) backend_cpu_blas_for_level(set->cpu_isa);
    if (!device || !strcmp(device, "cpu")) {
        b->ops = &backend_cpu_ops;
        b->set = *set;
        if (!quiet) {
            char desc[160];
            backend_cpu_describe(desc, sizeof desc);
            printf("cpu kernels: %s\n", desc);
        }
        return TIPC_OK;
    }
    if (strcmp(device, "gpu") && strcmp(device, "cuda"))
        return error_msg(TIPC_EUSAGE, "unknown device '%s' (cpu or gpu)", device);
    TRY(backend_cuda_init(b, backend_device_from_env(), set));
    if (!quiet) {
        char desc[256];
        backend_cuda_describe(b, desc, sizeof desc);
        printf("device: %s\n", desc);
    }
    return TIPC_OK;
}

enum tipc_status backend_cpu_isa_opt(const struct opt *o, const char *value, void *dst)
{
    enum cpu_isa l;
    if (!cpu_isa_parse(value, &l))
        return error_msg(TIPC_EUSAGE, "%s (environment) needs auto, v2, v3, v4 or neon, got '%s'", o->name, value);
    *(int *)dst = (int)l;
    return TIPC_OK;
}

bool backend_has_graphs(const struct backend *b) { return b->ops && b->ops->graphs; }
bool backend_has_amp(const struct backend *b)
{
    const struct backend_ops *o = b->ops;
    return o && o->amp_round && o->amp_scale && o->amp_unscale_check && o->sgd_step_amp && o->amp_update;
}

void backend_close(struct backend *b)
{
    if (b && b->ops && b->ops != &backend_cpu_ops) backend_cuda_free(b);
    if (b) memset(b, 0, sizeof *b);
}
