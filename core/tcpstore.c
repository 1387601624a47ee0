/* tcpstore.c: the client side of c10d's TCPStore protocol (tcpstore.h): a blocking socket, every
 * reply awaited with poll() against a deadline, so a silent or vanished server is an error naming
 * it, never a hang. */
#include "tcpstore.h"

#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <unistd.h>

#include "check.h"
#include "time.h"
#include "banned.h"

struct tcpstore {
    int fd;
    int io_ms;
    char *addr;    /* "host:port" */
    char *where;
    /* the request being built */
    unsigned char *buf;
    size_t n, cap;
};

const char *tcpstore_addr(const struct tcpstore *s) { return s->addr; }
void tcpstore_local_addr(const struct tcpstore *s, char *buf, size_t n)
{
    struct sockaddr_storage ss;
    socklen_t sl = sizeof ss;
    snprintf(buf, n, "127.0.0.1");
    if (getsockname(s->fd, (struct sockaddr *)&ss, &sl) < 0) return;
    char t[INET6_ADDRSTRLEN] = "";
    if (ss.ss_family == AF_INET) inet_ntop(AF_INET, &((struct sockaddr_in *)&ss)->sin_addr, t, sizeof t);
    else if (ss.ss_family == AF_INET6) inet_ntop(AF_INET6, &((struct sockaddr_in6 *)&ss)->sin6_addr, t, sizeof t);
    snprintf(buf, n, "%s", strncmp(t, "::ffff:", 7) || !strchr(t, '.') ? t : t + 7);
}

void tcpstore_set_io_timeout(struct tcpstore *s, int ms) { s->io_ms = ms > 0 ? ms : 1; }

/* ---- request building --------------------------------------------------------------------------- */
static void put_bytes(struct tcpstore *s, const void *p, size_t n)
{
    s->buf = xgrow(s->buf, 1, s->n + n, &s->cap);
    if (n) memcpy(s->buf + s->n, p, n);
    s->n += n;
}
static void put_uint(struct tcpstore *s, uint64_t v, int bytes)
{
    unsigned char b[8];
    tcpstore_put_le(b, v, bytes);
    put_bytes(s, b, (size_t)bytes);
}
static void put_u64(struct tcpstore *s, uint64_t v) { put_uint(s, v, 8); }
static void put_u32(struct tcpstore *s, uint32_t v) { put_uint(s, v, 4); }
static void put_vec(struct tcpstore *s, const void *p, size_t n)
{
    put_u64(s, n);
    put_bytes(s, p, n);
}
static void begin(struct tcpstore *s, enum tcpstore_query q)
{
    s->n = 0;
    unsigned char b = (unsigned char)q;
    put_bytes(s, &b, 1);
}

/* ---- socket I/O ----------------------------------------------------------------------------------- */
static enum tipc_status lost(struct tcpstore *s, const char *what)
{
    return error_msg(TIPC_EDIST, "%s: c10d store at %s: %s", s->where, s->addr, what);
}

static enum tipc_status flush(struct tcpstore *s)
{
    for (size_t off = 0; off < s->n;) {
        ssize_t k = send(s->fd, s->buf + off, s->n - off, MSG_NOSIGNAL);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) {
            char m[160];
            snprintf(m, sizeof m, "cannot send: %s (is the store's host, torchrun's agent or rank 0, gone?)",
                     strerror(errno));
            return lost(s, m);
        }
        off += (size_t)k;
    }
    s->n = 0;
    return TIPC_OK;
}

/* Read exactly n bytes by the deadline (seconds on now_seconds()'s clock). *timed_out (may be NULL)
 * tells a timeout from a lost connection; with it non-NULL a timeout prints nothing. */
static enum tipc_status recv_all(struct tcpstore *s, void *p, size_t n, double deadline, bool *timed_out)
{
    unsigned char *q = p;
    if (timed_out) *timed_out = false;
    for (size_t got = 0; got < n;) {
        double left = deadline - now_seconds();
        if (left <= 0) {
            if (timed_out) return *timed_out = true, TIPC_EDIST;
            return lost(s, "no answer in time (is the store's host stopped or overloaded?)");
        }
        struct pollfd pf = {.fd = s->fd, .events = POLLIN};
        int r = poll(&pf, 1, left > 1.0 ? 1000 : (int)(left * 1000) + 1);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) continue;
        ssize_t k = recv(s->fd, q + got, n - got, 0);
        if (k < 0 && (errno == EINTR || errno == EAGAIN)) continue;
        if (k == 0) return lost(s, "the server closed the connection (is the store's host, torchrun's agent or rank 0, gone?)");
        if (k < 0) {
            char m[128];
            snprintf(m, sizeof m, "cannot receive: %s", strerror(errno));
            return lost(s, m);
        }
        got += (size_t)k;
    }
    return TIPC_OK;
}

static double io_deadline(const struct tcpstore *s) { return now_seconds() + s->io_ms / 1000.0; }

