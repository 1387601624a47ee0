// comm_gloo.cc: the one C++ file: a C shim over Debian's libgloo (CPU collectives over TCP).
// Gloo's rendezvous::Store is backed by the job's HTTP KV through the C callbacks of comm.h, so
// ranks meet where the launcher told them (MASTER_ADDR:MASTER_PORT) with the job's token; the TCP
// transport binds TIPC_NODE_IP. Every Gloo exception becomes TIPC_EDIST with a "rank R: ..." line;
// no exception crosses into C. Not here: timeouts policy, watchdog, env (comm.c).
#include <chrono>
#include <cstdio>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include <gloo/allgather.h>
#include <gloo/allreduce.h>
#include <gloo/barrier.h>
#include <gloo/broadcast.h>
#include <gloo/math.h>
#include <gloo/rendezvous/context.h>
#include <gloo/rendezvous/prefix_store.h>
#include <gloo/rendezvous/store.h>
#include <gloo/transport/tcp/device.h>

extern "C" {
#include "comm.h"
}

namespace {

// gloo::rendezvous::Store over the C KV callbacks. get() waits for the key like Gloo's FileStore.
class KvStore : public gloo::rendezvous::Store {
  public:
    KvStore(const comm_kv &kv, int timeout_ms) : kv_(kv), timeout_ms_(timeout_ms) {}

    void set(const std::string &key, const std::vector<char> &data) override
    {
        if (kv_.set(kv_.ud, key.c_str(), data.data(), data.size()) != 0)
            throw std::runtime_error("rendezvous store: cannot set '" + key + "'");
    }

    std::vector<char> get(const std::string &key) override
    {
        char *val = nullptr;
        size_t n = 0;
        int rc = kv_.get(kv_.ud, key.c_str(), timeout_ms_, &val, &n);
        if (rc != 0) throw std::runtime_error(missing(key, rc));
        std::vector<char> out(val, val + n);
        free(val);
        return out;
    }

    void wait(const std::vector<std::string> &keys) override
    {
        wait(keys, std::chrono::milliseconds(timeout_ms_));
    }

    void wait(const std::vector<std::string> &keys, const std::chrono::milliseconds &timeout) override
    {
        auto deadline = std::chrono::steady_clock::now() + timeout;
        for (const auto &k : keys) {
            auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
            char *val = nullptr;
            size_t n = 0;
            int rc = kv_.get(kv_.ud, k.c_str(), left.count() > 0 ? (int)left.count() : 0, &val, &n);
            free(val);
            if (rc != 0) throw std::runtime_error(missing(k, rc));
        }
    }

