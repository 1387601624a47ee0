/* spawn.c: fork/exec, waiting with a timeout, the terminal, and stopping a whole process tree
 * (see spawn.h). */
#include "spawn.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "time.h"
#include "banned.h"

static pid_t guard_pid; /* spawn_guard_start's watcher: ours, but not part of any stage's tree */

static void nap_ms(int ms)
{
    struct timespec ts = {0, (long)ms * 1000000L};
    nanosleep(&ts, NULL); /* a signal cuts it short: fine, the caller loops */
}

/* ---- the child side: only async-signal-safe calls until exec ------------------------------- */

TIPC_NORETURN static void child_fail(int code, const char *what, const char *arg, int err)
{
    const char *parts[] = {"tipc: error: ", what, " '", arg, "': ", strerror(err), "\n"};
    for (size_t i = 0; i < sizeof parts / sizeof *parts; i++)
        if (write(2, parts[i], strlen(parts[i])) < 0) break;
    _exit(code);
}

static void child_redirect(const struct spawn *s)
{
    if (s->stdin_null) {
        int nul = open("/dev/null", O_RDONLY);
        if (nul >= 0 && nul != 0) dup2(nul, 0), close(nul);
    } else if (s->stdin_fd >= 0) {
        dup2(s->stdin_fd, 0);
    }
    if (s->out_fd >= 0 && dup2(s->out_fd, 1) < 0) child_fail(1, "cannot redirect to", "stdout copy", errno);
    if (s->err_fd >= 0 && dup2(s->err_fd, 2) < 0) child_fail(1, "cannot redirect to", "stderr copy", errno);
    for (int i = 0; i < s->nredir; i++) {
        const struct redirect *r = &s->redir[i];
        if (r->kind == REDIR_DUP) {
            if (dup2(r->dup_fd, r->fd) < 0) child_fail(1, "cannot redirect to", "&", errno);
            continue;
        }
        int flags = O_WRONLY | O_CREAT | O_CLOEXEC | (r->kind == REDIR_APPEND ? O_APPEND : O_TRUNC);
        if (strncmp(r->path, "/dev/", 5) != 0) flags |= O_NOFOLLOW; /* a log never writes through a planted symlink; /dev/stdout is one */
        int fd = open(r->path, flags, 0666);
        if (fd < 0) child_fail(1, "cannot open", r->path, errno);
        if (dup2(fd, r->fd) < 0) child_fail(1, "cannot redirect to", r->path, errno);
        close(fd);
    }
}

TIPC_NORETURN static void child_exec(const struct spawn *s, pid_t parent, int tty)
{
    setpgid(0, s->pgid);
    if (tty >= 0) { /* take the terminal's foreground (the parent does too: whoever runs first) */
        sigset_t ttou, old;
        sigemptyset(&ttou);
        sigaddset(&ttou, SIGTTOU);
        sigprocmask(SIG_BLOCK, &ttou, &old);
        tcsetpgrp(tty, getpgrp());
    }
    if (s->pdeathsig) {
        prctl(PR_SET_PDEATHSIG, s->pdeathsig);
        if (getppid() != parent) _exit(127); /* the parent died before prctl: nobody waits for us */
    }
    /* as a shell leaves them for a command: default actions, nothing blocked; an ignored SIGINT
     * stays ignored when tipc itself was started with it ignored (a background job) */
    static const int sigs[] = {SIGINT, SIGTERM, SIGQUIT, SIGHUP, SIGCHLD, SIGPIPE, SIGXFSZ,
                               SIGTSTP, SIGTTIN, SIGTTOU, SIGUSR1, SIGUSR2, SIGALRM};
    for (size_t i = 0; i < sizeof sigs / sizeof *sigs; i++) signal(sigs[i], SIG_DFL);
    if (s->keep_sigint_ignored) signal(SIGINT, SIG_IGN);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    if (!s->envp) { /* edits of our environment (setenv after fork: this process execs or exits) */
        for (int i = 0; s->env_unset && s->env_unset[i]; i++) unsetenv(s->env_unset[i]);
        for (int i = 0; s->env_set && s->env_set[i]; i++) putenv((char *)s->env_set[i]);
    }
    if (s->inherit_fd >= 0) fcntl(s->inherit_fd, F_SETFD, 0);
    if (s->cwd && chdir(s->cwd)) child_fail(1, "cannot change directory to", s->cwd, errno);
    child_redirect(s);
    if (s->file && s->envp) execve(s->file, s->argv, s->envp);
    else if (s->file) execv(s->file, s->argv);
    else if (s->envp) execvpe(s->argv[0], s->argv, s->envp);
    else execvp(s->argv[0], s->argv);
    child_fail(errno == ENOENT ? 127 : 126, "cannot run", s->argv[0], errno);
    _exit(127); /* child_fail does not return */
}