static enum tipc_status recv_u64(struct tcpstore *s, uint64_t *v)
{
    unsigned char b[8];
    TRY(recv_all(s, b, 8, io_deadline(s), NULL));
    *v = tcpstore_get_le(b, 8);
    return TIPC_OK;
}

static enum tipc_status recv_vec(struct tcpstore *s, char **val, size_t *n)
{
    uint64_t len;
    TRY(recv_u64(s, &len));
    if (len > TCPSTORE_MAX_VALUE) return lost(s, "a value larger than 16 MiB in a reply (not a TCPStore?)");
    char *v = xmalloc((size_t)len + 1);
    enum tipc_status st = recv_all(s, v, (size_t)len, io_deadline(s), NULL);
    if (st) return free(v), st;
    v[len] = 0;
    if (val) *val = v;
    else free(v);
    if (n) *n = (size_t)len;
    return TIPC_OK;
}

/* ---- connecting ----------------------------------------------------------------------------------- */
static int connect_one(const struct addrinfo *ai, int connect_ms, int *err)
{
    int fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, ai->ai_protocol);
    if (fd < 0) return *err = errno, -1;
    if (connect(fd, ai->ai_addr, ai->ai_addrlen) < 0) {
        if (errno != EINPROGRESS) return *err = errno, close(fd), -1;
        struct pollfd pf = {.fd = fd, .events = POLLOUT};
        int r;
        do r = poll(&pf, 1, connect_ms); while (r < 0 && errno == EINTR);
        int so = 0;
        socklen_t sl = sizeof so;
        if (r == 0) return *err = ETIMEDOUT, close(fd), -1;
        if (r < 0 || getsockopt(fd, SOL_SOCKET, SO_ERROR, &so, &sl) < 0 || so)
            return *err = so ? so : errno, close(fd), -1;
    }
    int fl = fcntl(fd, F_GETFL);
    if (fl < 0 || fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) < 0) return *err = errno, close(fd), -1;
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    return fd;
}

/* VALIDATE, then PING: a torch >= 2.5 server echoes the nonce. */
static enum tipc_status handshake(struct tcpstore *s)
{
    uint32_t nonce = 0;
    if (getrandom(&nonce, sizeof nonce, 0) != (ssize_t)sizeof nonce) nonce = (uint32_t)getpid();
    begin(s, TCPSTORE_VALIDATE);
    put_u32(s, TCPSTORE_MAGIC);
    unsigned char q = TCPSTORE_PING;
    put_bytes(s, &q, 1);
    put_u32(s, nonce);
    TRY(flush(s));
    unsigned char b[4];
    bool timed_out;
    enum tipc_status st = recv_all(s, b, 4, now_seconds() + 10.0, &timed_out);
    if (st == TIPC_OK && tcpstore_get_le(b, 4) == nonce) return TIPC_OK;
    if (st == TIPC_OK || timed_out) {
        error_msg(TIPC_EDIST, "%s: %s does not speak c10d's TCPStore protocol as torch >= 2.5 does (%s)", s->where,
                  s->addr, timed_out ? "no answer to its PING in 10 s" : "a wrong answer to its PING");
        error_hint("tipc speaks TCPStore as torch 2.5 to 2.15 serve it (VALIDATE, then PING); an older torch's "
                   "torchrun, or another service on MASTER_PORT, is not supported: upgrade torch or start the ranks "
                   "with `tipc launch`");
        return TIPC_EDIST;
    }
    error_hint("a torch < 2.5 server closes connections that open with PING; tipc needs torch >= 2.5's TCPStore");
    return st;
}

enum tipc_status tcpstore_connect(struct tcpstore **out, const char *host, int port, int connect_ms,
                                  const char *where, bool quiet, bool *refused)
{
    *out = NULL;
    if (refused) *refused = false;
    char ps[16];
    snprintf(ps, sizeof ps, "%d", port);
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM}, *res = NULL;
    int gai = getaddrinfo(host, ps, &hints, &res);
    if (gai) {
        error_msg(TIPC_EDIST, "%s: cannot resolve the c10d store's host '%s': %s", where, host, gai_strerror(gai));
        error_hint("check MASTER_ADDR (or the launcher's variable naming the master) on every rank");
        return TIPC_EDIST;
    }
    int fd = -1, err = 0;
    for (struct addrinfo *ai = res; ai && fd < 0; ai = ai->ai_next) fd = connect_one(ai, connect_ms, &err);
    freeaddrinfo(res);
    bool v6 = strchr(host, ':') != NULL;
    char *addr = xasprintf("%s%s%s:%d", v6 ? "[" : "", host, v6 ? "]" : "", port);
    if (fd < 0) {
        bool nobody = err == ECONNREFUSED || err == ETIMEDOUT || err == EHOSTUNREACH || err == ENETUNREACH;
        if (refused) *refused = nobody;
        if (!quiet || !nobody)
            error_msg(TIPC_EDIST, "%s: cannot connect to the c10d store at %s: %s", where, addr, strerror(err));
        free(addr);
        return TIPC_EDIST;
    }
    struct tcpstore *s = xcalloc(1, sizeof *s);
    s->fd = fd, s->io_ms = 30000, s->addr = addr, s->where = xstrdup(where);
    enum tipc_status st = handshake(s);
    if (st) return tcpstore_close(s), st;
    *out = s;
    return TIPC_OK;
}

