/* cmd_bench.c: `tipc bench train|infer`: synthetic-data throughput of the bundled engine
 * (img/s, ms/step). The PyTorch side-by-side lives in scripts/bench/cpu_vs_pytorch.sh.
 * Not a test: no thresholds here. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cmds.h"
#include "../core/check.h"
#include "../core/options.h"
#include "engine_settings.h"
#include "../core/time.h"
#include "../core/rng.h"
#include "../engine/infer/infer.h"
#include "../engine/model/mobilenet_v3.h"
#include "../engine/model/train_graph.h"
#include "../engine/model/train_step.h"
#include "../core/banned.h"

static const char about[] =
    "Time the engine on synthetic data and print img/s and ms/step.\n"
    "  train   forward + backward + momentum SGD step (train-mode BN, dropout 0.2)\n"
    "  infer   the exported inference graph (BN folded), forward only\n";
static const char footer[] =
    "--device gpu runs fp32 on CUDA device TIPC_DEVICE / LOCAL_RANK (default 0); each step ends with a\n"
    "device sync, so the times are of the work, not of its launch, except train's CUDA Graph mode,\n"
    "where the next step's inputs are staged while the GPU runs the step (the host is held back by\n"
    "the two input slots, so a step's time is still the GPU's) and the device syncs at the end.\n"
    "Exit codes: 0 ok, 2 usage, 7 gpu not built or no CUDA device.\n"
    "Environment (A/B runs): TIPC_NO_FUSE=1 (BN and activation as two ops), TIPC_INFER_PER_OP=1\n"
    "(infer: the op-by-op schedule on the CPU), TIPC_CUDA_TF32=1, TIPC_CUDNN_FIND=1 (see tipc help train).\n";

struct bench_opts {
    const char *model, *device;
    int batch, res, steps, warmup, threads, classes;
    bool graph, graph_seen;
    struct backend be;
};

static void fill_images(uint8_t *img, size_t n, uint64_t seed)
{
    struct rng r;
    rng_seed(&r, seed);
    for (size_t i = 0; i < n; i++) img[i] = (uint8_t)(rng_u64(&r) >> 56);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* per-step wall times of the timed steps, for the median (robust on a shared machine) */
static double *g_steps;

static double bench_train(const struct bench_opts *o)
{
    struct net net;
    struct mbv3_config cfg = MBV3_CONFIG_DEFAULT;
    cfg.num_classes = o->classes, cfg.resolution = o->res;
    mobilenet_v3_small_build(&net, &cfg, o->batch, o->be);
    net_init_params(&net, 1);
    size_t ni = (size_t)o->batch * o->res * o->res * 3;
    uint8_t *img = xmalloc(ni);
    int32_t *y = xmalloc(sizeof(int32_t) * (size_t)o->batch);
    fill_images(img, ni, 7);
    for (int i = 0; i < o->batch; i++) y[i] = i % o->classes;
    char why[256];
    enum step_mode mode = train_step_mode(&net, NULL, o->graph, why, sizeof why);
    printf("# training step: %s\n", why);
    double t0 = 0, ts = 0;
    for (int s = 0; s < o->warmup + o->steps; s++) {
        if (s == o->warmup) t0 = now_seconds();
        if (s > o->warmup) g_steps[s - o->warmup - 1] = now_seconds() - ts;
        ts = now_seconds();
        struct micro_batch mb = {img, y, o->batch, (uint64_t)s * 1000003u};
        struct train_step step = {.mode = mode, .loss_unread = mode == STEP_GRAPH, .mb = &mb, .lr = 0.01f,
                                  .momentum = 0.9f, .weight_decay = 1e-5f, .step = s};
        net_train_step(&net, NULL, &step); /* no dp strategy: no collective; the loss is not checked */
        if (mode != STEP_GRAPH) net_sync(&net);
    }
    net_sync(&net);
    double dt = now_seconds() - t0;
    g_steps[o->steps - 1] = now_seconds() - ts;
    printf("# acts %.1f MB, params %zu, steps replayed from a CUDA Graph %ld\n", net.nacts * 4.0 / 1e6, net.nparams,
           train_graph_replays(&net));
    free(img);
    free(y);
    net_free(&net);
    return dt;
}

static double bench_infer(const struct bench_opts *o)
{
    struct net net;
    struct mbv3_config cfg = MBV3_CONFIG_DEFAULT;
    cfg.num_classes = o->classes, cfg.resolution = o->res;
    struct backend cpu;
    backend_open(&cpu, "cpu", 1, &o->be.set); /* the weights are folded on the host, then moved */
    mobilenet_v3_small_build(&net, &cfg, 1, cpu);
    net_init_params(&net, 1);
    struct infer_model m;
    infer_from_net(&m, &net, o->batch);
    net_free(&net);
    infer_move(&m, o->be);
    size_t ni = (size_t)o->batch * o->res * o->res * 3;
    uint8_t *img = xmalloc(ni);
    fill_images(img, ni, 7);
    /* the timed work is the model, as on the peers' side (float input; no decode, no
     * normalisation: tipc infer --benchmark times those separately) */
    infer_set_input_u8(&m, img, o->batch);
    double t0 = 0, ts = 0;
    bool replay = false;
    for (int s = 0; s < o->warmup + o->steps; s++) {
        if (s == o->warmup) t0 = now_seconds();
        if (s > o->warmup) g_steps[s - o->warmup - 1] = now_seconds() - ts;
        ts = now_seconds();
        if (replay) {
            backend_graph_launch(&m.be);
        } else if (o->graph && s == 1 && backend_graph_begin(&m.be)) {
            /* capture after one plain pass (workspaces and cuDNN plans exist), then replay; the
             * graph holds the workspace addresses, so nothing may grow them afterwards */
            infer_forward(&m, o->batch);
            backend_graph_end(&m.be);
            backend_graph_launch(&m.be);
            replay = true;
        } else {
            infer_forward(&m, o->batch);
        }
        infer_sync(&m);
    }
    double dt = now_seconds() - t0;
    g_steps[o->steps - 1] = now_seconds() - ts;
    free(img);
    infer_free(&m);
    return dt;
}

