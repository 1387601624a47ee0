/* proc.h: run one parsed command as a child process: fork + execvp, never a shell.
 * The caller owns the cmdline; proc applies its redirections and env assignments in the child,
 * plus the extra environment edits in `struct proc_env`. */
#ifndef TIPC_PROC_H
#define TIPC_PROC_H
#include <stdbool.h>
#include "cmdline.h"

struct proc_env {
    const char *self_exe;     /* when argv[0] is "tipc", exec this instead (our own binary) */
    const char *const *set;   /* NULL-terminated "NAME=value" to set (after the command's own) */
    const char *const *unset; /* NULL-terminated names to remove */
    int out_fd, err_fd;       /* > 2: the child's stdout/stderr (before the command's own redirections) */
};

/* Run and wait. Returns the exit status the shell would report: the exit code, 128+signal when
 * killed, 127 when the program is not found, 126 when it cannot be executed, 1 when a redirection
 * file cannot be opened. The child runs in its own process group and gets SIGTERM if tipc dies; a
 * SIGTERM/SIGINT delivered to tipc while waiting is forwarded to that whole group. */
int proc_run(const struct cmdline *c, const struct proc_env *env);

/* Install the SIGINT/SIGTERM handlers proc_run relies on; proc_interrupted() tells if one came. */
void proc_signals_init(void);
int proc_interrupted(void);

#endif
