/* comm_nccl.c: NCCL backend for GPU tensors (TIPC_COMM_BACKEND=nccl; one GPU per rank, the device
 * the CUDA backend selected on this thread). Rank 0 makes the unique id and publishes it in the
 * job's KV store (key nccl_id, next to Gloo's keys); the others wait for it within the timeout.
 * The communicator is non-blocking (ncclConfig_t.blocking = 0): init and every collective are
 * polled against the timeout with ncclCommGetAsyncError, and on timeout or error the
 * communicator is aborted (ncclCommAbort), so a dead peer cannot hang this rank (anchors #7).
 * Buffers may be device or host memory: host buffers (eval counts, parameter hashes) go through a
 * device staging buffer. Collectives run on the backend's own stream after a device sync (the
 * engine's compute stream has finished producing the buffer) and are waited for (blocking calls,
 * as comm.h promises), except the gradient buckets of comm_async: enqueued on the stream behind an
 * event from the compute stream, joined back with another event, never waited for on the host
 * (nccl_allreduce_after, nccl_join). Two ranks on one GPU: NCCL refuses; the message says so and names Gloo.
 * Without CUDA: TIPC_ENOTBUILT. Not here: bucketing, sequence numbers, watchdog (comm.c). */
#include "comm.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../../core/check.h"
#include "../../core/time.h"
#ifdef TIPC_HAVE_CUDA
#include <cuda_runtime.h>
#include <nccl.h>
#endif
#include "../../core/banned.h"

#ifdef TIPC_HAVE_CUDA

struct nccl_impl {
    int rank, world, device;
    ncclComm_t comm;
    cudaStream_t stream;
    void *stage; size_t stage_bytes;   /* device copy of host buffers */
    cudaEvent_t ready, done;           /* comm_async: producer -> comm stream, comm stream -> producer */
    int broken;                        /* aborted: every later call fails at once */
};

/* Wait until the communicator leaves ncclInProgress (non-blocking init or enqueue). */
static ncclResult_t nccl_settle(struct nccl_impl *m, ncclResult_t r, double deadline)
{
    while (r == ncclInProgress) {
        if (now_seconds() > deadline) return ncclInProgress;
        usleep(100);
        if (ncclCommGetAsyncError(m->comm, &r) != ncclSuccess) return ncclInternalError;
    }
    return r;
}

static enum tipc_status nccl_fail(struct nccl_impl *m, const char *what, ncclResult_t r, int timeout_ms)
{
    if (r == ncclInProgress)
        error_msg(TIPC_EDIST, "rank %d: NCCL %s did not finish within %d ms; aborting the communicator", m->rank, what,
                  timeout_ms);
    else
        error_msg(TIPC_EDIST, "rank %d: NCCL %s failed: %s (%s)", m->rank, what, ncclGetErrorString(r),
                  m->comm ? ncclGetLastError(m->comm) : "");
    if (m->comm) ncclCommAbort(m->comm);
    m->comm = NULL;
    m->broken = 1;
    return TIPC_EDIST;
}

static void nccl_destroy(void *impl);

