/* cmd_launch.c: `tipc launch`. Placeholder until its issue lands: it says so and exits with
 * TIPC_ENOTBUILT, so `tipc run` reports the stage as failed honestly. */
#include "cmds.h"
#include "../engine/core/check.h"

const char usage_launch[] = "usage: tipc launch ...\n\n(not built yet in this version)\n";

int cmd_launch(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    return error_msg(TIPC_ENOTBUILT, "'tipc launch' is not built in this version of tipc");
}
