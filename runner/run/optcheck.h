/* optcheck.h: before a run (and in --dry-run), the command lines of tipc's own commands in the plan
 * are checked against their option tables, the way they will be parsed when the stage runs. */
#ifndef TIPC_RUN_OPTCHECK_H
#define TIPC_RUN_OPTCHECK_H
#include "../../core/status.h"

struct plan;
struct tipc_config;
/* A tipc command's entry point by name (cmds.h's table, handed down by cmd/cmd_run.c), or NULL. */
typedef int (*run_cmd_fn)(int argc, char **argv);
typedef run_cmd_fn (*run_find_cmd)(const char *name);

/* For our own configs (python:tipc): each `tipc CMD ...` stage (and the command `tipc launch`
 * starts) is parsed by CMD's option table in check mode (core/options.h: nothing runs, nothing is
 * read from the environment). A mistyped flag is TIPC_EUSAGE with the parser's message and
 * did-you-mean hint, prefixed with the config line that holds the flag. */
enum tipc_status run_check_options(const struct plan *p, const struct tipc_config *cfg, run_find_cmd find);

#endif
