/* comm.c: the collectives front end: env, backend choice, per-call bookkeeping (sequence number,
 * step, timeout), the watchdog, and the HTTP-KV callbacks Gloo's rendezvous store runs on.
 * Backends: comm_none.c, comm_gloo.cc, comm_nccl.c. Interface and env: comm.h. */
#include "comm.h"
#include "comm_shm.h"

#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "../../core/check.h"
#include "../../core/time.h"
#include "../../core/parse.h"
#include "comm_store.h"
#include "comm_watch.h"
#include "rank_env.h"
#include "../../core/banned.h"

struct comm {
    int rank, world, node;
    const struct comm_backend *be;
    void *impl;
    int timeout_ms;
    int watchdog_ms;         /* TIPC_WATCHDOG: abort when one call runs this long; 0 = timeout + 5 s */
    long step;
    /* what is running now, for the watchdog (under mu) */
    pthread_mutex_t mu;
    pthread_cond_t cv;
    const char *op;          /* NULL when idle */
    unsigned long seq;       /* collectives issued so far */
    size_t op_size;
    double op_start;
    double op_end_at;        /* when the last call ended (idle time in heartbeats) */
    int status_fd;           /* TIPC_STATUS_FD: heartbeat pipe to the launcher, -1 without one */
    int quit;
    struct comm_stats stats;
    pthread_t watchdog;
    int watchdog_on;
    /* rendezvous */
    struct rank_env env;     /* who started this rank, where the store is (rank_env.h) */
    struct comm_store *store;
    struct comm_watch *watch;   /* the ranks watch each other (a c10d store: no tipc launch watches them) */
    char prefix[48];         /* "rank 3 (node 1)" */
    struct comm_shm *shm;    /* f32 allreduces through shared memory (every rank on this host) */
};

struct comm_stats comm_get_stats(const struct comm *c) { return c->stats; }
int comm_rank(const struct comm *c) { return c->rank; }
int comm_device_buffers(const struct comm *c) { return c->be->device; }
int comm_world(const struct comm *c) { return c->world; }
const char *comm_backend_name(const struct comm *c) { return c->be->name; }
const char *comm_transport(const struct comm *c)
{
    return c->shm ? "shared memory" : c->be == &comm_backend_gloo ? "tcp" : c->be->name;
}
void comm_set_timeout(struct comm *c, int ms) { c->timeout_ms = ms > 0 ? ms : 1; }
void comm_set_step(struct comm *c, long step) { c->step = step; }

/* ---- KV callbacks for Gloo's store ---------------------------------------------------------- */
static int kv_set(void *ud, const char *key, const void *val, size_t n)
{
    struct comm *c = ud;
    char *k = xasprintf("gloo/%s", key);
    enum tipc_status st = comm_store_set(c->store, k, val, n);
    free(k);
    return st ? -1 : 0;
}

static int kv_get(void *ud, const char *key, int wait_ms, char **val, size_t *n)
{
    struct comm *c = ud;
    char *k = xasprintf("gloo/%s", key);
    bool found = false;
    enum tipc_status st = TIPC_OK;
    double deadline = now_seconds() + wait_ms / 1000.0;
    do {   /* long-poll in slices so a server restart or a slow peer is not one giant request */
        double left = deadline - now_seconds();
        int w = left > 1.0 ? 1000 : left > 0 ? (int)(left * 1000) + 1 : 0;
        st = comm_store_get(c->store, k, w, false, &found, val, n);
    } while (!st && !found && now_seconds() < deadline);
    free(k);
    return st ? -1 : found ? 0 : 1;
}

/* ---- watchdog ------------------------------------------------------------------------------- */
static void post_notice(struct comm *c, const char *msg)
{
    if (c->watch) return comm_watch_post(c->watch, msg);
    struct comm_store *w;   /* own connection: the main thread may be inside a request */
    if (c->store && comm_store_dup(&w, c->store) == TIPC_OK) {
        comm_store_create(w, "fail", msg, strlen(msg), NULL);
        comm_store_close(w);
    }
}

