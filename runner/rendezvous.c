/* rendezvous.c: the job's HTTP key-value store (libmicrohttpd server, libcurl client).
 * Protocol in rendezvous.h and docs/distributed.md. Not a database: one job, in memory. */
#include "rendezvous.h"

#include <errno.h>
#include <microhttpd.h>
#include <netdb.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "../core/check.h"
#include "../core/time.h"
#include "../core/parse.h"
#include "../core/banned.h"

/* ---- the store ------------------------------------------------------------------------------- */
struct kv_entry { char *key; char *val; size_t n; double t; };

struct rdzv_server {
    struct MHD_Daemon *d;
    int fd, port;
    char *job, *token;
    pthread_mutex_t mu;
    pthread_cond_t cv;          /* signalled on every PUT and on stop */
    struct kv_entry *kv;
    size_t nkv, capkv;
    int stopping;
};

static struct kv_entry *kv_find(struct rdzv_server *S, const char *key)
{
    for (size_t i = 0; i < S->nkv; i++)
        if (strcmp(S->kv[i].key, key) == 0) return &S->kv[i];
    return NULL;
}

/* Returns 0 stored, 1 exists (create_only). Caller holds mu. */
static int kv_set(struct rdzv_server *S, const char *key, const char *val, size_t n, int create_only)
{
    struct kv_entry *e = kv_find(S, key);
    if (e && create_only) return 1;
    if (!e) {
        S->kv = xgrow(S->kv, sizeof *S->kv, S->nkv + 1, &S->capkv);
        e = &S->kv[S->nkv++];
        e->key = xstrdup(key);
        e->val = NULL;
    }
    free(e->val);
    e->val = xmalloc(n + 1);
    if (n) memcpy(e->val, val, n);
    e->val[n] = 0;
    e->n = n;
    e->t = now_seconds();
    pthread_cond_broadcast(&S->cv);
    return 0;
}

double rdzv_server_key_age(struct rdzv_server *S, const char *key)
{
    pthread_mutex_lock(&S->mu);
    struct kv_entry *e = kv_find(S, key);
    double age = e ? now_seconds() - e->t : -1;
    pthread_mutex_unlock(&S->mu);
    return age;
}

/* ---- HTTP handler ---------------------------------------------------------------------------- */
struct req { char *body; size_t n, cap; int too_big; };

static enum MHD_Result reply(struct MHD_Connection *con, unsigned code, const char *body, size_t n)
{
    struct MHD_Response *r = MHD_create_response_from_buffer(n, (void *)body, MHD_RESPMEM_MUST_COPY);
    enum MHD_Result ret = MHD_queue_response(con, code, r);
    MHD_destroy_response(r);
    return ret;
}
static enum MHD_Result reply_str(struct MHD_Connection *con, unsigned code, const char *msg)
{
    return reply(con, code, msg, strlen(msg));
}

static enum MHD_Result serve_get(struct rdzv_server *S, struct MHD_Connection *con, const char *key)
{
    const char *w = MHD_lookup_connection_value(con, MHD_GET_ARGUMENT_KIND, "wait");
    long wait_ms = 0;
    if (w && !parse_long(w, 0, 3600L * 1000, &wait_ms)) return reply_str(con, 400, "bad wait\n");
    double deadline = now_seconds() + (double)wait_ms / 1000.0;
    pthread_mutex_lock(&S->mu);
    struct kv_entry *e;
    while (!(e = kv_find(S, key)) && !S->stopping) {
        double left = deadline - now_seconds();
        if (left <= 0) break;
        struct timespec ts = mono_deadline(left < 0.5 ? left : 0.5);
        pthread_cond_timedwait(&S->cv, &S->mu, &ts);
    }
    enum MHD_Result ret;
    if (e) ret = reply(con, 200, e->val, e->n);
    else ret = reply_str(con, S->stopping ? 503 : 404, S->stopping ? "server stopping\n" : "no such key\n");
    pthread_mutex_unlock(&S->mu);
    return ret;
}

static enum MHD_Result handler(void *cls, struct MHD_Connection *con, const char *url, const char *method,
                               const char *version, const char *upload, size_t *upload_size, void **con_cls)
{
    (void)version;
    struct rdzv_server *S = cls;
    struct req *rq = *con_cls;
    if (!rq) {
        *con_cls = xcalloc(1, sizeof *rq);
        return MHD_YES;
    }
    if (*upload_size) {   /* body chunk of a PUT */
        if (rq->n + *upload_size > RDZV_MAX_VALUE) rq->too_big = 1;
        else {
            rq->body = xgrow(rq->body, 1, rq->n + *upload_size + 1, &rq->cap);
            memcpy(rq->body + rq->n, upload, *upload_size);
            rq->n += *upload_size;
        }
        *upload_size = 0;
        return MHD_YES;
    }
    const char *tok = MHD_lookup_connection_value(con, MHD_HEADER_KIND, RDZV_TOKEN_HEADER);
    if (!tok || strcmp(tok, S->token) != 0) return reply_str(con, 403, "wrong job token\n");
    size_t jl = strlen(S->job);
    if (strncmp(url, "/kv/", 4) != 0 || strncmp(url + 4, S->job, jl) != 0 || url[4 + jl] != '/' ||
        !url[5 + jl])
        return reply_str(con, 404, "unknown job or bad path; expected /kv/JOB/KEY\n");
    const char *key = url + 5 + jl;
    if (strcmp(method, "GET") == 0) return serve_get(S, con, key);
    if (strcmp(method, "PUT") != 0) return reply_str(con, 405, "use GET or PUT\n");
    if (rq->too_big) return reply_str(con, 413, "value too large\n");
    const char *c = MHD_lookup_connection_value(con, MHD_GET_ARGUMENT_KIND, "create");
    pthread_mutex_lock(&S->mu);
    int exists = kv_set(S, key, rq->body ? rq->body : "", rq->n, c && strcmp(c, "1") == 0);
    pthread_mutex_unlock(&S->mu);
    return exists ? reply_str(con, 412, "exists\n") : reply_str(con, 200, "ok\n");
}

