/* cmd_version.c: `tipc version`: version and the features compiled in (llm.c-style report). */
#include <stdio.h>

#include "../cmds.h"
#include "../../core/version.h"
#include "../../core/check.h"
#include "../../core/options.h"
#include "../../core/banned.h"

#ifdef TIPC_HAVE_CUDA
#define HAVE_CUDA_MARK "yes"
#else
#define HAVE_CUDA_MARK "no"
#endif

int cmd_version(int argc, char **argv)
{
    const struct opt_cmd cmd = {.name = "version", .synopsis = "",
                                .about = "Print the version and which optional features were compiled in.\n"};
    struct opt_result r;
    TRY(opt_parse(&cmd, argc, argv, NULL, &r));
    if (r.help) return TIPC_OK;
    printf("tipc %s\n", TIPC_VERSION);
    printf("cuda: %s\n", HAVE_CUDA_MARK);
    return 0;
}
