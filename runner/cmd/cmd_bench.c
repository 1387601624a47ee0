/* cmd_bench.c: `tipc bench train|infer|scaling`: synthetic-data throughput of the bundled engine
 * (img/s, ms/step). The PyTorch side-by-side lives in scripts/bench/cpu_vs_pytorch.sh; the
 * ranks sweep of `scaling` in bench/scaling.c (each of its ranks is a `bench train` under
 * `tipc launch`: with WORLD_SIZE > 1 the step averages gradients through the allreduce strategy).
 * Not a test: no thresholds here. */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../cmds.h"
#include "../../core/check.h"
#include "../../core/options.h"
#include "engine_settings.h"
#include "../../core/time.h"
#include "../../core/rng.h"
#include "../../core/staged.h"
#include "../../engine/dist/comm.h"
#include "../../engine/dist/rank_env.h"
#include "../../engine/infer/infer.h"
#include "../../engine/model/mobilenet_v3.h"
#include "../../engine/model/train_graph.h"
#include "../../engine/model/train_step.h"
#include "../../engine/model/amp.h"
#include "../bench/scaling.h"
#include "../../core/banned.h"

static const char about[] =
    "Time the engine on synthetic data and print img/s and ms/step.\n"
    "  train   forward + backward + momentum SGD step (train-mode BN, dropout 0.2)\n"
    "  infer   the exported inference graph (BN folded), forward only\n"
    "  scaling `bench train` with 1, 2, 4, 8 ranks (--ranks) through `tipc launch`, same per-rank batch:\n"
    "          global and per-rank img/s, speed-up, scaling efficiency, exposed communication share;\n"
    "          the table also as scaling.{json,md,svg} in --output. --netns: one rank per network\n"
    "          namespace joined by a bridge, links shaped by --link-delay / --link-rate (tc)\n";
static const char footer[] =
    "--device gpu runs on CUDA device TIPC_DEVICE / LOCAL_RANK (default 0); each step ends with a\n"
    "device sync, so the times are of the work, not of its launch, except train's CUDA Graph mode,\n"
    "where the next step's inputs are staged while the GPU runs the step (the host is held back by\n"
    "the two input slots, so a step's time is still the GPU's) and the device syncs at the end.\n"
    "Under `tipc launch` (WORLD_SIZE > 1) `train` joins the job's collectives and averages the gradients\n"
    "over the ranks in --bucket-mb buckets overlapping backward (--overlap), as `tipc train` does.\n"
    "Exit codes: 0 ok, 2 usage, 4 a scaling run's ranks failed, 5 a result could not be written, 7 gpu not\n"
    "built or no CUDA device, or (--netns) network namespaces, veth, or the tc qdisc a link needs are not\n"
    "available here (netem for --link-delay; tbf for --link-rate alone), 130 interrupted.\n"
    "Environment (A/B runs): TIPC_NO_FUSE=1 (BN and activation as two ops), TIPC_INFER_PER_OP=1\n"
    "(infer: the op-by-op schedule on the CPU), TIPC_CUDA_TF32=1, TIPC_CUDNN_FIND=1 (see tipc help train).\n";

