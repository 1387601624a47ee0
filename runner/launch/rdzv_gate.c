/* rdzv_gate.c: the rendezvous server's door (rdzv_gate.h): waiting connections in arrival order,
 * peeked on every arrival of bytes (edge-triggered epoll), closed at their deadline or when newer
 * ones need the room. */
#include "rdzv_gate.h"

#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "../../core/check.h"
#include "../../core/time.h"
#include "../../core/banned.h"

#define GATE_HEADER_MAX 8192   /* bytes of request line and headers; tipc's requests need ~200 */
#define GATE_EV_LISTEN 0
#define GATE_EV_STOP 1         /* epoll data of the listening socket and the stop eventfd; a waiting
                                  connection's is its fd + 2 */

struct waiting {
    int fd;
    double born;               /* monotonic, at accept */
    struct sockaddr_storage addr;
    socklen_t alen;
};

struct rdzv_gate {
    struct rdzv_gate_opts o;
    int ep, stop_fd;
    pthread_t th;
    struct waiting *w;         /* oldest first */
    int nw;
    pthread_mutex_t mu;        /* the refusal count, read by other threads */
    unsigned long refused;
    char last_refused[NI_MAXHOST];
};

static bool same_host(const struct sockaddr_storage *a, const struct sockaddr_storage *b)
{
    if (a->ss_family != b->ss_family) return false;
    if (a->ss_family == AF_INET)
        return ((const struct sockaddr_in *)a)->sin_addr.s_addr == ((const struct sockaddr_in *)b)->sin_addr.s_addr;
    if (a->ss_family == AF_INET6)
        return !memcmp(&((const struct sockaddr_in6 *)a)->sin6_addr, &((const struct sockaddr_in6 *)b)->sin6_addr,
                       sizeof(struct in6_addr));
    return true;
}

/* Close waiting connection i (the peer sees the connection end). */
static void drop(struct rdzv_gate *G, int i)
{
    close(G->w[i].fd);   /* closing also takes it out of the epoll set */
    memmove(&G->w[i], &G->w[i + 1], (size_t)(G->nw - i - 1) * sizeof *G->w);
    G->nw--;
}

static int find(const struct rdzv_gate *G, int fd)
{
    for (int i = 0; i < G->nw; i++)
        if (G->w[i].fd == fd) return i;
    return -1;
}

/* The value of header `name` in the header block (NUL-terminated copy), or NULL. */
static char *header_value(const char *h, size_t n, const char *name)
{
    size_t nl = strlen(name);
    for (const char *p = memchr(h, '\n', n); p && (size_t)(p + 1 - h) < n;) {
        const char *line = p + 1, *end = memchr(line, '\n', n - (size_t)(line - h));
        if (!end) break;
        if ((size_t)(end - line) > nl && !strncasecmp(line, name, nl) && line[nl] == ':') {
            const char *v = line + nl + 1, *e = end;
            while (v < e && (*v == ' ' || *v == '\t')) v++;
            while (e > v && (e[-1] == '\r' || e[-1] == ' ' || e[-1] == '\t')) e--;
            return xstrndup(v, (size_t)(e - v));
        }
        p = end;
    }
    return NULL;
}

/* Answer `code` and close: the headers are consumed first so the close is a clean end (FIN). */
static void refuse(struct rdzv_gate *G, int i, int code, const char *reason, size_t header_len, char *body)
{
    char *reply = xasprintf("HTTP/1.1 %d %s\r\nContent-Type: text/plain\r\nContent-Length: %zu\r\n"
                            "Connection: close\r\n\r\n%s", code, reason, strlen(body), body);
    char sink[GATE_HEADER_MAX];
    ssize_t r = recv(G->w[i].fd, sink, header_len, MSG_DONTWAIT);
    (void)r;
    ssize_t s = send(G->w[i].fd, reply, strlen(reply), MSG_DONTWAIT | MSG_NOSIGNAL);
    (void)s;
    shutdown(G->w[i].fd, SHUT_WR);
    free(reply);
    free(body);
    drop(G, i);
}

/* New bytes on waiting connection fd: once its headers are in, hand it on or refuse it. */
static void look(struct rdzv_gate *G, int fd)
{
    int i = find(G, fd);
    if (i < 0) return;
    char buf[GATE_HEADER_MAX + 1];
    ssize_t n = recv(fd, buf, GATE_HEADER_MAX, MSG_PEEK | MSG_DONTWAIT);
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) return;
    if (n <= 0) {   /* the peer closed (or the connection broke) before its headers were in */
        drop(G, i);
        return;
    }
    buf[n] = 0;
    const char *end = strstr(buf, "\r\n\r\n");
    size_t hl = end ? (size_t)(end + 4 - buf) : 0;
    if (!end && (end = strstr(buf, "\n\n"))) hl = (size_t)(end + 2 - buf);
    if (!end) {
        if (n == GATE_HEADER_MAX) refuse(G, i, 431, "Request Header Fields Too Large", (size_t)n, xstrdup("headers too large\n"));
        return;   /* not all in yet: the next arrival wakes us again */
    }
    char *tok = header_value(buf, hl, "X-Tipc-Token");
    bool ok = G->o.token_ok(G->o.cls, tok);
    free(tok);
    if (!ok) {
        char host[NI_MAXHOST] = "?";
        getnameinfo((struct sockaddr *)&G->w[i].addr, G->w[i].alen, host, sizeof host, NULL, 0, NI_NUMERICHOST);
        pthread_mutex_lock(&G->mu);
        G->refused++;
        snprintf(G->last_refused, sizeof G->last_refused, "%s", host);
        pthread_mutex_unlock(&G->mu);
        refuse(G, i, 403, "Forbidden", hl, G->o.refusal(G->o.cls));
        return;
    }
    struct waiting w = G->w[i];
    epoll_ctl(G->ep, EPOLL_CTL_DEL, fd, NULL);
    memmove(&G->w[i], &G->w[i + 1], (size_t)(G->nw - i - 1) * sizeof *G->w);
    G->nw--;
    G->o.pass(G->o.cls, w.fd, (struct sockaddr *)&w.addr, w.alen);
}

