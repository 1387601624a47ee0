/* cmd_launch.c: `tipc launch`, the per-node multi-process launcher: options (launch/flags.c; a CMD
 * in this command table runs as this binary), this node and the master (launch/node.c), join, spawn and
 * watch (launch/agent.c). */
#include "../cmds.h"
#include "../launch/launch.h"
#include "../../core/banned.h"

int cmd_launch(int argc, char **argv)
{
    struct launch_opts o;
    enum tipc_status st = launch_parse(&o, argc, argv, cmd_exists);
    if (!st && o.help) {   /* --help, or the options checked only (tipc run's check, core/options.h) */
        launch_opts_free(&o);
        return TIPC_OK;
    }
    if (!st) st = launch_resolve(&o);
    int code = st ? (int)st : launch_run(&o);
    launch_opts_free(&o);
    return code;
}