int cmd_bench(int argc, char **argv)
{
    struct bench_opts o = {.model = "mobilenet_v3_small", .device = "cpu", .batch = 32, .res = 224, .steps = 10, .warmup = 2,
                           .threads = 0, .classes = 1000};
    struct backend_settings eng = {0};
    const struct opt opts[] = {
        {"--model", NULL, OPT_STR, &o.model, NULL, 0, 0, "NAME", "mobilenet_v3_small (the only one)", NULL, NULL},
        {"--batch-size", "-b", OPT_INT, &o.batch, NULL, 1, 4096, "B", "images per step (default 32)", NULL, NULL},
        {"--resolution", NULL, OPT_INT, &o.res, NULL, 32, 2048, "R", "input R x R (default 224)", NULL, NULL},
        {"--steps", NULL, OPT_INT, &o.steps, NULL, 1, 1000000, "S", "timed steps (default 10)", NULL, NULL},
        {"--warmup", NULL, OPT_INT, &o.warmup, NULL, 0, 1000000, "W", "untimed steps first (default 2)", NULL, NULL},
        {"--threads", NULL, OPT_INT, &o.threads, NULL, 0, 1024, "T", "CPU threads (default: all cores)", NULL, NULL},
        {"--num-classes", NULL, OPT_INT, &o.classes, NULL, 1, 100000, "K", "classes (default 1000)", NULL, NULL},
        {"--device", NULL, OPT_STR, &o.device, NULL, 0, 0, "cpu|gpu", "where to run (default cpu)", NULL, NULL},
        {"--cuda-graph", NULL, OPT_FN, &o.graph, &o.graph_seen, 0, 0, "on|off",
         "train (default on): the whole step replayed from a CUDA Graph where it can\n"
         "be (gpu; the '# training step:' line says which ran); infer (default off;\n"
         "gpu, warmup >= 2): the forward pass captured once in the warm-up (after\n"
         "one plain pass) and replayed every later step (the input upload stays\n"
         "outside the graph)", NULL, opt_on_off},
        ENGINE_SETTINGS_OPTS(eng),
        {0},
    };
    const struct opt_cmd cmd = {.name = "bench", .synopsis = "train|infer [options]", .about = about, .opts = opts,
                                .footer = footer, .max_pos = 1};
    const char *pos[1] = {NULL};
    struct opt_result r;
    TRY(opt_parse(&cmd, argc, argv, pos, &r));
    if (r.help) return TIPC_OK;
    if (!r.npos) return opt_usage_error(&cmd);
    const char *what = pos[0];
    if (strcmp(what, "train") && strcmp(what, "infer"))
        return error_msg(TIPC_EUSAGE, "bench: unknown benchmark '%s' (train or infer)", what);
    if (strcmp(o.model, "mobilenet_v3_small"))
        return error_msg(TIPC_EUSAGE, "bench: unknown model '%s' (only mobilenet_v3_small)", o.model);
    if (o.batch < 1 || o.res < 32 || o.steps < 1 || o.warmup < 0 || o.classes < 1)
        return error_msg(TIPC_EUSAGE, "bench: batch >= 1, resolution >= 32, steps >= 1, classes >= 1");
    backend_cpu_fix_blas();
    backend_cpu_set_threads(o.threads);
    TRY(backend_open(&o.be, o.device, 0, &eng));
    bool infer = !strcmp(what, "infer");
    if (!o.graph_seen) o.graph = !infer;
    if (infer && o.graph && (!backend_has_graphs(&o.be) || o.warmup < 2)) {
        backend_close(&o.be);
        return error_msg(TIPC_EUSAGE, "bench: --cuda-graph on for infer needs --device gpu and --warmup >= 2");
    }
    printf("# tipc bench %s %s batch=%d resolution=%d steps=%d warmup=%d threads=%d device=%s%s\n", what, o.model,
           o.batch, o.res, o.steps, o.warmup, o.threads, o.device, infer && o.graph ? " cuda-graph" : "");
    g_steps = xcalloc((size_t)o.steps, sizeof(double));
    double dt = !strcmp(what, "train") ? bench_train(&o) : bench_infer(&o);
    double ms = dt * 1e3 / o.steps, ips = o.batch * o.steps / dt;
    qsort(g_steps, (size_t)o.steps, sizeof(double), cmp_double);
    double med = g_steps[o.steps / 2] * 1e3;
    free(g_steps);
    backend_close(&o.be);
    printf("%s ms/step: %.3f img/s: %.2f median ms/step: %.3f median img/s: %.2f\n", what, ms, ips, med,
           o.batch * 1e3 / med);
    return fflush(stdout) ? TIPC_EIO : TIPC_OK;
}
