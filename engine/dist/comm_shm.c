/* comm_shm.c: see comm_shm.h. */
#include "comm_shm.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include <linux/futex.h>

#include "../../core/check.h"
#include "../../core/time.h"
#include "../../core/banned.h"

#define SHM_MAGIC 0x3130736d63706974ull   /* "tipcsm01" */
#define SPINS 256                         /* polls before sleeping: a peer a few us behind */
#define SLEEP_NS 2000000                  /* futex slice: how often a sleeper checks the peers */

struct peer {   /* one cache line per rank: no false sharing between the ranks' counters */
    _Atomic uint32_t arrived, reduced;   /* generation of the last chunk copied in / reduced */
    _Atomic int32_t pid;
    _Atomic uint32_t aborted;
    _Atomic uint64_t pidns;              /* inode of its pid namespace: its pid means nothing in another */
    char pad[40];
};

struct hdr {
    uint64_t magic;
    uint64_t slot_bytes;
    uint32_t world;
    char pad[44];
    struct peer peer[];
};

struct comm_shm {
    struct hdr *h;
    size_t map_bytes, slot_bytes;
    char *slots;          /* world + 1 slots: one per rank, then the result */
    int rank, world;
    uint32_t gen;         /* chunks done; the same on every rank (same calls in the same order) */
    int broken;           /* a failed call leaves the counters out of step: every later call fails */
    int *pidfd;           /* per peer: readable once it exits (-1: kill(pid, 0); -3: not in our pid namespace) */
    char who[48];
};

static size_t header_bytes(int world) { return ((sizeof(struct hdr) + (size_t)world * sizeof(struct peer)) + 4095) & ~(size_t)4095; }
size_t comm_shm_bytes(int world, size_t slot_bytes) { return header_bytes(world) + (size_t)(world + 1) * slot_bytes; }
static float *slot(const struct comm_shm *s, int j) { return (float *)(s->slots + (size_t)j * s->slot_bytes); }

static void futex_wake_all(_Atomic uint32_t *w) { syscall(SYS_futex, (uint32_t *)w, FUTEX_WAKE, INT_MAX, NULL, NULL, 0); }
static void futex_sleep(_Atomic uint32_t *w, uint32_t seen)
{
    struct timespec ts = {0, SLEEP_NS};
    syscall(SYS_futex, (uint32_t *)w, FUTEX_WAIT, seen, &ts, NULL, 0);   /* EAGAIN/ETIMEDOUT: recheck */
}
static void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
}

static uint64_t pid_namespace(void)
{
    struct stat st;
    return stat("/proc/self/ns/pid", &st) ? 0 : (uint64_t)st.st_ino;
}

static void fail_note(char *why, size_t n, const char *what, const char *name)
{
    snprintf(why, n, "%s '/dev/shm%s': %s", what, name, strerror(errno));
}

