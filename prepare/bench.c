/* bench.c: `tipc prepare --bench-loader DIR`: how many images per second the engine's input
 * pipeline decodes and augments, for scripts/bench/data_vs_torchvision.sh. Prints one line:
 *   loader: N images in S s: X img/s with T threads, Y img/s per thread */
#include <stdio.h>
#include <time.h>

#include "prepare.h"
#include "../engine/data/dataset.h"
#include "../engine/data/loader.h"
#include "../core/check.h"
#include "../core/time.h"
#include "../core/banned.h"

enum tipc_status prepare_bench_loader(const char *dir, int batch, int crop, int threads, int steps, bool eval)
{
    struct dataset ds;
    TRY(dataset_open(&ds, dir, !eval));
    struct loader_config c = {.batch_size = batch, .crop = crop, .resize = crop * 256 / 224, .train = !eval,
                              .rank = 0, .world = 1, .seed = 1, .threads = threads, .prefetch = 2};
    struct loader *L = NULL;
    enum tipc_status st = loader_init(&L, &ds, &c);
    const struct batch *b = NULL;
    if (st == TIPC_OK) st = loader_next(L, &b);   /* warm-up: threads started, files cached */
    double t0 = now_seconds();
    long images = 0;
    for (int i = 0; st == TIPC_OK && i < steps; i++) {
        st = loader_next(L, &b);
        if (st == TIPC_OK) images += b->n;
    }
    double dt = now_seconds() - t0;
    if (st == TIPC_OK) {
        int t = loader_threads(L);
        printf("loader: %ld images in %.3f s: %.1f img/s with %d threads, %.1f img/s per thread (%s %dpx, batch %d)\n",
               images, dt, images / dt, t, images / dt / t, eval ? "eval" : "train", crop, batch);
    }
    loader_free(L);
    dataset_free(&ds);
    return st;
}
