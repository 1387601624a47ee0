/* comm.h: collectives, the only distributed interface the engine sees.
 *
 * comm_init_from_env() reads what `tipc launch` sets for each rank (RANK, WORLD_SIZE, MASTER_ADDR,
 * MASTER_PORT, TIPC_JOB_ID, TIPC_JOB_TOKEN, TIPC_NODE_IP; docs/distributed.md); the user's knobs
 * come in struct comm_opts (`tipc train` fills it from its options and their TIPC_COMM_*
 * variables). Backends:
 *   world 1          comm_none.c   (copies, no threads, no sockets)
 *   CPU tensors      comm_gloo.cc  (Debian's libgloo, TCP; its rendezvous store is our HTTP KV)
 *   GPU tensors      comm_nccl.c   (backend "nccl"; TIPC_ENOTBUILT without CUDA)
 * opts.hierarchical makes allreduce two-level (see struct comm_topo).
 * Every call is blocking and collective: all ranks call the same sequence with the same sizes
 * (a fixed order is part of the protocol, anchors.md #15). Every call returns within the timeout
 * (opts.timeout_s, default 300; comm_set_timeout) with TIPC_EDIST and a message naming
 * the rank, the collective, its sequence number and the step, instead of hanging. A watchdog
 * thread aborts the process (exit 4) if a call runs longer than opts.watchdog_s seconds (default: the
 * timeout + 5 s, a backstop for a backend that ignores its timeout), saying which collective and
 * step it is stuck in, after posting the job's failure notice so every launcher stops its ranks.
 *
 * The one exception to "blocking": comm_async (below), the gradient buckets reduced while
 * backward runs.
 *
 * Not here: which parameters to check and when (the engine's train loop), the bucket plan
 * (engine/model/grad_buckets.h). */
#ifndef TIPC_COMM_H
#define TIPC_COMM_H

#include <stdbool.h>
#include <stddef.h>
#include "../../core/status.h"

enum comm_dtype { COMM_F32, COMM_F16, COMM_BF16 };
enum comm_redop { COMM_SUM, COMM_AVG };

struct comm;

/* Gloo's f32 allreduce among ranks that all run on one host (comm_shm.h): auto = through shared
 * memory when every rank is on this host and /dev/shm has room, else TCP (saying why once). */
enum comm_shm_mode { COMM_SHM_AUTO, COMM_SHM_OFF, COMM_SHM_ON };

/* The user's knobs (`tipc train --comm-*`, env TIPC_COMM_BACKEND, TIPC_COMM_TIMEOUT, TIPC_WATCHDOG,
 * TIPC_COMM_HIERARCHICAL, TIPC_COMM_SHM). */
struct comm_opts {
    const char *backend;   /* "gloo" (NULL: the default) or "nccl" */
    int timeout_s;         /* per collective; 0: 300 */
    int watchdog_s;        /* 0: the timeout + 5 s */
    bool hierarchical;     /* two-level allreduce (node-major ranks) */
    int shm;               /* enum comm_shm_mode */
};

/* Join the job's collectives. *c owned by the caller: comm_free(). World 1 never touches the network.
 * opts may be NULL (defaults). With world > 1, SIGPIPE is ignored (if it had the default action) so
 * a dead peer is an error naming the collective, not a silent death by signal. */
enum tipc_status comm_init_from_env(struct comm **c, const struct comm_opts *opts);
void comm_free(struct comm *c);

/* Whether collectives take GPU buffers (NCCL): then pass device pointers; host ones still work. */
int comm_device_buffers(const struct comm *c);
int comm_rank(const struct comm *c);
int comm_world(const struct comm *c);
const char *comm_backend_name(const struct comm *c);
/* How f32 allreduces travel: "shared memory" (all ranks on this host) or "tcp" / the backend's. */
const char *comm_transport(const struct comm *c);

/* Per-call timeout in ms (also the watchdog's limit). */
void comm_set_timeout(struct comm *c, int ms);
/* The training step, for messages ("stuck in allreduce #12 at step 40"). */
void comm_set_step(struct comm *c, long step);

/* buf (n elements of dtype) := op over ranks of buf; AVG divides by the world size. In place. */
enum tipc_status comm_allreduce(struct comm *c, void *buf, size_t n, enum comm_dtype dt, enum comm_redop op);
/* buf (bytes) := root's buf. */
enum tipc_status comm_broadcast(struct comm *c, void *buf, size_t bytes, int root);
/* out (world * bytes, rank-major) := every rank's in (bytes). */
enum tipc_status comm_allgather(struct comm *c, const void *in, void *out, size_t bytes);
enum tipc_status comm_barrier(struct comm *c);

/* Gradient buckets: allreduce buf in consecutive chunks of at most bucket_bytes, always in the same
 * (ascending) order on every rank, so ranks can never pair different buckets (anchors #15).
 * bucket_bytes 0 = one call. Same result as comm_allreduce. */
enum tipc_status comm_allreduce_buckets(struct comm *c, void *buf, size_t n, enum comm_dtype dt,
                                        enum comm_redop op, size_t bucket_bytes);
/* Collective check that buf (bytes) is bit-identical on every rank (a 64-bit hash is allgathered).
 * A mismatch is TIPC_EDIST on every rank, with a message naming `what`, the step and the ranks that
 * differ from rank 0. */
enum tipc_status comm_check_same(struct comm *c, const void *buf, size_t bytes, const char *what);

