/* comm_watch.c: the ranks watch each other through the job's store (comm_watch.h). */
#include "comm_watch.h"

#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "comm_verdict.h"
#include "../../core/check.h"
#include "../../core/time.h"
#include "../../core/banned.h"

#define BLAME_S (COMM_WATCH_TICK_S * 2.4)   /* how long a rank whose collective failed watches the beats */

struct peer { unsigned long count; double changed; struct comm_beat b; char host[64]; };

struct comm_watch {
    struct comm_store *s;        /* the watch thread's own connection */
    int rank, world, node;
    char where[64], host[64];
    unsigned long count;
    double w;                    /* the job watchdog (s); 0: off */
    struct peer *peers;          /* the judge's view (rank 0: all; rank 1: rank 0) */
    atomic_int posted;           /* this rank posted the notice: its main thread reports it */
};

struct comm_watch *comm_watch_open(const struct comm_store *s, const struct rank_env *e, const char *where)
{
    struct comm_watch *w = xcalloc(1, sizeof *w);
    if (comm_store_dup(&w->s, s)) return free(w), NULL;
    int world = e->world;
    w->rank = e->rank, w->world = world, w->node = e->node > 0 ? e->node : 0;
    snprintf(w->where, sizeof w->where, "%s", where);
    gethostname(w->host, sizeof w->host - 1);
    w->w = e->watchdog_s;
    w->peers = xcalloc((size_t)world, sizeof *w->peers);
    double now = now_seconds();
    for (int r = 0; r < world; r++) w->peers[r].changed = now, w->peers[r].b.rank = r, w->peers[r].b.node = -1;
    return w;
}

void comm_watch_close(struct comm_watch *w)
{
    if (!w) return;
    comm_store_close(w->s);
    free(w->peers);
    free(w);
}

/* The job ends: say why (the notice, whoever posted it) and exit 4 (from the watch thread). */
static _Noreturn void stop_job(struct comm_watch *w, const char *why)
{
    fprintf(stderr, "tipc: error: %s: the job stops: %s\n", w->where, why);
    fflush(stdout);
    _exit(TIPC_EDIST);
}

void comm_watch_post(struct comm_watch *w, const char *msg)
{
    if (!w) return;
    bool created = false;
    atomic_store(&w->posted, 1);
    comm_store_create(w->s, "fail", msg, strlen(msg), &created);
}

/* Read rank r's beat into peers[r]; the judge's clock ages it from when its count last changed.
 * false: not there (yet). */
static bool read_beat(struct comm_store *s, struct peer *p, int r, enum tipc_status *st)
{
    char k[32], *v = NULL, op[24] = "-";
    bool found = false;
    snprintf(k, sizeof k, "beat/%d", r);
    *st = comm_store_get(s, k, 0, true, &found, &v, NULL);
    if (*st || !found) return free(v), false;
    unsigned long count = 0, seq = 0;
    int pid = 0, node = -1;
    long step = 0;
    double secs = 0;
    char host[64] = "?";
    if (sscanf(v, "%lu %d %lu %23s %ld %lf %d %63s", &count, &pid, &seq, op, &step, &secs, &node, host) == 8) {
        double now = now_seconds();
        if (count != p->count) p->count = count, p->changed = now;
        p->b = (struct comm_beat){.rank = r, .node = node, .pid = pid, .seq = seq, .step = step, .secs = secs,
                                  .age = now - p->changed, .state = '?'};
        snprintf(p->b.op, sizeof p->b.op, "%s", op);
        snprintf(p->host, sizeof p->host, "%s", host);
    }
    free(v);
    return true;
}

