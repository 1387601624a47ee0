/* test_train_graph.c: the plumbing of the graph-captured training step that a CPU can check.
 * - train_step_mode() picks STEP_GRAPH only where a capture can work (a backend with graphs, one
 *   process, the single strategy) and says why not otherwise (the log line).
 * - The staged step (inputs staged in backend memory, per-step values read from there, loss left
 *   there and read after the update) is the step a CUDA Graph replays; on the CPU it runs op by op
 *   and must equal the eager step BIT FOR BIT: losses, logits, parameters, momentum, BN statistics,
 *   over steps whose lr, labels, images and dropout seed all change (a value baked in instead of
 *   read from the slot would show), with STEP_GRAPH asked for too (the CPU has no graphs: it
 *   stages, and replays nothing), across a batch-size change (the graphs' key), and with a
 *   non-finite loss (TIPC_ENUMERIC, nothing updated).
 * The GPU half (graph replay vs eager vs CPU) is tests/unit/test_cuda_graph.c. */
#include "testutil.h"

#include "../../engine/backend/backend.h"
#include "../../engine/dist/comm.h"
#include "../../engine/model/dp.h"
#include "../../engine/model/mobilenet_v3.h"
#include "../../engine/model/train_graph.h"
#include "../../engine/model/train_step.h"

#define N 4
#define RES 32
#define K 10

static void build(struct net *net)
{
    struct mbv3_config cfg = {.num_classes = K, .width_mult = 0.25f, .resolution = RES, .dropout = 0.2f};
    mobilenet_v3_small_build(net, &cfg, N, (struct backend){.ops = &backend_cpu_ops});
    net_init_params(net, 11);
}

/* step t's inputs: every one of them differs from step to step */
static void inputs(int t, uint8_t *img, int32_t *y, float *lr, uint64_t *seed)
{
    for (size_t i = 0; i < (size_t)N * RES * RES * 3; i++) img[i] = (uint8_t)(((i + 7919u * t) * 2654435761u) >> 23);
    for (int i = 0; i < N; i++) y[i] = (int32_t)((i * 3 + t * 7) % K);
    *lr = 0.05f + 0.01f * (float)t;
    *seed = 1000003u * (uint64_t)t + 17;
}

static enum tipc_status step(struct net *net, enum step_mode mode, int t, int n, float *loss, float *logits)
{
    static uint8_t img[N * RES * RES * 3];
    int32_t y[N];
    float lr;
    uint64_t seed;
    inputs(t, img, y, &lr, &seed);
    struct micro_batch mb = {img, y, n, seed};
    struct train_step s = {.mode = mode, .mb = &mb, .lr = lr, .momentum = 0.9f, .weight_decay = 1e-4f,
                           .label_smoothing = 0.1f, .step = t, .logits_host = logits};
    enum tipc_status st = net_train_step(net, NULL, &s);
    *loss = s.loss;
    return st;
}

static void assert_same_net(const struct net *a, const struct net *b, const char *what)
{
    if (memcmp(a->params, b->params, sizeof(float) * a->nparams)) fail_msg("%s: parameters differ", what);
    if (memcmp(a->mom, b->mom, sizeof(float) * a->nparams)) fail_msg("%s: momentum differs", what);
    if (memcmp(a->stats, b->stats, sizeof(float) * a->nstats)) fail_msg("%s: BN statistics differ", what);
}

/* eager vs `mode`, step by step; batch n_at(t) */
static void compare(enum step_mode mode, int steps, int (*n_at)(int))
{
    struct net e, g;
    build(&e);
    build(&g);
    float le, lg, ze[N * K], zg[N * K];
    for (int t = 0; t < steps; t++) {
        int n = n_at(t);
        assert_int_equal(step(&e, STEP_EAGER, t, n, &le, ze), TIPC_OK);
        assert_int_equal(step(&g, mode, t, n, &lg, zg), TIPC_OK);
        if (memcmp(&le, &lg, sizeof le)) fail_msg("step %d: loss %.9g (eager) vs %.9g (staged)", t, le, lg);
        if (memcmp(ze, zg, sizeof(float) * (size_t)n * K)) fail_msg("step %d: logits differ", t);
        assert_same_net(&e, &g, "after a step");
        assert_true(isfinite(le) && le > 0);
    }
    assert_int_equal(train_graph_replays(&g), 0); /* the CPU has no graphs: nothing was replayed */
    net_free(&e);
    net_free(&g);
}

static int full(int t) { (void)t; return N; }
static int changing(int t) { return t == 2 || t == 3 ? N - 1 : N; }

static void test_staged_equals_eager(void **state)
{
    (void)state;
    compare(STEP_STAGED, 5, full);
}

static void test_graph_mode_on_cpu_stages(void **state)
{
    (void)state;
    compare(STEP_GRAPH, 4, full);
}

static void test_batch_change(void **state)
{
    (void)state;
    compare(STEP_GRAPH, 6, changing);
}

