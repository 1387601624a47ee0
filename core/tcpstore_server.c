/* tcpstore_server.c: the server side of c10d's TCPStore protocol (tcpstore.h), for rank 0 where no
 * launcher runs a store: one thread, poll() over a dual-stack listening socket and the connections,
 * requests parsed from each connection's buffer as their bytes arrive (a slow client holds nobody
 * up), replies queued and written when the socket takes them. A connection must open with VALIDATE
 * (as torch's server demands, so a port scan is not taken for queries); a query past the limits, or
 * one it does not know, closes it. Keys live in a small open-addressing hash table. */
#include "tcpstore.h"

#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "check.h"
#include "banned.h"

#define MAX_CONNS 4096
#define MAX_BUFFERED ((size_t)64 << 20)   /* bytes of one connection's unparsed requests */

struct entry { char *key; char *val; size_t n; };
struct conn {
    int fd;
    bool validated;
    unsigned char *in, *out;
    size_t in_n, in_cap, out_n, out_cap;
    int awaiting;            /* keys of a pending WAIT not yet set; 0: none pending */
};
struct waiter { struct conn *c; char *key; };

struct tcpstore_server {
    int lfd, port, pipe[2];
    char *where;
    pthread_t thread;
    struct entry *tab;       /* open addressing; key NULL = free, val NULL with key = deleted */
    size_t cap, used, live, bytes;
    struct conn **conns;
    size_t nconns, conns_cap;
    struct waiter *w;
    size_t nw, w_cap;
};

/* ---- the table -------------------------------------------------------------------------------------- */
static uint64_t hash(const char *k, size_t n)
{
    uint64_t h = 1469598103934665603ull;   /* FNV-1a */
    for (size_t i = 0; i < n; i++) h = (h ^ (unsigned char)k[i]) * 1099511628211ull;
    return h;
}

static struct entry *slot(struct tcpstore_server *S, const char *key, bool insert)
{
    if (insert && (S->used + 1) * 4 >= S->cap * 3) {   /* grow (and drop tombstones) at 3/4 */
        struct entry *old = S->tab;
        size_t oc = S->cap;
        S->cap = oc ? oc * 2 : 64;
        S->tab = xcalloc(S->cap, sizeof *S->tab);
        S->used = 0;
        for (size_t i = 0; i < oc; i++) {
            if (!old[i].key) continue;
            if (!old[i].val) { free(old[i].key); continue; }
            size_t j = hash(old[i].key, strlen(old[i].key)) & (S->cap - 1);
            while (S->tab[j].key) j = (j + 1) & (S->cap - 1);
            S->tab[j] = old[i];
            S->used++;
        }
        free(old);
    }
    if (!S->cap) return NULL;
    struct entry *tomb = NULL, *e;
    for (size_t j = hash(key, strlen(key)) & (S->cap - 1);; j = (j + 1) & (S->cap - 1)) {
        e = &S->tab[j];
        if (!e->key) break;
        if (!strcmp(e->key, key)) return e;   /* live, or deleted (val NULL) */
        if (!e->val && !tomb) tomb = e;
    }
    if (!insert) return NULL;
    if (tomb) {
        free(tomb->key);
        tomb->key = xstrdup(key);
        return tomb;
    }
    e->key = xstrdup(key);
    S->used++;
    return e;
}

static struct entry *find(struct tcpstore_server *S, const char *key)
{
    struct entry *e = slot(S, key, false);
    return e && e->val ? e : NULL;
}

/* ---- replies and waiters ------------------------------------------------------------------------------ */
static void reply(struct conn *c, const void *p, size_t n)
{
    c->out = xgrow(c->out, 1, c->out_n + n, &c->out_cap);
    memcpy(c->out + c->out_n, p, n);
    c->out_n += n;
}
static void reply_u64(struct conn *c, uint64_t v)
{
    unsigned char b[8];
    tcpstore_put_le(b, v, 8);
    reply(c, b, 8);
}
static void reply_vec(struct conn *c, const char *p, size_t n)
{
    reply_u64(c, n);
    reply(c, p, n);
}
static void reply_u8(struct conn *c, unsigned v)
{
    unsigned char b = (unsigned char)v;
    reply(c, &b, 1);
}

