/* rdzv_server.c: the job's HTTP key-value store, server side (libmicrohttpd; the requests' logic is
 * rdzv_store.c, the client core/kv.c). Protocol: docs/distributed.md "Protocol". */
#include "rdzv_server.h"

#include <errno.h>
#include <microhttpd.h>
#include <netdb.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "rdzv_gate.h"
#include "../../core/check.h"
#include "../../core/parse.h"
#include "../../core/banned.h"

struct rdzv_server {
    struct MHD_Daemon *d;
    struct rdzv_gate *gate;    /* owns the listening socket: connections reach d authenticated */
    int fd, port;
    struct rdzv_store *store;
};

double rdzv_server_key_age(struct rdzv_server *S, const char *key) { return rdzv_store_key_age(S->store, key); }
char *rdzv_server_get_copy(struct rdzv_server *S, const char *key) { return rdzv_store_get_copy(S->store, key); }

/* ---- HTTP adapter: MHD request -> rdzv_store_handle ------------------------------------------- */
struct req { char *body; size_t n, cap; bool too_big; };

/* Queue the reply; errors close the connection so a refused client holds nothing. */
static enum MHD_Result queue(struct MHD_Connection *con, struct rdzv_reply *rp)
{
    struct MHD_Response *r = MHD_create_response_from_buffer(rp->n, rp->body, MHD_RESPMEM_MUST_FREE);
    if (!r) {
        free(rp->body);
        return MHD_NO;
    }
    if (rp->code != 200 && rp->code != 404 && rp->code != 412) MHD_add_response_header(r, "Connection", "close");
    enum MHD_Result ret = MHD_queue_response(con, rp->code, r);
    MHD_destroy_response(r);
    return ret;
}

static enum MHD_Result handler(void *cls, struct MHD_Connection *con, const char *url, const char *method,
                               const char *version, const char *upload, size_t *upload_size, void **con_cls)
{
    (void)version;
    struct rdzv_server *S = cls;
    struct req *rq = *con_cls;
    const char *tok = MHD_lookup_connection_value(con, MHD_HEADER_KIND, RDZV_TOKEN_HEADER);
    if (!rq) {   /* headers complete, no body read yet: refuse here whatever can be refused */
        struct rdzv_reply rp;
        const char *len = MHD_lookup_connection_value(con, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);
        if (rdzv_store_precheck(S->store, method, url, tok, len, &rp)) return queue(con, &rp);
        *con_cls = xcalloc(1, sizeof *rq);
        return MHD_YES;
    }
    if (*upload_size) {   /* body chunk of a PUT */
        if (rq->n + *upload_size > RDZV_MAX_VALUE) rq->too_big = true;
        else {
            rq->body = xgrow(rq->body, 1, rq->n + *upload_size + 1, &rq->cap);
            memcpy(rq->body + rq->n, upload, *upload_size);
            rq->n += *upload_size;
        }
        *upload_size = 0;
        return MHD_YES;
    }
    struct rdzv_reply rp;
    rdzv_store_handle(S->store, method, url, tok, MHD_lookup_connection_value(con, MHD_GET_ARGUMENT_KIND, "wait"),
                      MHD_lookup_connection_value(con, MHD_GET_ARGUMENT_KIND, "create"), rq->body, rq->n,
                      rq->too_big, &rp);
    return queue(con, &rp);
}

static void req_done(void *cls, struct MHD_Connection *con, void **con_cls, enum MHD_RequestTerminationCode t)
{
    (void)cls, (void)con, (void)t;
    struct req *rq = *con_cls;
    if (rq) free(rq->body);
    free(rq);
    *con_cls = NULL;
}

/* ---- the gate's hooks (rdzv_gate.h) ----------------------------------------------------------- */
static bool gate_token_ok(void *cls, const char *token) { return rdzv_store_token_ok(((struct rdzv_server *)cls)->store, token); }

static void gate_pass(void *cls, int fd, const struct sockaddr *addr, socklen_t len)
{
    MHD_add_connection(((struct rdzv_server *)cls)->d, fd, addr, len);   /* closes fd when it cannot take it */
}