/* A heartbeat to the launcher's watchdog (TIPC_STATUS_FD): alive, and where. Sent each second by
 * the watchdog thread (a stopped process goes silent) and as each collective begins and ends (the
 * last beat of a rank that stops says exactly where it was). Caller holds mu. Never blocks: the pipe
 * is non-blocking and a full one drops the beat. */
static void beat(struct comm *c)
{
    if (c->status_fd < 0) return;
    char hb[160];
    double now = now_seconds();
    int n = snprintf(hb, sizeof hb, "hb %d %lu %s %ld %.1f\n", c->rank, c->seq, c->op ? c->op : "-", c->step,
                     c->op ? now - c->op_start : now - c->op_end_at);
    if (write(c->status_fd, hb, (size_t)n) < 0) { /* dropped: the next beat tells the same */ }
}

static void *watchdog_main(void *arg)
{
    struct comm *c = arg;
    pthread_mutex_lock(&c->mu);
    while (!c->quit) {
        struct timespec ts = mono_deadline(c->watch ? COMM_WATCH_TICK_S : 1.0);
        pthread_cond_timedwait(&c->cv, &c->mu, &ts);
        beat(c);
        double limit = c->watchdog_ms ? c->watchdog_ms / 1000.0 : c->timeout_ms / 1000.0 + 5.0;
        if (c->op && now_seconds() - c->op_start > limit) {
            char *msg = xasprintf("%s: no progress for %.0f s in %s #%lu (%zu bytes) at step %ld; aborting the job",
                                  c->prefix, now_seconds() - c->op_start, c->op, c->seq, c->op_size, c->step);
            fprintf(stderr, "tipc: error: %s\n", msg);
            fprintf(stderr, "hint: a peer died or skipped this collective; see the other ranks' workerlog files\n");
            post_notice(c, msg);
            _exit(TIPC_EDIST);
        }
        if (c->watch) {   /* the store's round trips happen without the lock */
            unsigned long seq = c->seq;
            const char *op = c->op;
            long step = c->step;
            double secs = now_seconds() - (c->op ? c->op_start : c->op_end_at);
            pthread_mutex_unlock(&c->mu);
            comm_watch_tick(c->watch, seq, op, step, secs);
            pthread_mutex_lock(&c->mu);
        }
    }
    pthread_mutex_unlock(&c->mu);
    return NULL;
}

/* Bracket every call: the watchdog sees what is running; errors get the context. */
static void op_begin(struct comm *c, const char *op, size_t bytes)
{
    pthread_mutex_lock(&c->mu);
    c->op = op;
    c->seq++;
    c->op_size = bytes;
    c->op_start = now_seconds();
    beat(c);
    pthread_mutex_unlock(&c->mu);
}

static enum tipc_status op_end(struct comm *c, enum tipc_status st)
{
    pthread_mutex_lock(&c->mu);
    const char *op = c->op;
    c->op = NULL;
    c->op_end_at = now_seconds();
    beat(c);
    c->stats.seconds += c->op_end_at - c->op_start;
    c->stats.calls++;
    c->stats.bytes += (double)c->op_size;
    pthread_mutex_unlock(&c->mu);
    if (st) {
        error_msg(st, "%s: %s #%lu (%zu bytes) at step %ld failed after %.1f s (timeout %d ms, backend %s)",
                  c->prefix, op, c->seq, c->op_size, c->step, now_seconds() - c->op_start, c->timeout_ms, c->be->name);
        char *what = xasprintf("%s #%lu at step %ld", op, c->seq, c->step);
        comm_watch_blame(c->watch, c->store, what);   /* no tipc launch names the culprit: the ranks do */
        free(what);
    }
    return st;
}

/* ---- env and init --------------------------------------------------------------------------- */
static enum tipc_status env_int(const char *name, int dflt, int min, int max, int *out)
{
    const char *v = getenv(name);
    if (!v || !*v) return *out = dflt, TIPC_OK;
    if (!parse_int(v, min, max, out))
        return error_msg(TIPC_EUSAGE, "comm: env %s='%s' is not an integer in [%d, %d]", name, v, min, max);
    return TIPC_OK;
}