static void wake(struct tcpstore_server *S, const char *key)
{
    for (size_t i = 0; i < S->nw;) {
        struct waiter *w = &S->w[i];
        if (strcmp(w->key, key)) { i++; continue; }
        if (--w->c->awaiting == 0) reply_u8(w->c, 0);   /* STOP_WAITING */
        free(w->key);
        S->w[i] = S->w[--S->nw];
    }
}

static void drop_waits(struct tcpstore_server *S, struct conn *c)
{
    for (size_t i = 0; i < S->nw;)
        if (S->w[i].c == c) free(S->w[i].key), S->w[i] = S->w[--S->nw];
        else i++;
    c->awaiting = 0;
}

/* Store key = val (owned); false when the store would pass its byte limit. */
static bool store(struct tcpstore_server *S, const char *key, char *val, size_t n)
{
    struct entry *e = find(S, key);
    size_t had = e ? strlen(e->key) + e->n : 0;
    if (S->bytes - had + strlen(key) + n > TCPSTORE_MAX_BYTES) return free(val), false;
    if (!e) e = slot(S, key, true), S->live++;
    free(e->val);
    e->val = val, e->n = n;
    S->bytes = S->bytes - had + strlen(key) + n;
    wake(S, key);
    return true;
}

/* ---- parsing one request ------------------------------------------------------------------------------- */
struct cursor { const unsigned char *p; size_t n, at; bool short_; };

static bool take(struct cursor *q, void *out, size_t n)
{
    if (q->short_ || q->n - q->at < n) return q->short_ = true, false;
    if (out) memcpy(out, q->p + q->at, n);
    q->at += n;
    return true;
}
static uint64_t take_u64(struct cursor *q)
{
    unsigned char b[8] = {0};
    take(q, b, 8);
    return tcpstore_get_le(b, 8);
}
/* A string of at most max bytes, malloc'ed and NUL-terminated; NULL when short or too long (*bad). */
static char *take_str(struct cursor *q, size_t max, bool *bad, size_t *len)
{
    uint64_t n = take_u64(q);
    if (q->short_) return NULL;
    if (n > max) return *bad = true, NULL;
    if (q->n - q->at < n) return q->short_ = true, NULL;
    char *s = xmalloc((size_t)n + 1);   /* values are bytes: NULs included */
    memcpy(s, q->p + q->at, (size_t)n);
    s[n] = 0;
    if (len) *len = (size_t)n;
    q->at += (size_t)n;
    return s;
}

