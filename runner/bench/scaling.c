/* scaling.c: `tipc bench scaling`: one `tipc launch ... bench train` run per rank count,
 * its ranks' figures read back into the table (see scaling.h). */
#include "scaling.h"

#include <errno.h>
#include <sched.h>
#include <jansson.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "netns.h"
#include "../../engine/dist/comm.h"
#include "../../core/check.h"
#include "../../core/fs.h"
#include "../../core/interrupt.h"
#include "../../core/parse.h"
#include "../../core/spawn.h"
#include "../../core/time.h"
#include "../../core/banned.h"

#define GRACE_S 5.0

static enum tipc_status parse_ranks(const char *s, int *v, int *n, int max_rank)
{
    *n = 0;
    char *copy = xstrdup(s), *save = NULL;
    enum tipc_status st = TIPC_OK;
    for (char *t = strtok_r(copy, ",", &save); t && st == TIPC_OK; t = strtok_r(NULL, ",", &save)) {
        int k;
        if (*n >= SCALING_MAX_RUNS || !parse_int(t, 1, max_rank, &k) || (*n && k <= v[*n - 1]))
            st = error_msg(TIPC_EUSAGE, "bench scaling: --ranks '%s': want up to %d increasing counts in 1..%d, "
                                        "e.g. 1,2,4,8", s, SCALING_MAX_RUNS, max_rank);
        else
            v[(*n)++] = k;
    }
    free(copy);
    if (st == TIPC_OK && !*n) st = error_msg(TIPC_EUSAGE, "bench scaling: --ranks is empty");
    return st;
}

/* Wait for every launcher; stop them all on a signal or at the timeout. The status of the first
 * that failed (128+N for a signal), 124 at the timeout, 0 when all succeeded. */
static int wait_all(struct spawn *sp, int n, double timeout_s)
{
    int rc = 0, left = n;
    bool *done = xcalloc((size_t)n, sizeof *done);
    double t0 = now_seconds(), stop_at = 0;
    bool timed_out = false;
    while (left) {
        for (int i = 0; i < n; i++) {
            int status;
            if (done[i] || waitpid(sp[i].pid, &status, WNOHANG) != sp[i].pid) continue;
            done[i] = true, left--, interrupt_unforward(sp[i].pid);
            int code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
            if (code && !rc) rc = code;
        }
        if (!stop_at && (interrupted() || now_seconds() - t0 > timeout_s)) {
            timed_out = !interrupted();
            stop_at = now_seconds();
            for (int i = 0; i < n; i++)
                if (!done[i]) kill(-sp[i].pid, SIGTERM);
        }
        if (stop_at && now_seconds() - stop_at > GRACE_S)
            for (int i = 0; i < n; i++)
                if (!done[i]) kill(-sp[i].pid, SIGKILL);
        nanosleep(&(struct timespec){0, 20 * 1000000L}, NULL);
    }
    free(done);
    spawn_stop_tree(0, SIGTERM, GRACE_S, -1); /* whatever a launcher left behind */
    if (interrupted()) return 128 + interrupted();
    return timed_out ? 124 : rc;
}

/* The `bench train` words every rank runs. */
static void rank_args(const struct scaling_opts *o, const char *dir, char **w, int *k)
{
    w[(*k)++] = xstrdup("bench");
    w[(*k)++] = xstrdup("train");
    w[(*k)++] = xasprintf("--batch-size=%d", o->batch);
    w[(*k)++] = xasprintf("--resolution=%d", o->res);
    w[(*k)++] = xasprintf("--steps=%d", o->steps);
    w[(*k)++] = xasprintf("--warmup=%d", o->warmup);
    w[(*k)++] = xasprintf("--threads=%d", o->threads);
    w[(*k)++] = xasprintf("--num-classes=%d", o->classes);
    w[(*k)++] = xasprintf("--bucket-mb=%d", o->bucket_mb);
    w[(*k)++] = xasprintf("--overlap=%s", o->overlap ? "on" : "off");
    w[(*k)++] = xasprintf("--comm-shm=%s", o->comm_shm == COMM_SHM_OFF ? "off"
                                                   : o->comm_shm == COMM_SHM_ON ? "on" : "auto");
    w[(*k)++] = xasprintf("--result-dir=%s", dir);
}

struct run {
    const struct scaling_opts *o;
    const char *self, *mark;  /* our binary; spawn_guard_start's mark */
    char token[40];           /* the job's secret (netns: nodes "on other hosts" need one) */
    struct netns_star *star;  /* NULL: loopback */
};

