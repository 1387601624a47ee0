/* cmd_version.c: `tipc version`: version and the features compiled in (llm.c-style report). */
#include <stdio.h>

#include "cmds.h"
#include "version.h"

const char usage_version[] = "usage: tipc version\n\nPrint the version and which optional features were compiled in.\n";

#ifdef TIPC_HAVE_CUDA
#define HAVE_CUDA_MARK "yes"
#else
#define HAVE_CUDA_MARK "no"
#endif

int cmd_version(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    printf("tipc %s\n", TIPC_VERSION);
    printf("cuda: %s\n", HAVE_CUDA_MARK);
    return 0;
}