enum tipc_status comm_nccl_init(void **impl, int rank, int world, const struct comm_kv *kv, int timeout_ms)
{
    *impl = NULL;
    int dev = -1, ndev = 0;
    if (cudaGetDevice(&dev) != cudaSuccess || cudaGetDeviceCount(&ndev) != cudaSuccess || ndev == 0) {
        cudaGetLastError();
        error_msg(TIPC_ENOTBUILT, "rank %d: TIPC_COMM_BACKEND=nccl needs a CUDA device, and there is none", rank);
        error_hint("use TIPC_COMM_BACKEND=gloo (CPU tensors)");
        return TIPC_ENOTBUILT;
    }
    struct nccl_impl *m = xcalloc(1, sizeof *m);
    m->rank = rank, m->world = world, m->device = dev;
    ncclUniqueId id;
    double deadline = now_seconds() + timeout_ms / 1000.0;
    if (rank == 0) {
        ncclResult_t r = ncclGetUniqueId(&id);
        if (r != ncclSuccess) {
            free(m);
            return error_msg(TIPC_EDIST, "rank 0: ncclGetUniqueId failed: %s", ncclGetErrorString(r));
        }
        if (kv->set(kv->ud, "nccl_id", &id, sizeof id) != 0) {
            free(m);
            return error_msg(TIPC_EDIST, "rank 0: cannot publish the NCCL unique id in the job's store");
        }
    } else {
        char *val = NULL;
        size_t n = 0;
        int rc = kv->get(kv->ud, "nccl_id", timeout_ms, &val, &n);
        if (rc != 0 || n != sizeof id) {
            free(val);
            free(m);
            return error_msg(TIPC_EDIST, "rank %d: %s the NCCL unique id from rank 0 within %d ms", rank,
                             rc == 1 ? "never got" : "could not read", timeout_ms);
        }
        memcpy(&id, val, sizeof id);
        free(val);
    }
    if (cudaStreamCreateWithFlags(&m->stream, cudaStreamNonBlocking) != cudaSuccess) {
        free(m);
        return error_msg(TIPC_EDIST, "rank %d: cudaStreamCreate failed", rank);
    }
    if (cudaEventCreateWithFlags(&m->ready, cudaEventDisableTiming) != cudaSuccess ||
        cudaEventCreateWithFlags(&m->done, cudaEventDisableTiming) != cudaSuccess) {
        nccl_destroy(m);
        return error_msg(TIPC_EDIST, "rank %d: cudaEventCreate failed", rank);
    }
    ncclConfig_t cfg = NCCL_CONFIG_INITIALIZER;
    cfg.blocking = 0;
    ncclResult_t r = ncclCommInitRankConfig(&m->comm, world, id, rank, &cfg);
    if (m->comm) r = nccl_settle(m, r, deadline);
    if (r != ncclSuccess) {
        enum tipc_status st = nccl_fail(m, "communicator init", r, timeout_ms);
        if (r != ncclInProgress)
            error_hint("NCCL needs one GPU per rank: if two ranks share device %d, use TIPC_COMM_BACKEND=gloo, "
                       "which reduces through host memory", dev);
        nccl_destroy(m);
        return st;
    }
    *impl = m;
    return TIPC_OK;
}

/* Device pointer for buf: buf itself when it is device memory, else the staging buffer
 * (filled from buf when `in`). NULL on a CUDA error. */
static void *device_view(struct nccl_impl *m, void *buf, size_t bytes, int in, int *staged)
{
    struct cudaPointerAttributes a;
    *staged = 0;
    if (cudaPointerGetAttributes(&a, buf) == cudaSuccess && a.type == cudaMemoryTypeDevice) return buf;
    cudaGetLastError(); /* plain host memory may report an error on older drivers */
    if (bytes > m->stage_bytes) {
        cudaFree(m->stage);
        m->stage = NULL;
        m->stage_bytes = 0;
        if (cudaMalloc(&m->stage, bytes) != cudaSuccess) return NULL;
        m->stage_bytes = bytes;
    }
    /* on m->stream, so the collective (enqueued there next) sees the copy: a plain cudaMemcpy from
     * pageable memory runs on the legacy stream, may return before its DMA lands, and the
     * non-blocking m->stream does not wait for the legacy stream */
    if (in && cudaMemcpyAsync(m->stage, buf, bytes, cudaMemcpyHostToDevice, m->stream) != cudaSuccess) return NULL;
    *staged = 1;
    return m->stage;
}

/* Run one collective (enqueued by `issue` on m->stream) to completion or timeout. */
static enum tipc_status run(struct nccl_impl *m, const char *what, ncclResult_t r, int timeout_ms)
{
    double deadline = now_seconds() + timeout_ms / 1000.0;
    r = nccl_settle(m, r, deadline);
    if (r != ncclSuccess) return nccl_fail(m, what, r, timeout_ms);
    for (;;) {
        cudaError_t e = cudaStreamQuery(m->stream);
        if (e == cudaSuccess) return TIPC_OK;
        if (e != cudaErrorNotReady) {
            error_msg(TIPC_EDIST, "rank %d: NCCL %s: %s", m->rank, what, cudaGetErrorString(e));
            return nccl_fail(m, what, ncclUnhandledCudaError, timeout_ms);
        }
        ncclResult_t ar = ncclSuccess;
        ncclCommGetAsyncError(m->comm, &ar);
        if (ar != ncclSuccess && ar != ncclInProgress) return nccl_fail(m, what, ar, timeout_ms);
        if (now_seconds() > deadline) return nccl_fail(m, what, ncclInProgress, timeout_ms);
        usleep(50);
    }
}

static ncclDataType_t nccl_type(enum comm_dtype dt)
{
    return dt == COMM_F32 ? ncclFloat32 : dt == COMM_F16 ? ncclFloat16 : ncclBfloat16;
}

