/* rdzv_store.h: the rendezvous store's data and request logic, without any socket: the HTTP server
 * (rdzv_server.c, libmicrohttpd) only adapts requests to rdzv_store_handle(), so the logic can be
 * unit-tested and fuzzed (tests/fuzz/fuzz_rdzv.c) byte by byte.
 *
 * Limits (docs/distributed.md "Protocol", docs/reliability.md): a key is at most RDZV_MAX_KEY bytes,
 * a value at most RDZV_MAX_VALUE, the store at most RDZV_MAX_KEYS keys and RDZV_MAX_BYTES bytes of keys
 * and values; a write past a limit is refused (413, 414, 507) and changes nothing. The token is
 * compared in constant time (CRYPTO_memcmp) before anything else of a request is looked at. */
#ifndef TIPC_RDZV_STORE_H
#define TIPC_RDZV_STORE_H

#include <stdbool.h>
#include <stddef.h>

#include "../../core/kv.h"                   /* RDZV_MAX_VALUE: bytes of one value */

#define RDZV_MAX_KEY 256u                  /* bytes of one key */
#define RDZV_MAX_KEYS 16384u               /* keys in the store */
#define RDZV_MAX_BYTES (64u << 20)         /* keys + values in the store */

struct rdzv_store;

struct rdzv_store *rdzv_store_new(const char *job, const char *token);
void rdzv_store_free(struct rdzv_store *S);
/* Wake every waiting GET (they answer 503) and refuse to wait from now on. */
void rdzv_store_stop(struct rdzv_store *S);
/* Longest GET wait honoured (ms; default one hour). The fuzz harness sets 0. */
void rdzv_store_limit_wait(struct rdzv_store *S, long max_ms);

/* What a request with another token is told besides "wrong job token": which job holds this store
 * (its id, fingerprint, node 0's pid and host; nothing secret), so a second job on the same port
 * can name the first. NULL: nothing more. */
void rdzv_store_set_about(struct rdzv_store *S, const char *about);

/* Constant-time check of a request's token (NULL = header absent). */
bool rdzv_store_token_ok(const struct rdzv_store *S, const char *token);

struct rdzv_reply {
    unsigned code;
    char *body;   /* malloc'ed, NUL-terminated; n bytes */
    size_t n;
};
/* The 403 reply to a request with a wrong or missing token (*out filled; returns 403). */
unsigned rdzv_store_refuse(struct rdzv_store *S, struct rdzv_reply *out);
/* Everything a request can be judged on before its body arrives: token, path, method, declared
 * length. 0 = go on and read the body, else the HTTP code, with *out filled. */
unsigned rdzv_store_precheck(struct rdzv_store *S, const char *method, const char *url, const char *token,
                             const char *content_length, struct rdzv_reply *out);
/* Serve one request (method "GET"/"PUT", url "/kv/JOB/KEY", args wait=MS and create=1 as strings
 * or NULL). body_too_big: the body went past RDZV_MAX_VALUE and was not kept. *out is always filled;
 * free out->body. GET may block up to its wait. Thread-safe. */
void rdzv_store_handle(struct rdzv_store *S, const char *method, const char *url, const char *token,
                       const char *wait, const char *create, const char *body, size_t n, bool body_too_big,
                       struct rdzv_reply *out);

/* Seconds since KEY was last written, or -1 if it never was (heartbeats). */
double rdzv_store_key_age(struct rdzv_store *S, const char *key);
/* Copy of KEY's value (malloc'ed, NUL-terminated) or NULL: node 0's launcher reads the job's state. */
char *rdzv_store_get_copy(struct rdzv_store *S, const char *key);

#endif
