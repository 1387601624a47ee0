/* interrupt.h: the one SIGINT/SIGTERM/SIGHUP flag of a tipc process that runs others (`tipc run`'s
 * stages, `tipc launch`'s ranks, `tipc bench scaling`'s launchers). The handler records the first
 * signal, passes each signal on to the process groups registered with interrupt_forward() (the
 * running stage, the running launchers: each stops its own children), and writes one byte to the
 * wake fd, if any, so a poll() loop notices at once. Nothing else in tipc installs these handlers. */
#ifndef TIPC_INTERRUPT_H
#define TIPC_INTERRUPT_H
#include <stdbool.h>
#include <sys/types.h>

enum interrupt_flags {
    INTERRUPT_KEEP_IGNORED = 1, /* a signal ignored when tipc started stays ignored (`tipc run ... &` in
                                 * a script: the shell's background job has SIGINT ignored) */
    INTERRUPT_RESTART = 2,      /* SA_RESTART: system calls go on after the handler (a poll loop) */
    INTERRUPT_WAKE_ON_CHILD = 4 /* SIGCHLD writes the wake byte too (and is not an interrupt) */
};

/* Install the handlers. wake_fd: a non-blocking pipe's write end, or -1. Call once per process. */
void interrupt_init(unsigned flags, int wake_fd);
/* The first signal that came (SIGINT, SIGTERM, SIGHUP), or 0. */
int interrupted(void);
/* Take `sig` as ours, as if it came (a Ctrl-C that reached only the stage's process group). */
void interrupt_set(int sig);
/* Was SIGINT ignored when interrupt_init ran with INTERRUPT_KEEP_IGNORED? (the stages inherit it) */
bool interrupt_sigint_ignored(void);
/* The flag itself, for struct spawn's .interrupt (spawn.h polls it while it waits). */
volatile int *interrupt_flag(void);
/* Pass every signal that comes on to process group `group` (> 0) until interrupt_unforward(group).
 * At most INTERRUPT_MAX_GROUPS at once; more are not forwarded (BUG). */
#define INTERRUPT_MAX_GROUPS 64
void interrupt_forward(pid_t group);
void interrupt_unforward(pid_t group);

#endif