#define PREPARE(m, buf, bytes, in)                                                                   \
    struct nccl_impl *m = impl;                                                                      \
    if (m->broken) return error_msg(TIPC_EDIST, "rank %d: the NCCL communicator was aborted", m->rank); \
    if (cudaDeviceSynchronize() != cudaSuccess)                                                      \
        return error_msg(TIPC_EDIST, "rank %d: CUDA error before a collective: %s", m->rank,         \
                         cudaGetErrorString(cudaGetLastError()));                                    \
    int staged;                                                                                      \
    void *dptr = device_view(m, (buf), (bytes), (in), &staged);                                      \
    if (!dptr) return error_msg(TIPC_EDIST, "rank %d: cannot stage %zu bytes on the GPU", m->rank, (size_t)(bytes))

static enum tipc_status finish(struct nccl_impl *m, enum tipc_status st, int staged, void *host, size_t bytes)
{
    if (st == TIPC_OK && staged && cudaMemcpy(host, m->stage, bytes, cudaMemcpyDeviceToHost) != cudaSuccess)
        return error_msg(TIPC_EDIST, "rank %d: cannot copy a collective's result back", m->rank);
    return st;
}

static enum tipc_status nccl_allreduce_op(void *impl, void *buf, size_t n, enum comm_dtype dt, enum comm_redop op,
                                          int timeout_ms)
{
    size_t bytes = n * (dt == COMM_F32 ? 4 : 2);
    PREPARE(m, buf, bytes, 1);
    ncclResult_t r = ncclAllReduce(dptr, dptr, n, nccl_type(dt), op == COMM_AVG ? ncclAvg : ncclSum, m->comm, m->stream);
    return finish(m, run(m, "allreduce", r, timeout_ms), staged, buf, bytes);
}
static enum tipc_status nccl_allreduce(void *impl, void *buf, size_t n, enum comm_dtype dt, int timeout_ms)
{
    return nccl_allreduce_op(impl, buf, n, dt, COMM_SUM, timeout_ms);
}
static enum tipc_status nccl_broadcast(void *impl, void *buf, size_t bytes, int root, int timeout_ms)
{
    PREPARE(m, buf, bytes, 1);
    ncclResult_t r = ncclBroadcast(dptr, dptr, bytes, ncclUint8, root, m->comm, m->stream);
    return finish(m, run(m, "broadcast", r, timeout_ms), staged, buf, bytes);
}
static enum tipc_status nccl_allgather(void *impl, const void *in, void *out, size_t bytes, int timeout_ms)
{
    struct nccl_impl *mm = impl;
    size_t total = bytes * (size_t)mm->world;
    PREPARE(m, out, total, 0);
    /* in place: this rank's slice of out holds `in` */
    if (cudaMemcpyAsync((char *)dptr + bytes * (size_t)m->rank, in, bytes, cudaMemcpyDefault, m->stream) != cudaSuccess)
        return error_msg(TIPC_EDIST, "rank %d: cannot stage an allgather input", m->rank);
    ncclResult_t r = ncclAllGather((char *)dptr + bytes * (size_t)m->rank, dptr, bytes, ncclUint8, m->comm, m->stream);
    return finish(m, run(m, "allgather", r, timeout_ms), staged, out, total);
}
static enum tipc_status nccl_barrier(void *impl, int timeout_ms)
{
    float one = 1.0f;
    return nccl_allreduce(impl, &one, 1, COMM_F32, timeout_ms);
}

/* comm_allreduce_enqueue: fork m->stream off the producer's stream with an event, reduce there,
 * do not wait. Only stream operations and NCCL's enqueue (polled while ncclInProgress, which is
 * host work, not a wait for the GPU): valid inside a CUDA Graph capture of `stream`, where the
 * event wait makes m->stream join the capture. buf must be device memory. */
static enum tipc_status nccl_allreduce_after(void *impl, void *stream, void *buf, size_t n, enum comm_dtype dt,
                                             enum comm_redop op, int timeout_ms)
{
    struct nccl_impl *m = impl;
    if (m->broken) return error_msg(TIPC_EDIST, "rank %d: the NCCL communicator was aborted", m->rank);
    if (cudaEventRecord(m->ready, (cudaStream_t)stream) != cudaSuccess ||
        cudaStreamWaitEvent(m->stream, m->ready, 0) != cudaSuccess)
        return error_msg(TIPC_EDIST, "rank %d: cannot order a gradient bucket after backward: %s", m->rank,
                         cudaGetErrorString(cudaGetLastError()));
    ncclResult_t r = ncclAllReduce(buf, buf, n, nccl_type(dt), op == COMM_AVG ? ncclAvg : ncclSum, m->comm, m->stream);
    r = nccl_settle(m, r, now_seconds() + timeout_ms / 1000.0);
    if (r != ncclSuccess) return nccl_fail(m, "allreduce (bucket)", r, timeout_ms);
    return TIPC_OK;
}

