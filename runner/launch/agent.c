/* agent.c: the ranks of this node. Spawns one process per device (fork/execve, never a shell;
 * spawn.h) in one process group with PR_SET_PDEATHSIG, tees each rank's output to
 * DIR/workerlog.RANK and (local rank 0, or all with --echo=all) to the console as `[node:rank] line`,
 * stops them on SIGINT/SIGTERM/SIGHUP (core/interrupt.h), reaps everything (the launcher is a child
 * subreaper), and stops all ranks, here and on every other node through the failure notice, as soon
 * as one fails; restarts them for the next round (round.c). The rendezvous side is join.c. */
#include "internal.h"
#include "../../core/spawn.h" /* defines: spawn_start, spawn_stop_tree */

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../../core/check.h"
#include "../../core/interrupt.h"
#include "../../core/time.h"
#include "../../core/strv.h"
#include "../../core/fs.h"       /* defines: mkdir_p, write_all (core/staged.h) */
#include "../../core/banned.h"

extern char **environ;

/* ---- environment of a rank ------------------------------------------------------------------ */
#define ENV(e, k, ...) strv_setenv((e), xasprintf(k "=" __VA_ARGS__))

static char **rank_env(const struct launch_job *J, const struct rank_proc *r)
{
    const struct launch_opts *o = J->o;
    struct strv e = STRV_INIT;
    for (char **p = environ; *p; p++) strv_push(&e, *p);
    int world = o->nnodes * o->nproc;
    ENV(&e, "RANK", "%d", r->rank);
    ENV(&e, "LOCAL_RANK", "%d", r->local_rank);
    ENV(&e, "WORLD_SIZE", "%d", world);
    ENV(&e, "LOCAL_WORLD_SIZE", "%d", o->nproc);
    ENV(&e, "GROUP_RANK", "%d", o->node_rank);
    ENV(&e, "MASTER_ADDR", "%s", o->master_host);
    ENV(&e, "MASTER_PORT", "%d", J->port);
    ENV(&e, "TIPC_JOB_ID", "%s", o->job_id);
    ENV(&e, "TIPC_JOB_TOKEN", "%s", o->token);
    ENV(&e, "TIPC_NODE_RANK", "%d", o->node_rank);
    ENV(&e, "TIPC_NNODES", "%d", o->nnodes);
    ENV(&e, "TIPC_NODE_IP", "%s", o->self_ip);
    ENV(&e, "TIPC_DEVICE", "%d", r->device);
    ENV(&e, "TIPC_STATUS_FD", "%d", J->status_pipe[1]);
    ENV(&e, "TIPC_RESTART_COUNT", "%d", J->round);   /* > 0: `tipc train` resumes (resume.h) */
    ENV(&e, "TIPC_RUN_ID", "%s", J->run_id);          /* ... only from this launch's checkpoints */
    ENV(&e, "TORCHELASTIC_RESTART_COUNT", "%d", J->round);
    ENV(&e, "TORCHELASTIC_MAX_RESTARTS", "%d", o->max_restarts);
    ENV(&e, "FLAGS_selected_gpus", "%d", r->device);
    ENV(&e, "PADDLE_TRAINER_ID", "%d", r->rank);
    ENV(&e, "PADDLE_TRAINERS_NUM", "%d", world);
    ENV(&e, "PADDLE_RANK_IN_NODE", "%d", r->local_rank);
    ENV(&e, "PADDLE_CURRENT_ENDPOINT", "%s:%d", o->self_ip, LAUNCH_DEFAULT_PORT + r->local_rank);
    char *eps = xstrdup("");
    for (int n = 0; n < o->nnodes; n++)
        for (int l = 0; l < o->nproc; l++) {
            char *t = xasprintf("%s%s%s:%d", eps, *eps ? "," : "", o->nips ? o->ips[n] : o->self_ip,
                                LAUNCH_DEFAULT_PORT + l);
            free(eps);
            eps = t;
        }
    strv_setenv(&e, xasprintf("PADDLE_TRAINER_ENDPOINTS=%s", eps));
    free(eps);
    return e.v;
}

