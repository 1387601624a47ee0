/* proc.c: a stage through spawn.h (see proc.h). */
#include "proc.h"

#include <errno.h>
#include <stdbool.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

#include "../../core/spawn.h" /* defines: struct spawn, spawn_start, spawn_wait */
#include "../../core/check.h"
#include "../../core/interrupt.h"
#include "../../core/banned.h"

static const char *run_mark; /* spawn_guard_start's mark, put in every stage's environment */

void proc_signals_init(void)
{
    interrupt_init(INTERRUPT_KEEP_IGNORED, -1);
    spawn_become_subreaper();
    run_mark = spawn_guard_start();
}

int proc_run(const struct cmdline *c, const struct proc_env *env, struct proc_result *res)
{
    /* the command's own NAME=value words come after the caller's edits, as the shell applies them */
    size_t nset = 0;
    while (env && env->set && env->set[nset]) nset++;
    const char **set = xcalloc(nset + (size_t)c->nenv + 3, sizeof *set);
    for (size_t i = 0; i < nset; i++) set[i] = env->set[i];
    for (int i = 0; i < c->nenv; i++) set[nset + (size_t)i] = c->env[i];
    if (run_mark) set[nset + (size_t)c->nenv] = run_mark;
    /* a launcher that starts `tipc` (torchrun ... tipc train) finds this tipc first on PATH, so its
     * ranks are this build, as `tipc launch`'s ranks are (its /proc/self/exe) */
    char *path_set = NULL;
    bool runs_tipc = false;
    for (int i = 1; i < c->argc && env && env->self_exe && strcmp(c->argv[0], "tipc"); i++)
        runs_tipc |= !strcmp(c->argv[i], "tipc");
    if (runs_tipc) {
        const char *slash = strrchr(env->self_exe, '/'), *old = getenv("PATH");
        path_set = xasprintf("PATH=%.*s:%s", (int)(slash ? slash - env->self_exe : 1), slash ? env->self_exe : ".",
                             old ? old : "/usr/bin:/bin");
        set[nset + (size_t)c->nenv + (run_mark ? 1 : 0)] = path_set;
    }
    struct spawn s = SPAWN_INIT;
    s.argv = c->argv;
    s.file = env && env->self_exe && !strcmp(c->argv[0], "tipc") ? env->self_exe : NULL;
    s.env_unset = env ? env->unset : NULL;
    s.env_set = set;
    s.out_fd = env && env->out_fd > 2 ? env->out_fd : -1; /* tipc's copy of the output (tee) */
    s.err_fd = env && env->err_fd > 2 ? env->err_fd : -1;
    s.redir = c->redir;
    s.nredir = c->nredir;
    s.terminal = true;
    s.keep_sigint_ignored = interrupt_sigint_ignored();
    s.pdeathsig = SIGTERM; /* tipc killed outright: the stage is told (docs/reliability.md) */
    s.timeout_s = env ? env->timeout_s : 0;
    s.interrupt = interrupt_flag();
    int status;
    if (spawn_start(&s)) {
        error_msg(TIPC_EIO, "cannot start '%s': %s", c->argv[0], strerror(errno));
        status = 126;
    } else {
        interrupt_forward(s.group); /* the stage's whole group; spawn_wait stops the rest after the grace */
        status = spawn_wait(&s);
        interrupt_unforward(s.group);
        /* Ctrl-C in the terminal reached only the stage's group: take it as ours, as bash does */
        if (s.had_terminal && status == 128 + SIGINT && !interrupt_sigint_ignored()) interrupt_set(SIGINT);
    }
    free(set);
    free(path_set);
    if (res) *res = (struct proc_result){s.timed_out, s.leftovers};
    return status;
}
