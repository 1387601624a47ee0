/* comm_store.c: the job's store as the ranks see it (comm_store.h): tipc launch's HTTP store or a
 * c10d TCPStore (torchrun's, or one rank 0 serves), and the join that checks every rank came. */
#include "comm_store.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../core/check.h"
#include "../../core/kv.h"
#include "../../core/tcpstore.h"
#include "../../core/time.h"
#include "../../core/banned.h"

#define JOIN_TICK_S 10.0     /* how often a waiting rank says whom it waits for */
#define LEAVE_WAIT_S 30.0    /* how long rank 0 keeps serving for ranks that have not left */

struct comm_store {
    struct rank_env e;
    char where[64];
    char prefix[32];               /* c10d keys: "/tipc/" or "/tipc/rK/" */
    bool http_on;
    struct rdzv_client http;
    struct tcpstore *ts;
    struct tcpstore_server *srv;   /* rank 0 serving the job's store */
    char bind[256];
    int timeout_s;
    bool primary;                  /* the rank's own connection (joined; says when it left) */
};

bool comm_store_is_c10d(const struct comm_store *s) { return !s->http_on; }
const char *comm_store_bind_addr(const struct comm_store *s) { return s->bind; }

static char *key_of(const struct comm_store *s, const char *key) { return xasprintf("%s%s", s->prefix, key); }

enum tipc_status comm_store_set(struct comm_store *s, const char *key, const void *val, size_t n)
{
    if (s->http_on) return rdzv_put(&s->http, key, val, n, false, NULL);
    char *k = key_of(s, key);
    enum tipc_status st = tcpstore_set(s->ts, k, val, n);
    free(k);
    return st;
}

enum tipc_status comm_store_get(struct comm_store *s, const char *key, int wait_ms, bool quiet, bool *found,
                                char **val, size_t *n)
{
    if (s->http_on) return rdzv_get(&s->http, key, wait_ms, quiet, found, val, n);
    char *k = key_of(s, key);
    enum tipc_status st = tcpstore_get(s->ts, k, wait_ms, found, val, n);
    free(k);
    return st;
}

enum tipc_status comm_store_create(struct comm_store *s, const char *key, const void *val, size_t n, bool *created)
{
    if (s->http_on) return rdzv_put(&s->http, key, val, n, true, created);
    char *k = key_of(s, key);
    enum tipc_status st = tcpstore_create(s->ts, k, val, n, created);
    free(k);
    return st;
}

/* ---- connecting ------------------------------------------------------------------------------------- */
static const char *who_serves(const struct comm_store *s)
{
    return s->e.store == RANK_STORE_C10D_HOST ? "rank 0 serves it" : "the launcher's agent serves it";
}

/* Connect to the c10d store by the deadline, retrying while nothing listens (rank 0 starting). */
static enum tipc_status connect_c10d(struct comm_store *s, double deadline)
{
    double t0 = now_seconds(), said = t0;
    for (;;) {
        bool refused = false;
        if (tcpstore_connect(&s->ts, s->e.host, s->e.port, 3000, s->where, true, &refused) == TIPC_OK) return TIPC_OK;
        if (!refused) return TIPC_EDIST;   /* a bad handshake or an unknown host: said already */
        double now = now_seconds();
        if (now > deadline) {
            error_msg(TIPC_EDIST, "%s: nothing listens at %s:%d after %.0f s (%s; %s, from %s and %s)", s->where,
                      s->e.host, s->e.port, now - t0, s->e.launcher, who_serves(s), s->e.host_var, s->e.port_var);
            error_hint("is rank 0 running, and is %s:%d its address as seen from this node?", s->e.host, s->e.port);
            return TIPC_EDIST;
        }
        if (now - said >= JOIN_TICK_S) {
            fprintf(stderr, "%s: waiting for the c10d store at %s:%d (%s), %.0f s of %d\n", s->where, s->e.host,
                    s->e.port, who_serves(s), now - t0, s->timeout_s);
            said = now;
        }
        usleep(200 * 1000);
    }
}

