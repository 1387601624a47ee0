/* watchdog.c: which rank holds the job up, and in what. Every rank's comm watchdog thread
 * sends its launcher a heartbeat each second (TIPC_STATUS_FD: rank, collectives issued, the one it
 * is in, step, seconds in it or since the last). Each launcher publishes its ranks' last beats in
 * alive/N; node 0 judges them here (docs/distributed.md "Stuck ranks"):
 *   - a rank silent for W s (its whole process stopped: SIGSTOP, a debugger, swapped out) is stuck;
 *   - else, when ranks have waited W s in one collective, the ranks not in it (still computing: a
 *     hung GPU kernel, a deadlock, a step slower than W) are stuck; if every rank is in it, the
 *     collective itself (the transport) is.
 * The verdict names the rank, its node and pid, what it was last doing, and who waits in what. */
#include "internal.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../../core/check.h"
#include "../../core/time.h"
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
struct beat { int rank, node, pid; unsigned long seq; char op[24]; long step; double secs, age; char state; };

static const char *state_text(char s)
{
    switch (s) {
    case 'T': return "stopped (SIGSTOP, or a debugger)";
    case 't': return "stopped by a debugger";
    case 'D': return "in uninterruptible sleep (I/O or a driver)";
    case 'Z': return "a zombie";
    case 'R': case 'S': return "running";
    default: return "state unknown";
    }
}

/* "rank,pid,seq,op,step,secs,age,state" items separated by spaces; node n's. */
static int parse_beats(const char *val, int node, struct beat *b, int max)
{
    int n = 0;
    for (const char *p = val; p && *p && n < max;) {
        struct beat x = {.node = node};
        if (sscanf(p, "%d,%d,%lu,%23[^,],%ld,%lf,%lf,%c", &x.rank, &x.pid, &x.seq, x.op, &x.step, &x.secs, &x.age,
                   &x.state) == 8)
            b[n++] = x;
        p = strchr(p, ' ');
        if (p) p++;
    }
    return n;
}

/* What the rank was last doing, from its last beat. */
static char *doing(const struct beat *b)
{
    if (strcmp(b->op, "-"))
        return xasprintf("last seen in %s #%lu at step %ld, %.0f s into it", b->op, b->seq, b->step, b->secs + b->age);
    return xasprintf("last seen computing at step %ld, %.0f s after its collective #%lu", b->step, b->secs + b->age,
                     b->seq);
}

static char *append(char *s, const char *sep, char *t /* owned */)
{
    char *r = xasprintf("%s%s%s", s, *s ? sep : "", t);
    free(s), free(t);
    return r;
}

char *watchdog_verdict(const struct launch_opts *o, char **alive, double w)
{
    int world = o->nnodes * o->nproc, n = 0;
    struct beat *b = xcalloc((size_t)world + 1, sizeof *b);
    for (int i = 0; i < o->nnodes; i++)
        if (alive[i]) n += parse_beats(alive[i], i, b + n, world - n);
    char *stuck = xstrdup(""), *waiting = xstrdup(""), *msg = NULL;
    for (int i = 0; i < n; i++)
        if (b[i].age > w) {
            char *d = doing(&b[i]);
            stuck = append(stuck, "; ", xasprintf("rank %d (node %d, pid %d) sent no heartbeat for %.0f s, process %s, %s",
                                                  b[i].rank, b[i].node, b[i].pid, b[i].age, state_text(b[i].state), d));
            free(d);
        }
    unsigned long top = 0;
    int nwait = 0;
    for (int i = 0; i < n; i++)
        if (b[i].age <= w && strcmp(b[i].op, "-") && b[i].secs + b[i].age > w) {
            nwait++;
            if (b[i].seq > top) top = b[i].seq;
        }
    for (int i = 0; i < n; i++)   /* who waits, and how long, whatever the verdict */
        if (b[i].age <= w && strcmp(b[i].op, "-"))
            waiting = append(waiting, ", ", xasprintf("rank %d in %s #%lu (step %ld) for %.0f s", b[i].rank, b[i].op,
                                                      b[i].seq, b[i].step, b[i].secs + b[i].age));
    if (!*stuck && nwait) {   /* nobody silent: who has not reached the collective the others wait in? */
        for (int i = 0; i < n; i++) {
            bool in_it = strcmp(b[i].op, "-") && b[i].seq == top;
            if (in_it || b[i].age > w) continue;
            char *d = doing(&b[i]);
            stuck = append(stuck, "; ", xasprintf("rank %d (node %d, pid %d) has not reached collective #%lu: "
                                                  "process %s, %s", b[i].rank, b[i].node, b[i].pid, top,
                                                  state_text(b[i].state), d));
            free(d);
        }
        if (n < world) stuck = append(stuck, "; ", xasprintf("%d rank(s) never reported a heartbeat", world - n));
    }
    if (*stuck)
        msg = xasprintf("watchdog (%.0f s): stuck: %s%s%s", w, stuck, *waiting ? "; waiting: " : "", waiting);
    else if (nwait && nwait == world)
        msg = xasprintf("watchdog (%.0f s): every rank waits in the same collective, none is missing from it: the "
                        "transport between them is stuck; waiting: %s", w, waiting);
    free(stuck), free(waiting), free(b);
    return msg;
}
