/* proc.c: fork/execvp with redirections (see proc.h). */
#include "proc.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../core/check.h"
#include "../core/banned.h"

static volatile sig_atomic_t got_signal;
static volatile pid_t running_child;

static void on_signal(int sig)
{
    got_signal = sig;
    pid_t c = running_child;
    if (c > 0) kill(-c, sig); /* the child's whole process group: grandchildren too */
}

void proc_signals_init(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
}

int proc_interrupted(void) { return got_signal; }

/* In the child: write a message with only async-signal-safe calls, then _exit. */
static void child_fail(int code, const char *what, const char *arg, int err)
{
    char buf[1024];
    int n = snprintf(buf, sizeof buf, "tipc: error: %s '%s': %s\n", what, arg, strerror(err));
    if (n > 0 && write(2, buf, (size_t)(n < (int)sizeof buf ? n : (int)sizeof buf - 1)) < 0) { /* nothing */ }
    _exit(code);
}

static void child_redirect(const struct cmdline *c)
{
    for (int i = 0; i < c->nredir; i++) {
        const struct redirect *r = &c->redir[i];
        if (r->kind == REDIR_DUP) {
            if (dup2(r->dup_fd, r->fd) < 0) child_fail(1, "cannot redirect to", "&", errno);
            continue;
        }
        int flags = O_WRONLY | O_CREAT | O_CLOEXEC | (r->kind == REDIR_APPEND ? O_APPEND : O_TRUNC);
        if (strncmp(r->path, "/dev/", 5) != 0) flags |= O_NOFOLLOW;   /* a log never writes through a planted symlink; /dev/stdout is one */
        int fd = open(r->path, flags, 0666);
        if (fd < 0) child_fail(1, "cannot open", r->path, errno);
        if (dup2(fd, r->fd) < 0) child_fail(1, "cannot redirect to", r->path, errno);
        close(fd);
    }
}

static void child_env(const struct cmdline *c, const struct proc_env *env)
{
    for (int i = 0; env && env->unset && env->unset[i]; i++) unsetenv(env->unset[i]);
    for (int i = 0; env && env->set && env->set[i]; i++) putenv((char *)env->set[i]);
    for (int i = 0; i < c->nenv; i++) putenv(c->env[i]);
}

int proc_run(const struct cmdline *c, const struct proc_env *env)
{
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    if (pid < 0) {
        error_msg(TIPC_EIO, "cannot start '%s': %s", c->argv[0], strerror(errno));
        return 126;
    }
    if (pid == 0) {
        /* Own process group, so a signal to tipc reaches the whole tree below it; and die with
         * tipc if tipc itself is killed. */
        setpgid(0, 0);
        prctl(PR_SET_PDEATHSIG, SIGTERM);
        signal(SIGINT, SIG_DFL);
        signal(SIGTERM, SIG_DFL);
        child_env(c, env);
        if (env && env->out_fd > 2 && dup2(env->out_fd, 1) < 0) child_fail(1, "cannot redirect to", "stdout copy", errno);
        if (env && env->err_fd > 2 && dup2(env->err_fd, 2) < 0) child_fail(1, "cannot redirect to", "stderr copy", errno);
        child_redirect(c);
        const char *prog = c->argv[0];
        if (env && env->self_exe && !strcmp(prog, "tipc")) prog = env->self_exe;
        execvp(prog, c->argv);
        child_fail(errno == ENOENT ? 127 : 126, "cannot run", c->argv[0], errno);
    }
    setpgid(pid, pid); /* also here: no race with a signal arriving before the child ran setpgid */
    running_child = pid;
    int status = 0;
    while (waitpid(pid, &status, 0) < 0) {
        if (errno != EINTR) {
            status = 0;
            break;
        }
    }
    running_child = 0;
    if (WIFEXITED(status)) return WEXITSTATUS(status);
    if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
    return 1;
}
