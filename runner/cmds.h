/* cmds.h: one entry point per subcommand (git-style cmd_<name>), each in runner/cmd/cmd_<name>.c,
 * and the command table (runner/commands.c) that main, `tipc help` and `tipc launch` share.
 * argv[0] is the subcommand name. Each returns an enum tipc_status, which is the exit code.
 * Each parses its command line with core/options.h; `CMD --help` prints the usage generated
 * from its option table, and `tipc help CMD` runs `CMD --help`. */
#ifndef TIPC_CMDS_H
#define TIPC_CMDS_H
#include <stdbool.h>

int cmd_run(int argc, char **argv);
int cmd_prepare(int argc, char **argv);
int cmd_launch(int argc, char **argv);
int cmd_train(int argc, char **argv);
int cmd_export(int argc, char **argv);
int cmd_infer(int argc, char **argv);
int cmd_bench(int argc, char **argv);
int cmd_speed(int argc, char **argv);
int cmd_compare(int argc, char **argv);
int cmd_version(int argc, char **argv);
int cmd_help(int argc, char **argv);

struct cmd {
    const char *name;
    int (*fn)(int argc, char **argv);
    const char *summary;
    const char *alias;   /* other spellings, space separated ("--help -h"), or NULL */
};

/* Every tipc command, in `tipc help` order; the entry after the last has name NULL. */
extern const struct cmd tipc_commands[];
/* The command called `name` (or one of its aliases), or NULL. */
const struct cmd *cmd_find(const char *name);
/* Is `name` a tipc command (or an alias of one)? (for `tipc launch CMD`: run it as this binary) */
bool cmd_exists(const char *name);
/* Print "'NAME' is not a tipc command" with a did-you-mean hint; returns TIPC_EUSAGE. */
int cmd_unknown(const char *name);
/* The overview of `tipc help` (commands and exit codes). */
void cmd_print_overview(void *stream /* FILE* */);
/* The exit-code table (`tipc help exit-codes`), its first line a heading. */
extern const char tipc_exit_codes[];
/* `tipc help man` and `tipc help completion` (cmd/cmd_help_docs.c): generated from the option tables. */
void cmd_print_man(void *stream /* FILE* */);
void cmd_print_completion(void *stream /* FILE* */);

#endif