static enum tipc_status init_backend(struct comm *c, const struct comm_opts *o)
{
    const char *be = o->backend;
    const struct rank_env *e = &c->env;
    TRY(comm_store_open(&c->store, e, c->prefix, c->timeout_ms / 1000));
    if (c->rank == 0 && e->store != RANK_STORE_HTTP)   /* tipc launch says where its ranks came from itself */
        printf("data parallel: %d ranks, started by %s\n", c->world, rank_env_describe(e));
    struct comm_kv kv = {.ud = c, .set = kv_set, .get = kv_get};
    if (be && !strcmp(be, "nccl")) {
        c->be = &comm_backend_nccl;
        return comm_nccl_init(&c->impl, c->rank, c->world, &kv, c->timeout_ms);
    }
    if (be && *be && strcmp(be, "gloo"))
        return error_msg(TIPC_EUSAGE, "%s: comm backend '%s' (TIPC_COMM_BACKEND, --comm-backend): expected 'gloo' or 'nccl'",
                         c->prefix, be);
    c->be = &comm_backend_gloo;
    struct comm_topo t = {0}, *topo = NULL;
    if (o->hierarchical) {
        t.nnodes = e->nnodes > 0 ? e->nnodes : 1;
        t.local_world = e->local_world > 0 ? e->local_world : 1;
        t.local_rank = e->local_rank;
        t.node = c->node;
        if (t.nnodes * t.local_world != c->world || c->rank != t.node * t.local_world + t.local_rank)
            return error_msg(TIPC_EDIST, "%s: TIPC_COMM_HIERARCHICAL=1 needs node-major ranks: RANK=%d, node %d, "
                             "LOCAL_RANK=%d of %d, %d nodes, WORLD_SIZE=%d do not fit", c->prefix, c->rank, t.node,
                             t.local_rank, t.local_world, t.nnodes, c->world);
        if (t.nnodes > 1 && t.local_world > 1) topo = &t;   /* else it is the flat algorithm anyway */
    }
    return comm_gloo_init(&c->impl, c->rank, c->world, topo, comm_store_bind_addr(c->store), &kv, c->timeout_ms);
}

/* Ranks that all run on this host meet in a shared-memory segment (comm_shm.h): rank 0 creates it
 * under a random name and publishes the name in the job's KV store; once every rank has attached
 * (a Gloo allreduce of failures is the barrier) the name is removed, so nothing outlives the job.
 * All ranks use it or none does. */