enum tipc_status comm_shm_attach(struct comm_shm **out, const char *name, int rank, int world, size_t slot_bytes,
                                 const char *who, char *why, size_t why_n)
{
    *out = NULL;
    size_t bytes = comm_shm_bytes(world, slot_bytes);
    int creator = rank == 0;
    int fd = shm_open(name, creator ? O_RDWR | O_CREAT | O_EXCL : O_RDWR, 0600);
    if (fd < 0) return fail_note(why, why_n, creator ? "cannot create" : "cannot open", name), TIPC_EDIST;
    struct stat st;
    int e = 0;
    if (creator) {
        /* reserve the pages now: a full /dev/shm (Docker's 64 MB, anchors #13) is ENOSPC here, not
         * SIGBUS at the first touch in the middle of training */
        e = posix_fallocate(fd, 0, (off_t)bytes);
        if (e) {
            errno = e;
            fail_note(why, why_n, "cannot reserve memory for", name);
            close(fd);
            shm_unlink(name);
            return TIPC_EDIST;
        }
    } else if (fstat(fd, &st) || (size_t)st.st_size != bytes) {
        snprintf(why, why_n, "'/dev/shm%s' is not the size %zu that %d ranks with %zu-byte slots need", name, bytes,
                 world, slot_bytes);
        close(fd);
        return TIPC_EDIST;
    }
    void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, fd, 0);
    close(fd);
    if (p == MAP_FAILED) {
        fail_note(why, why_n, "cannot map", name);
        if (creator) shm_unlink(name);
        return TIPC_EDIST;
    }
    struct hdr *h = p;
    if (creator) {
        h->slot_bytes = slot_bytes, h->world = (uint32_t)world;
        atomic_thread_fence(memory_order_release);
        h->magic = SHM_MAGIC;
    } else if (h->magic != SHM_MAGIC || h->world != (uint32_t)world || h->slot_bytes != slot_bytes) {
        snprintf(why, why_n, "'/dev/shm%s' is not a segment of this job's %d ranks", name, world);
        munmap(p, bytes);
        return TIPC_EDIST;
    }
    atomic_store(&h->peer[rank].pidns, pid_namespace());
    atomic_store(&h->peer[rank].pid, (int32_t)getpid());
    struct comm_shm *s = xcalloc(1, sizeof *s);
    s->h = h, s->map_bytes = bytes, s->slot_bytes = slot_bytes;
    s->slots = (char *)p + header_bytes(world);
    s->rank = rank, s->world = world;
    s->pidfd = xmalloc(sizeof(int) * (size_t)world);
    for (int j = 0; j < world; j++) s->pidfd[j] = -1;
    snprintf(s->who, sizeof s->who, "%s", who);
    *out = s;
    return TIPC_OK;
}

void comm_shm_unlink(const char *name) { shm_unlink(name); }

/* Open a pidfd on each peer (all have attached by now): opened early, before a peer could die
 * and its pid be reused. A peer in another pid namespace (containers sharing /dev/shm) is not
 * watched: its pid names some other process here; the timeout still covers it. */
void comm_shm_watch_peers(struct comm_shm *s)
{
    uint64_t ns = pid_namespace();
    for (int j = 0; j < s->world; j++) {
        int pid = atomic_load(&s->h->peer[j].pid);
        if (j == s->rank || pid <= 0 || s->pidfd[j] != -1) continue;
        if (!ns || atomic_load(&s->h->peer[j].pidns) != ns) {
            s->pidfd[j] = -3;
            continue;
        }
#ifdef SYS_pidfd_open
        s->pidfd[j] = (int)syscall(SYS_pidfd_open, pid, 0);
        if (s->pidfd[j] < 0) s->pidfd[j] = -2;   /* old kernel: kill(pid, 0) */
#else
        s->pidfd[j] = -2;
#endif
    }
}

/* Whether peer j's process is gone. A pidfd sees an exit even while the process is an unreaped
 * zombie (kill(pid, 0) still succeeds then); without pidfds (old kernels) kill is the fallback. */
static int peer_gone(struct comm_shm *s, int j)
{
    int pid = atomic_load(&s->h->peer[j].pid);
    if (pid <= 0) return 0;   /* not attached yet: the timeout covers it */
    if (s->pidfd[j] == -1) comm_shm_watch_peers(s);
    if (s->pidfd[j] == -3) return 0;
    if (s->pidfd[j] >= 0) {
        struct pollfd pf = {.fd = s->pidfd[j], .events = POLLIN};
        return poll(&pf, 1, 0) == 1;
    }
    return kill(pid, 0) && errno == ESRCH;
}

/* Why waiting for rank j cannot go on, if it cannot: a peer process gone (named first: it is the
 * cause, and the ranks that saw it abort), a peer that gave up, or the deadline. */
static enum tipc_status peer_trouble(struct comm_shm *s, int j, double deadline, const char *phase)
{
    for (int k = 0; k < s->world; k++)
        if (k != s->rank && peer_gone(s, k))
            return error_msg(TIPC_EDIST, "%s: shared-memory allreduce: rank %d (pid %d) on this host is gone%s%s",
                             s->who, k, (int)atomic_load(&s->h->peer[k].pid), k == j ? ", " : "", k == j ? phase : "");
    for (int k = 0; k < s->world; k++)
        if (atomic_load(&s->h->peer[k].aborted))
            return error_msg(TIPC_EDIST, "%s: shared-memory allreduce: rank %d gave up (see its workerlog)", s->who, k);
    if (now_seconds() > deadline)
        return error_msg(TIPC_EDIST, "%s: shared-memory allreduce: timed out waiting for rank %d %s", s->who, j,
                         phase);
    return TIPC_OK;
}