/* Start N ranks: one launcher (loopback), or one per namespace. Returns the launchers' status. */
static int run_ranks(const struct run *R, int N, const char *dir)
{
    int nl = R->star ? N : 1;
    struct spawn *sp = xcalloc((size_t)nl, sizeof *sp);
    char *ips = NULL;
    if (R->star)
        for (int i = 0; i < N; i++) {
            char a[40];
            netns_addr(i, a, sizeof a);
            char *t = xasprintf("%s%s%s", ips ? ips : "--ips=", ips ? "," : "", a);
            free(ips);
            ips = t;
        }
    char *token = xasprintf("TIPC_JOB_TOKEN=%s", R->token);
    const char *env_set[] = {token, R->mark, NULL};
    const char *env_unset[] = {"TIPC_MASTER", "TIPC_JOB_ID", "TIPC_LOG_DIR", "RANK", "WORLD_SIZE", NULL};
    int rc = 0;
    for (int i = 0; i < nl && !rc; i++) {
        char *w[40];
        int k = 0;
        if (R->star) {
            w[k++] = xstrdup("ip"), w[k++] = xstrdup("netns"), w[k++] = xstrdup("exec");
            w[k++] = xstrdup(R->star->node[i]);
        }
        w[k++] = xstrdup(R->self);
        w[k++] = xstrdup("launch");
        w[k++] = R->star ? xstrdup(ips) : xasprintf("--nproc_per_node=%d", N);
        w[k++] = xasprintf("--job_id=scaling%ldn%d", (long)getpid(), N);
        w[k++] = xasprintf("--log_dir=%s/log", dir);
        rank_args(R->o, dir, w, &k);
        w[k] = NULL;
        char *out = R->star ? xasprintf("%s/node%d.out", dir, i) : xasprintf("%s/launch.out", dir);
        struct redirect rd[2] = {{1, REDIR_TRUNC, out, 0}, {2, REDIR_DUP, NULL, 1}};
        sp[i] = (struct spawn)SPAWN_INIT;
        sp[i].argv = w;
        sp[i].env_set = env_set;
        sp[i].env_unset = env_unset;
        sp[i].redir = rd;
        sp[i].nredir = 2;
        sp[i].stdin_null = true;
        sp[i].pdeathsig = SIGTERM;
        if (spawn_start(&sp[i])) {
            rc = error_msg(TIPC_EIO, "bench scaling: cannot start %s: %s", w[0], strerror(errno));
            nl = i;
        } else {
            interrupt_forward(sp[i].pid); /* each launcher stops its ranks itself */
        }
        for (int j = 0; j < k; j++) free(w[j]);
        free(out);
    }
    int wrc = wait_all(sp, nl, R->o->timeout_s);
    free(sp);
    free(ips);
    free(token);
    return rc ? rc : wrc;
}

/* Read the N ranks' figures into row. */
static enum tipc_status read_row(const struct scaling_opts *o, int N, const char *dir, struct scaling_row *row)
{
    double slowest = 0, share = 0;
    for (int r = 0; r < N; r++) {
        char *path = xasprintf("%s/rank%d.json", dir, r);
        json_error_t je;
        json_t *j = json_load_file(path, 0, &je);
        double sec = 0, comm = 0, med = 0;
        int world = 0;
        const char *via = "?";
        if (!j || json_unpack(j, "{s:i, s:F, s:F, s:F, s?s}", "world", &world, "seconds", &sec, "comm_seconds", &comm,
                              "median_step_seconds", &med, "transport", &via) || world != N || !(sec > 0)) {
            json_decref(j);
            enum tipc_status st = error_msg(TIPC_EDIST, "bench scaling: %d ranks: %s is missing or not this run's (%s)",
                                            N, path, j ? "fields" : je.text);
            free(path);
            return st;
        }
        if (r == 0) snprintf(row->transport, sizeof row->transport, "%s", via);
        json_decref(j);
        free(path);
        if (sec > slowest) slowest = sec;
        share += comm / sec / N;
        if (r == 0) row->median_step_s = med;
    }
    row->ranks = N;
    row->global_ips = (double)N * o->batch * o->steps / slowest;
    row->per_rank_ips = row->global_ips / N;
    row->comm_share = share;
    return TIPC_OK;
}

static void stamp(struct scaling_table *t)
{
    time_t now = time(NULL);
    struct tm tm;
    gmtime_r(&now, &tm);
    strftime(t->when, sizeof t->when, "%Y-%m-%dT%H:%M:%SZ", &tm);
    if (getloadavg(t->load, 3) != 3) t->load[0] = t->load[1] = t->load[2] = -1;
}

