/* comm_shm.h: the f32 allreduce of ranks that share one host, through a shared-memory segment
 * instead of TCP (what NCCL's SHM transport and MPI's shared-memory collectives do). On loopback,
 * Gloo's TCP path costs each rank ~1 ms of CPU per MB in the kernel and its loop thread, and ~0.2
 * ms of latency per message; with one core per rank that CPU is taken from training.
 *
 * Segment: a header (one cache line per rank: its generation counters and pid) and world + 1 slots
 * of slot_bytes: a slot per rank and the result. Per chunk of at most slot_bytes:
 *   1. every rank copies its chunk into its slot and publishes `arrived` = g
 *   2. once all arrived: rank r sums its 1/world of the chunk over slots 0..world-1, in that order,
 *      into the result slot (times `scale`: 1/world for an average), and publishes `reduced` = g
 *   3. once all reduced: every rank copies the whole result back.
 * Every element is summed once, by one rank, in a fixed order: all ranks get the same bits, and with
 * 2 ranks the same bits as Gloo (a + b is commutative). A rank only rewrites its slot after step 3,
 * and step 1's wait for chunk g+1 proves every rank has finished copying chunk g's result.
 *
 * Waiting spins briefly, then sleeps on a futex; it fails with TIPC_EDIST (never hangs) when a peer
 * process is gone (its pid), a peer aborted, or the call's timeout passes. The caller (comm.c) owns
 * the naming of the segment, its exchange through the job's KV store, and the fallback to Gloo. */
#ifndef TIPC_COMM_SHM_H
#define TIPC_COMM_SHM_H

#include <stdbool.h>
#include <stddef.h>

#include "../../core/status.h"

struct comm_shm;

/* Bytes of the segment for `world` ranks with slots of slot_bytes (for a free-space check). */
size_t comm_shm_bytes(int world, size_t slot_bytes);
/* Rank 0: create the segment `name` (shm_open; O_EXCL) with its pages reserved (fallocate, so a full
 * /dev/shm is ENOSPC here, not SIGBUS later). Others: open it and check its header. `who` prefixes
 * later messages ("rank 1 (node 0)"). A failure is TIPC_EDIST with the reason in why (not printed:
 * the caller decides whether it is an error or a fallback). */
enum tipc_status comm_shm_attach(struct comm_shm **s, const char *name, int rank, int world, size_t slot_bytes,
                                 const char *who, char *why, size_t why_n);
/* Once every rank has attached: start watching the peer processes (a dead one fails a wait at once). */
void comm_shm_watch_peers(struct comm_shm *s);
/* Remove the name once every rank has attached (the mapping lives on; nothing is left behind). */
void comm_shm_unlink(const char *name);
/* buf (n floats) := scale * sum over ranks, in place. */
enum tipc_status comm_shm_allreduce(struct comm_shm *s, float *buf, size_t n, float scale, int timeout_ms);
/* Tell the peers this rank gives up (their waits fail at once), e.g. after an error. */
void comm_shm_abort(struct comm_shm *s);
void comm_shm_free(struct comm_shm *s);

#endif