  private:
    static std::string missing(const std::string &key, int rc)
    {
        // Gloo's keys are the peers' ranks: say which rank never published its address
        return rc == 1 ? "rendezvous store: key '" + key + "' never appeared (that rank did not start or died)"
                       : "rendezvous store: cannot read '" + key + "'";
    }
    comm_kv kv_;
    int timeout_ms_;
};

struct Gloo {
    int rank = 0;
    std::shared_ptr<gloo::transport::Device> dev;
    std::shared_ptr<gloo::rendezvous::Context> ctx;
    // hierarchical: this node's ranks, and the ranks with this local rank on every node
    std::shared_ptr<gloo::rendezvous::Context> local, cross;
    comm_topo topo{};
    uint32_t tag = 0;
};

enum tipc_status fail(int rank, const char *what, const std::exception &e)
{
    std::fprintf(stderr, "tipc: error: rank %d: gloo %s: %s\n", rank, what, e.what());
    return TIPC_EDIST;
}

template <typename T> void reduce_16(void *c, const void *a, const void *b, size_t n)
{
    // f16/bf16: add in f32, round once (T picks the format)
    auto *o = static_cast<unsigned short *>(c);
    auto *x = static_cast<const unsigned short *>(a), *y = static_cast<const unsigned short *>(b);
    for (size_t i = 0; i < n; i++) o[i] = T::from(T::to(x[i]) + T::to(y[i]));
}
struct Half { static float to(unsigned short h) { return comm_half_to_float(h); }
              static unsigned short from(float f) { return comm_float_to_half(f); } };
struct Bf16 { static float to(unsigned short h) { return comm_bf16_to_float(h); }
              static unsigned short from(float f) { return comm_float_to_bf16(f); } };

// Sum-allreduce of n elements at buf over ctx (throws on failure).
void allreduce_on(const std::shared_ptr<gloo::rendezvous::Context> &ctx, uint32_t tag, void *buf, size_t n,
                  enum comm_dtype dt, int timeout_ms)
{
    gloo::AllreduceOptions o(ctx);
    if (dt == COMM_F32) {
        o.setOutput(static_cast<float *>(buf), n);
        o.setReduceFunction(static_cast<void (*)(void *, const void *, const void *, size_t)>(&gloo::sum<float>));
    } else {
        o.setOutput(static_cast<unsigned short *>(buf), n);
        o.setReduceFunction(dt == COMM_F16 ? &reduce_16<Half> : &reduce_16<Bf16>);
    }
    o.setTag(tag);
    o.setTimeout(std::chrono::milliseconds(timeout_ms));
    gloo::allreduce(o);
}

void broadcast_on(const std::shared_ptr<gloo::rendezvous::Context> &ctx, uint32_t tag, char *buf, size_t bytes,
                  int root, int timeout_ms)
{
    gloo::BroadcastOptions o(ctx);
    if (ctx->rank == root) o.setInput(buf, bytes);
    o.setOutput(buf, bytes);
    o.setRoot(root);
    o.setTag(tag);
    o.setTimeout(std::chrono::milliseconds(timeout_ms));
    gloo::broadcast(o);
}

// Two-level allreduce: node sum, cross-node sum of this local rank's slice, slices broadcast in the node.
void allreduce_hier(Gloo *g, void *buf, size_t n, enum comm_dtype dt, int timeout_ms)
{
    size_t es = dt == COMM_F32 ? 4 : 2, L = (size_t)g->topo.local_world;
    auto slice = [&](size_t j) { return j * n / L; };   // slice j = [slice(j), slice(j+1))
    allreduce_on(g->local, g->tag++, buf, n, dt, timeout_ms);
    size_t j = (size_t)g->topo.local_rank, len = slice(j + 1) - slice(j);
    if (len) allreduce_on(g->cross, g->tag, static_cast<char *>(buf) + slice(j) * es, len, dt, timeout_ms);
    g->tag++;
    for (size_t k = 0; k < L; k++, g->tag++)
        if (slice(k + 1) > slice(k))
            broadcast_on(g->local, g->tag, static_cast<char *>(buf) + slice(k) * es, (slice(k + 1) - slice(k)) * es,
                         (int)k, timeout_ms);
}

enum tipc_status g_allreduce(void *impl, void *buf, size_t n, enum comm_dtype dt, int timeout_ms)
{
    auto *g = static_cast<Gloo *>(impl);
    try {
        if (g->local) allreduce_hier(g, buf, n, dt, timeout_ms);
        else allreduce_on(g->ctx, g->tag++, buf, n, dt, timeout_ms);
    } catch (const std::exception &e) {
        return fail(g->rank, "allreduce", e);
    }
    return TIPC_OK;
}

enum tipc_status g_broadcast(void *impl, void *buf, size_t bytes, int root, int timeout_ms)
{
    auto *g = static_cast<Gloo *>(impl);
    try {
        broadcast_on(g->ctx, g->tag++, static_cast<char *>(buf), bytes, root, timeout_ms);
    } catch (const std::exception &e) {
        return fail(g->rank, "broadcast", e);
    }
    return TIPC_OK;
}

enum tipc_status g_allgather(void *impl, const void *in, void *out, size_t bytes, int timeout_ms)
{
    auto *g = static_cast<Gloo *>(impl);
    try {
        gloo::AllgatherOptions o(g->ctx);
        o.setInput(const_cast<char *>(static_cast<const char *>(in)), bytes);
        o.setOutput(static_cast<char *>(out), bytes * (size_t)g->ctx->size);
        o.setTag(g->tag++);
        o.setTimeout(std::chrono::milliseconds(timeout_ms));
        gloo::allgather(o);
    } catch (const std::exception &e) {
        return fail(g->rank, "allgather", e);
    }
    return TIPC_OK;
}

enum tipc_status g_barrier(void *impl, int timeout_ms)
{
    auto *g = static_cast<Gloo *>(impl);
    try {
        gloo::BarrierOptions o(g->ctx);
        o.setTag(g->tag++);
        o.setTimeout(std::chrono::milliseconds(timeout_ms));
        gloo::barrier(o);
    } catch (const std::exception &e) {
        return fail(g->rank, "barrier", e);
    }
    return TIPC_OK;
}

void g_destroy(void *impl) { delete static_cast<Gloo *>(impl); }

} // namespace

extern "C" enum tipc_status comm_gloo_init(void **impl, int rank, int world, const struct comm_topo *topo,
                                           const char *bind_addr, const struct comm_kv *kv, int timeout_ms)
{
    *impl = nullptr;
    auto *g = new Gloo;
    g->rank = rank;
    try {
        gloo::transport::tcp::attr attr;
        attr.hostname = bind_addr;
        g->dev = gloo::transport::tcp::CreateDevice(attr);
        g->ctx = std::make_shared<gloo::rendezvous::Context>(rank, world);
        g->ctx->setTimeout(std::chrono::milliseconds(timeout_ms));
        KvStore store(*kv, timeout_ms);
        g->ctx->connectFullMesh(store, g->dev);
        if (topo) {   // the node's mesh and this local rank's cross-node mesh, keys kept apart by prefix
            g->topo = *topo;
            gloo::rendezvous::PrefixStore ls("local" + std::to_string(topo->node), store);
            g->local = std::make_shared<gloo::rendezvous::Context>(topo->local_rank, topo->local_world);
            g->local->setTimeout(std::chrono::milliseconds(timeout_ms));
            g->local->connectFullMesh(ls, g->dev);
            gloo::rendezvous::PrefixStore cs("cross" + std::to_string(topo->local_rank), store);
            g->cross = std::make_shared<gloo::rendezvous::Context>(topo->node, topo->nnodes);
            g->cross->setTimeout(std::chrono::milliseconds(timeout_ms));
            g->cross->connectFullMesh(cs, g->dev);
        }
    } catch (const std::exception &e) {
        std::fprintf(stderr, "tipc: error: rank %d: cannot join the gloo mesh of %d ranks on '%s': %s\n", rank,
                     world, bind_addr, e.what());
        std::fprintf(stderr, "hint: every rank must start (check the other ranks' workerlog files) and reach "
                             "TIPC_NODE_IP of the others\n");
        delete g;
        return TIPC_EDIST;
    }
    *impl = g;
    return TIPC_OK;
}

extern "C" const struct comm_backend comm_backend_gloo = {
    "gloo", g_allreduce, g_broadcast, g_allgather, g_barrier, g_destroy, 0 /* host buffers */, nullptr, nullptr, nullptr,
};
