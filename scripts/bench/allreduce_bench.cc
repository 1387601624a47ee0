// allreduce_bench.cc: allreduce bandwidth through tipc's comm.h vs Gloo called directly, one rank
// per process (run under `tipc launch`; scripts/bench/allreduce_vs_gloo.sh builds and runs it).
// Both sides use the same Gloo build, TCP transport, buffers, sizes and iteration counts; the peer
// side meets through Gloo's own FileStore, ours through the job's HTTP KV. Sizes alternate which
// side goes first. Every result is checked exactly (nccl-tests CheckData style) before it counts.
//
// algbw = bytes / time; busbw = algbw * 2(n-1)/n for allreduce: the bus bandwidth formula of
// nccl-tests doc/PERFORMANCE.md, which makes figures comparable across rank counts.
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <algorithm>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include <gloo/allreduce.h>
#include <gloo/barrier.h>
#include <gloo/math.h>
#include <gloo/rendezvous/context.h>
#include <gloo/rendezvous/file_store.h>
#include <gloo/rendezvous/prefix_store.h>
#include <gloo/transport/tcp/device.h>

extern "C" {
#include "../../engine/dist/comm.h"
}

static double now() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

static void gloo_sum(const std::shared_ptr<gloo::rendezvous::Context> &ctx, std::vector<float> &b, size_t n)
{
    gloo::AllreduceOptions o(ctx);
    o.setOutput(b.data(), n);
    o.setReduceFunction(static_cast<void (*)(void *, const void *, const void *, size_t)>(&gloo::sum<float>));
    o.setTag(0);
    gloo::allreduce(o);
}

static void fill(std::vector<float> &b, size_t n, int rank)
{
    for (size_t i = 0; i < n; i++) b[i] = (float)((rank + 1) * (int)((i % 251) + 1));
}
static bool check(const std::vector<float> &b, size_t n, int world)
{
    for (size_t i = 0; i < n; i++)
        if (b[i] != (float)(world * (world + 1) / 2 * (int)((i % 251) + 1))) return false;
    return true;
}

int main(int argc, char **argv)
{
    const char *store_dir = argc > 1 ? argv[1] : nullptr;
    size_t max_bytes = argc > 2 ? std::strtoull(argv[2], nullptr, 10) : (64u << 20);
    if (!store_dir) {
        std::fprintf(stderr, "usage: allreduce_bench STORE_DIR [MAX_BYTES]  (run under tipc launch)\n");
        return 2;
    }
    struct comm *c = nullptr;
    if (comm_init_from_env(&c, nullptr)) return 4;
    int rank = comm_rank(c), world = comm_world(c);
    const char *ip = std::getenv("TIPC_NODE_IP");
    // the peer: plain Gloo, its own FileStore rendezvous, its own TCP device
    gloo::rendezvous::FileStore fs(store_dir);
    gloo::transport::tcp::attr attr;
    attr.hostname = ip ? ip : "127.0.0.1";
    auto dev = gloo::transport::tcp::CreateDevice(attr);
    auto ctx = std::make_shared<gloo::rendezvous::Context>(rank, world);
    ctx->connectFullMesh(fs, dev);

    std::vector<float> buf(max_bytes / 4);
    if (rank == 0) {
        std::printf("# allreduce f32 sum, %d ranks, loopback TCP, tipc comm.h (Gloo via HTTP-KV rendezvous) vs Gloo direct\n", world);
        std::printf("# busbw = algbw * 2(n-1)/n (nccl-tests doc/PERFORMANCE.md); ratio = tipc time / gloo time\n");
        std::printf("# %10s %6s | %10s %9s %9s | %10s %9s %9s | %6s %s\n", "bytes", "iters", "tipc us", "algbw", "busbw",
                    "gloo us", "algbw", "busbw", "ratio", "check");
    }
    bool all_ok = true;
    int k = 0;
    for (size_t bytes = 1024; bytes <= max_bytes; bytes *= 4, k++) {
        size_t n = bytes / 4;
        int iters = (int)std::max<size_t>(4, std::min<size_t>(200, (128u << 20) / bytes));
        double t[2] = {1e30, 1e30};
        bool ok[2] = {true, true};
        for (int round = 0; round < 6; round++) {   // tipc, gloo, tipc, ... (first side alternates by size)
            int side = (round + k) % 2;             // 0 = tipc, 1 = gloo
            // one checked call, then `iters` back to back on zeros (in place: sums would overflow)
            fill(buf, n, rank);
            if (side == 0 ? comm_allreduce(c, buf.data(), n, COMM_F32, COMM_SUM) != TIPC_OK : (gloo_sum(ctx, buf, n), false))
                return 4;
            ok[side] = ok[side] && check(buf, n, world);
            std::fill(buf.begin(), buf.begin() + n, 0.0f);
            comm_barrier(c);
            double t0 = now();
            for (int it = 0; it < iters; it++) {
                if (side == 0) {
                    if (comm_allreduce(c, buf.data(), n, COMM_F32, COMM_SUM)) return 4;
                } else {
                    gloo_sum(ctx, buf, n);
                }
            }
            t[side] = std::min(t[side], now() - t0);   // best of 3 rounds: the box is shared
        }
        // mean over ranks of each rank's best time
        float tt[2] = {(float)t[0], (float)t[1]};
        comm_allreduce(c, tt, 2, COMM_F32, COMM_SUM);   // sum, then /world: mean over ranks
        double us[2] = {tt[0] / world / iters * 1e6, tt[1] / world / iters * 1e6};
        double alg[2] = {bytes / us[0] / 1e3, bytes / us[1] / 1e3};   // GB/s
        double f = 2.0 * (world - 1) / world;
        all_ok = all_ok && ok[0] && ok[1];
        if (rank == 0)
            std::printf("  %10zu %6d | %10.1f %9.3f %9.3f | %10.1f %9.3f %9.3f | %6.2f %s\n", bytes, iters, us[0], alg[0],
                        alg[0] * f, us[1], alg[1], alg[1] * f, us[0] / us[1], ok[0] && ok[1] ? "OK" : "FAILED");
    }
    if (rank == 0) std::printf("# %s\n", all_ok ? "OK" : "FAILED");
    comm_free(c);
    return all_ok ? 0 : 1;
}