void tcpstore_close(struct tcpstore *s)
{
    if (!s) return;
    if (s->fd >= 0) close(s->fd);
    free(s->addr), free(s->where), free(s->buf);
    free(s);
}

/* ---- queries --------------------------------------------------------------------------------------- */
static enum tipc_status check_key(struct tcpstore *s, const char *key)
{
    if (strlen(key) > TCPSTORE_MAX_KEY) return error_msg(TIPC_EDIST, "%s: store key '%.40s...' is too long", s->where, key);
    return TIPC_OK;
}

enum tipc_status tcpstore_set(struct tcpstore *s, const char *key, const void *val, size_t n)
{
    TRY(check_key(s, key));
    begin(s, TCPSTORE_SET);
    put_vec(s, key, strlen(key));
    put_vec(s, val, n);
    return flush(s);
}

enum tipc_status tcpstore_check(struct tcpstore *s, const char *key, bool *exists)
{
    TRY(check_key(s, key));
    begin(s, TCPSTORE_CHECK);
    put_u64(s, 1);
    put_vec(s, key, strlen(key));
    TRY(flush(s));
    unsigned char r;
    TRY(recv_all(s, &r, 1, io_deadline(s), NULL));
    if (r > 1) return lost(s, "an unknown answer to CHECK (not a TCPStore?)");
    *exists = r == 0;
    return TIPC_OK;
}

/* WAIT for key up to wait_ms; *present says whether it is there now. */
static enum tipc_status wait_key(struct tcpstore *s, const char *key, int wait_ms, bool *present)
{
    begin(s, TCPSTORE_WAIT);
    put_u64(s, 1);
    put_vec(s, key, strlen(key));
    TRY(flush(s));
    unsigned char r;
    bool timed_out;
    enum tipc_status st = recv_all(s, &r, 1, now_seconds() + wait_ms / 1000.0, &timed_out);
    if (st == TIPC_OK) {
        if (r != 0) return lost(s, "an unknown answer to WAIT (not a TCPStore?)");
        return *present = true, TIPC_OK;
    }
    if (!timed_out) return st;
    begin(s, TCPSTORE_CANCEL_WAIT);   /* the key may still arrive before the server sees this */
    TRY(flush(s));
    TRY(recv_all(s, &r, 1, io_deadline(s), NULL));
    *present = r == 0;
    if (r == 0) TRY(recv_all(s, &r, 1, io_deadline(s), NULL));   /* then the cancel's own answer */
    if (r != 1) return lost(s, "an unknown answer to CANCEL_WAIT (not a TCPStore?)");
    return TIPC_OK;
}

enum tipc_status tcpstore_get(struct tcpstore *s, const char *key, int wait_ms, bool *found, char **val,
                              size_t *n)
{
    *found = false;
    if (val) *val = NULL;
    TRY(check_key(s, key));
    bool present = false;
    if (wait_ms > 0) TRY(wait_key(s, key, wait_ms, &present));
    else TRY(tcpstore_check(s, key, &present));
    if (!present) return TIPC_OK;
    begin(s, TCPSTORE_GET);
    put_vec(s, key, strlen(key));
    TRY(flush(s));
    TRY(recv_vec(s, val, n));
    *found = true;
    return TIPC_OK;
}

enum tipc_status tcpstore_add(struct tcpstore *s, const char *key, int64_t delta, int64_t *now)
{
    TRY(check_key(s, key));
    begin(s, TCPSTORE_ADD);
    put_vec(s, key, strlen(key));
    put_u64(s, (uint64_t)delta);
    TRY(flush(s));
    uint64_t v;
    TRY(recv_u64(s, &v));
    if (now) *now = (int64_t)v;
    return TIPC_OK;
}

enum tipc_status tcpstore_create(struct tcpstore *s, const char *key, const void *val, size_t n, bool *created)
{
    TRY(check_key(s, key));
    if (n == 0) return error_msg(TIPC_EDIST, "%s: store key '%s': an empty value cannot be created once", s->where, key);
    begin(s, TCPSTORE_COMPARE_SET);   /* expected "" = the key is absent */
    put_vec(s, key, strlen(key));
    put_vec(s, NULL, 0);
    put_vec(s, val, n);
    TRY(flush(s));
    char *now = NULL;
    size_t m = 0;
    TRY(recv_vec(s, &now, &m));
    if (created) *created = m == n && memcmp(now, val, n) == 0;
    free(now);
    return TIPC_OK;
}