#define SHM_SLOT_BYTES (2u << 20)
static enum tipc_status shm_setup(struct comm *c, const struct comm_opts *o)
{
    int nnodes = c->env.nnodes, local = c->env.local_world;   /* -1: the launcher did not say */
    if (o->shm == COMM_SHM_OFF || c->be != &comm_backend_gloo) return TIPC_OK;
    if (nnodes > 1 || local != c->world || o->hierarchical) {
        if (o->shm == COMM_SHM_AUTO) return TIPC_OK;
        return error_msg(TIPC_EUSAGE, "%s: --comm-shm on (TIPC_COMM_SHM) needs every rank on this host, but "
                         "TIPC_NNODES=%d and LOCAL_WORLD_SIZE=%d of WORLD_SIZE=%d%s; use auto", c->prefix, nnodes,
                         local, c->world, o->hierarchical ? " (and the hierarchical allreduce is on)" : "");
    }
    char name[64] = "", why[256] = "";
    char *got = NULL;
    size_t got_n = 0;
    enum tipc_status st = TIPC_OK;
    if (c->rank == 0) {
        uint64_t r = 0;
        if (getrandom(&r, sizeof r, 0) != (ssize_t)sizeof r) r = (uint64_t)now_seconds() * 2654435761u;
        snprintf(name, sizeof name, "/tipc-%d-%016llx", (int)getpid(), (unsigned long long)r);
        st = comm_shm_attach(&c->shm, name, 0, c->world, SHM_SLOT_BYTES, c->prefix, why, sizeof why);
        const char *pub = st ? "-" : name;   /* "-": the others skip it */
        if (kv_set(c, "shm", pub, strlen(pub) + 1)) st = error_msg(TIPC_EDIST, "%s: cannot publish the shared-memory "
                                                                   "segment's name in the job's store", c->prefix);
    } else if (kv_get(c, "shm", c->timeout_ms, &got, &got_n) || !got_n || got[got_n - 1]) {
        st = error_msg(TIPC_EDIST, "%s: rank 0 did not publish the shared-memory segment's name", c->prefix);
    } else if (strcmp(got, "-")) {
        snprintf(name, sizeof name, "%s", got);
        st = comm_shm_attach(&c->shm, name, c->rank, c->world, SHM_SLOT_BYTES, c->prefix, why, sizeof why);
    } else {
        st = TIPC_EDIST;
        snprintf(why, sizeof why, "rank 0 could not create the segment");
    }
    free(got);
    float failed = st ? 1.0f : 0.0f;
    enum tipc_status agreed = c->be->allreduce(c->impl, &failed, 1, COMM_F32, c->timeout_ms);
    if (c->rank == 0 && name[0]) comm_shm_unlink(name);
    if (agreed) return agreed;
    if (failed == 0.0f) {
        comm_shm_watch_peers(c->shm);
        return TIPC_OK;
    }
    comm_shm_free(c->shm);
    c->shm = NULL;
    if (o->shm == COMM_SHM_ON)
        return error_msg(TIPC_EDIST, "%s: --comm-shm on: %s", c->prefix, why[0] ? why : "another rank could not attach");
    if (why[0]) fprintf(stderr, "%s: note: allreduce over TCP, not shared memory: %s\n", c->prefix, why);
    return TIPC_OK;
}

enum tipc_status comm_init_from_env(struct comm **out, const struct comm_opts *opts)
{
    const struct comm_opts dflt = {0}, *o = opts ? opts : &dflt;
    struct comm *c = xcalloc(1, sizeof *c);
    pthread_mutex_init(&c->mu, NULL);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&c->cv, &ca);
    pthread_condattr_destroy(&ca);
    c->be = &comm_backend_none;
    enum tipc_status st = rank_env_read(&c->env);
    c->world = c->env.world, c->rank = c->env.rank, c->node = c->env.node > 0 ? c->env.node : 0;
    c->timeout_ms = (o->timeout_s > 0 ? o->timeout_s : 300) * 1000;
    c->watchdog_ms = (o->watchdog_s > 0 ? o->watchdog_s : 0) * 1000;
    c->status_fd = -1;
    if (!st) st = env_int("TIPC_STATUS_FD", -1, -1, 1 << 20, &c->status_fd);   /* set by tipc launch */
    c->op_end_at = now_seconds();
    snprintf(c->prefix, sizeof c->prefix, "rank %d (node %d)", c->rank, c->node);
    if (!st && c->world > 1) {
        /* a peer that dies makes the next send() raise SIGPIPE, which would kill this rank before
         * the transport can report which collective failed: take EPIPE instead, unless the program
         * installed its own handler */
        struct sigaction old;
        if (sigaction(SIGPIPE, NULL, &old) == 0 && old.sa_handler == SIG_DFL) signal(SIGPIPE, SIG_IGN);
        st = init_backend(c, o);
        if (!st) st = shm_setup(c, o);
        if (!st && comm_store_is_c10d(c->store) && !(c->watch = comm_watch_open(c->store, &c->env, c->prefix)))
            st = TIPC_EDIST;
    }
    if (st) {
        comm_free(c);
        return st;
    }
    c->watchdog_on = c->world > 1 && pthread_create(&c->watchdog, NULL, watchdog_main, c) == 0;
    *out = c;
    return TIPC_OK;
}

