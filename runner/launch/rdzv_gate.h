/* rdzv_gate.h: the rendezvous server's door. Every new connection waits here, outside the HTTP
 * server, until its request headers are in; only one that carries the job's token is handed on.
 * So a connection counts against the server's limits only once it is authenticated, and a crowd of
 * unauthenticated connections (idle, or trickling a header line every few seconds) from any
 * address, the job's own included, cannot keep the job's nodes out:
 *   - headers must be complete within a deadline from the connection's start, however slowly
 *     they come (a timeout that restarts on every byte never fires on a trickle);
 *   - one address holds at most `per_addr` waiting connections, all addresses `max_pending`; a new
 *     connection past either limit closes the oldest waiting one (of its address first), so a
 *     client that sends its headers at once (every tipc client) always gets through;
 *   - a wrong or missing token is answered 403 at the door (the store's refusal text) and closed.
 * One thread, epoll; bytes are only peeked, so the HTTP server reads the request whole. */
#ifndef TIPC_RDZV_GATE_H
#define TIPC_RDZV_GATE_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/socket.h>

#include "../../core/status.h"

struct rdzv_gate_opts {
    int listen_fd;            /* listening socket, the gate's once it started (closed at stop) */
    int per_addr, max_pending;
    double deadline_s;        /* for the request's headers, from the connection's accept */
    bool (*token_ok)(void *cls, const char *token);   /* token: the header's value, NULL when absent */
    /* an authenticated connection: fd is the callee's from now on (the HTTP server's) */
    void (*pass)(void *cls, int fd, const struct sockaddr *addr, socklen_t len);
    char *(*refusal)(void *cls);                        /* the 403 reply's body, malloc'ed */
    void *cls;
};

struct rdzv_gate;

/* Start the gate's thread. TIPC_EDIST with a message when it cannot (epoll, thread). */
enum tipc_status rdzv_gate_start(struct rdzv_gate **G, const struct rdzv_gate_opts *o);
/* Stop the thread, close the waiting connections and the listening socket, free. Accepts NULL. */
void rdzv_gate_stop(struct rdzv_gate *G);
/* Connections refused for their token so far; the last one's address into addr (numeric). */
unsigned long rdzv_gate_refused(struct rdzv_gate *G, char *addr, size_t cap);

#endif
