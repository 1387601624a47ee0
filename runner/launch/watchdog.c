/* watchdog.c: which rank holds the job up, and in what. Every rank's comm watchdog thread
 * sends its launcher a heartbeat each second (TIPC_STATUS_FD: rank, collectives issued, the one it
 * is in, step, seconds in it or since the last). Each launcher publishes its ranks' last beats in
 * alive/N; node 0 collects them here and judges them with comm_verdict's rule (engine/dist/comm_verdict.h,
 * docs/distributed.md "Stuck ranks"). */
#include "internal.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../../core/check.h"
#include "../../core/time.h"
#include "../../engine/dist/comm_verdict.h"
#include "../../core/banned.h"

/* ---- this node's heartbeats ---------------------------------------------------------------------- */
static char proc_state(pid_t pid)
{
    char path[64], buf[256];
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    ssize_t n = fd >= 0 ? read(fd, buf, sizeof buf - 1) : -1;
    if (fd >= 0) close(fd);
    if (n <= 0) return '?';
    buf[n] = 0;
    const char *p = strrchr(buf, ')');   /* "pid (comm) S ...": comm may hold spaces and parentheses */
    return p && p[1] == ' ' && p[2] ? p[2] : '?';
}

/* Read the ranks' heartbeat lines ("hb RANK SEQ OP STEP SECS"; OP "done" once a rank left the
 * collectives) and publish this node's last beats for alive/N. */
void watchdog_read_beats(struct launch_job *J, struct rank_proc *ranks, int nr)
{
    char buf[4096];
    ssize_t k;
    while ((k = read(J->status_pipe[0], buf, sizeof buf - 1)) > 0) {
        buf[k] = 0;
        for (char *line = buf, *nl; line && *line; line = nl ? nl + 1 : NULL) {
            nl = strchr(line, '\n');
            if (nl) *nl = 0;
            int rank;
            unsigned long seq;
            char op[24];
            long step;
            double secs;
            if (sscanf(line, "hb %d %lu %23s %ld %lf", &rank, &seq, op, &step, &secs) != 5) continue;
            for (int i = 0; i < nr; i++) {
                struct rank_proc *r = &ranks[i];
                if (r->rank != rank) continue;
                r->hb_at = strcmp(op, "done") ? now_seconds() : 0;
                r->hb_seq = seq, r->hb_step = step, r->hb_secs = secs;
                snprintf(r->hb_op, sizeof r->hb_op, "%s", op);
            }
        }
    }
    char *s = xstrdup("");
    double now = now_seconds();
    for (int i = 0; i < nr; i++) {
        const struct rank_proc *r = &ranks[i];
        if (r->reaped || r->hb_at <= 0) continue;
        char *t = xasprintf("%s%s%d,%d,%lu,%s,%ld,%.1f,%.1f,%c", s, *s ? " " : "", r->rank, (int)r->pid, r->hb_seq,
                            r->hb_op, r->hb_step, r->hb_secs, now - r->hb_at, proc_state(r->pid));
        free(s);
        s = t;
    }
    pthread_mutex_lock(&J->mu);
    free(J->beats);
    J->beats = s;
    pthread_mutex_unlock(&J->mu);
}

/* ---- node 0: the verdict ----------------------------------------------------------------------- */
/* "rank,pid,seq,op,step,secs,age,state" items separated by spaces; node n's. */
static int parse_beats(const char *val, int node, struct comm_beat *b, int max)
{
    int n = 0;
    for (const char *p = val; p && *p && n < max;) {
        struct comm_beat x = {.node = node};
        if (sscanf(p, "%d,%d,%lu,%23[^,],%ld,%lf,%lf,%c", &x.rank, &x.pid, &x.seq, x.op, &x.step, &x.secs, &x.age,
                   &x.state) == 8)
            b[n++] = x;
        p = strchr(p, ' ');
        if (p) p++;
    }
    return n;
}

/* The rule and its words are comm_verdict's (engine/dist/comm_verdict.h): the ranks of other
 * launchers judge each other with it too. */
char *watchdog_verdict(const struct launch_opts *o, char **alive, double w)
{
    int world = o->nnodes * o->nproc, n = 0;
    struct comm_beat *b = xcalloc((size_t)world + 1, sizeof *b);
    for (int i = 0; i < o->nnodes; i++)
        if (alive[i]) n += parse_beats(alive[i], i, b + n, world - n);
    char *msg = comm_verdict(b, n, world, w);
    free(b);
    return msg;
}