/* Handle the request at the head of c->in: >0 bytes consumed, 0 incomplete, -1 close the connection. */
static long handle(struct tcpstore_server *S, struct conn *c)
{
    struct cursor q = {.p = c->in, .n = c->in_n};
    unsigned char t;
    if (!take(&q, &t, 1)) return 0;
    if (!c->validated && t != TCPSTORE_VALIDATE) return -1;
    bool bad = false;
    char *k = NULL, *v = NULL, *v2 = NULL;
    size_t vn = 0, v2n = 0;
    long rc = -1;
    switch ((enum tcpstore_query)t) {
    case TCPSTORE_VALIDATE:
    case TCPSTORE_PING: {
        unsigned char b[4];
        if (!take(&q, b, 4)) return 0;
        if (t == TCPSTORE_PING) reply(c, b, 4);
        else if (tcpstore_get_le(b, 4) != TCPSTORE_MAGIC) return -1;
        c->validated = true;
        return (long)q.at;
    }
    case TCPSTORE_SET:
    case TCPSTORE_APPEND:
        k = take_str(&q, TCPSTORE_MAX_KEY, &bad, NULL);
        v = take_str(&q, TCPSTORE_MAX_VALUE, &bad, &vn);
        if (!k || !v) break;
        if (t == TCPSTORE_APPEND) {
            struct entry *e = find(S, k);
            if (e) {
                char *j = xmalloc(e->n + vn + 1);
                memcpy(j, e->val, e->n), memcpy(j + e->n, v, vn);
                j[e->n + vn] = 0;
                free(v), v = j, vn += e->n;
            }
        }
        if (vn > TCPSTORE_MAX_VALUE) break;
        bool ok = store(S, k, v, vn);
        v = NULL;
        if (ok) rc = (long)q.at;
        break;
    case TCPSTORE_COMPARE_SET: {
        k = take_str(&q, TCPSTORE_MAX_KEY, &bad, NULL);
        v = take_str(&q, TCPSTORE_MAX_VALUE, &bad, &vn);
        v2 = take_str(&q, TCPSTORE_MAX_VALUE, &bad, &v2n);
        if (!k || !v || !v2) break;
        struct entry *e = find(S, k);
        if (e ? e->n == vn && !memcmp(e->val, v, vn) : vn == 0) {   /* torch: absent matches "" only */
            reply_vec(c, v2, v2n);
            if (!store(S, k, v2, v2n)) { v2 = NULL; break; }
            v2 = NULL;
        } else if (e) reply_vec(c, e->val, e->n);
        else reply_vec(c, v, vn);
        rc = (long)q.at;
        break;
    }
    case TCPSTORE_GET:
    case TCPSTORE_DELETE_KEY: {
        k = take_str(&q, TCPSTORE_MAX_KEY, &bad, NULL);
        if (!k) break;
        struct entry *e = find(S, k);
        if (t == TCPSTORE_GET) {
            if (!e) break;   /* torch's server closes the connection too: clients WAIT first */
            reply_vec(c, e->val, e->n);
        } else {
            if (e) S->bytes -= strlen(e->key) + e->n, free(e->val), e->val = NULL, S->live--;
            reply_u64(c, e ? 1 : 0);
        }
        rc = (long)q.at;
        break;
    }
    case TCPSTORE_ADD: {
        k = take_str(&q, TCPSTORE_MAX_KEY, &bad, NULL);
        int64_t d = (int64_t)take_u64(&q);
        if (!k || q.short_) break;
        struct entry *e = find(S, k);
        long long cur = 0;
        if (e) {
            char *end;
            errno = 0;
            cur = strtoll(e->val, &end, 10);
            if (errno || end == e->val || *end) break;   /* not a number: torch's server gives up too */
        }
        int64_t now = (int64_t)((uint64_t)cur + (uint64_t)d);
        char *txt = xasprintf("%lld", (long long)now);
        if (!store(S, k, txt, strlen(txt))) break;
        reply_u64(c, (uint64_t)now);
        rc = (long)q.at;
        break;
    }
    case TCPSTORE_CHECK:
    case TCPSTORE_WAIT:
    case TCPSTORE_MULTI_GET: {
        uint64_t nk = take_u64(&q);
        if (q.short_) return 0;
        if (nk > 65536 || (t == TCPSTORE_WAIT && c->awaiting)) return -1;
        char **keys = xcalloc(nk ? (size_t)nk : 1, sizeof *keys);
        size_t got = 0;
        while (got < nk && (keys[got] = take_str(&q, TCPSTORE_MAX_KEY, &bad, NULL))) got++;
        bool all = got == nk;
        size_t missing = 0;
        for (size_t i = 0; all && i < got; i++) missing += !find(S, keys[i]);
        if (all && t == TCPSTORE_CHECK) reply_u8(c, missing ? 1 : 0);
        else if (all && t == TCPSTORE_WAIT) {
            if (!missing) reply_u8(c, 0);
            for (size_t i = 0; missing && i < got; i++) {
                if (find(S, keys[i])) continue;
                S->w = xgrow(S->w, sizeof *S->w, S->nw + 1, &S->w_cap);
                S->w[S->nw++] = (struct waiter){c, keys[i]};
                keys[i] = NULL;
                c->awaiting++;
            }
        } else if (all) {
            for (size_t i = 0; i < got; i++)
                if (!find(S, keys[i])) all = false;
            for (size_t i = 0; all && i < got; i++) reply_vec(c, find(S, keys[i])->val, find(S, keys[i])->n);
        }
        for (size_t i = 0; i < got; i++) free(keys[i]);
        free(keys);
        if (all) rc = (long)q.at;
        break;
    }
    case TCPSTORE_MULTI_SET: {
        uint64_t nk = take_u64(&q);
        if (q.short_) return 0;
        if (nk > 65536) return -1;
        size_t start = q.at;   /* check the whole request is in before storing anything */
        for (uint64_t i = 0; i < nk && !q.short_ && !bad; i++) {
            free(take_str(&q, TCPSTORE_MAX_KEY, &bad, NULL));
            free(take_str(&q, TCPSTORE_MAX_VALUE, &bad, NULL));
        }
        if (q.short_ || bad) break;
        q.at = start;
        rc = 0;
        for (uint64_t i = 0; i < nk && rc == 0; i++) {
            k = take_str(&q, TCPSTORE_MAX_KEY, &bad, NULL);
            v = take_str(&q, TCPSTORE_MAX_VALUE, &bad, &vn);
            if (!store(S, k, v, vn)) rc = -1;
            free(k);
            k = v = NULL;
        }
        if (rc == 0) rc = (long)q.at;
        break;
    }
    case TCPSTORE_GETNUMKEYS:
        reply_u64(c, S->live);
        return (long)q.at;
    case TCPSTORE_CANCEL_WAIT:
        drop_waits(S, c);
        reply_u8(c, 1);   /* WAIT_CANCELED */
        return (long)q.at;
    }
    free(k), free(v), free(v2);
    if (rc < 0 && q.short_ && !bad) return 0;   /* wait for the rest (the reader caps the buffer) */
    return rc;
}

