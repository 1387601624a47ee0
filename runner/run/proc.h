/* proc.h: run one stage's parsed command (cmdline.h) through spawn.h, as the stage runner wants it:
 * its own process group holding the terminal while it runs, a timeout, nothing it started left
 * behind, and tipc's SIGINT/SIGTERM/SIGHUP forwarded to it. Never a shell. */
#ifndef TIPC_PROC_H
#define TIPC_PROC_H
#include <stdbool.h>
#include "../plan/cmdline.h"

struct proc_env {
    const char *self_exe;     /* when argv[0] is "tipc", exec this instead (our own binary) */
    const char *const *set;   /* NULL-terminated "NAME=value" to set (after the command's own) */
    const char *const *unset; /* NULL-terminated names to remove */
    int out_fd, err_fd;       /* > 2: the child's stdout/stderr (before the command's own redirections) */
    double timeout_s;         /* > 0: stop the stage's tree after this long (status 124) */
};

struct proc_result {
    bool timed_out;           /* stopped at timeout_s */
    int leftovers;            /* processes it left running when it ended (all stopped since) */
};

/* Run and wait. Returns the exit status the shell would report: the exit code, 128+signal when
 * killed, 124 when it timed out, 127 when the program is not found, 126 when it cannot be
 * executed, 1 when a redirection file cannot be opened. `res` may be NULL. */
int proc_run(const struct cmdline *c, const struct proc_env *env, struct proc_result *res);

/* Install the SIGINT/SIGTERM/SIGHUP handlers proc_run relies on (core/interrupt.h; a signal ignored
 * when tipc started stays ignored, for tipc and its stages, as a shell's background job has it);
 * make this process the reaper of the stages' orphans, and start the guard that stops them if this
 * process is SIGKILLed (spawn_guard_start). interrupted() tells which signal came, 0 if none. */
void proc_signals_init(void);

#endif
