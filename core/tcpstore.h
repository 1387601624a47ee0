/* tcpstore.h: c10d's TCPStore protocol (torch.distributed.TCPStore), client and server, so that
 * ranks started by torchrun meet through the store its agents already run at MASTER_ADDR:MASTER_PORT,
 * and ranks started by a launcher that runs no store (Kubeflow's PyTorchJob, srun one task per rank,
 * Paddle's launch, mpirun) meet through one that rank 0 serves there, as torch's env:// init does.
 *
 * Wire format (torch >= 2.5; checked against the real server and client of torch 2.15,
 * tests/unit/test_tcpstore.c): little-endian integers, a string or byte vector is a u64 length and
 * its bytes. A connection opens with VALIDATE (u8 0, u32 0x3C85F7CE) and PING (u8 13, u32 nonce,
 * answered with the nonce); then one query at a time:
 *   SET 1 key val | COMPARE_SET 2 key expected desired -> val | GET 3 key -> val (after a WAIT)
 *   ADD 4 key i64 -> i64 | CHECK 5 n keys -> u8 (0 ready, 1 not) | WAIT 6 n keys -> u8 0 when all
 *   exist | GETNUMKEYS 7 -> i64 | DELETE_KEY 8 key -> i64 | APPEND 9 key val | MULTI_GET 10 n keys
 *   -> n vals | MULTI_SET 11 n (key val)... | CANCEL_WAIT 12 -> u8 1 (after a pending WAIT's 0).
 * A server of torch < 2.5 does not answer PING: the client refuses it with a message naming the
 * protocol it speaks. No authentication: anyone who can reach the port can read and write the
 * store, as with torchrun's own store (docs/reliability.md). */
#ifndef TIPC_TCPSTORE_H
#define TIPC_TCPSTORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "status.h"

#define TCPSTORE_MAGIC 0x3C85F7CEu
#define TCPSTORE_MAX_KEY 4096u               /* bytes of one key (the server refuses longer ones) */
#define TCPSTORE_MAX_VALUE (16u << 20)       /* bytes of one value */
#define TCPSTORE_MAX_BYTES (256u << 20)      /* keys + values the server holds */

enum tcpstore_query {
    TCPSTORE_VALIDATE, TCPSTORE_SET, TCPSTORE_COMPARE_SET, TCPSTORE_GET, TCPSTORE_ADD, TCPSTORE_CHECK,
    TCPSTORE_WAIT, TCPSTORE_GETNUMKEYS, TCPSTORE_DELETE_KEY, TCPSTORE_APPEND, TCPSTORE_MULTI_GET,
    TCPSTORE_MULTI_SET, TCPSTORE_CANCEL_WAIT, TCPSTORE_PING
};

/* Little-endian integers on the wire (client and server). */
static inline void tcpstore_put_le(unsigned char *b, uint64_t v, int bytes)
{
    for (int i = 0; i < bytes; i++) b[i] = (unsigned char)(v >> (8 * i));
}
static inline uint64_t tcpstore_get_le(const unsigned char *b, int bytes)
{
    uint64_t v = 0;
    for (int i = 0; i < bytes; i++) v |= (uint64_t)b[i] << (8 * i);
    return v;
}

/* ---- client: one connection, used by one thread at a time --------------------------------------- */
struct tcpstore;

/* Connect to host:port within connect_ms and check the handshake (VALIDATE, PING). where: who asks
 * ("rank 3"), for messages. quiet: no message when nothing listens yet (ECONNREFUSED, unreachable)
 * -- callers waiting for a store that is being started retry; a bad handshake is always printed.
 * *refused (may be NULL) says that nothing listened. */
enum tipc_status tcpstore_connect(struct tcpstore **out, const char *host, int port, int connect_ms,
                                  const char *where, bool quiet, bool *refused);
void tcpstore_close(struct tcpstore *s);
/* "host:port" */
const char *tcpstore_addr(const struct tcpstore *s);
/* The address this connection leaves from (the interface that reaches the store), as text;
 * an IPv4 address mapped into IPv6 is written as IPv4. */
void tcpstore_local_addr(const struct tcpstore *s, char *buf, size_t n);
/* Limit for a reply the server owes at once (every query but a WAIT); default 30000 ms. */
void tcpstore_set_io_timeout(struct tcpstore *s, int ms);

enum tipc_status tcpstore_set(struct tcpstore *s, const char *key, const void *val, size_t n);
/* Wait up to wait_ms for key, then read it. On TIPC_OK, *found says whether it appeared; *val
 * (malloc'ed, NUL-terminated, may be NULL) / *n hold its value. */
enum tipc_status tcpstore_get(struct tcpstore *s, const char *key, int wait_ms, bool *found, char **val,
                              size_t *n);
enum tipc_status tcpstore_add(struct tcpstore *s, const char *key, int64_t delta, int64_t *now);
enum tipc_status tcpstore_check(struct tcpstore *s, const char *key, bool *exists);
/* Set key to val unless it exists; *created (may be NULL) says whether this call set it. */
enum tipc_status tcpstore_create(struct tcpstore *s, const char *key, const void *val, size_t n, bool *created);

/* ---- server: a thread serving the protocol above (rank 0, where no launcher runs a store) -------- */
struct tcpstore_server;

/* Listen on every address (IPv6 and IPv4) at port (0: a free one) and serve until stopped. A port in
 * use is TIPC_EDIST with a message naming it; where: who serves ("rank 0"). */
enum tipc_status tcpstore_server_start(struct tcpstore_server **out, int port, const char *where);
int tcpstore_server_port(const struct tcpstore_server *S);
/* Stop serving, close every connection, free. Accepts NULL. */
void tcpstore_server_stop(struct tcpstore_server *S);

#endif