/* ---- connections ---------------------------------------------------------------------------------------- */
static void conn_close(struct tcpstore_server *S, size_t i)
{
    struct conn *c = S->conns[i];
    drop_waits(S, c);
    close(c->fd);
    free(c->in), free(c->out), free(c);
    S->conns[i] = S->conns[--S->nconns];
}

/* Read what is there, answer every complete request; false: close the connection. */
static bool conn_read(struct tcpstore_server *S, struct conn *c)
{
    bool eof = false;
    for (;;) {
        c->in = xgrow(c->in, 1, c->in_n + 65536, &c->in_cap);
        ssize_t k = recv(c->fd, c->in + c->in_n, 65536, MSG_DONTWAIT);
        if (k < 0 && errno == EINTR) continue;
        if (k < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) break;
        if (k <= 0) { eof = true; break; }   /* a client's last SET may come with its close: serve it first */
        c->in_n += (size_t)k;
        if (c->in_n > MAX_BUFFERED) return false;
    }
    long used;
    while (c->in_n && (used = handle(S, c)) != 0) {
        if (used < 0) return false;
        memmove(c->in, c->in + used, c->in_n - (size_t)used);
        c->in_n -= (size_t)used;
    }
    return !eof;
}

static bool conn_write(struct conn *c)
{
    while (c->out_n) {
        ssize_t k = send(c->fd, c->out, c->out_n, MSG_DONTWAIT | MSG_NOSIGNAL);
        if (k < 0 && errno == EINTR) continue;
        if (k < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return true;
        if (k <= 0) return false;
        memmove(c->out, c->out + k, c->out_n - (size_t)k);
        c->out_n -= (size_t)k;
    }
    return true;
}

static void *serve(void *arg)
{
    struct tcpstore_server *S = arg;
    struct pollfd *pf = NULL;
    size_t pf_cap = 0;
    for (;;) {
        size_t n = S->nconns;
        pf = xgrow(pf, sizeof *pf, n + 2, &pf_cap);
        pf[0] = (struct pollfd){.fd = S->pipe[0], .events = POLLIN};
        pf[1] = (struct pollfd){.fd = S->lfd, .events = S->nconns < MAX_CONNS ? POLLIN : 0};
        for (size_t i = 0; i < n; i++)
            pf[i + 2] = (struct pollfd){.fd = S->conns[i]->fd, .events = POLLIN | (S->conns[i]->out_n ? POLLOUT : 0)};
        if (poll(pf, n + 2, -1) < 0 && errno != EINTR) break;
        if (pf[0].revents) break;
        /* connections first, from the last (closing one moves the last into its place) */
        for (size_t i = n; i-- > 0;) {
            struct conn *c = S->conns[i];
            short ev = pf[i + 2].revents;
            bool ok = true;
            if (ev & (POLLIN | POLLHUP | POLLERR)) ok = conn_read(S, c);
            if (ok) ok = conn_write(c);
            if (!ok) conn_close(S, i);
        }
        /* a set may have woken waiters on other connections: write what they are owed */
        for (size_t i = S->nconns; i-- > 0;)
            if (S->conns[i]->out_n && !conn_write(S->conns[i])) conn_close(S, i);
        if (pf[1].revents & POLLIN) {
            int fd = accept4(S->lfd, NULL, NULL, SOCK_CLOEXEC);
            if (fd >= 0) {
                int one = 1;
                setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
                struct conn *c = xcalloc(1, sizeof *c);
                c->fd = fd;
                S->conns = xgrow(S->conns, sizeof *S->conns, S->nconns + 1, &S->conns_cap);
                S->conns[S->nconns++] = c;
            }
        }
    }
    free(pf);
    return NULL;
}

/* ---- start / stop ------------------------------------------------------------------------------------------ */
enum tipc_status tcpstore_server_start(struct tcpstore_server **out, int port, const char *where)
{
    *out = NULL;
    int fd = socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC, 0), v6 = fd >= 0;
    if (!v6) fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);   /* a kernel without IPv6 */
    if (fd < 0) return error_msg(TIPC_EDIST, "%s: cannot create the c10d store's socket: %s", where, strerror(errno));
    int one = 1, zero = 0;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (v6) setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof zero);
    struct sockaddr_in6 a6 = {.sin6_family = AF_INET6, .sin6_port = htons((uint16_t)port), .sin6_addr = in6addr_any};
    struct sockaddr_in a4 = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port), .sin_addr.s_addr = htonl(INADDR_ANY)};
    int r = v6 ? bind(fd, (struct sockaddr *)&a6, sizeof a6) : bind(fd, (struct sockaddr *)&a4, sizeof a4);
    if (r < 0 || listen(fd, 1024) < 0) {
        int e = errno;
        close(fd);
        error_msg(TIPC_EDIST, "%s: cannot serve the c10d store on port %d: %s", where, port, strerror(e));
        if (e == EADDRINUSE) error_hint("another job (or an earlier run's rank 0) holds port %d on this host: give this "
                                        "job another MASTER_PORT", port);
        return TIPC_EDIST;
    }
    struct sockaddr_storage ss;
    socklen_t sl = sizeof ss;
    getsockname(fd, (struct sockaddr *)&ss, &sl);
    struct tcpstore_server *S = xcalloc(1, sizeof *S);
    S->lfd = fd;
    S->port = ntohs(v6 ? ((struct sockaddr_in6 *)&ss)->sin6_port : ((struct sockaddr_in *)&ss)->sin_port);
    S->where = xstrdup(where);
    if (pipe2(S->pipe, O_CLOEXEC) < 0 || pthread_create(&S->thread, NULL, serve, S)) {
        error_msg(TIPC_EDIST, "%s: cannot start the c10d store's thread", where);
        close(fd);
        free(S->where), free(S);
        return TIPC_EDIST;
    }
    *out = S;
    return TIPC_OK;
}

int tcpstore_server_port(const struct tcpstore_server *S) { return S->port; }

void tcpstore_server_stop(struct tcpstore_server *S)
{
    if (!S) return;
    if (write(S->pipe[1], "x", 1) < 0) { /* the thread polls the pipe: closing it below wakes it too */ }
    close(S->pipe[1]);
    pthread_join(S->thread, NULL);
    close(S->pipe[0]);
    while (S->nconns) conn_close(S, S->nconns - 1);
    close(S->lfd);
    for (size_t i = 0; i < S->cap; i++) free(S->tab[i].key), free(S->tab[i].val);
    free(S->tab), free(S->conns), free(S->w), free(S->where);
    free(S);
}