/* A non-finite loss: TIPC_ENUMERIC with the loss, and no update, in both modes. */
static void test_nonfinite_loss(void **state)
{
    (void)state;
    for (int m = 0; m < 2; m++) {
        struct net net;
        build(&net);
        float inf = INFINITY, loss, z[N * K];
        net_from_host(&net, net.params + net.nparams - 1, &inf, 1); /* the classifier's last bias */
        float *before = malloc(sizeof(float) * net.nparams), *mom = malloc(sizeof(float) * net.nparams);
        memcpy(before, net.params, sizeof(float) * net.nparams);
        memcpy(mom, net.mom, sizeof(float) * net.nparams);
        assert_int_equal(step(&net, m ? STEP_STAGED : STEP_EAGER, 0, N, &loss, z), TIPC_ENUMERIC);
        assert_false(isfinite(loss));
        assert_memory_equal(net.params, before, sizeof(float) * net.nparams);
        assert_memory_equal(net.mom, mom, sizeof(float) * net.nparams);
        free(before);
        free(mom);
        net_free(&net);
    }
}

static void test_mode_decision(void **state)
{
    (void)state;
    struct net net;
    build(&net);
    char why[256];
    assert_int_equal(train_step_mode(&net, NULL, true, why, sizeof why), STEP_EAGER);
    assert_non_null(strstr(why, "eager (the cpu backend has no graphs)"));
    /* the same net on a backend table that says it has graphs */
    struct backend_ops with_graphs = backend_cpu_ops;
    with_graphs.graphs = true;
    with_graphs.name = "fake";
    const struct backend_ops *real = net.be.ops;
    net.be.ops = &with_graphs;
    assert_int_equal(train_step_mode(&net, NULL, true, why, sizeof why), STEP_GRAPH);
    assert_non_null(strstr(why, "CUDA Graph"));
    assert_int_equal(train_step_mode(&net, NULL, false, why, sizeof why), STEP_EAGER);
    assert_non_null(strstr(why, "--cuda-graph off"));
    struct dp dp;
    struct dp_opts single = {0};
    dp_init(&dp, &single, &net);
    assert_int_equal(train_step_mode(&net, &dp, true, why, sizeof why), STEP_GRAPH);
    dp_free(&dp);
    struct dp_opts sim = {.simulate_world = 2};
    dp_init(&dp, &sim, &net);
    assert_int_equal(train_step_mode(&net, &dp, true, why, sizeof why), STEP_EAGER);
    assert_non_null(strstr(why, "simulated ranks"));
    dp_free(&dp);
    struct comm *c = NULL;
    unsetenv("WORLD_SIZE");
    assert_int_equal(comm_init_from_env(&c, NULL), TIPC_OK);
    struct dp_opts dist = {.comm = c};
    dp_init(&dp, &dist, &net);
    assert_int_equal(train_step_mode(&net, &dp, true, why, sizeof why), STEP_EAGER);
    assert_non_null(strstr(why, "data parallel"));
    dp_free(&dp);
    comm_free(c);
    net.be.ops = real;
    net_free(&net);
}

/* A data-parallel strategy other than single never takes the staged path, whatever the mode says:
 * simulated ranks with STEP_GRAPH equal simulated ranks eagerly. */
static void test_dp_runs_eagerly(void **state)
{
    (void)state;
    struct net a, b;
    build(&a);
    build(&b);
    struct dp da, db;
    struct dp_opts sim = {.simulate_world = 2};
    dp_init(&da, &sim, &a);
    dp_init(&db, &sim, &b);
    static uint8_t img[2][N * RES * RES * 3];
    int32_t y[2][N];
    float lr;
    uint64_t seed[2];
    inputs(0, img[0], y[0], &lr, &seed[0]);
    inputs(1, img[1], y[1], &lr, &seed[1]);
    struct micro_batch mb[2] = {{img[0], y[0], N, seed[0]}, {img[1], y[1], N, seed[1]}};
    struct train_step sa = {.mode = STEP_EAGER, .mb = mb, .lr = lr, .momentum = 0.9f};
    struct train_step sb = {.mode = STEP_GRAPH, .mb = mb, .lr = lr, .momentum = 0.9f};
    assert_int_equal(net_train_step(&a, &da, &sa), TIPC_OK);
    assert_int_equal(net_train_step(&b, &db, &sb), TIPC_OK);
    assert_null(b.tg); /* never staged */
    assert_same_net(&a, &b, "simulated ranks");
    dp_free(&da);
    dp_free(&db);
    net_free(&a);
    net_free(&b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_mode_decision),
        cmocka_unit_test(test_staged_equals_eager),
        cmocka_unit_test(test_graph_mode_on_cpu_stages),
        cmocka_unit_test(test_batch_change),
        cmocka_unit_test(test_nonfinite_loss),
        cmocka_unit_test(test_dp_runs_eagerly),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
