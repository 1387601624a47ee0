/* main.c: the `tipc` executable: find the command in the table (runner/commands.c) and run it.
 * The exit code is the enum tipc_status the command returns (core/status.h), so the table in
 * `tipc help` is the whole contract. Each command parses its own options (core/options.h):
 * `tipc launch ... CMD --help` is CMD's --help, not launch's. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmds.h"                   /* defines: tipc_commands, cmd_find */
#include "../core/check.h"          /* defines: error_msg */
#include "../core/banned.h"

/* git's run_builtin: a failed write to stdout (full disk, closed pipe) must not look like success. */
static int finish_stdout(int rc)
{
    if (fflush(stdout) != 0 || ferror(stdout)) {
        if (errno == EPIPE) return rc;
        error_msg(TIPC_EIO, "cannot write to standard output: %s", strerror(errno));
        return rc ? rc : TIPC_EIO;
    }
    return rc;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        cmd_print_overview(stderr);
        return TIPC_EUSAGE;
    }
    /* a stage of `tipc run` (run/run.c): each error line also goes to the stage's error log, the
     * run reports the first as why the stage failed */
    tipc_set_error_log(getenv("TIPC_ERROR_LOG"));
    const struct cmd *c = cmd_find(argv[1]);   /* `tipc --help` is `tipc help` (aliases) */
    if (!c) return cmd_unknown(argv[1]);
    return finish_stdout(c->fn(argc - 1, argv + 1));
}
