/* cmds.h: one entry point per subcommand (git-style cmd_<name>), each in runner/cmd_<name>.c.
 * argv[0] is the subcommand name. Each returns an enum tipc_status, which is the exit code. */
#ifndef TIPC_CMDS_H
#define TIPC_CMDS_H

int cmd_run(int argc, char **argv);
int cmd_prepare(int argc, char **argv);
int cmd_launch(int argc, char **argv);
int cmd_train(int argc, char **argv);
int cmd_export(int argc, char **argv);
int cmd_infer(int argc, char **argv);
int cmd_bench(int argc, char **argv);
int cmd_version(int argc, char **argv);
int cmd_help(int argc, char **argv);

/* Usage text of each subcommand, defined beside its cmd_<name>(); printed by `tipc help CMD`. */
extern const char usage_run[], usage_prepare[], usage_launch[], usage_train[], usage_export[],
    usage_infer[], usage_bench[], usage_version[], usage_help[];

/* Print the usage of `name` to stderr (for bad usage) and return TIPC_EUSAGE. */
int cmd_usage_error(const char *name);

#endif