void comm_free(struct comm *c)
{
    if (!c) return;
    if (c->status_fd >= 0) {   /* the launcher stops expecting heartbeats from this rank */
        char hb[96];
        int n = snprintf(hb, sizeof hb, "hb %d %lu done %ld 0\n", c->rank, c->seq, c->step);
        if (write(c->status_fd, hb, (size_t)n) < 0) { /* the launcher is gone: nothing to tell */ }
    }
    if (c->watchdog_on) {
        pthread_mutex_lock(&c->mu);
        c->quit = 1;
        pthread_cond_broadcast(&c->cv);
        pthread_mutex_unlock(&c->mu);
        pthread_join(c->watchdog, NULL);
    }
    comm_shm_free(c->shm);
    if (c->impl) c->be->destroy(c->impl);
    comm_watch_close(c->watch);   /* after the watchdog thread, its only user, stopped */
    comm_store_close(c->store);
    pthread_cond_destroy(&c->cv);
    pthread_mutex_destroy(&c->mu);
    free(c);
}

/* ---- collectives ---------------------------------------------------------------------------- */
static size_t dtype_size(enum comm_dtype dt) { return dt == COMM_F32 ? 4 : 2; }

static void scale(void *buf, size_t n, enum comm_dtype dt, float s)
{
    float *f = buf;
    unsigned short *h = buf;
    for (size_t i = 0; i < n; i++) {
        if (dt == COMM_F32) f[i] *= s;
        else if (dt == COMM_F16) h[i] = comm_float_to_half(comm_half_to_float(h[i]) * s);
        else h[i] = comm_float_to_bf16(comm_bf16_to_float(h[i]) * s);
    }
}

enum tipc_status comm_allreduce(struct comm *c, void *buf, size_t n, enum comm_dtype dt, enum comm_redop op)
{
    op_begin(c, "allreduce", n * dtype_size(dt));
    if (c->shm && dt == COMM_F32)
        return op_end(c, comm_shm_allreduce(c->shm, buf, n, op == COMM_AVG ? 1.0f / (float)c->world : 1.0f,
                                            c->timeout_ms));
    if (c->be->allreduce_op) return op_end(c, n ? c->be->allreduce_op(c->impl, buf, n, dt, op, c->timeout_ms) : TIPC_OK);
    enum tipc_status st = n ? c->be->allreduce(c->impl, buf, n, dt, c->timeout_ms) : TIPC_OK;
    if (!st && op == COMM_AVG && c->world > 1) scale(buf, n, dt, 1.0f / (float)c->world);
    return op_end(c, st);
}

enum tipc_status comm_broadcast(struct comm *c, void *buf, size_t bytes, int root)
{
    if (root < 0 || root >= c->world) BUG("comm_broadcast: root %d out of [0, %d)", root, c->world);
    op_begin(c, "broadcast", bytes);
    return op_end(c, bytes ? c->be->broadcast(c->impl, buf, bytes, root, c->timeout_ms) : TIPC_OK);
}

enum tipc_status comm_allgather(struct comm *c, const void *in, void *out, size_t bytes)
{
    op_begin(c, "allgather", bytes);
    return op_end(c, bytes ? c->be->allgather(c->impl, in, out, bytes, c->timeout_ms) : TIPC_OK);
}

enum tipc_status comm_barrier(struct comm *c)
{
    op_begin(c, "barrier", 0);
    return op_end(c, c->be->barrier(c->impl, c->timeout_ms));
}

int comm_has_streams(const struct comm *c) { return c->be->allreduce_after && c->be->join; }

enum tipc_status comm_allreduce_enqueue(struct comm *c, void *stream, void *buf, size_t n, enum comm_dtype dt,
                                        enum comm_redop op)
{
    if (!comm_has_streams(c)) return error_msg(TIPC_ENOTBUILT, "%s: backend %s has no streams", c->prefix, c->be->name);
    op_begin(c, "allreduce (enqueued)", n * dtype_size(dt));
    return op_end(c, n ? c->be->allreduce_after(c->impl, stream, buf, n, dt, op, c->timeout_ms) : TIPC_OK);
}

enum tipc_status comm_join_stream(struct comm *c, void *stream)
{
    if (!comm_has_streams(c)) return error_msg(TIPC_ENOTBUILT, "%s: backend %s has no streams", c->prefix, c->be->name);
    return c->be->join(c->impl, stream);
}

