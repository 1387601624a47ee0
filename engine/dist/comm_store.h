/* comm_store.h: the job's key-value store as the ranks see it, whichever launcher started them
 * (rank_env.h): tipc launch's HTTP store (core/kv.h), the c10d TCPStore torchrun's agent runs, or
 * one that rank 0 serves (core/tcpstore.h). Gloo's and NCCL's bootstrap, the shared-memory segment's
 * name and the failure notice all go through it, so they work the same under every launcher.
 *
 * Keys: under tipc launch as core/kv.h names them (round K's under rK/); in a c10d store under
 * /tipc/ (round K: /tipc/rK/), so they never meet torchrun's own keys.
 *
 * Joining a c10d store (comm_store_open): rank 0 of a job whose launcher runs no store serves one
 * at the address the variables name; every rank connects (retrying while it is not up yet) and
 * publishes join/RANK = "WORLD PID HOST"; rank 0 checks that every rank came with the same world
 * and no rank twice, and answers in `joined`. Whoever waits says for whom every 10 s; a rank missing
 * after the timeout is an error naming it. comm_store_close: rank 0 keeps serving until every rank
 * has said it left (left/RANK), at most 30 s, and not once the failure notice stands. */
#ifndef TIPC_COMM_STORE_H
#define TIPC_COMM_STORE_H

#include <stdbool.h>
#include <stddef.h>

#include "rank_env.h"

struct comm_store;

/* Open (and for c10d, join) the job's store; where: "rank 3 (node 1)". timeout_s bounds the join. */
enum tipc_status comm_store_open(struct comm_store **out, const struct rank_env *e, const char *where, int timeout_s);
/* A second connection to the same store, for another thread (it joins nothing, serves nothing). */
enum tipc_status comm_store_dup(struct comm_store **out, const struct comm_store *s);
/* Say this rank is done (c10d), stop serving (rank 0, once the others left), close. NULL is fine. */
void comm_store_close(struct comm_store *s);

enum tipc_status comm_store_set(struct comm_store *s, const char *key, const void *val, size_t n);
/* Wait up to wait_ms for key. *found; *val (malloc'ed, NUL-terminated) and *n may be NULL.
 * quiet: print nothing when the store cannot be reached (a caller polling a store that may be gone). */
enum tipc_status comm_store_get(struct comm_store *s, const char *key, int wait_ms, bool quiet, bool *found,
                                char **val, size_t *n);
/* Set key unless it exists; *created (may be NULL) says whether this call did. */
enum tipc_status comm_store_create(struct comm_store *s, const char *key, const void *val, size_t n, bool *created);

/* The address Gloo binds: TIPC_NODE_IP, else (c10d) the interface this rank reaches the store from,
 * else MASTER_ADDR. */
const char *comm_store_bind_addr(const struct comm_store *s);
/* Whether it is a c10d store (another launcher than tipc launch: the ranks watch each other). */
bool comm_store_is_c10d(const struct comm_store *s);

#endif
