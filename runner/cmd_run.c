/* cmd_run.c: placeholder, replaced by the runner. */
#include "cmds.h"
#include "../engine/core/check.h"
const char usage_run[] = "usage: tipc run CONFIG MODE\n";
int cmd_run(int argc, char **argv) { (void)argc; (void)argv; return error_msg(TIPC_ENOTBUILT, "not yet"); }