enum tipc_status comm_allreduce_buckets(struct comm *c, void *buf, size_t n, enum comm_dtype dt,
                                        enum comm_redop op, size_t bucket_bytes)
{
    size_t es = dtype_size(dt), per = bucket_bytes ? bucket_bytes / es : n;
    if (per == 0) per = 1;
    for (size_t off = 0; off < n; off += per)
        TRY(comm_allreduce(c, (char *)buf + off * es, n - off < per ? n - off : per, dt, op));
    return TIPC_OK;
}

static uint64_t hash_bytes(const void *buf, size_t n)
{
    const unsigned char *p = buf;
    uint64_t h = 0x9E3779B97F4A7C15ULL ^ n;
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {   /* 8 bytes a step: cheap enough for every N steps */
        uint64_t w;
        memcpy(&w, p + i, 8);
        h = (h ^ w) * 0x100000001B3ULL;
        h ^= h >> 29;
    }
    for (; i < n; i++) h = (h ^ p[i]) * 0x100000001B3ULL;
    return h ^ (h >> 32);
}

enum tipc_status comm_check_same(struct comm *c, const void *buf, size_t bytes, const char *what)
{
    uint64_t mine = hash_bytes(buf, bytes), *all = xcalloc((size_t)c->world, sizeof *all);
    enum tipc_status st = comm_allgather(c, &mine, all, sizeof mine);
    if (st) {
        free(all);
        return st;
    }
    char *list = xstrdup("");
    for (int r = 1; r < c->world; r++)
        if (all[r] != all[0]) {
            char *t = xasprintf("%s%s%d", list, *list ? ", " : "", r);
            free(list);
            list = t;
        }
    if (*list) {
        st = error_msg(TIPC_EDIST, "%s: %s (%zu bytes) differ across ranks at step %ld: rank%s %s differ%s from rank 0",
                       c->prefix, what, bytes, c->step, strchr(list, ',') ? "s" : "", list,
                       strchr(list, ',') ? "" : "s");
        error_hint("data-parallel ranks must stay identical: check the broadcast at start, the allreduce "
                   "order and any rank-dependent update");
    }
    free(list);
    free(all);
    return st;
}

/* ---- f16 / bf16 ------------------------------------------------------------------------------ */
float comm_half_to_float(unsigned short h)
{
    unsigned sign = (h >> 15) & 1, exp = (h >> 10) & 0x1f, man = h & 0x3ff;
    float v;
    if (exp == 0) v = ldexpf((float)man, -24);
    else if (exp == 31) v = man ? NAN : INFINITY;
    else v = ldexpf((float)(man | 0x400), (int)exp - 25);
    return sign ? -v : v;
}

unsigned short comm_float_to_half(float f)
{
    unsigned x;
    memcpy(&x, &f, 4);
    unsigned sign = (x >> 16) & 0x8000;
    if (isnan(f)) return (unsigned short)(sign | 0x7e00);
    float a = fabsf(f);
    if (a >= 65520.0f) return (unsigned short)(sign | 0x7c00);
    if (a < ldexpf(1, -14)) /* subnormal: multiples of 2^-24, rounded to nearest even by rintf */
        return (unsigned short)(sign | (unsigned)rintf(ldexpf(a, 24)));
    int e;
    float m = frexpf(a, &e);                        /* a = m * 2^e, m in [0.5, 1) */
    unsigned mant = (unsigned)rintf(ldexpf(m, 11)); /* 11 significant bits, in [1024, 2048] */
    if (mant == 2048) mant = 1024, e++;
    return (unsigned short)(sign | ((unsigned)(e + 14) << 10) | (mant & 0x3ff));
}

float comm_bf16_to_float(unsigned short h)
{
    unsigned x = (unsigned)h << 16;
    float f;
    memcpy(&f, &x, 4);
    return f;
}

unsigned short comm_float_to_bf16(float f)
{
    unsigned x;
    memcpy(&x, &f, 4);
    if (isnan(f)) return (unsigned short)((x >> 16) | 0x40);
    x += 0x7fff + ((x >> 16) & 1);   /* round to nearest even */
    return (unsigned short)(x >> 16);
}
