/* test_cuda_graph.c: the training step replayed from CUDA Graphs (train_graph.h) on a GPU:
 * - N steps replayed from graphs equal N eager steps on the same GPU BIT FOR BIT (losses, logits,
 *   parameters, momentum, BN statistics): the same kernels with per-step values read from the
 *   staged slot instead of passed by value. Each step changes lr, labels, images and the dropout
 *   seed, so a value baked into a graph shows as a difference;
 * - both stay within the CPU's results (fp32, TF32 off: 1e-3 relative, as test_cuda_ops);
 * - with loss_unread (the benchmark's mode: the host runs ahead, held only by the two slots) the
 *   result is the same once the device has synced;
 * - a non-finite loss inside a replay: TIPC_ENUMERIC and nothing updated (the device-side skip).
 * Without a CUDA build or a device every test prints `SKIP: no CUDA device (reason)`. */
#include "testutil.h"

#include "../../engine/backend/backend.h"
#include "../../engine/model/mobilenet_v3.h"
#include "../../engine/model/train_graph.h"
#include "../../engine/model/train_step.h"
#ifdef TIPC_HAVE_CUDA
#include "../../engine/ops/cuda/ops_cuda.h"
#endif

#define N 8
#define RES 64
#define K 10
#define STEPS 6

#include "cuda_test.h"   /* G, NEED_GPU(), group_setup/teardown */

static void build(struct net *net, struct backend be)
{
    struct mbv3_config cfg = {.num_classes = K, .width_mult = 0.25f, .resolution = RES, .dropout = 0.2f};
    mobilenet_v3_small_build(net, &cfg, N, be);
    net_init_params(net, 5);
}

static uint8_t img[N * RES * RES * 3];
static int32_t y[N];

static enum tipc_status step(struct net *net, enum step_mode mode, bool unread, int t, float *loss, float *logits)
{
    for (size_t i = 0; i < sizeof img; i++) img[i] = (uint8_t)(((i + 104729u * t) * 2654435761u) >> 21);
    for (int i = 0; i < N; i++) y[i] = (int32_t)((i * 7 + t * 3) % K);
    struct micro_batch mb = {img, y, N, 99991u * (uint64_t)t + 3};
    struct train_step s = {.mode = mode, .loss_unread = unread, .mb = &mb, .lr = 0.02f * (float)(t + 1),
                           .momentum = 0.9f, .weight_decay = 1e-4f, .label_smoothing = 0.1f, .step = t,
                           .logits_host = logits};
    enum tipc_status st = net_train_step(net, NULL, &s);
    *loss = s.loss;
    return st;
}

/* the net's buffers on the host: params | mom | stats */
static float *state_of(struct net *net)
{
    float *h = malloc(sizeof(float) * (2 * net->nparams + net->nstats));
    net_to_host(net, h, net->params, net->nparams);
    net_to_host(net, h + net->nparams, net->mom, net->nparams);
    net_to_host(net, h + 2 * net->nparams, net->stats, net->nstats);
    return h;
}

static void close_to(const float *got, const float *want, size_t n, double rtol, const char *what)
{
    float m = 0;
    for (size_t i = 0; i < n; i++) m = fmaxf(m, fabsf(want[i]));
    assert_allclose(got, want, n, 1e-3 * m, rtol, what);
}

static void test_graph_equals_eager(void **state)
{
    (void)state;
    NEED_GPU();
    struct net c, e, g;
    build(&c, (struct backend){.ops = &backend_cpu_ops});
    build(&e, G);
    build(&g, G);
    char w[256];
    assert_int_equal(train_step_mode(&g, NULL, true, w, sizeof w), STEP_GRAPH);
    float lc, le, lg, zc[N * K], ze[N * K], zg[N * K];
    for (int t = 0; t < STEPS; t++) {
        assert_int_equal(step(&c, STEP_EAGER, false, t, &lc, zc), TIPC_OK);
        assert_int_equal(step(&e, STEP_EAGER, false, t, &le, ze), TIPC_OK);
        assert_int_equal(step(&g, STEP_GRAPH, false, t, &lg, zg), TIPC_OK);
        if (memcmp(&le, &lg, sizeof le)) fail_msg("step %d: loss %.9g eager vs %.9g graph", t, le, lg);
        if (memcmp(ze, zg, sizeof ze)) fail_msg("step %d: logits eager vs graph differ", t);
        assert_allclose(&lg, &lc, 1, 1e-6, 1e-4, "loss vs cpu");
        close_to(zg, zc, N * K, 1e-3, "logits vs cpu");
    }
    /* one warm-up step op by op, then every step of both slots replayed */
    assert_int_equal(train_graph_replays(&g), STEPS - TRAIN_GRAPH_WARMUP);
    float *sc = state_of(&c), *se = state_of(&e), *sg = state_of(&g);
    size_t n = 2 * c.nparams + c.nstats;
    if (memcmp(se, sg, sizeof(float) * n)) fail_msg("parameters, momentum or BN statistics: eager vs graph differ");
    close_to(sg, sc, c.nparams, 1e-3, "params vs cpu");
    close_to(sg + 2 * c.nparams, sc + 2 * c.nparams, c.nstats, 1e-3, "BN statistics vs cpu");
    free(sc), free(se), free(sg);
    net_free(&c), net_free(&e), net_free(&g);
}

static void test_graph_loss_unread(void **state)
{
    (void)state;
    NEED_GPU();
    struct net e, g;
    build(&e, G);
    build(&g, G);
    float le, lg;
    for (int t = 0; t < STEPS; t++) {
        assert_int_equal(step(&e, STEP_EAGER, false, t, &le, NULL), TIPC_OK);
        assert_int_equal(step(&g, STEP_GRAPH, true, t, &lg, NULL), TIPC_OK);
        assert_true(isnan(lg));
    }
    net_sync(&g);
    float *se = state_of(&e), *sg = state_of(&g);
    if (memcmp(se, sg, sizeof(float) * (2 * e.nparams + e.nstats)))
        fail_msg("after %d steps with the loss unread: eager vs graph differ", STEPS);
    free(se), free(sg);
    net_free(&e), net_free(&g);
}

static void test_graph_nonfinite_skips(void **state)
{
    (void)state;
    NEED_GPU();
    struct net g;
    build(&g, G);
    float l;
    for (int t = 0; t < 3; t++) assert_int_equal(step(&g, STEP_GRAPH, false, t, &l, NULL), TIPC_OK);
    assert_true(train_graph_replays(&g) > 0);
    float inf = INFINITY;
    net_from_host(&g, g.params + g.nparams - 1, &inf, 1);
    float *before = state_of(&g);
    long r = train_graph_replays(&g);
    assert_int_equal(step(&g, STEP_GRAPH, false, 3, &l, NULL), TIPC_ENUMERIC);
    assert_int_equal(train_graph_replays(&g), r + 1); /* it was a replay */
    assert_false(isfinite(l));
    float *after = state_of(&g);
    if (memcmp(before, after, sizeof(float) * 2 * g.nparams)) fail_msg("a non-finite loss updated the parameters");
    free(before), free(after);
    net_free(&g);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_graph_equals_eager),
        cmocka_unit_test(test_graph_loss_unread),
        cmocka_unit_test(test_graph_nonfinite_skips),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