/* Take the connections the listening socket holds, making room for each. */
static void take(struct rdzv_gate *G)
{
    for (int k = 0; k < 16; k++) {   /* a few at a time, between looks at the waiting ones */
        struct waiting w = {.alen = sizeof w.addr};
        w.fd = accept4(G->o.listen_fd, (struct sockaddr *)&w.addr, &w.alen, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (w.fd < 0) {
            if (errno == EINTR || errno == ECONNABORTED || errno == EPROTO) continue;
            if ((errno == EMFILE || errno == ENFILE) && G->nw > 0) {   /* out of descriptors: the oldest goes */
                drop(G, 0);
                continue;
            }
            if (errno == EMFILE || errno == ENFILE) usleep(10 * 1000);   /* nothing to give back: do not spin */
            return;
        }
        int mine = 0, oldest_mine = -1;
        for (int i = 0; i < G->nw; i++)
            if (same_host(&G->w[i].addr, &w.addr) && mine++ == 0) oldest_mine = i;
        if (mine >= G->o.per_addr) drop(G, oldest_mine);
        else if (G->nw >= G->o.max_pending) drop(G, 0);
        w.born = now_seconds();
        struct epoll_event ev = {.events = EPOLLIN | EPOLLRDHUP | EPOLLET, .data.u64 = (uint64_t)w.fd + 2};
        if (epoll_ctl(G->ep, EPOLL_CTL_ADD, w.fd, &ev)) {
            close(w.fd);
            continue;
        }
        G->w[G->nw++] = w;   /* ready bytes already there are reported by the next epoll_wait */
    }
}

static void *gate_main(void *arg)
{
    struct rdzv_gate *G = arg;
    struct epoll_event ev[64];
    for (;;) {
        int timeout = -1;
        if (G->nw) {   /* the oldest waiting connection's deadline */
            double left = G->w[0].born + G->o.deadline_s - now_seconds();
            timeout = left <= 0 ? 0 : (int)(left * 1000) + 1;
        }
        int n = epoll_wait(G->ep, ev, 64, timeout);
        bool listen = false;
        for (int i = 0; i < n; i++) {   /* headers that arrived first, then new connections: a burst of */
            if (ev[i].data.u64 == GATE_EV_STOP) return NULL;   /* them cannot push out one that is complete */
            if (ev[i].data.u64 == GATE_EV_LISTEN) listen = true;
            else look(G, (int)(ev[i].data.u64 - 2));
        }
        if (listen) take(G);
        double now = now_seconds();
        while (G->nw && now - G->w[0].born >= G->o.deadline_s) drop(G, 0);   /* headers late: closed */
    }
}

enum tipc_status rdzv_gate_start(struct rdzv_gate **out, const struct rdzv_gate_opts *o)
{
    struct rdzv_gate *G = xcalloc(1, sizeof *G);
    G->o = *o;
    G->w = xcalloc((size_t)o->max_pending + 1, sizeof *G->w);
    pthread_mutex_init(&G->mu, NULL);
    G->ep = epoll_create1(EPOLL_CLOEXEC);
    G->stop_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    struct epoll_event l = {.events = EPOLLIN, .data.u64 = GATE_EV_LISTEN}, s = {.events = EPOLLIN, .data.u64 = GATE_EV_STOP};
    int fl = fcntl(o->listen_fd, F_GETFL);   /* take() accepts until there is nothing left: never block */
    if (fl < 0 || fcntl(o->listen_fd, F_SETFL, fl | O_NONBLOCK) || G->ep < 0 || G->stop_fd < 0 || epoll_ctl(G->ep, EPOLL_CTL_ADD, o->listen_fd, &l) ||
        epoll_ctl(G->ep, EPOLL_CTL_ADD, G->stop_fd, &s) || pthread_create(&G->th, NULL, gate_main, G)) {
        int e = errno;
        if (G->ep >= 0) close(G->ep);
        if (G->stop_fd >= 0) close(G->stop_fd);
        pthread_mutex_destroy(&G->mu);
        free(G->w);
        free(G);
        return error_msg(TIPC_EDIST, "rendezvous: cannot start the connection gate: %s", strerror(e));
    }
    *out = G;
    return TIPC_OK;
}

void rdzv_gate_stop(struct rdzv_gate *G)
{
    if (!G) return;
    uint64_t one = 1;
    ssize_t w = write(G->stop_fd, &one, sizeof one);
    (void)w;
    pthread_join(G->th, NULL);
    while (G->nw) drop(G, G->nw - 1);
    close(G->o.listen_fd);
    close(G->ep);
    close(G->stop_fd);
    pthread_mutex_destroy(&G->mu);
    free(G->w);
    free(G);
}

unsigned long rdzv_gate_refused(struct rdzv_gate *G, char *addr, size_t cap)
{
    pthread_mutex_lock(&G->mu);
    unsigned long n = G->refused;
    if (addr && cap) snprintf(addr, cap, "%s", G->last_refused);
    pthread_mutex_unlock(&G->mu);
    return n;
}
