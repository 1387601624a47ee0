/* spawn.h: start a child process and see it through, the one fork/exec path of tipc (after git's
 * run-command.h). Used by the stage runner (runner/run/proc.c: one stage at a time, with a timeout, the
 * terminal and a sweep of what it leaves behind) and by the launcher (runner/launch/agent.c: one process per
 * rank in one group, output to a pipe). Never a shell: argv goes to execvp/execve as given.
 *
 * Lifecycle: fill a `struct spawn` (zero it first: SPAWN_INIT), spawn_start(), then either
 * spawn_wait() (timeout, tree stop, sweep) or the caller's own waitpid loop.
 *
 * Process tree: the child is put in a process group (its own, or `pgid`'s). spawn_stop_tree()
 * signals that group AND every descendant of this process found through /proc (a `setsid` daemon
 * leaves the group but not the ancestry, since the caller is a child subreaper: see
 * spawn_become_subreaper), then SIGKILLs whatever is left after the grace period. */
#ifndef TIPC_SPAWN_H
#define TIPC_SPAWN_H
#include <stdbool.h>
#include <sys/types.h>

/* A redirection applied in the child, in order, as the shell applies `>`, `>>`, `N>&M`. */
enum redir_kind { REDIR_TRUNC, REDIR_APPEND, REDIR_DUP };
struct redirect {
    int fd;              /* 1 (stdout) or 2 (stderr) */
    enum redir_kind kind;
    char *path;          /* REDIR_TRUNC / REDIR_APPEND */
    int dup_fd;          /* REDIR_DUP: make fd a copy of this one (1 or 2) */
};

struct spawn {
    /* ---- what to run (in) ---- */
    char *const *argv;             /* NULL-terminated; argv[0] is looked up in PATH unless `file` */
    const char *file;              /* exec this path instead (no PATH search), e.g. our own binary */
    char *const *envp;             /* the whole environment, or NULL for ours with the edits below */
    const char *const *env_unset;  /* NULL-terminated names to remove */
    const char *const *env_set;    /* NULL-terminated "NAME=value", applied after env_unset */
    const struct redirect *redir;  /* applied in order, as the shell would */
    int nredir;
    int stdin_fd, out_fd, err_fd;  /* when >= 0: dup'ed onto 0, 1, 2 (before the redirections) */
    bool stdin_null;               /* stdin from /dev/null */
    int inherit_fd;                /* >= 0: kept open across exec (its close-on-exec flag cleared) */
    const char *cwd;               /* chdir there first, or NULL */
    pid_t pgid;                    /* 0: a new group led by the child; > 0: join this group */
    bool terminal;                 /* give the child's group the terminal's foreground while it runs,
                                    * when our stdin is a terminal whose foreground we hold (as a
                                    * shell does for a foreground job); spawn_wait takes it back */
    bool keep_sigint_ignored;      /* SIGINT was ignored when tipc started: the child inherits that */
    int pdeathsig;                 /* signal the child gets when this process dies, 0 for none */
    /* ---- spawn_wait (in) ---- */
    double timeout_s;              /* > 0: stop the tree after this long */
    double grace_s;                /* SIGTERM -> SIGKILL delay when stopping (default 5 s) */
    volatile int *interrupt;       /* when it becomes non-zero, that signal goes to the group and the
                                    * tree is stopped after the grace period */
    /* ---- results (out) ---- */
    pid_t pid;
    bool timed_out;                /* spawn_wait stopped it at timeout_s */
    bool stopped_by_us;            /* spawn_wait sent SIGKILL after the grace period */
    int leftovers;                 /* processes still there after the child ended, then stopped */
    bool had_terminal;             /* the child's group held the terminal's foreground */
    /* ---- private ---- */
    int tty;                       /* the terminal shared with the child, or -1 */
    pid_t group;                   /* the child's process group */
};
#define SPAWN_INIT {.stdin_fd = -1, .out_fd = -1, .err_fd = -1, .inherit_fd = -1}

/* Fork and exec. Returns 0, or -1 when fork failed (errno set; nothing started). If exec fails the
 * child writes `tipc: error: cannot run 'X': why` to its stderr and exits 127 (not found) or 126;
 * a redirection that cannot be opened exits 1. */
int spawn_start(struct spawn *s);

/* Wait for the child (timeout, interrupt, terminal as configured), then stop everything it left
 * behind (s->leftovers). Returns the status as a shell reports it: the exit code, 128+N when killed
 * by signal N, 124 when it timed out. */
int spawn_wait(struct spawn *s);

/* Make this process the reaper of its orphaned descendants (PR_SET_CHILD_SUBREAPER), so that
 * a double fork or `setsid` cannot take a process out of reach of spawn_stop_tree. */
void spawn_become_subreaper(void);

/* Stop the tree: `sig` (and SIGCONT) to group `pgid` (if > 0) and to every live descendant of this
 * process, found through /proc, including those that left the group; wait up to grace_s for all to
 * go, then SIGKILL what is left. Our zombies are reaped, except `wait_pid` (its status belongs to
 * the caller; -1: none). Returns how many processes were signalled. */
int spawn_stop_tree(pid_t pgid, int sig, double grace_s, pid_t wait_pid);

/* For the case that no sweep can cover, this process being SIGKILLed: start a guard process that
 * waits for our end (EOF on a pipe only we hold) and then stops (SIGTERM, SIGKILL 5 s later) every
 * process whose environment holds the returned mark, "TIPC_RUN_<pid>_<n>=1". Put the mark in the
 * environment of every child (env_set): their descendants inherit it. NULL if it could not start. */
const char *spawn_guard_start(void);

/* How many live descendants this process has (for tests and reports). */
int spawn_count_descendants(void);

#endif