/* Wait until every peer's counter (arrived or reduced) reaches generation g. */
static enum tipc_status wait_all(struct comm_shm *s, int reduced, uint32_t g, double deadline)
{
    for (int j = 0; j < s->world; j++) {
        if (j == s->rank) continue;
        _Atomic uint32_t *w = reduced ? &s->h->peer[j].reduced : &s->h->peer[j].arrived;
        for (int spins = 0;; spins++) {
            uint32_t v = atomic_load_explicit(w, memory_order_acquire);
            if ((int32_t)(v - g) >= 0) break;
            if (spins < SPINS) {
                cpu_relax();
                continue;
            }
            TRY(peer_trouble(s, j, deadline, reduced ? "before it reduced its part" : "before it sent its chunk"));
            futex_sleep(w, v);
        }
    }
    return TIPC_OK;
}

static void publish(_Atomic uint32_t *w, uint32_t g)
{
    atomic_store_explicit(w, g, memory_order_release);
    futex_wake_all(w);
}

/* out[lo, hi) := scale * (((s0 + s1) + s2) + ...): the same order on every rank */
static void reduce_part(const struct comm_shm *s, size_t lo, size_t hi, float scale)
{
    float *restrict out = slot(s, s->world);
    const float *restrict a = slot(s, 0), *restrict b = slot(s, 1);
    if (s->world == 2) {
        for (size_t i = lo; i < hi; i++) out[i] = (a[i] + b[i]) * scale;
        return;
    }
    for (size_t i = lo; i < hi; i++) out[i] = a[i] + b[i];
    for (int j = 2; j < s->world; j++) {
        const float *restrict x = slot(s, j);
        for (size_t i = lo; i < hi; i++) out[i] += x[i];
    }
    if (scale != 1.0f)
        for (size_t i = lo; i < hi; i++) out[i] *= scale;
}

enum tipc_status comm_shm_allreduce(struct comm_shm *s, float *buf, size_t n, float scale, int timeout_ms)
{
    if (s->broken) return error_msg(TIPC_EDIST, "%s: shared-memory allreduce after a failed one", s->who);
    double deadline = now_seconds() + timeout_ms / 1000.0;
    size_t chunk = s->slot_bytes / sizeof(float);
    struct peer *me = &s->h->peer[s->rank];
    for (size_t off = 0; off < n; off += chunk) {
        size_t m = n - off < chunk ? n - off : chunk;
        /* this rank's share of the chunk, in 16-float (64-byte) units so no two ranks write a line */
        size_t part = ((m + (size_t)s->world - 1) / (size_t)s->world + 15) & ~(size_t)15;
        size_t lo = part * (size_t)s->rank < m ? part * (size_t)s->rank : m, hi = lo + part < m ? lo + part : m;
        uint32_t g = ++s->gen;
        memcpy(slot(s, s->rank), buf + off, m * sizeof(float));
        publish(&me->arrived, g);
        enum tipc_status st = wait_all(s, 0, g, deadline);
        if (!st) {
            reduce_part(s, lo, hi, scale);
            publish(&me->reduced, g);
            st = wait_all(s, 1, g, deadline);
        }
        if (st) {
            comm_shm_abort(s);
            return st;
        }
        memcpy(buf + off, slot(s, s->world), m * sizeof(float));
    }
    return TIPC_OK;
}

void comm_shm_abort(struct comm_shm *s)
{
    s->broken = 1;
    atomic_store(&s->h->peer[s->rank].aborted, 1);
    for (int j = 0; j < s->world; j++) {   /* wake every sleeper, whichever counter it sleeps on */
        futex_wake_all(&s->h->peer[j].arrived);
        futex_wake_all(&s->h->peer[j].reduced);
    }
}

void comm_shm_free(struct comm_shm *s)
{
    if (!s) return;
    for (int j = 0; j < s->world; j++)
        if (s->pidfd[j] >= 0) close(s->pidfd[j]);
    free(s->pidfd);
    munmap(s->h, s->map_bytes);
    free(s);
}