/* ---- allreduce overlapping backward (comm_async.c) ------------------------------------------
 * A queue of in-place allreduces that run while the caller goes on, finished in submission order.
 *  - host buffers (Gloo): one communication thread per comm_async runs them with comm_allreduce
 *    (same timeout, watchdog and messages). Gloo contexts are not thread-safe: while jobs are
 *    queued or running (from the first comm_async_allreduce until comm_async_wait returns) the
 *    caller must issue no other collective on c.
 *  - device buffers (NCCL, stream != NULL: the producer's cudaStream_t): each job is enqueued on the
 *    communicator's stream behind an event recorded on `stream` (the gradients produced so far),
 *    and comm_async_wait makes `stream` wait for them with another event. No host sync, so the
 *    step stays capturable in a CUDA Graph; errors surface as NCCL's async errors.
 * comm_async_wait returns the first failure of the jobs since the last wait (later jobs are
 * skipped after one fails: the ranks abort the step anyway). */
struct comm_async;
/* stream: see above; NULL for host buffers (or a backend without streams: then the thread). */
struct comm_async *comm_async_open(struct comm *c, void *stream);
/* 1 when jobs run on a device stream (the caller's wait is then ~0 on the host) */
int comm_async_on_stream(const struct comm_async *a);
void comm_async_allreduce(struct comm_async *a, void *buf, size_t n, enum comm_dtype dt, enum comm_redop op);
/* Wait for every submitted job. *waited_s (may be NULL): seconds this call blocked (the exposed
 * communication); *busy_s (may be NULL): seconds the jobs since the last wait ran. */
enum tipc_status comm_async_wait(struct comm_async *a, double *waited_s, double *busy_s);
/* Waits for what is queued, then stops the thread. NULL is fine. */
void comm_async_close(struct comm_async *a);
/* comm_async's stream path (also usable alone): enqueue an allreduce on the backend's stream
 * after the work issued so far on `stream`, and make `stream` wait for all of them.
 * TIPC_ENOTBUILT when the backend has no streams (comm_has_streams 0). */
int comm_has_streams(const struct comm *c);
enum tipc_status comm_allreduce_enqueue(struct comm *c, void *stream, void *buf, size_t n, enum comm_dtype dt,
                                        enum comm_redop op);
enum tipc_status comm_join_stream(struct comm *c, void *stream);

/* Time spent inside collectives since init (seconds), their number and bytes: for the share of step
 * time spent waiting on communication (time inside comm / step time). */
struct comm_stats { double seconds; unsigned long calls; double bytes; };
struct comm_stats comm_get_stats(const struct comm *c);

/* ---- backend interface (comm.c dispatches; one vtable per backend) -------------------------- */
struct comm_backend {
    const char *name;
    enum tipc_status (*allreduce)(void *impl, void *buf, size_t n, enum comm_dtype dt, int timeout_ms);
    enum tipc_status (*broadcast)(void *impl, void *buf, size_t bytes, int root, int timeout_ms);
    enum tipc_status (*allgather)(void *impl, const void *in, void *out, size_t bytes, int timeout_ms);
    enum tipc_status (*barrier)(void *impl, int timeout_ms);
    void (*destroy)(void *impl);
    int device;  /* takes GPU buffers (NCCL): the engine passes device pointers (host ones are staged) */
    /* optional: reduces with op itself (COMM_AVG included), so comm.c does not scale buf on the host */
    enum tipc_status (*allreduce_op)(void *impl, void *buf, size_t n, enum comm_dtype dt, enum comm_redop op,
                                     int timeout_ms);
    /* optional (NCCL): comm_allreduce_enqueue / comm_join_stream (device buffers, no host wait) */
    enum tipc_status (*allreduce_after)(void *impl, void *stream, void *buf, size_t n, enum comm_dtype dt,
                                        enum comm_redop op, int timeout_ms);
    enum tipc_status (*join)(void *impl, void *stream);
};
extern const struct comm_backend comm_backend_none;

/* Gloo's rendezvous store, as C callbacks (comm.c backs them with the HTTP KV). */
struct comm_kv {
    void *ud;
    int (*set)(void *ud, const char *key, const void *val, size_t n);            /* 0 ok */
    int (*get)(void *ud, const char *key, int wait_ms, char **val, size_t *n);   /* 0 ok, 1 timeout, -1 error */
};
/* Hierarchical allreduce (TIPC_COMM_HIERARCHICAL=1): ranks are node-major, rank = node * local_world
 * + local_rank. Allreduce then runs inside the node, across nodes on one 1/local_world slice per local
 * rank, and broadcasts the slices inside the node: inter-node traffic shrinks by local_world. */
struct comm_topo { int node, nnodes, local_rank, local_world; };
/* comm_gloo.cc: connect a full mesh (plus the node and cross-node meshes when topo is non-NULL).
 * Errors print "rank R: ..." and return TIPC_EDIST. */
enum tipc_status comm_gloo_init(void **impl, int rank, int world, const struct comm_topo *topo,
                                const char *bind_addr, const struct comm_kv *kv, int timeout_ms);
extern const struct comm_backend comm_backend_gloo;
/* comm_nccl.c */
enum tipc_status comm_nccl_init(void **impl, int rank, int world, const struct comm_kv *kv, int timeout_ms);
extern const struct comm_backend comm_backend_nccl;

/* f16 / bf16 <-> f32 (round to nearest even), used by backends that reduce in f32. */
float comm_half_to_float(unsigned short h);
unsigned short comm_float_to_half(float f);
float comm_bf16_to_float(unsigned short h);
unsigned short comm_float_to_bf16(float f);

#endif