/* Wait for key by the deadline in 1 s slices; tick() says whom it waits for every JOIN_TICK_S. */
static enum tipc_status wait_key(struct comm_store *s, const char *key, double deadline, double t0, double *said,
                                 void (*tick)(struct comm_store *, double), char **val)
{
    for (;;) {
        bool found = false;
        TRY(comm_store_get(s, key, 1000, false, &found, val, NULL));
        if (found) return TIPC_OK;
        double now = now_seconds();
        if (now > deadline) return TIPC_EDIST;
        if (now - *said >= JOIN_TICK_S) tick(s, now - t0), *said = now;
    }
}

/* Rank 0's list of ranks that have not joined yet ("2, 3"; at most 16 named). */
static char *missing_ranks(struct comm_store *s, int *count)
{
    char *out = xstrdup("");
    *count = 0;
    for (int r = 0; r < s->e.world; r++) {
        char k[32];
        snprintf(k, sizeof k, "join/%d", r);
        bool found = true;
        if (comm_store_get(s, k, 0, true, &found, NULL, NULL) || found) continue;
        if (++*count <= 16) {
            char *t = xasprintf("%s%s%d", out, *out ? ", " : "", r);
            free(out);
            out = t;
        }
    }
    return out;
}

static void tick_rank0(struct comm_store *s, double waited)
{
    int n;
    char *m = missing_ranks(s, &n);
    fprintf(stderr, "%s: waiting for rank%s %s%s of %d to join (%s), %.0f s of %d\n", s->where, n == 1 ? "" : "s", m,
            n > 16 ? ", ..." : "", s->e.world, rank_env_describe(&s->e), waited, s->timeout_s);
    free(m);
}

static void tick_other(struct comm_store *s, double waited)
{
    fprintf(stderr, "%s: waiting for rank 0 to see every rank join (%s), %.0f s of %d\n", s->where,
            rank_env_describe(&s->e), waited, s->timeout_s);
}

/* join/RANK = "WORLD PID HOST"; rank 0 judges every rank's and answers in `joined`. */
static enum tipc_status join(struct comm_store *s, double deadline)
{
    char host[128] = "?";
    gethostname(host, sizeof host - 1);
    char *me = xasprintf("%d %d %s", s->e.world, (int)getpid(), host), k[32], *v = NULL;
    bool created = false;
    snprintf(k, sizeof k, "join/%d", s->e.rank);
    enum tipc_status st = comm_store_create(s, k, me, strlen(me), &created);
    if (!st && !created && comm_store_get(s, k, 0, false, &created, &v, NULL) == TIPC_OK && v) {
        int pid = 0;
        char h[128] = "?";
        sscanf(v, "%*d %d %127s", &pid, h);
        st = error_msg(TIPC_EDIST, "%s: rank %d is claimed twice in this job: by pid %d on %s and by pid %d on %s "
                       "(%s gave out %s=%d twice)", s->where, s->e.rank, pid, h, (int)getpid(), host, s->e.launcher,
                       s->e.rank_var, s->e.rank);
    }
    free(me), free(v), v = NULL;
    if (st) return st;
    double t0 = now_seconds(), said = t0;
    if (s->e.rank == 0) {
        char *verdict = xstrdup("ok");
        for (int r = 0; r < s->e.world; r++) {
            snprintf(k, sizeof k, "join/%d", r);
            if (wait_key(s, k, deadline, t0, &said, tick_rank0, &v)) {
                int n;
                char *m = missing_ranks(s, &n);
                free(verdict);
                verdict = xasprintf("rank%s %s%s of %d never joined the job in %d s (%s)", n == 1 ? "" : "s", m,
                                    n > 16 ? ", ..." : "", s->e.world, s->timeout_s, rank_env_describe(&s->e));
                free(m);
                break;
            }
            int w = 0, pid = 0;
            char h[128] = "?";
            if (sscanf(v, "%d %d %127s", &w, &pid, h) == 3 && w != s->e.world && !strcmp(verdict, "ok")) {
                free(verdict);
                verdict = xasprintf("rank %d (pid %d on %s) says the world has %d ranks, rank 0 says %d (%s)", r, pid,
                                    h, w, s->e.world, s->e.world_var);
            }
            free(v), v = NULL;
        }
        st = comm_store_set(s, "joined", verdict, strlen(verdict));
        if (!st && strcmp(verdict, "ok")) st = error_msg(TIPC_EDIST, "%s: %s", s->where, verdict);
        free(verdict);
        return st;
    }
    if (wait_key(s, "joined", deadline, t0, &said, tick_other, &v))
        return error_msg(TIPC_EDIST, "%s: rank 0 did not see every rank join in %d s (%s)", s->where, s->timeout_s,
                         rank_env_describe(&s->e));
    if (strcmp(v, "ok")) st = error_msg(TIPC_EDIST, "%s: the job cannot start: %s", s->where, v);
    free(v);
    return st;
}