/* ---- spawning -------------------------------------------------------------------------------- */
/* A restarted rank writes on in the log of its first attempt, after a line saying why. */
static enum tipc_status open_log(struct launch_job *J, struct rank_proc *r, const char *cause)
{
    if (r->log_fd >= 0) {
        char *line = xasprintf("==== tipc launch: restart %d of %d: %s ====\n", J->round, J->o->max_restarts, cause);
        int err = write_all(r->log_fd, line, strlen(line));
        free(line);
        if (err)
            return error_msg(TIPC_EIO, "launch: %s: cannot write %s/workerlog.%d: %s", J->where, J->o->log_dir, r->rank,
                             strerror(err));
        return TIPC_OK;
    }
    char *path = xasprintf("%s/workerlog.%d", J->o->log_dir, r->rank);
    if (J->o->log_append) {   /* --log_overwrite=false: on at the end of our own regular file, else a fresh one */
        int fd = open(path, O_WRONLY | O_APPEND | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
        struct stat sb;
        if (fd >= 0 && fstat(fd, &sb) == 0 && S_ISREG(sb.st_mode) && sb.st_nlink == 1 && sb.st_uid == geteuid()) {
            r->log_fd = fd;
            free(path);
            return TIPC_OK;
        }
        if (fd >= 0) close(fd);
    }
    /* a fresh file, never through what is there: unlinking drops only the name (a planted symlink
     * or hard link), O_EXCL|O_NOFOLLOW refuses one planted again in between */
    if (unlink(path) && errno != ENOENT) {
        enum tipc_status st = error_msg(TIPC_EIO, "launch: %s: cannot replace '%s': %s", J->where, path, strerror(errno));
        free(path);
        return st;
    }
    r->log_fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (r->log_fd < 0) {
        enum tipc_status st = error_msg(TIPC_EIO, "launch: %s: cannot create '%s': %s", J->where, path, strerror(errno));
        error_hint("another process is writing logs into '%s' at the same time; give each job its own --log_dir",
                   J->o->log_dir);
        free(path);
        return st;
    }
    free(path);
    return TIPC_OK;
}

static enum tipc_status spawn_rank(struct launch_job *J, struct rank_proc *r, pid_t *pgid, char **argv, const char *cause)
{
    TRY(open_log(J, r, cause));
    int p[2];
    if (pipe2(p, O_CLOEXEC)) return error_msg(TIPC_EIO, "launch: pipe: %s", strerror(errno));
    char **envp = rank_env(J, r);
    /* one group for the node's ranks; each dies with the launcher (PDEATHSIG), reads nothing */
    struct spawn s = SPAWN_INIT;
    s.argv = argv;
    s.file = J->o->is_subcommand ? "/proc/self/exe" : NULL;
    s.envp = envp;
    s.stdin_null = true;
    s.out_fd = s.err_fd = p[1];
    s.pgid = *pgid;
    s.pdeathsig = SIGKILL;
    s.inherit_fd = J->status_pipe[1]; /* the heartbeat pipe stays open across exec (TIPC_STATUS_FD) */
    int failed = spawn_start(&s);
    int err = errno;
    strv_free(envp);
    close(p[1]);
    if (failed) {
        close(p[0]);
        return error_msg(TIPC_EDIST, "launch: %s: fork: %s", J->where, strerror(err));
    }
    if (!*pgid) *pgid = s.group;
    fcntl(p[0], F_SETFL, O_NONBLOCK);
    r->pid = s.pid;
    r->out_fd = p[0];
    return TIPC_OK;
}

/* ---- output ---------------------------------------------------------------------------------- */
/* One complete line (with its '\n', or the tail at EOF): to the log, and to the console in one
 * write so lines of different ranks never mix. */
static void emit_line(const struct launch_job *J, struct rank_proc *r, const char *s, size_t n)
{
    int err = r->log_fd >= 0 ? write_all(r->log_fd, s, n) : 0;
    if (err) {   /* say it once, keep the rank running: its output still reaches the console if echoed */
        warning_msg("launch: %s: cannot write %s/workerlog.%d: %s; its further output is lost",
                    J->where, J->o->log_dir, r->rank, strerror(err));
        close(r->log_fd);
        r->log_fd = -1;
    }
    if (!(J->o->echo_all || r->local_rank == 0)) return;
    char pre[32];
    int pl = snprintf(pre, sizeof pre, "[%d:%d] ", J->o->node_rank, r->rank);
    char *buf = xmalloc((size_t)pl + n + 1);
    memcpy(buf, pre, (size_t)pl);
    memcpy(buf + pl, s, n);
    size_t len = (size_t)pl + n;
    if (s[n - 1] != '\n') buf[len++] = '\n';
    write_all(1, buf, len);
    free(buf);
}

static void pump_output(const struct launch_job *J, struct rank_proc *r)
{
    char chunk[65536];
    for (;;) {
        ssize_t k = read(r->out_fd, chunk, sizeof chunk);
        if (k < 0 && errno == EINTR) continue;
        if (k < 0) return;   /* EAGAIN */
        if (k == 0) {        /* EOF */
            if (r->nline) emit_line(J, r, r->line, r->nline);
            r->nline = 0;
            close(r->out_fd);
            r->out_fd = -1;
            return;
        }
        r->line = xgrow(r->line, 1, r->nline + (size_t)k, &r->capline);
        memcpy(r->line + r->nline, chunk, (size_t)k);
        r->nline += (size_t)k;
        size_t start = 0;
        for (size_t i = 0; i < r->nline; i++)
            if (r->line[i] == '\n') emit_line(J, r, r->line + start, i + 1 - start), start = i + 1;
        if (r->nline - start > 65536) emit_line(J, r, r->line + start, r->nline - start), start = r->nline;
        memmove(r->line, r->line + start, r->nline - start);
        r->nline -= start;
    }
}

/* ---- the watch loop -------------------------------------------------------------------------- */
struct loop {
    struct launch_job *J;
    struct rank_proc *r;
    int nr, live;
    pid_t pgid;
    int sig_pipe[2];
    enum stop_kind stop;
    int code;                 /* exit code decided when stopping */
    double kill_at;           /* SIGKILL deadline once stopping */
    bool killed;
};

static char *describe_exit(int status)
{
    if (WIFEXITED(status)) return xasprintf("exited with code %d", WEXITSTATUS(status));
    return xasprintf("was killed by signal %d (%s)", WTERMSIG(status), strsignal(WTERMSIG(status)));
}

static void begin_stop(struct loop *L, enum stop_kind kind, int code, int sig)
{
    if (L->stop != STOP_NONE) return;
    L->stop = kind;
    L->code = code;
    if (L->pgid) kill(-L->pgid, sig), kill(-L->pgid, SIGCONT);   /* a stopped rank takes the signal too */
    L->kill_at = now_seconds() + L->J->o->grace_s;
}

static void print_log_tail(const struct launch_job *J, const struct rank_proc *r)
{
    char *path = xasprintf("%s/workerlog.%d", J->o->log_dir, r->rank);
    int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    FILE *f = fd >= 0 ? fdopen(fd, "r") : NULL;
    if (!f && fd >= 0) close(fd);
    char *lines[8] = {0}, buf[512];
    int n = 0;
    while (f && fgets(buf, sizeof buf, f)) {
        free(lines[n % 8]);
        lines[n++ % 8] = xstrdup(buf);
    }
    if (f) fclose(f);
    if (n) fprintf(stderr, "launch: last lines of %s:\n", path);
    for (int i = n > 8 ? n - 8 : 0; i < n; i++) fprintf(stderr, "  [%d:%d] %s", J->o->node_rank, r->rank, lines[i % 8]);
    for (int i = 0; i < 8; i++) free(lines[i]);
    free(path);
}

static void on_rank_exit(struct loop *L, struct rank_proc *r, int status)
{
    r->reaped = true;
    r->status = status;
    L->live--;
    pump_output(L->J, r);
    bool ok = WIFEXITED(status) && WEXITSTATUS(status) == 0;
    if (ok || L->stop != STOP_NONE) return;
    struct launch_job *J = L->J;
    if (WIFEXITED(status) && WEXITSTATUS(status) == TIPC_EDIST) {
        /* a distributed error is usually the echo of a peer's death: give the first failure's
         * notice a moment to arrive, so every node names the rank that really failed */
        char *n = NULL;
        for (double until = now_seconds() + 1.5; !n && now_seconds() < until; usleep(50 * 1000)) n = job_take_notice(J);
        if (n) {
            error_msg(TIPC_EDIST, "launch: %s: stopping local ranks (rank %d exited with code 4 after the job "
                      "failed): %s", J->where, r->rank, n);
            begin_stop(L, STOP_REMOTE_FAIL, TIPC_EDIST, SIGTERM);
            free(n);
            return;
        }
    }
    char *how = describe_exit(status);
    char *msg = xasprintf("rank %d (node %d, %s, local rank %d, pid %d) %s", r->rank, J->o->node_rank,
                          J->o->self_ip, r->local_rank, (int)r->pid, how);
    job_post_failure(J, msg);
    error_msg(TIPC_EFAIL, "launch: %s; stopping every rank of the job", msg);
    print_log_tail(J, r);
    int code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    begin_stop(L, STOP_LOCAL_FAIL, code, SIGTERM);
    free(how), free(msg);
}

static void reap(struct loop *L)
{
    int status;
    pid_t pid;
    while ((pid = waitpid(-1, &status, WNOHANG)) > 0)   /* subreaper: grandchildren land here too */
        for (int i = 0; i < L->nr; i++)
            if (L->r[i].pid == pid && !L->r[i].reaped) on_rank_exit(L, &L->r[i], status);
}

static void handle_events(struct loop *L)
{
    char b[64];
    while (read(L->sig_pipe[0], b, sizeof b) > 0) {}
    reap(L);
    if (interrupted() && L->stop == STOP_NONE) {
        int sig = interrupted();
        char *msg = xasprintf("node %d (%s) was interrupted by %s", L->J->o->node_rank, L->J->o->self_ip,
                              sig == SIGINT ? "SIGINT" : sig == SIGTERM ? "SIGTERM" : "a signal");
        error_msg(TIPC_EINTR, "launch: %s; stopping its ranks and the job", msg);
        job_post_final(L->J, msg);
        free(msg);
        begin_stop(L, STOP_SIGNAL, TIPC_EINTR, sig == SIGHUP ? SIGTERM : sig);
    }
    while (read(L->J->watch_pipe[0], b, sizeof b) > 0) {}
    char *n = L->stop == STOP_NONE ? job_take_notice(L->J) : NULL;
    if (n) {
        error_msg(TIPC_EDIST, "launch: %s: stopping local ranks: %s", L->J->where, n);
        begin_stop(L, STOP_REMOTE_FAIL, TIPC_EDIST, SIGTERM);
        free(n);
    }
    if (L->stop != STOP_NONE && !L->killed && now_seconds() > L->kill_at) {
        kill(-L->pgid, SIGKILL);
        L->killed = true;
    }
}

static void watch(struct loop *L)
{
    struct pollfd *pf = xcalloc((size_t)L->nr + 2, sizeof *pf);
    while (L->live > 0) {
        int n = 0;
        pf[n++] = (struct pollfd){.fd = L->sig_pipe[0], .events = POLLIN};
        pf[n++] = (struct pollfd){.fd = L->J->watch_pipe[0], .events = POLLIN};
        for (int i = 0; i < L->nr; i++)
            if (L->r[i].out_fd >= 0) pf[n++] = (struct pollfd){.fd = L->r[i].out_fd, .events = POLLIN};
        poll(pf, (nfds_t)n, 200);
        for (int i = 0; i < L->nr; i++)
            if (L->r[i].out_fd >= 0) pump_output(L->J, &L->r[i]);
        watchdog_read_beats(L->J, L->r, L->nr);
        handle_events(L);
    }
    free(pf);
    /* leftovers (a rank's background children, in the group or not, even a setsid daemon: the
     * launcher is their subreaper): no orphans */
    spawn_stop_tree(L->pgid, SIGKILL, 0, -1);
}

static void install_signals(int wfd)
{
    interrupt_init(INTERRUPT_RESTART | INTERRUPT_WAKE_ON_CHILD, wfd);
    signal(SIGPIPE, SIG_IGN);
    signal(SIGXFSZ, SIG_IGN);   /* a full log file is an error to report, not a reason to die */
}

static enum tipc_status spawn_all(struct loop *L, const char *cause)
{
    const struct launch_opts *o = L->J->o;
    char **argv = xcalloc((size_t)o->ncmd + 2, sizeof *argv);
    int k = 0;
    if (o->is_subcommand) argv[k++] = "tipc";
    for (int i = 0; i < o->ncmd; i++) argv[k++] = o->cmd[i];
    enum tipc_status st = TIPC_OK;
    for (int i = 0; i < L->nr && !st; i++) {
        struct rank_proc *r = &L->r[i];
        int log_fd = L->J->round > 0 ? r->log_fd : -1;   /* kept across restarts */
        if (L->J->round > 0 && r->out_fd >= 0) close(r->out_fd);   /* the last attempt's, if no EOF came */
        free(r->line);
        *r = (struct rank_proc){.rank = o->node_rank * o->nproc + i, .local_rank = i, .device = o->gpus[i],
                                .out_fd = -1, .log_fd = log_fd};
        st = spawn_rank(L->J, r, &L->pgid, argv, cause);
        if (!st) L->live++;
    }
    free(argv);
    return st;
}

int launch_run(struct launch_opts *o)
{
    struct launch_job J = {.o = o};
    struct loop L = {.J = &J, .nr = o->nproc};
    snprintf(J.where, sizeof J.where, "node %d", o->node_rank);
    tipc_set_msg_prefix("");
    if (mkdir_p(o->log_dir) != TIPC_OK) {
        error_hint("launch: --log_dir '%s' must be a directory this user can create and write", o->log_dir);
        return TIPC_EIO;
    }
    if (pipe2(L.sig_pipe, O_CLOEXEC | O_NONBLOCK) || pipe2(J.watch_pipe, O_CLOEXEC | O_NONBLOCK) ||
        pipe2(J.status_pipe, O_CLOEXEC | O_NONBLOCK))
        return error_msg(TIPC_EIO, "launch: pipe: %s", strerror(errno));
    pthread_mutex_init(&J.mu, NULL);
    install_signals(L.sig_pipe[1]);
    spawn_become_subreaper();
    enum tipc_status st = job_join(&J);
    int code = st;
    if (!st && interrupted()) code = st = TIPC_EINTR;
    if (!st) {
        fprintf(stderr, "launch: node %d/%d (%s): %d ranks (%d..%d of %d), master %s:%d, logs %s/workerlog.N, job %s\n",
                o->node_rank, o->nnodes, o->self_ip, o->nproc, o->node_rank * o->nproc,
                o->node_rank * o->nproc + o->nproc - 1, o->nnodes * o->nproc, o->master_host, J.port, o->log_dir,
                o->job_id);
        L.r = xcalloc((size_t)L.nr, sizeof *L.r);
        char *cause = NULL;   /* why this round runs: the previous round's failure */
        for (;;) {
            L.pgid = 0, L.live = 0, L.stop = STOP_NONE, L.code = 0, L.killed = false;
            job_start_watcher(&J);
            st = spawn_all(&L, cause);
            if (st) {
                job_post_failure(&J, "a node could not start its ranks");
                begin_stop(&L, STOP_LOCAL_FAIL, st, SIGTERM);
            }
            watch(&L);
            code = L.stop != STOP_NONE ? L.code : 0;
            enum tipc_status fin = L.stop == STOP_NONE ? job_wait_done(&J) : TIPC_EDIST;
            if (!code && fin) code = fin;
            free(cause);
            cause = code ? job_restart_cause(&J) : NULL;
            if (!cause) break;
            launch_note_restart(o, J.round + 1, cause);
            if ((st = job_next_round(&J, cause)) != TIPC_OK) {
                code = st;
                char *msg = xasprintf("node %d (%s) could not re-join for restart %d", o->node_rank, o->self_ip, J.round);
                job_post_final(&J, msg);
                free(msg);
                break;
            }
        }
        free(cause);
        job_leave(&J, code == 0);
    } else {
        /* tell the others, if this node had joined (its view is in the store): a node refused at the
         * door (another job's, a second launch of a node) writes nothing into that job's store */
        char *msg = st == TIPC_EINTR ? xasprintf("node %d (%s) was interrupted while joining", o->node_rank, o->self_ip)
                                     : xasprintf("node %d (%s) failed to join (see its launcher's output)",
                                                 o->node_rank, o->self_ip);
        if (st == TIPC_EINTR) error_msg(st, "launch: %s", msg);
        if (J.cl.base && J.published) job_post_failure(&J, msg);
        free(msg);
        job_abort_join(&J);
    }
    for (int i = 0; L.r && i < L.nr; i++) {
        if (L.r[i].out_fd >= 0) close(L.r[i].out_fd);
        if (L.r[i].log_fd >= 0) close(L.r[i].log_fd);
        free(L.r[i].line);
    }
    free(L.r);
    for (int i = 0; J.peer_ips && i < o->nnodes; i++) free(J.peer_ips[i]);
    free(J.peer_ips);
    rdzv_client_free(&J.cl);
    free(J.notice);
    close(L.sig_pipe[0]), close(L.sig_pipe[1]), close(J.watch_pipe[0]), close(J.watch_pipe[1]);
    close(J.status_pipe[0]), close(J.status_pipe[1]);
    free(J.beats);
    signal(SIGCHLD, SIG_DFL);
    fflush(stdout);
    return code;
}
