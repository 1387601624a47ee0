/* comm_nccl.c: NCCL backend for GPU tensors (one GPU per rank; unique id through the job's KV;
 * non-blocking init with a timeout and ncclCommAbort, so a dead peer cannot hang init, anchors #7).
 * Not built yet: this stub says so with TIPC_ENOTBUILT, in builds with and without CUDA, so the
 * engine falls back to nothing silently never. The CUDA work fills it in (issue 6). */
#include "comm.h"

#include "../core/check.h"
#include "../core/banned.h"

enum tipc_status comm_nccl_init(void **impl, int rank, int world, const struct comm_kv *kv, int timeout_ms)
{
    (void)kv, (void)timeout_ms, (void)world;
    *impl = NULL;
#ifdef TIPC_HAVE_CUDA
    return error_msg(TIPC_ENOTBUILT, "rank %d: the NCCL backend is not implemented in this version; "
                                     "use TIPC_COMM_BACKEND=gloo (CPU tensors)", rank);
#else
    error_msg(TIPC_ENOTBUILT, "rank %d: built without NCCL (TIPC_COMM_BACKEND=nccl)", rank);
    error_hint("rebuild with USE_CUDA=1 on a machine with CUDA, cuDNN and NCCL, or use TIPC_COMM_BACKEND=gloo");
    return TIPC_ENOTBUILT;
#endif
}

static enum tipc_status nccl_allreduce(void *impl, void *buf, size_t n, enum comm_dtype dt, int timeout_ms)
{
    (void)impl, (void)buf, (void)n, (void)dt, (void)timeout_ms;
    return TIPC_ENOTBUILT;
}
static enum tipc_status nccl_broadcast(void *impl, void *buf, size_t bytes, int root, int timeout_ms)
{
    (void)impl, (void)buf, (void)bytes, (void)root, (void)timeout_ms;
    return TIPC_ENOTBUILT;
}
static enum tipc_status nccl_allgather(void *impl, const void *in, void *out, size_t bytes, int timeout_ms)
{
    (void)impl, (void)in, (void)out, (void)bytes, (void)timeout_ms;
    return TIPC_ENOTBUILT;
}
static enum tipc_status nccl_barrier(void *impl, int timeout_ms)
{
    (void)impl, (void)timeout_ms;
    return TIPC_ENOTBUILT;
}
static void nccl_destroy(void *impl) { (void)impl; }

const struct comm_backend comm_backend_nccl = {
    .name = "nccl", .allreduce = nccl_allreduce, .broadcast = nccl_broadcast,
    .allgather = nccl_allgather, .barrier = nccl_barrier, .destroy = nccl_destroy,
};