/* ---- the terminal ------------------------------------------------------------------------- */

/* Hand the terminal's foreground to `pgrp` without being stopped for it (SIGTTOU) when we are
 * no longer the foreground ourselves. */
static void give_terminal(int tty, pid_t pgrp)
{
    if (tty < 0) return;
    sigset_t ttou, old;
    sigemptyset(&ttou);
    sigaddset(&ttou, SIGTTOU);
    sigprocmask(SIG_BLOCK, &ttou, &old);
    tcsetpgrp(tty, pgrp);
    sigprocmask(SIG_SETMASK, &old, NULL);
}

/* The terminal to share with the child: our stdin, when it is one and its foreground is ours. */
static int our_terminal(void)
{
    return isatty(0) && tcgetpgrp(0) == getpgrp() ? 0 : -1;
}

int spawn_start(struct spawn *s)
{
    s->timed_out = s->stopped_by_us = false;
    s->leftovers = 0;
    s->tty = s->terminal ? our_terminal() : -1;
    fflush(stdout);
    fflush(stderr);
    pid_t parent = getpid();
    pid_t pid = fork();
    if (pid < 0) return -1;
    if (pid == 0) child_exec(s, parent, s->tty);
    /* both sides set the group: no race with a signal sent to it before the child ran */
    s->group = s->pgid > 0 ? s->pgid : pid;
    setpgid(pid, s->group);
    give_terminal(s->tty, s->group);
    s->pid = pid;
    return 0;
}

/* ---- the process tree --------------------------------------------------------------------- */

struct pinfo { pid_t pid, ppid; char state; bool mine; };

/* Every process, from /proc. Returns the count; *v is malloc'ed. */
static int list_procs(struct pinfo **v)
{
    size_t cap = 0;
    int n = 0;
    *v = NULL;
    DIR *d = opendir("/proc");
    if (!d) return 0;
    for (struct dirent *e; (e = readdir(d));) {
        if (!isdigit((unsigned char)e->d_name[0])) continue;
        char path[300], buf[512];
        snprintf(path, sizeof path, "/proc/%s/stat", e->d_name);
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0) continue; /* gone meanwhile */
        ssize_t k = read(fd, buf, sizeof buf - 1);
        close(fd);
        if (k <= 0) continue;
        buf[k] = 0;
        /* "pid (comm) S ppid ...": comm may hold spaces and ')', so parse after the last ')' */
        char *rp = strrchr(buf, ')');
        int pid = 0, ppid = 0;
        char st = 0;
        if (!rp || sscanf(buf, "%d", &pid) != 1 || sscanf(rp + 1, " %c %d", &st, &ppid) != 2) continue;
        *v = xgrow(*v, sizeof **v, (size_t)n + 1, &cap);
        (*v)[n++] = (struct pinfo){pid, ppid, st, false};
    }
    closedir(d);
    return n;
}

/* Mark the descendants of `root` (mine = true). Orphans re-parented to us (the subreaper) are
 * our children, so their own descendants are found too. */
static void mark_descendants(struct pinfo *v, int n, pid_t root)
{
    for (bool grew = true; grew;) {
        grew = false;
        for (int i = 0; i < n; i++) {
            if (v[i].mine || v[i].pid == guard_pid) continue;
            bool under = v[i].ppid == root;
            for (int j = 0; j < n && !under; j++) under = v[j].mine && v[j].pid == v[i].ppid;
            if (under) v[i].mine = grew = true;
        }
    }
}

static bool alive(const struct pinfo *p) { return p->state != 'Z' && p->state != 'X'; }

int spawn_count_descendants(void)
{
    struct pinfo *v;
    int n = list_procs(&v), live = 0;
    mark_descendants(v, n, getpid());
    for (int i = 0; i < n; i++) live += v[i].mine && alive(&v[i]);
    free(v);
    return live;
}

/* Could there be a descendant to stop? Every live descendant hangs below a child of ours (orphans
 * are re-parented to us, the subreaper), so: is any child of ours other than `except` and the guard
 * alive, or is anyone left in group `pgid`? Reads /proc/self/task/ * /children, a few small files,
 * instead of every process's stat (which costs tens of ms on a busy machine, after every stage).
 * True when it cannot tell. */