static void req_done(void *cls, struct MHD_Connection *con, void **con_cls, enum MHD_RequestTerminationCode t)
{
    (void)cls, (void)con, (void)t;
    struct req *rq = *con_cls;
    if (rq) free(rq->body);
    free(rq);
    *con_cls = NULL;
}

/* ---- server lifecycle ------------------------------------------------------------------------ */
static enum tipc_status listen_on(const char *bind_ip, int port, int *fd_out, int *port_out)
{
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM,
                             .ai_flags = AI_PASSIVE | AI_NUMERICSERV}, *ai;
    char ps[16];
    snprintf(ps, sizeof ps, "%d", port);
    if (!bind_ip) hints.ai_family = AF_INET;
    int rc = getaddrinfo(bind_ip, ps, &hints, &ai);
    if (rc) return error_msg(TIPC_EDIST, "rendezvous: cannot resolve '%s': %s", bind_ip, gai_strerror(rc));
    int fd = socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0), one = 1, err = 0;
    if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) ||
        bind(fd, ai->ai_addr, ai->ai_addrlen) || listen(fd, 128))
        err = errno;
    freeaddrinfo(ai);
    if (err) {
        if (fd >= 0) close(fd);
        const char *ip = bind_ip ? bind_ip : "0.0.0.0";
        if (err == EADDRINUSE) {
            error_msg(TIPC_EDIST, "rendezvous: port %d in use on %s", port, ip);
            error_hint("another job or a leftover process holds it (ss -ltnp 'sport = :%d'); "
                       "pick another with --master=HOST:PORT, or port 0 for a free one on one node", port);
            return TIPC_EDIST;
        }
        error_msg(TIPC_EDIST, "rendezvous: cannot listen on %s:%d: %s", ip, port, strerror(err));
        if (err == EADDRNOTAVAIL)
            error_hint("'%s' is not an address of this host; node 0 must be the --master host", ip);
        return TIPC_EDIST;
    }
    struct sockaddr_storage ss;
    socklen_t sl = sizeof ss;
    getsockname(fd, (struct sockaddr *)&ss, &sl);
    *port_out = ntohs(ss.ss_family == AF_INET6 ? ((struct sockaddr_in6 *)&ss)->sin6_port
                                               : ((struct sockaddr_in *)&ss)->sin_port);
    *fd_out = fd;
    return TIPC_OK;
}

enum tipc_status rdzv_server_start(struct rdzv_server **out, const char *bind_ip, int port,
                                   const char *job, const char *token)
{
    struct rdzv_server *S = xcalloc(1, sizeof *S);
    enum tipc_status st = listen_on(bind_ip, port, &S->fd, &S->port);
    if (st) {
        free(S);
        return st;
    }
    S->job = xstrdup(job);
    S->token = xstrdup(token);
    pthread_mutex_init(&S->mu, NULL);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&S->cv, &ca);
    pthread_condattr_destroy(&ca);
    S->d = MHD_start_daemon(MHD_USE_THREAD_PER_CONNECTION | MHD_USE_INTERNAL_POLLING_THREAD, 0, NULL, NULL,
                            handler, S, MHD_OPTION_LISTEN_SOCKET, S->fd, MHD_OPTION_NOTIFY_COMPLETED,
                            req_done, S, MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)120, MHD_OPTION_END);
    if (!S->d) {
        close(S->fd);
        S->fd = -1;
        rdzv_server_stop(S);
        return error_msg(TIPC_EDIST, "rendezvous: cannot start the HTTP server on port %d", port);
    }
    *out = S;
    return TIPC_OK;
}

int rdzv_server_port(const struct rdzv_server *S) { return S->port; }

void rdzv_server_stop(struct rdzv_server *S)
{
    if (!S) return;
    pthread_mutex_lock(&S->mu);
    S->stopping = 1;
    pthread_cond_broadcast(&S->cv);
    pthread_mutex_unlock(&S->mu);
    if (S->d) MHD_stop_daemon(S->d);   /* joins the connection threads, closes the listen socket */
    for (size_t i = 0; i < S->nkv; i++) free(S->kv[i].key), free(S->kv[i].val);
    free(S->kv);
    pthread_cond_destroy(&S->cv);
    pthread_mutex_destroy(&S->mu);
    free(S->job);
    free(S->token);
    free(S);
}