/* comm_join_stream: the producer's stream waits for every bucket enqueued so far (the join of the
 * fork above); NCCL's asynchronous errors so far are reported here. */
static enum tipc_status nccl_join(void *impl, void *stream)
{
    struct nccl_impl *m = impl;
    if (m->broken) return error_msg(TIPC_EDIST, "rank %d: the NCCL communicator was aborted", m->rank);
    ncclResult_t ar = ncclSuccess;
    ncclCommGetAsyncError(m->comm, &ar);
    if (ar != ncclSuccess && ar != ncclInProgress) return nccl_fail(m, "allreduce (bucket)", ar, 0);
    if (cudaEventRecord(m->done, m->stream) != cudaSuccess ||
        cudaStreamWaitEvent((cudaStream_t)stream, m->done, 0) != cudaSuccess)
        return error_msg(TIPC_EDIST, "rank %d: cannot order the update after the gradient buckets: %s", m->rank,
                         cudaGetErrorString(cudaGetLastError()));
    return TIPC_OK;
}

static void nccl_destroy(void *impl)
{
    struct nccl_impl *m = impl;
    if (!m) return;
    if (m->comm) {
        /* finalize flushes pending work; a peer that is gone leaves it in progress: abort then */
        ncclResult_t r = ncclCommFinalize(m->comm);
        if (nccl_settle(m, r, now_seconds() + 10.0) == ncclSuccess) ncclCommDestroy(m->comm);
        else ncclCommAbort(m->comm);
    }
    if (m->stage) cudaFree(m->stage);
    if (m->ready) cudaEventDestroy(m->ready);
    if (m->done) cudaEventDestroy(m->done);
    if (m->stream) cudaStreamDestroy(m->stream);
    free(m);
}

const struct comm_backend comm_backend_nccl = {
    .name = "nccl", .device = 1, .allreduce = nccl_allreduce, .allreduce_op = nccl_allreduce_op,
    .broadcast = nccl_broadcast, .allgather = nccl_allgather, .barrier = nccl_barrier, .destroy = nccl_destroy,
    .allreduce_after = nccl_allreduce_after, .join = nccl_join,
};

#else /* !TIPC_HAVE_CUDA */

enum tipc_status comm_nccl_init(void **impl, int rank, int world, const struct comm_kv *kv, int timeout_ms)
{
    (void)kv, (void)timeout_ms, (void)world;
    *impl = NULL;
    error_msg(TIPC_ENOTBUILT, "rank %d: built without NCCL (TIPC_COMM_BACKEND=nccl)", rank);
    error_hint("rebuild with USE_CUDA=1 on a machine with CUDA, cuDNN and NCCL, or use TIPC_COMM_BACKEND=gloo");
    return TIPC_ENOTBUILT;
}
static enum tipc_status nccl_stub(void *impl, int timeout_ms)
{
    (void)impl, (void)timeout_ms;
    return TIPC_ENOTBUILT;
}
static enum tipc_status nccl_allreduce(void *impl, void *buf, size_t n, enum comm_dtype dt, int timeout_ms)
{
    (void)buf, (void)n, (void)dt;
    return nccl_stub(impl, timeout_ms);
}
static enum tipc_status nccl_broadcast(void *impl, void *buf, size_t bytes, int root, int timeout_ms)
{
    (void)buf, (void)bytes, (void)root;
    return nccl_stub(impl, timeout_ms);
}
static enum tipc_status nccl_allgather(void *impl, const void *in, void *out, size_t bytes, int timeout_ms)
{
    (void)in, (void)out, (void)bytes;
    return nccl_stub(impl, timeout_ms);
}
static void nccl_destroy(void *impl) { (void)impl; }

const struct comm_backend comm_backend_nccl = {
    .name = "nccl", .allreduce = nccl_allreduce, .broadcast = nccl_broadcast,
    .allgather = nccl_allgather, .barrier = nccl_stub, .destroy = nccl_destroy,
};

#endif