static bool may_have_descendants(pid_t pgid, pid_t except)
{
    if (pgid > 0 && kill(-pgid, 0) == 0) return true;
    DIR *d = opendir("/proc/self/task");
    if (!d) return true;
    bool any = false;
    for (struct dirent *e; !any && (e = readdir(d));) {
        if (!isdigit((unsigned char)e->d_name[0])) continue;
        char path[300], buf[4096];
        snprintf(path, sizeof path, "/proc/self/task/%s/children", e->d_name);
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0) {
            any = true; /* no such file (kernel without CONFIG_PROC_CHILDREN): walk */
            break;
        }
        ssize_t k = read(fd, buf, sizeof buf - 1);
        close(fd);
        if (k >= (ssize_t)sizeof buf - 1) any = true;
        buf[k > 0 ? k : 0] = 0;
        for (char *q = buf, *end; !any && *q; q = end) {
            long pid = strtol(q, &end, 10);
            if (end == q) break;
            if (pid != except && pid != guard_pid) any = true;
        }
    }
    closedir(d);
    return any;
}

static bool in_list(const pid_t *l, int n, pid_t p)
{
    for (int i = 0; i < n; i++)
        if (l[i] == p) return true;
    return false;
}

int spawn_stop_tree(pid_t pgid, int sig, double grace_s, pid_t wait_pid)
{
    if (!may_have_descendants(pgid, wait_pid)) return 0;
    pid_t self = getpid(), *sent = NULL;
    size_t cap = 0;
    int nsent = 0;
    bool hard = sig == SIGKILL;
    double t0 = now_seconds();
    for (int round = 0;; round++) {
        struct pinfo *v;
        int n = list_procs(&v), live = 0;
        mark_descendants(v, n, self);
        for (int i = 0; i < n; i++) {
            if (!v[i].mine) continue;
            if (!alive(&v[i])) { /* reap our zombies; the caller reaps its own child */
                if (v[i].ppid == self && v[i].pid != wait_pid) waitpid(v[i].pid, NULL, WNOHANG);
                continue;
            }
            live++;
            if (hard || !in_list(sent, nsent, v[i].pid)) {
                kill(v[i].pid, hard ? SIGKILL : sig);
                if (!hard) kill(v[i].pid, SIGCONT);
            }
            if (!in_list(sent, nsent, v[i].pid)) {
                sent = xgrow(sent, sizeof *sent, (size_t)nsent + 1, &cap);
                sent[nsent++] = v[i].pid;
            }
        }
        free(v);
        /* the group too (after the walk, so that the count is of what was there), and SIGCONT: a
         * stopped process acts on the signal only once continued */
        if (round == 0 && pgid > 0) kill(-pgid, sig), kill(-pgid, SIGCONT);
        if (!live) break;
        double t = now_seconds() - t0;
        if (!hard && t >= grace_s) {
            hard = true;
            if (pgid > 0) kill(-pgid, SIGKILL);
        }
        if (t > grace_s + 10) break; /* unkillable (uninterruptible sleep): give up, it is counted */
        nap_ms(10);
    }
    free(sent);
    return nsent;
}

void spawn_become_subreaper(void) { prctl(PR_SET_CHILD_SUBREAPER, 1); }

/* ---- when tipc itself is killed ------------------------------------------------------------ */

/* SIGKILL of tipc leaves nobody to sweep the stage's tree, and its orphans go to init. So a small
 * forked watcher (the guard) waits for tipc's end on a pipe and then stops every process whose
 * environment carries this run's mark, which each stage and all it starts inherit. */