enum tipc_status comm_store_open(struct comm_store **out, const struct rank_env *e, const char *where, int timeout_s)
{
    struct comm_store *s = xcalloc(1, sizeof *s);
    *out = NULL;
    s->e = *e;
    s->timeout_s = timeout_s > 0 ? timeout_s : 300;
    snprintf(s->where, sizeof s->where, "%s", where);
    const char *ip = e->node_ip;
    enum tipc_status st = TIPC_OK;
    if (e->store == RANK_STORE_HTTP) {
        st = rdzv_client_init(&s->http, e->host, e->port, e->job_id, e->token, where);
        s->http_on = true;
        if (!st) rdzv_client_set_round(&s->http, e->restart);
        snprintf(s->bind, sizeof s->bind, "%s", ip && *ip ? ip : e->host);
    } else {
        snprintf(s->prefix, sizeof s->prefix, e->restart > 0 ? "/tipc/r%d/" : "/tipc/", e->restart);
        double deadline = now_seconds() + s->timeout_s;
        if (e->store == RANK_STORE_C10D_HOST && e->rank == 0) st = tcpstore_server_start(&s->srv, e->port, where);
        if (!st) st = connect_c10d(s, deadline);
        if (!st && ip && *ip) snprintf(s->bind, sizeof s->bind, "%s", ip);
        else if (!st) tcpstore_local_addr(s->ts, s->bind, sizeof s->bind);
        if (!st) st = join(s, deadline);
    }
    s->primary = true;
    if (st) {
        tcpstore_close(s->ts), s->ts = NULL;   /* a failed join says nothing more to the store */
        comm_store_close(s);
        return st;
    }
    *out = s;
    return TIPC_OK;
}

enum tipc_status comm_store_dup(struct comm_store **out, const struct comm_store *s)
{
    struct comm_store *d = xcalloc(1, sizeof *d);
    *out = NULL;
    d->e = s->e;
    d->timeout_s = s->timeout_s;
    memcpy(d->where, s->where, sizeof d->where);
    memcpy(d->prefix, s->prefix, sizeof d->prefix);
    memcpy(d->bind, s->bind, sizeof d->bind);
    enum tipc_status st;
    if (s->http_on) {
        st = rdzv_client_init(&d->http, s->e.host, s->e.port, s->e.job_id, s->e.token, s->where);
        d->http_on = true;
        if (!st) rdzv_client_set_round(&d->http, s->e.restart);
    } else {
        st = tcpstore_connect(&d->ts, s->e.host, s->e.port, 3000, s->where, false, NULL);
    }
    if (st) return comm_store_close(d), st;
    *out = d;
    return TIPC_OK;
}

void comm_store_close(struct comm_store *s)
{
    if (!s) return;
    if (s->http_on) rdzv_client_free(&s->http);
    if (s->ts && s->primary && s->e.store == RANK_STORE_C10D_HOST) {   /* this rank is done with the store */
        char k[32];
        snprintf(k, sizeof k, "left/%d", s->e.rank);
        comm_store_set(s, k, "1", 1);
    }
    if (s->ts && s->srv) {   /* keep serving until the others left, or the job failed (nobody waits then) */
        double deadline = now_seconds() + LEAVE_WAIT_S;
        bool failed = false;
        for (int r = 1; r < s->e.world && !failed && now_seconds() < deadline; r++) {
            char k[32];
            snprintf(k, sizeof k, "left/%d", r);
            bool found = false;
            while (!found && !failed && now_seconds() < deadline)
                if (comm_store_get(s, k, 500, true, &found, NULL, NULL) ||
                    (!found && comm_store_get(s, "fail", 0, true, &failed, NULL, NULL)))
                    break;
        }
    }
    tcpstore_close(s->ts);
    tcpstore_server_stop(s->srv);
    free(s);
}
