/* rdzv_server.h: the job's key-value store over HTTP, server side (node 0's launcher; libmicrohttpd
 * around rdzv_store.c's socket-free logic). The client (every launcher and every rank) is
 * core/kv.h; the protocol is described once, in docs/distributed.md, section "Protocol". Not a
 * general database: one job per server, values in memory until the server stops. */
#ifndef TIPC_RENDEZVOUS_H
#define TIPC_RENDEZVOUS_H

#include "../../core/kv.h"   /* the protocol constants and the client */
#include "rdzv_store.h"

#define RDZV_HEADER_DEADLINE_S 5.0    /* a new connection's request headers must be in by then, however
                                         slowly they come: else it is closed (rdzv_gate.h) */
#define RDZV_GATE_PER_ADDR 64         /* connections one address may have waiting for their headers */
#define RDZV_GATE_MAX 1024            /* all addresses together (at most a quarter of RLIMIT_NOFILE) */
#define RDZV_IDLE_TIMEOUT_S 10        /* an idle or stalled authenticated connection is closed after this */
#define RDZV_DEFAULT_CLIENTS 64       /* authenticated connections one client address may hold */
#define RDZV_SPARE_CONNECTIONS 256    /* overall limit = per-address limit + this */

/* ---- server ---------------------------------------------------------------------------------- */
struct rdzv_server;

/* Listen on bind_ip:port (port 0 picks a free port; bind_ip NULL = all addresses) and serve the
 * store of job `job` guarded by `token`. Errors (TIPC_EDIST) say which address and what to do,
 * e.g. "port 6170 in use" with a hint. *S is owned by the caller: rdzv_server_stop().
 * Connections: a new one waits at the gate (rdzv_gate.h) until its request headers are in (at most
 * RDZV_HEADER_DEADLINE_S, however slowly they trickle; RDZV_GATE_PER_ADDR waiting per address, the
 * oldest closed first to make room), and is let in only with the job's token, so unauthenticated
 * connections never take the job's room. Let in: at most `clients` per client address (0:
 * RDZV_DEFAULT_CLIENTS; the launcher passes what its job needs when every node shares one
 * address), that plus RDZV_SPARE_CONNECTIONS in all; idle or stalled ones are closed after
 * RDZV_IDLE_TIMEOUT_S. The token is checked again by the store as soon as the headers are in,
 * before any body is read; a refused connection is closed. When the port is taken,
 * errno is EADDRINUSE on return (the caller may name who holds it). */
enum tipc_status rdzv_server_start_for(struct rdzv_server **S, const char *bind_ip, int port,
                                       const char *job, const char *token, int clients);
enum tipc_status rdzv_server_start(struct rdzv_server **S, const char *bind_ip, int port,
                                   const char *job, const char *token);
int rdzv_server_port(const struct rdzv_server *S);
/* Connections refused at the gate for their token; the last one's address into addr. */
unsigned long rdzv_server_refused(struct rdzv_server *S, char *addr, size_t cap);
/* rdzv_store_set_about: what a client with another token is told of this store's job. */
void rdzv_server_set_about(struct rdzv_server *S, const char *about);
/* Seconds since KEY was last written, or -1 if it never was (used for heartbeats). */
double rdzv_server_key_age(struct rdzv_server *S, const char *key);
/* Copy of KEY's value (malloc'ed) or NULL. */
char *rdzv_server_get_copy(struct rdzv_server *S, const char *key);
/* Wake every waiting GET, stop serving, free. Accepts NULL. */
void rdzv_server_stop(struct rdzv_server *S);

#endif
