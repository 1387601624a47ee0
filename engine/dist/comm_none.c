/* comm_none.c: the world-of-one backend. Every collective over one rank is the identity (allgather
 * a copy), so a 1-process run pays nothing and needs no launcher, sockets or threads. */
#include "comm.h"

#include <string.h>

#include "../../core/banned.h"

static enum tipc_status none_allreduce(void *impl, void *buf, size_t n, enum comm_dtype dt, int timeout_ms)
{
    (void)impl, (void)buf, (void)n, (void)dt, (void)timeout_ms;
    return TIPC_OK;
}
static enum tipc_status none_broadcast(void *impl, void *buf, size_t bytes, int root, int timeout_ms)
{
    (void)impl, (void)buf, (void)bytes, (void)root, (void)timeout_ms;
    return TIPC_OK;
}
static enum tipc_status none_allgather(void *impl, const void *in, void *out, size_t bytes, int timeout_ms)
{
    (void)impl, (void)timeout_ms;
    if (out != in) memmove(out, in, bytes);
    return TIPC_OK;
}
static enum tipc_status none_barrier(void *impl, int timeout_ms)
{
    (void)impl, (void)timeout_ms;
    return TIPC_OK;
}
static void none_destroy(void *impl) { (void)impl; }

const struct comm_backend comm_backend_none = {
    .name = "none", .allreduce = none_allreduce, .broadcast = none_broadcast,
    .allgather = none_allgather, .barrier = none_barrier, .destroy = none_destroy,
};