/* Rank 0 judges every rank, rank 1 judges rank 0 (who else would see rank 0 stop?). */
static void judge(struct comm_watch *w)
{
    if (w->w <= 0 || w->world < 2 || w->rank > 1) return;
    struct comm_beat *b = xcalloc((size_t)w->world, sizeof *b);
    int n = 0;
    enum tipc_status st = TIPC_OK;
    for (int r = 0; r < w->world && !st; r++) {
        if (w->rank == 1 && r != 0) continue;
        if (read_beat(w->s, &w->peers[r], r, &st)) b[n++] = w->peers[r].b;
    }
    char *v = st ? NULL : comm_verdict(b, n, w->rank == 1 ? 1 : w->world, w->w);
    if (v && w->rank == 1 && !strstr(v, "sent no heartbeat")) free(v), v = NULL;   /* rank 1 only sees rank 0 stop */
    free(b);
    if (!v) return;
    char *msg = xasprintf("%s (judged by %s)", v, w->where);
    comm_watch_post(w, msg);
    stop_job(w, msg);
}

void comm_watch_tick(struct comm_watch *w, unsigned long seq, const char *op, long step, double secs)
{
    char beat[256], *notice = NULL;
    snprintf(beat, sizeof beat, "%lu %d %lu %s %ld %.1f %d %s", ++w->count, (int)getpid(), seq, op ? op : "-", step,
             secs, w->node, w->host);
    bool found = false;
    char k[32];
    snprintf(k, sizeof k, "beat/%d", w->rank);
    enum tipc_status st = comm_store_set(w->s, k, beat, strlen(beat));
    if (!st) st = comm_store_get(w->s, "fail", 0, true, &found, &notice, NULL);
    if (st)   /* only a store that is gone gets here: a rank that finished stopped its watch first */
        stop_job(w, "the job's store is gone: rank 0 (which serves it under this launcher) or the launcher's agent "
                    "has died");
    if (found) {
        if (atomic_load(&w->posted)) { free(notice); return; }   /* the main thread is reporting it */
        stop_job(w, notice);
    }
    free(notice);
    judge(w);
}

/* Which ranks' beats did not move in BLAME_S: "rank 3 (pid 1234 on n2), rank 5 (...)". */
static char *silent_ranks(struct comm_watch *w, struct comm_store *s, bool *store_gone)
{
    unsigned long *before = xcalloc((size_t)w->world, sizeof *before);
    enum tipc_status st = TIPC_OK;
    struct peer p = {0};
    for (int r = 0; r < w->world && !st; r++)
        if (r != w->rank && read_beat(s, &p, r, &st)) before[r] = p.count;
    if (!st) usleep((useconds_t)(BLAME_S * 1e6));
    char *out = xstrdup("");
    for (int r = 0; r < w->world && !st; r++) {
        if (r == w->rank) continue;
        memset(&p, 0, sizeof p);
        if (!read_beat(s, &p, r, &st) || p.count != before[r]) continue;
        char *t = xasprintf("%s%srank %d (node %d, pid %d on %s, last in %s #%lu at step %ld)", out, *out ? ", " : "",
                            r, p.b.node, p.b.pid, p.host, p.b.op, p.b.seq, p.b.step);
        free(out);
        out = t;
    }
    *store_gone = st != TIPC_OK;
    free(before);
    return out;
}

void comm_watch_blame(struct comm_watch *w, struct comm_store *s, const char *what)
{
    if (!w) return;
    bool gone = false;
    char *silent = silent_ranks(w, s, &gone), *msg;
    if (gone) msg = xasprintf("%s: %s failed, and the job's store is gone (rank 0, which serves it, or the "
                              "launcher's agent has died)", w->where, what);
    else if (*silent) msg = xasprintf("%s: %s failed: %s stopped sending heartbeats (gone, or stopped)", w->where,
                                      what, silent);
    else msg = xasprintf("%s: %s failed (every other rank still sends heartbeats)", w->where, what);
    free(silent);
    bool created = false;
    atomic_store(&w->posted, 1);
    if (!gone) comm_store_create(s, "fail", msg, strlen(msg), &created);
    char *stands = NULL;
    bool found = false;
    if (!gone && !created && !comm_store_get(s, "fail", 0, true, &found, &stands, NULL) && found)
        fprintf(stderr, "tipc: error: the job stops: %s\n", stands);
    else fprintf(stderr, "tipc: error: %s\n", msg);
    free(stands);
    free(msg);
}