struct bench_opts {
    const char *model, *device, *result_dir, *precision;
    struct amp_policy amp;
    int batch, res, steps, warmup, threads, classes, bucket_mb;
    bool graph, graph_seen, overlap;
    int comm_shm;           /* enum comm_shm_mode (--comm-shm) */
    const char *transport;  /* out: how the allreduces went (comm_transport; "none" for one rank) */
    struct backend be;
    struct comm *comm;      /* WORLD_SIZE > 1: the job's collectives (allreduce strategy); NULL: one process */
    double seconds;         /* out: the timed steps' wall time */
    double comm_seconds;    /* out: the timed steps' exposed communication (dp.h comm_exposed_seconds) */
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

static enum tipc_status bench_train(struct bench_opts *o)
{
    struct net net;
    struct mbv3_config cfg = MBV3_CONFIG_DEFAULT;
    cfg.num_classes = o->classes, cfg.resolution = o->res, cfg.amp = o->amp;
    mobilenet_v3_small_build(&net, &cfg, o->batch, o->be);
    net_init_params(&net, 1);
    struct dp dp = {0};
    struct dp_opts dpo = {.comm = o->comm, .bucket_bytes = (size_t)o->bucket_mb << 20,
                          .overlap = o->overlap};
    dp_init(&dp, &dpo, &net);
    enum tipc_status st = dp_sync_from_rank0(&dp, &net, true);
    size_t ni = (size_t)o->batch * o->res * o->res * 3;
    uint8_t *img = xmalloc(ni);
    int32_t *y = xmalloc(sizeof(int32_t) * (size_t)o->batch);
    fill_images(img, ni, 7);
    for (int i = 0; i < o->batch; i++) y[i] = i % o->classes;
    char why[256];
    enum step_mode mode = train_step_mode(&net, &dp, o->graph, why, sizeof why);
    printf("# training step: %s\n", why);
    double t0 = 0, ts = 0;
    for (int s = 0; s < o->warmup + o->steps && st == TIPC_OK; s++) {
        if (s == o->warmup) t0 = now_seconds(), dp.comm_exposed_seconds = 0;
        if (s > o->warmup) g_steps[s - o->warmup - 1] = now_seconds() - ts;
        ts = now_seconds();
        struct micro_batch mb = {img, y, o->batch, (uint64_t)s * 1000003u};
        struct train_step step = {.mode = mode, .loss_unread = mode == STEP_GRAPH, .mb = &mb, .lr = 0.01f,
                                  .momentum = 0.9f, .weight_decay = 1e-5f, .step = s};
        /* the loss is not checked (random labels); a collective's failure is */
        st = net_train_step(&net, &dp, &step);
        if (st == TIPC_ENUMERIC) st = TIPC_OK;
        if (mode != STEP_GRAPH) net_sync(&net);
    }
    net_sync(&net);
    o->seconds = now_seconds() - t0;
    g_steps[o->steps - 1] = now_seconds() - ts;
    o->comm_seconds = dp.comm_exposed_seconds;   /* waited on, not the time the allreduce ran */
    printf("# acts %.1f MB, params %zu, steps replayed from a CUDA Graph %ld\n", net.nacts * 4.0 / 1e6, net.nparams,
           train_graph_replays(&net));
    dp_free(&dp);
    free(img);
    free(y);
    net_free(&net);
    return st;
}

static enum tipc_status bench_infer(struct bench_opts *o)
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
    infer_set_precision(&m, o->amp.prec); /* GPU: the 16-bit pass (replayed with --cuda-graph too) */
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
    o->seconds = now_seconds() - t0;
    g_steps[o->steps - 1] = now_seconds() - ts;
    free(img);
    infer_free(&m);
    return TIPC_OK;
}

/* One rank's figures for `bench scaling` (bench/scaling.h reads them): RESULT_DIR/rank<R>.json. */
static enum tipc_status write_rank_result(const struct bench_opts *o, int rank, int world, double median_s)
{
    json_t *j = json_pack("{s:i, s:i, s:i, s:i, s:i, s:f, s:f, s:f, s:s}", "rank", rank, "world", world, "batch",
                          o->batch, "steps", o->steps, "resolution", o->res, "seconds", o->seconds, "comm_seconds",
                          o->comm_seconds, "median_step_seconds", median_s, "transport", o->transport);
    char *text = j ? json_dumps(j, JSON_COMPACT) : NULL;
    json_decref(j);
    CHECK(text, "out of memory");
    char *path = xasprintf("%s/rank%d.json", o->result_dir, rank);
    enum tipc_status st = write_file_atomic(path, text, strlen(text));
    free(path);
    free(text);
    return st;
}

