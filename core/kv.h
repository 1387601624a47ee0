/* kv.h: the client of the job's key-value store over HTTP (every launcher and every rank; the
 * server, node 0's launcher, is runner/launch/rdzv_server.h). The protocol (requests, answers,
 * token, limits, the keys and the rounds' rK/ prefix) is described once, in docs/distributed.md,
 * section "Protocol"; the constants both sides share are here. */
#ifndef TIPC_KV_H
#define TIPC_KV_H

#include <stdbool.h>
#include <stddef.h>
#include "status.h"

#define RDZV_TOKEN_HEADER "X-Tipc-Token"
#define RDZV_MAX_VALUE (1u << 20)

/* ---- client ---------------------------------------------------------------------------------- */
struct rdzv_client {
    char *base;      /* "http://HOST:PORT/kv/JOB/", in round k > 0 "http://HOST:PORT/kv/JOB/rK/" */
    char *root;      /* the base of round 0 (set by rdzv_client_set_round) */
    char *token;
    char *where;     /* "rank 3" / "node 1": who is asking, for messages */
    void *curl;      /* CURL *, one per client; a client is used by one thread at a time */
    int connect_timeout_ms;
    long last_http;  /* HTTP code of the last request, 0 when the server could not be reached */
};

/* No network traffic yet. host may be a name or an address; IPv6 addresses need no brackets. */
enum tipc_status rdzv_client_init(struct rdzv_client *c, const char *host, int port, const char *job,
                                  const char *token, const char *where);
void rdzv_client_free(struct rdzv_client *c);
/* Address round `round`'s keys from now on (0: the unprefixed keys of the first attempt). */
void rdzv_client_set_round(struct rdzv_client *c, int round);

/* PUT key = (val, n). With create_only, an existing key is left alone and *created (if non-NULL)
 * says whether this call created it. */
enum tipc_status rdzv_put(struct rdzv_client *c, const char *key, const void *val, size_t n,
                          bool create_only, bool *created);
/* GET key, waiting up to wait_ms for it to appear. On TIPC_OK, *found says whether it exists and
 * *val (malloc'ed, NUL-terminated, caller frees) / *n hold the value. Transport errors, a wrong
 * token or an unknown job are TIPC_EDIST with a message naming the server and c->where.
 * quiet: do not print transport errors (callers polling a server that may not be up yet, or gone);
 * HTTP errors (403, unknown job) are always printed. */
enum tipc_status rdzv_get(struct rdzv_client *c, const char *key, int wait_ms, bool quiet, bool *found,
                          char **val, size_t *n);
/* One GET of key, no wait and no message: the HTTP code (0: no answer) and the body (malloc'ed,
 * NUL-terminated, caller frees; NULL when none). To ask who holds a port. */
long rdzv_fetch(struct rdzv_client *c, const char *key, char **body);

#endif
