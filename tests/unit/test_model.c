/* test_model.c: the MobileNetV3-small layer list against PyTorch reference tensors
 * (tests/fixtures/mbv3_small_w025.bin, made by scripts/dump_fixtures.py): parameter counts,
 * train-mode logits and loss, every gradient, parameters and BN statistics after 2 SGD steps,
 * eval-mode logits. Tolerances: forward 1e-4 relative, gradients 1e-3 relative. */
#include "testutil.h"
#include "isa_test.h"

#include "../../engine/model/mobilenet_v3.h"
#include "../../engine/model/train_step.h"

#define FIXTURE "tests/fixtures/mbv3_small_w025.bin"

struct tensor { char name[33]; uint32_t ndim, dims[4]; size_t n; float *data; };
static struct tensor fx[16];
static int nfx;

static int load_fixture(void **state)
{
    FILE *f = fopen(FIXTURE, "rb");
    if (!f) { fprintf(stderr, "cannot open '%s'\n", FIXTURE); return -1; }
    char magic[8];
    uint32_t hv[2];
    if (fread(magic, 1, 8, f) != 8 || memcmp(magic, "TIPCFIX1", 8) || fread(hv, 4, 2, f) != 2 || hv[0] != 1 ||
        hv[1] > 16) { fclose(f); return -1; }
    nfx = (int)hv[1];
    for (int i = 0; i < nfx; i++) {
        struct tensor *t = &fx[i];
        memset(t->name, 0, sizeof t->name);
        if (fread(t->name, 1, 32, f) != 32 || fread(&t->ndim, 4, 1, f) != 1 || fread(t->dims, 4, 4, f) != 4) {
            fclose(f);
            return -1;
        }
        t->n = 1;
        for (uint32_t d = 0; d < t->ndim; d++) t->n *= t->dims[d];
        t->data = malloc(t->n * sizeof(float));
        if (fread(t->data, sizeof(float), t->n, f) != t->n) { fclose(f); return -1; }
    }
    fclose(f);
    return 0;
}
static int free_fixture(void **state)
{
    for (int i = 0; i < nfx; i++) free(fx[i].data);
    return 0;
}
static const struct tensor *get(const char *name)
{
    for (int i = 0; i < nfx; i++)
        if (!strcmp(fx[i].name, name)) return &fx[i];
    fail_msg("fixture tensor '%s' missing", name);
    return NULL;
}

static const struct backend CPU = {.ops = &backend_cpu_ops};

static void test_param_count_full(void **state)
{
    struct net net;
    struct mbv3_config cfg = MBV3_CONFIG_DEFAULT;
    mobilenet_v3_small_build(&net, &cfg, 1, CPU);
    assert_int_equal(net.nparams, 2542856);
    assert_int_equal(net_num_classes(&net), 1000);
    net_free(&net);
}

static void build_reduced(struct net *net)
{
    struct mbv3_config cfg = {.num_classes = 10, .width_mult = 0.25f, .resolution = 64, .dropout = 0.0f};
    mobilenet_v3_small_build(net, &cfg, 4, CPU);
    assert_int_equal(net->nparams, get("params")->n);
    assert_int_equal(net->nstats, get("stats")->n);
    memcpy(net->params, get("params")->data, net->nparams * sizeof(float));
    memcpy(net->stats, get("stats")->data, net->nstats * sizeof(float));
    memcpy(net->acts + net->slots[0].off, get("input")->data, get("input")->n * sizeof(float));
}

static void labels(int32_t *y)
{
    for (int i = 0; i < 4; i++) y[i] = (int32_t)get("labels")->data[i];
}

static void test_forward_backward_vs_pytorch(void **state)
{
    struct net net;
    build_reduced(&net);
    int32_t y[4];
    labels(y);
    net_forward(&net, 4);
    assert_allclose(net_logits(&net), get("logits")->data, 40, 1e-5, 1e-4, "logits");
    float loss = net_loss(&net, y, 4, 0.1f);
    assert_allclose(&loss, get("loss")->data, 1, 1e-6, 1e-4, "loss");
    net_backward(&net, 4, 0.1f);
    /* gradients: 1e-3 relative plus an absolute floor at 1e-3 of the largest gradient */
    const struct tensor *g = get("grads");
    float gmax = 0;
    for (size_t i = 0; i < g->n; i++) gmax = fmaxf(gmax, fabsf(g->data[i]));
    assert_allclose(net.grads, g->data, g->n, 1e-4 * gmax, 1e-3, "grads");
    net_free(&net);
}

static void test_sgd_steps_vs_pytorch(void **state)
{
    struct net net;
    build_reduced(&net);
    int32_t y[4];
    labels(y);
    /* the input slot holds the fixture's float batch: images NULL */
    struct micro_batch mb = {.images = NULL, .labels = y, .n = 4};
    for (int step = 0; step < 2; step++) {
        struct train_step s = {.mb = &mb, .lr = 0.1f, .momentum = 0.9f, .weight_decay = 1e-4f,
                               .label_smoothing = 0.1f, .step = step};
        assert_int_equal(net_train_step(&net, NULL, &s), TIPC_OK);
    }
    assert_allclose(net.params, get("params_step2")->data, net.nparams, 1e-5, 1e-3, "params after 2 steps");
    assert_allclose(net.stats, get("stats_step2")->data, net.nstats, 1e-5, 1e-4, "bn stats after 2 steps");
    net.train = false;
    net_forward(&net, 4);
    assert_allclose(net_logits(&net), get("logits_eval")->data, 40, 1e-5, 1e-4, "eval logits");
    net_free(&net);
}

int main(void)
{
    isa_test_setup();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_param_count_full),
        cmocka_unit_test(test_forward_backward_vs_pytorch),
        cmocka_unit_test(test_sgd_steps_vs_pytorch),
    };
    return cmocka_run_group_tests(tests, load_fixture, free_fixture);
}