int cmd_bench(int argc, char **argv)
{
    struct bench_opts o = {.model = "mobilenet_v3_small", .device = "cpu", .batch = 32, .res = 224, .steps = 10, .warmup = 2,
                           .threads = 0, .classes = 1000, .bucket_mb = 1, .overlap = true};
    struct scaling_opts so = {.ranks = "1,2,4,8", .output = "./logs/bench_scaling", .timeout_s = 900};
    struct backend_settings eng = {0};
    const struct opt opts[] = {
        {"--model", NULL, OPT_STR, &o.model, NULL, 0, 0, "NAME", "mobilenet_v3_small (the only one)", NULL, NULL},
        {"--batch-size", "-b", OPT_INT, &o.batch, NULL, 1, 4096, "B", "images per step and rank (default 32)", NULL, NULL},
        {"--resolution", NULL, OPT_INT, &o.res, NULL, 32, 2048, "R", "input R x R (default 224)", NULL, NULL},
        {"--steps", NULL, OPT_INT, &o.steps, NULL, 1, 1000000, "S", "timed steps (default 10)", NULL, NULL},
        {"--warmup", NULL, OPT_INT, &o.warmup, NULL, 0, 1000000, "W", "untimed steps first (default 2)", NULL, NULL},
        {"--threads", NULL, OPT_INT, &o.threads, NULL, 0, 1024, "T", "CPU threads (per rank; default: all cores)", NULL, NULL},
        {"--num-classes", NULL, OPT_INT, &o.classes, NULL, 1, 100000, "K", "classes (default 1000)", NULL, NULL},
        {"--device", NULL, OPT_STR, &o.device, NULL, 0, 0, "cpu|gpu", "where to run (default cpu)", NULL, NULL},
        {"--precision", NULL, OPT_STR, &o.precision, NULL, 0, 0, "fp32|bf16|fp16",
         "train: mixed precision as tipc train --precision; infer: as tipc infer --precision\n"
         "(default fp32)", NULL, NULL},
        {"--cuda-graph", NULL, OPT_FN, &o.graph, &o.graph_seen, 0, 0, "on|off",
         "train (default on): the whole step replayed from a CUDA Graph where it can\n"
         "be (gpu; the '# training step:' line says which ran); infer (default off;\n"
         "gpu, warmup >= 2): the forward pass captured once in the warm-up (after\n"
         "one plain pass) and replayed every later step (the input upload stays\n"
         "outside the graph)", NULL, opt_on_off},
        {"--bucket-mb", NULL, OPT_INT, &o.bucket_mb, NULL, 0, 4096, "MB",
         "train, scaling: gradient allreduce bucket (Distributed.fuse_grad_size_in_MB;\n"
         "default 1, the recipe's)", NULL, NULL},
        {"--overlap", NULL, OPT_FN, &o.overlap, NULL, 0, 0, "on|off",
         "train, scaling: start each bucket's allreduce during backward (on, the\n"
         "recipe's Distributed.overlap_allreduce) or after it, blocking (off)", NULL, opt_on_off},
        {"--comm-shm", NULL, OPT_FN, &o.comm_shm, NULL, 0, 0, "auto|on|off",
         "train, scaling: ranks that all run on this host allreduce through shared\n"
         "memory (auto, as tipc train) or Gloo's TCP on loopback (off)", "TIPC_COMM_SHM", opt_auto_on_off},
        {"--ranks", NULL, OPT_STR, &so.ranks, NULL, 0, 0, "N1,N2,..", "scaling: the rank counts to run (default 1,2,4,8)", NULL, NULL},
        {"--output", NULL, OPT_STR, &so.output, NULL, 0, 0, "DIR",
         "scaling: where the table (scaling.json, .md, .svg) and each run's\n"
         "rank logs go (default ./logs/bench_scaling)", NULL, NULL},
        {"--timeout", NULL, OPT_DOUBLE, &so.timeout_s, NULL, 1, 86400, "S", "scaling: stop a run (all its ranks) after S seconds (default 900)", NULL, NULL},
        {"--netns", NULL, OPT_SWITCH, &so.netns, NULL, 0, 0, NULL,
         "scaling: one rank per network namespace (made and removed by this run;\n"
         "root), the namespaces joined by veth links to a bridge", NULL, NULL},
        {"--link-delay", NULL, OPT_STR, &so.link_delay, NULL, 0, 0, "TIME",
         "scaling --netns: one-way delay added on each link, each direction\n"
         "(tc netem; e.g. 500us, 1ms)", NULL, NULL},
        {"--link-rate", NULL, OPT_STR, &so.link_rate, NULL, 0, 0, "RATE",
         "scaling --netns: bandwidth of each link, each direction (tc netem rate,\n"
         "or tbf without a delay; e.g. 1gbit, 10gbit, 500mbit)", NULL, NULL},
        {"--result-dir", NULL, OPT_STR, &o.result_dir, NULL, 0, 0, "DIR",
         "train: write this rank's figures to DIR/rank<RANK>.json (bench scaling\nsets it)", NULL, NULL},
        ENGINE_SETTINGS_OPTS(eng),
        {0},
    };
    const struct opt_cmd cmd = {.name = "bench", .synopsis = "train|infer|scaling [options]", .about = about, .opts = opts,
                                .footer = footer, .max_pos = 1};
    const char *pos[1] = {NULL};
    struct opt_result r;
    TRY(opt_parse(&cmd, argc, argv, pos, &r));
    if (r.help) return TIPC_OK;
    if (!r.npos) return opt_usage_error(&cmd);
    const char *what = pos[0];
    if (strcmp(what, "train") && strcmp(what, "infer") && strcmp(what, "scaling"))
        return error_msg(TIPC_EUSAGE, "bench: unknown benchmark '%s' (train, infer or scaling)", what);
    if (strcmp(o.model, "mobilenet_v3_small"))
        return error_msg(TIPC_EUSAGE, "bench: unknown model '%s' (only mobilenet_v3_small)", o.model);
    if (o.batch < 1 || o.res < 32 || o.steps < 1 || o.warmup < 0 || o.classes < 1)
        return error_msg(TIPC_EUSAGE, "bench: batch >= 1, resolution >= 32, steps >= 1, classes >= 1");
    struct rank_env re;   /* rank and world from the launcher (rank_env.h); malformed: exit 2 naming it */
    TRY(rank_env_read(&re));
    int rank = re.rank, world = re.world;
    if (!strcmp(what, "scaling")) {
        so.batch = o.batch, so.res = o.res, so.steps = o.steps, so.warmup = o.warmup, so.threads = o.threads;
        so.classes = o.classes, so.bucket_mb = o.bucket_mb, so.overlap = o.overlap;
        so.comm_shm = o.comm_shm;
        if (strcmp(o.device, "cpu") || o.graph_seen || o.result_dir)
            return error_msg(TIPC_EUSAGE, "bench scaling: runs on the CPU; --device, --cuda-graph and --result-dir are "
                                          "for train and infer");
        return bench_scaling(&so);
    }
    if (so.netns || so.link_delay || so.link_rate)
        return error_msg(TIPC_EUSAGE, "bench: --netns, --link-delay and --link-rate are for 'bench scaling'");
    if (world > 1 && strcmp(what, "train"))
        return error_msg(TIPC_EUSAGE, "bench: only 'train' runs as one of several ranks (%s=%d)", re.world_var, world);
    bool gpu = !strcmp(o.device, "gpu") || !strcmp(o.device, "cuda");
    TRY(amp_policy_resolve(&o.amp, "bench", o.precision, NULL, NULL, gpu));
    if (o.amp.prec != PREC_FP32 && strcmp(what, "train") && strcmp(what, "infer"))
        return error_msg(TIPC_EUSAGE, "bench: --precision is for 'bench train' and 'bench infer'");
    backend_cpu_fix_blas(); /* may re-exec this process: join the collectives after it */
    backend_cpu_set_threads(o.threads);
    TRY(backend_open(&o.be, o.device, 0, &eng));
    enum tipc_status ast = amp_policy_check(&o.amp, &o.be, "bench");
    if (ast != TIPC_OK) {
        backend_close(&o.be);
        return ast;
    }
    bool infer = !strcmp(what, "infer");
    if (!o.graph_seen) o.graph = !infer;
    if (infer && o.graph && (!backend_has_graphs(&o.be) || o.warmup < 2)) {
        backend_close(&o.be);
        return error_msg(TIPC_EUSAGE, "bench: --cuda-graph on for infer needs --device gpu and --warmup >= 2");
    }
    struct comm_opts co = {.shm = o.comm_shm};
    enum tipc_status st = world > 1 ? comm_init_from_env(&o.comm, &co) : TIPC_OK;
    o.transport = o.comm ? comm_transport(o.comm) : "none";   /* a static string: still valid after comm_free */
    if (st != TIPC_OK) {
        backend_close(&o.be);
        return st;
    }
    if (rank == 0)
        printf("# tipc bench %s %s batch=%d resolution=%d steps=%d warmup=%d threads=%d device=%s precision=%s%s "
               "ranks=%d\n", what, o.model, o.batch, o.res, o.steps, o.warmup, o.threads, o.device,
               precision_name(o.amp.prec), infer && o.graph ? " cuda-graph" : "", world);
    fflush(stdout); /* under tipc launch stdout is a pipe: say at once that the ranks run */
    g_steps = xcalloc((size_t)o.steps, sizeof(double));
    st = !strcmp(what, "train") ? bench_train(&o) : bench_infer(&o);
    double ms = o.seconds * 1e3 / o.steps, ips = o.batch * o.steps / o.seconds;
    qsort(g_steps, (size_t)o.steps, sizeof(double), cmp_double);
    double med = g_steps[o.steps / 2];
    free(g_steps);
    comm_free(o.comm);
    backend_close(&o.be);
    if (st != TIPC_OK) return st;
    printf("%s ms/step: %.3f img/s: %.2f median ms/step: %.3f median img/s: %.2f", what, ms, ips, med * 1e3,
           o.batch / med);
    if (world > 1) printf(" (rank %d of %d, %.1f%% of the timed steps in collectives)", rank, world,
                          100 * o.comm_seconds / o.seconds);
    printf("\n");
    if (o.result_dir && (st = write_rank_result(&o, rank, world, med)) != TIPC_OK) return st;
    return fflush(stdout) ? TIPC_EIO : TIPC_OK;
}