/* Does /proc/PID/environ hold `mark` as one whole "NAME=value" entry? */
static bool has_mark(const char *pid, const char *mark)
{
    char path[300];
    snprintf(path, sizeof path, "/proc/%s/environ", pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return false;
    static char buf[1 << 20];
    size_t n = 0;
    for (ssize_t k; n < sizeof buf - 1 && (k = read(fd, buf + n, sizeof buf - 1 - n)) > 0;) n += (size_t)k;
    close(fd);
    buf[n] = 0;
    size_t ml = strlen(mark);
    for (size_t i = 0; i + ml <= n; i += strlen(buf + i) + 1)
        if (!memcmp(buf + i, mark, ml) && buf[i + ml] == 0) return true;
    return false;
}

/* Signal every marked process; returns how many there were. */
static int signal_marked(const char *mark, int sig)
{
    int n = 0;
    DIR *d = opendir("/proc");
    if (!d) return 0;
    for (struct dirent *e; (e = readdir(d));) {
        if (!isdigit((unsigned char)e->d_name[0])) continue;
        pid_t pid = (pid_t)strtol(e->d_name, NULL, 10);
        if (pid == getpid() || !has_mark(e->d_name, mark)) continue;
        kill(pid, sig);
        kill(pid, SIGCONT);
        n++;
    }
    closedir(d);
    return n;
}

TIPC_NORETURN static void guard_main(int rfd, const char *mark)
{
    static const int sigs[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGTSTP, SIGTTIN, SIGTTOU, SIGPIPE};
    for (size_t i = 0; i < sizeof sigs / sizeof *sigs; i++) signal(sigs[i], SIG_IGN);
    setsid(); /* out of tipc's group and terminal: a signal meant for tipc's job is not for us */
    int nul = open("/dev/null", O_RDWR);
    for (int fd = 0; fd < 3; fd++) dup2(nul, fd);
    for (int fd = 3; fd < 1024; fd++)
        if (fd != rfd) close(fd);
    char b;
    while (read(rfd, &b, 1) < 0 && errno == EINTR) {}
    /* tipc is gone: TERM, 5 s, then KILL (zombies keep the mark until reaped by init: count them out
     * by giving up after the KILL rounds) */
    double t0 = now_seconds();
    while (signal_marked(mark, SIGTERM) && now_seconds() - t0 < 5) nap_ms(50);
    for (int i = 0; i < 50 && signal_marked(mark, SIGKILL); i++) nap_ms(50);
    _exit(0);
}

const char *spawn_guard_start(void)
{
    static char mark[80];
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    snprintf(mark, sizeof mark, "TIPC_RUN_%d_%lx=1", (int)getpid(), (unsigned long)ts.tv_nsec);
    int p[2];
    if (pipe2(p, O_CLOEXEC)) return NULL;
    fflush(stdout);
    fflush(stderr);
    pid_t g = fork();
    if (g < 0) {
        close(p[0]), close(p[1]);
        return NULL;
    }
    if (g == 0) guard_main(p[0], mark);
    close(p[0]); /* p[1] stays open, unused, until this process ends: then the guard reads EOF */
    guard_pid = g;
    return mark;
}

/* ---- waiting ------------------------------------------------------------------------------ */

/* The child's group stopped (Ctrl-Z while it held the terminal): stop ourselves as its job would
 * be; when continued, give the terminal back to it and continue it. */
static void job_stopped(struct spawn *s)
{
    give_terminal(s->tty, getpgrp());
    kill(getpid(), SIGTSTP);
    if (our_terminal() >= 0) give_terminal(s->tty, s->group);
    kill(-s->group, SIGCONT);
}

int spawn_wait(struct spawn *s)
{
    double grace = s->grace_s > 0 ? s->grace_s : 5.0, t0 = now_seconds();
    int status = 0, nap = 1;
    double int_at = 0;
    for (;;) {
        pid_t r = waitpid(s->pid, &status, WNOHANG | (s->tty >= 0 ? WUNTRACED : 0));
        if (r == s->pid && WIFSTOPPED(status)) {
            job_stopped(s);
            continue;
        }
        if (r == s->pid) break;
        if (r < 0 && errno != EINTR) {
            status = W_EXITCODE(1, 0);
            break;
        }
        /* An interrupt: the signal itself went to the group (the caller's handler); the child gets
         * the grace period to act on it, then the tree is killed. */
        if (s->interrupt && *s->interrupt && !int_at) int_at = now_seconds();
        if (int_at && !s->stopped_by_us && now_seconds() - int_at >= grace) {
            s->stopped_by_us = true;
            spawn_stop_tree(s->group, SIGKILL, 0, s->pid);
        }
        if (!s->timed_out && s->timeout_s > 0 && now_seconds() - t0 >= s->timeout_s) {
            s->timed_out = s->stopped_by_us = true;
            spawn_stop_tree(s->group, SIGTERM, grace, s->pid);
        }
        nap_ms(nap);
        nap = nap < 16 ? nap * 2 : 20; /* a short command is seen ending within a few ms */
    }
    give_terminal(s->tty, getpgrp());
    s->had_terminal = s->tty >= 0;
    s->leftovers = spawn_stop_tree(s->group, SIGTERM, grace, -1);
    if (s->timed_out) return 124;
    if (WIFEXITED(status)) return WEXITSTATUS(status);
    if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
    return 1;
}