static enum tipc_status run_all(struct run *R, struct scaling_table *t, const int *ranks, int nr)
{
    const struct scaling_opts *o = R->o;
    for (int i = 0; i < nr; i++) {
        int N = ranks[i];
        char *dir = xasprintf("%s/n%d", o->output, N);
        enum tipc_status st = mkdir_p(dir);
        for (int r = 0; r < N && st == TIPC_OK; r++) { /* a result of an earlier run must not count */
            char *old = xasprintf("%s/rank%d.json", dir, r);
            if (unlink(old) && errno != ENOENT) st = error_msg(TIPC_EIO, "bench scaling: cannot remove %s: %s", old, strerror(errno));
            free(old);
        }
        if (st != TIPC_OK) {
            free(dir);
            return st;
        }
        fprintf(stderr, "bench scaling: %d rank%s (%s), logs in %s\n", N, N > 1 ? "s" : "", t->network, dir);
        double t0 = now_seconds();
        int rc = run_ranks(R, N, dir);
        if (rc) {
            if (interrupted()) st = error_msg(TIPC_EINTR, "bench scaling: interrupted during the %d-rank run", N);
            else
                st = error_msg(rc == 124 ? TIPC_EDIST : rc == TIPC_EIO ? TIPC_EIO : TIPC_EDIST,
                               "bench scaling: the %d-rank run %s (status %d); its launcher output: %s/%s, ranks' "
                               "logs: %s/log/workerlog.*", N, rc == 124 ? "timed out (--timeout)" : "failed", rc, dir,
                               R->star ? "node*.out" : "launch.out", dir);
        }
        if (st == TIPC_OK) st = read_row(o, N, dir, &t->row[t->n]);
        free(dir);
        if (st != TIPC_OK) return st;
        struct scaling_row *row = &t->row[t->n++];
        row->speedup = row->global_ips / t->row[0].global_ips;
        row->efficiency = row->speedup / ((double)N / t->row[0].ranks);
        fprintf(stderr, "bench scaling: %d rank%s: %.1f img/s in all, %.1f per rank, %.0f%% exposed communication "
                        "(%.0f s)\n", N, N > 1 ? "s" : "", row->global_ips, row->per_rank_ips, 100 * row->comm_share,
                now_seconds() - t0);
    }
    return TIPC_OK;
}

enum tipc_status bench_scaling(const struct scaling_opts *o)
{
    int ranks[SCALING_MAX_RUNS], nr;
    TRY(parse_ranks(o->ranks, ranks, &nr, o->netns ? NETNS_MAX_NODES : SCALING_MAX_RANKS));
    struct netns_link link = {o->link_delay, o->link_rate};
    if (!o->netns && (o->link_delay || o->link_rate))
        return error_msg(TIPC_EUSAGE, "bench scaling: --link-delay and --link-rate shape the links between "
                                      "namespaces: add --netns");
    TRY(netns_check_link(&link));
    TRY(mkdir_p(o->output));
    struct scaling_table t = {.o = o};
    stamp(&t);
    cpu_set_t cs;
    t.cpus = sched_getaffinity(0, sizeof cs, &cs) == 0 ? CPU_COUNT(&cs) : (int)sysconf(_SC_NPROCESSORS_ONLN);
    if (o->netns)
        snprintf(t.network, sizeof t.network, "network namespaces on a bridge, links: delay %s, rate %s",
                 o->link_delay ? o->link_delay : "none", o->link_rate ? o->link_rate : "unlimited");
    else
        snprintf(t.network, sizeof t.network, "loopback");
    struct run R = {.o = o, .self = self_exe_path()};
    if (!R.self) return error_msg(TIPC_EINTERNAL, "bench scaling: cannot find this executable (/proc/self/exe)");
    unsigned char rnd[16];
    if (getrandom(rnd, sizeof rnd, 0) != (ssize_t)sizeof rnd) {
        free((char *)R.self);
        return error_msg(TIPC_EIO, "bench scaling: getrandom: %s", strerror(errno));
    }
    for (int i = 0; i < 16; i++) snprintf(R.token + 2 * i, 3, "%02x", rnd[i]);
    interrupt_init(0, -1);
    spawn_become_subreaper();
    R.mark = spawn_guard_start(); /* if this process is SIGKILLed, its ranks still go */
    struct netns_star star;
    enum tipc_status st = TIPC_OK;
    if (o->netns) {
        netns_sweep_stale();
        st = netns_star_up(&star, ranks[nr - 1], &link);
        if (st == TIPC_OK) R.star = &star;
    }
    if (st == TIPC_OK && interrupted()) st = TIPC_EINTR;
    if (st == TIPC_OK) st = run_all(&R, &t, ranks, nr);
    if (R.star) netns_star_down(R.star);
    if (t.n) {
        scaling_print(&t);
        enum tipc_status wst = scaling_write(&t);
        if (st == TIPC_OK) st = wst;
    }
    free((char *)R.self);
    return st;
}