static char *gate_refusal(void *cls)
{
    struct rdzv_reply rp;
    rdzv_store_refuse(((struct rdzv_server *)cls)->store, &rp);
    return rp.body;
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
        bind(fd, ai->ai_addr, ai->ai_addrlen) || listen(fd, SOMAXCONN))
        err = errno;
    freeaddrinfo(ai);
    if (err) {
        if (fd >= 0) close(fd);
        const char *ip = bind_ip ? bind_ip : "0.0.0.0";
        if (err == EADDRINUSE) {
            error_msg(TIPC_EDIST, "rendezvous: port %d in use on %s", port, ip);
            error_hint("another job or a leftover process holds it (ss -ltnp 'sport = :%d'); "
                       "pick another with --master=HOST:PORT, or port 0 for a free one on one node", port);
            errno = EADDRINUSE;
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

enum tipc_status rdzv_server_start_for(struct rdzv_server **out, const char *bind_ip, int port, const char *job,
                                       const char *token, int clients)
{
    struct rdzv_server *S = xcalloc(1, sizeof *S);
    enum tipc_status st = listen_on(bind_ip, port, &S->fd, &S->port);
    if (st) {
        free(S);
        return st;
    }
    S->store = rdzv_store_new(job, token);
    unsigned per_ip = (unsigned)(clients > 0 ? clients : RDZV_DEFAULT_CLIENTS);
    /* one thread per connection, and only authenticated connections get one: the gate holds the
     * others. The limits bound threads and memory; an idle or slow authenticated connection is
     * closed after RDZV_IDLE_TIMEOUT_S */
    S->d = MHD_start_daemon(MHD_USE_THREAD_PER_CONNECTION | MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_POLL |
                            MHD_USE_NO_LISTEN_SOCKET | MHD_USE_ITC, 0, NULL, NULL,
                            handler, S, MHD_OPTION_NOTIFY_COMPLETED,
                            req_done, S, MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)RDZV_IDLE_TIMEOUT_S,
                            MHD_OPTION_PER_IP_CONNECTION_LIMIT, per_ip,
                            MHD_OPTION_CONNECTION_LIMIT, per_ip + RDZV_SPARE_CONNECTIONS,
                            MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)32 * 1024, MHD_OPTION_END);
    struct rlimit rl;   /* the waiting connections must leave the job its descriptors */
    int max_pending = RDZV_GATE_MAX;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur / 4 < (rlim_t)max_pending)
        max_pending = rl.rlim_cur / 4 > 16 ? (int)(rl.rlim_cur / 4) : 16;
    struct rdzv_gate_opts go = {S->fd, RDZV_GATE_PER_ADDR, max_pending, RDZV_HEADER_DEADLINE_S, gate_token_ok,
                                gate_pass, gate_refusal, S};
    st = S->d ? rdzv_gate_start(&S->gate, &go)
              : error_msg(TIPC_EDIST, "rendezvous: cannot start the HTTP server on port %d", port);
    if (st) {
        close(S->fd);
        rdzv_server_stop(S);
        return st;
    }
    *out = S;
    return TIPC_OK;
}

enum tipc_status rdzv_server_start(struct rdzv_server **out, const char *bind_ip, int port,
                                   const char *job, const char *token)
{
    return rdzv_server_start_for(out, bind_ip, port, job, token, 0);
}

int rdzv_server_port(const struct rdzv_server *S) { return S->port; }

void rdzv_server_set_about(struct rdzv_server *S, const char *about) { rdzv_store_set_about(S->store, about); }

unsigned long rdzv_server_refused(struct rdzv_server *S, char *addr, size_t cap)
{
    return rdzv_gate_refused(S->gate, addr, cap);
}

void rdzv_server_stop(struct rdzv_server *S)
{
    if (!S) return;
    rdzv_gate_stop(S->gate);   /* no new connection from here on; closes the listening socket */
    rdzv_store_stop(S->store);
    if (S->d) MHD_stop_daemon(S->d);   /* joins the connection threads, closes the listen socket */
    rdzv_store_free(S->store);
    free(S);
}
