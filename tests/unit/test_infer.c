/* test_infer.c: the inference graph (BN folded, fused activations, shared activation memory)
 * against PyTorch's eval-mode logits from the fixture, the inference.tipc round trip, and the
 * loader's rejection of truncated, corrupted and hostile files, and non-finite models named. */
#include "testutil.h"
#include "isa_test.h"

#include <math.h>
#include <omp.h>
#include <unistd.h>

#include "../../engine/infer/infer.h"
#include "../../engine/model/mobilenet_v3.h"

#define FIXTURE "tests/fixtures/mbv3_small_w025.bin"
static const struct backend CPU = {.ops = &backend_cpu_ops};

/* Read the named tensor from the fixture (format: scripts/dump_fixtures.py). */
static float *fixture(const char *want, size_t *n_out)
{
    FILE *f = fopen(FIXTURE, "rb");
    assert_non_null(f);
    char magic[8];
    uint32_t hv[2];
    assert_true(fread(magic, 1, 8, f) == 8 && fread(hv, 4, 2, f) == 2);
    float *res = NULL;
    for (uint32_t i = 0; i < hv[1] && !res; i++) {
        char name[33] = {0};
        uint32_t nd, dims[4];
        assert_true(fread(name, 1, 32, f) == 32 && fread(&nd, 4, 1, f) == 1 && fread(dims, 4, 4, f) == 4);
        size_t n = 1;
        for (uint32_t d = 0; d < nd; d++) n *= dims[d];
        if (!strcmp(name, want)) {
            res = malloc(n * sizeof(float));
            assert_true(fread(res, sizeof(float), n, f) == n);
            *n_out = n;
        } else {
            fseek(f, (long)(n * sizeof(float)), SEEK_CUR);
        }
    }
    fclose(f);
    assert_non_null(res);
    return res;
}

/* The reduced net with the fixture's weights after 2 steps (non-trivial BN statistics). */
static void build(struct net *net)
{
    struct mbv3_config cfg = {.num_classes = 10, .width_mult = 0.25f, .resolution = 64, .dropout = 0.0f};
    mobilenet_v3_small_build(net, &cfg, 4, CPU);
    size_t n;
    float *p = fixture("params_step2", &n), *s = fixture("stats_step2", &n);
    memcpy(net->params, p, net->nparams * sizeof(float));
    memcpy(net->stats, s, net->nstats * sizeof(float));
    free(p);
    free(s);
}

static void set_input(struct infer_model *m)
{
    size_t n;
    float *x = fixture("input", &n);
    memcpy(m->acts + m->slot_off[0], x, n * sizeof(float));
    free(x);
}

static void test_folded_matches_pytorch_eval(void **state)
{
    struct net net;
    build(&net);
    struct infer_model m;
    infer_from_net(&m, &net, 4);
    set_input(&m);
    infer_forward(&m, 4);
    size_t n;
    float *want = fixture("logits_eval", &n);
    assert_int_equal(n, 40);
    assert_allclose(infer_logits(&m), want, 40, 1e-5, 1e-4, "folded logits");
    /* softmax rows sum to 1 */
    for (int i = 0; i < 4; i++) {
        float s = 0;
        for (int k = 0; k < 10; k++) s += infer_output(&m)[i * 10 + k];
        assert_true(fabsf(s - 1.0f) < 1e-5f);
    }
    /* liveness sharing really shares: less memory than one buffer per slot */
    size_t sum = 0;
    for (int s = 0; s < m.nslots; s++) sum += (size_t)4 * m.slots[s].H * m.slots[s].W * m.slots[s].C;
    assert_true(m.nacts < sum / 2);
    free(want);
    infer_free(&m);
    net_free(&net);
}

static void test_save_load_roundtrip_and_damage(void **state)
{
    struct net net;
    build(&net);
    struct infer_model m, r;
    infer_from_net(&m, &net, 4);
    snprintf(m.model, sizeof m.model, "mobilenet_v3_small");
    char dir[] = "/tmp/tipc-test-infer-XXXXXX";
    assert_non_null(mkdtemp(dir));
    char path[256], bad[256];
    snprintf(path, sizeof path, "%s/inference.tipc", dir);
    snprintf(bad, sizeof bad, "%s/bad.tipc", dir);
    assert_int_equal(infer_save(&m, path), TIPC_OK);
    assert_int_equal(infer_load(&r, path, 4, CPU), TIPC_OK);
    set_input(&m);
    set_input(&r);
    infer_forward(&m, 4);
    infer_forward(&r, 4);
    assert_allclose(infer_logits(&r), infer_logits(&m), 40, 0, 0, "reloaded logits");
    assert_string_equal(r.model, "mobilenet_v3_small");
    infer_free(&r);

    /* read the good file, then write damaged variants */
    FILE *f = fopen(path, "rb");
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    rewind(f);
    unsigned char *buf = malloc((size_t)n);
    assert_true(fread(buf, 1, (size_t)n, f) == (size_t)n);
    fclose(f);
    struct { long len; long flip; const char *msg; } cases[] = {
        {n / 2, -1, "checksum"},           /* truncated */
        {n, 3000, "checksum"},             /* one byte flipped */
        {10, -1, "too short"},             /* tiny */
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        if (cases[c].flip >= 0) buf[cases[c].flip] ^= 0x40;
        f = fopen(bad, "wb");
        fwrite(buf, 1, (size_t)cases[c].len, f);
        fclose(f);
        if (cases[c].flip >= 0) buf[cases[c].flip] ^= 0x40;
        struct capture cap;
        capture_stderr_begin(&cap);
        enum tipc_status st = infer_load(&r, bad, 1, CPU);
        char *err = capture_stderr_end(&cap);
        assert_int_equal(st, TIPC_EIO);
        if (!strstr(err, cases[c].msg) || !strstr(err, "bad.tipc")) fail_msg("case %zu: '%s'", c, err);
        free(err);
    }
    /* a hostile layer record with a valid checksum: slot id out of range */
    struct infer_model h = m;
    struct infer_layer *ls = malloc(sizeof *ls * (size_t)m.nlayers);
    memcpy(ls, m.layers, sizeof *ls * (size_t)m.nlayers);
    ls[3].in = 100000;
    h.layers = ls;
    assert_int_equal(infer_save(&h, bad), TIPC_OK);
    struct capture cap;
    capture_stderr_begin(&cap);
    enum tipc_status st = infer_load(&r, bad, 1, CPU);
    char *err = capture_stderr_end(&cap);
    assert_int_equal(st, TIPC_EIO);
    assert_non_null(strstr(err, "layer 3"));
    free(err);
    free(ls);
    unlink(bad);
    unlink(path);
    rmdir(dir);
    free(buf);
    infer_free(&m);
    net_free(&net);
}

/* Every layer of the CPU pass schedule, cut into 1, 2, 3, 5 and 8 parts run one after the
 * other, equals the op-by-op layer (the parts must tile the output exactly: a missed or
 * doubled block shows here), and whole passes with 1-3 helper threads equal the op-by-op
 * pass, at batch 4 and at batch 1 (other splits: few pixels split channels). */
static void check_parts(int N, int res, float width)
{
    struct net net;
    struct mbv3_config cfg = {.num_classes = 10, .width_mult = width, .resolution = res, .dropout = 0.0f};
    mobilenet_v3_small_build(&net, &cfg, N, CPU);
    net_init_params(&net, 3);
    for (size_t i = 0; i < net.nstats; i++) net.stats[i] = 0.5f + 0.25f * (float)(i % 4); /* means and variances */
    struct infer_model m;
    infer_from_net(&m, &net, N);
    uint8_t *img = malloc((size_t)N * res * res * 3);
    for (size_t i = 0; i < (size_t)N * res * res * 3; i++) img[i] = (uint8_t)(i * 37 % 251);
    infer_set_input_u8(&m, img, N);
    static const int nps[] = {1, 2, 3, 5, 8};
    for (int i = 0; i < m.nlayers; i++) {
        const struct infer_slot *so = &m.slots[m.layers[i].out];
        size_t cnt = (size_t)N * so->H * so->W * so->C;
        float *y = m.acts + m.slot_off[m.layers[i].out], *want = malloc(cnt * sizeof(float));
        infer_layer_forward(&m, i, N);
        memcpy(want, y, cnt * sizeof(float));
        double big = 1e-30; /* summation orders differ: tolerance relative to the layer's scale */
        for (size_t e = 0; e < cnt; e++) big = fabs(want[e]) > big ? fabs(want[e]) : big;
        for (size_t k = 0; k < sizeof nps / sizeof nps[0]; k++) {
            for (size_t e = 0; e < cnt; e++) y[e] = NAN;
            for (int p = 0; p < nps[k]; p++) infer_layer_part_cpu(&m, i, N, p, nps[k]);
            char label[64];
            snprintf(label, sizeof label, "layer %d in %d parts", i, nps[k]);
            assert_allclose(y, want, cnt, 1e-5 * big, 1e-5, label);
        }
        memcpy(y, want, cnt * sizeof(float));
        free(want);
    }
    float *ref = malloc((size_t)N * 10 * sizeof(float)), mx = 0;
    m.be.set.infer_per_op = true;   /* the op-by-op walk is the reference */
    infer_forward(&m, N);
    m.be.set.infer_per_op = false;
    memcpy(ref, infer_logits(&m), (size_t)N * 10 * sizeof(float));
    for (int k = 0; k < N * 10; k++) mx = fabsf(ref[k]) > mx ? fabsf(ref[k]) : mx;
    assert_true(mx > 1e-3f && mx < 1e3f); /* a net whose logits mean something */
    for (int t = 1; t <= 3; t++) {
        omp_set_num_threads(t);
        /* again and again: later passes reuse the team; batches alternate between N and 1
         * (other part counts per layer), as a last short batch does */
        for (int rep = 0; rep < 12; rep++) {
            int n = rep % 3 == 2 ? 1 : N;
            memset(m.acts + m.slot_off[m.logits_slot], 0, (size_t)N * 10 * sizeof(float));
            infer_set_input_u8(&m, img, n);
            infer_forward(&m, n);
            assert_allclose(infer_logits(&m), ref, (size_t)n * 10, 1e-5, 1e-4, "team pass logits");
        }
    }
    /* the input survives a pass: the same pass again, without setting it, gives the same logits */
    infer_set_input_u8(&m, img, N);
    infer_forward(&m, N);
    memcpy(ref, infer_logits(&m), (size_t)N * 10 * sizeof(float));
    infer_forward(&m, N);
    assert_allclose(infer_logits(&m), ref, (size_t)N * 10, 0, 0, "second pass on the same input");
    omp_set_num_threads(1);
    free(ref);
    free(img);
    infer_free(&m);
    net_free(&net);
}

/* The planner never hands the input's memory to a later activation (at 224 px, batch 8 it did:
 * a repeated pass then read its own leftovers as input and decayed into denormals, 20x slower). */
static void test_input_survives_plan(void **state)
{
    struct net net;
    struct mbv3_config cfg = MBV3_CONFIG_DEFAULT;
    mobilenet_v3_small_build(&net, &cfg, 1, CPU);
    struct infer_model m;
    infer_from_net(&m, &net, 8);
    size_t in0 = m.slot_off[0], in1 = in0 + (size_t)8 * m.slots[0].H * m.slots[0].W * m.slots[0].C;
    for (int s = 1; s < m.nslots; s++) {
        size_t a = m.slot_off[s], b = a + (size_t)8 * m.slots[s].H * m.slots[s].W * m.slots[s].C;
        if (a < in1 && in0 < b) fail_msg("slot %d [%zu, %zu) overlaps the input [%zu, %zu)", s, a, b, in0, in1);
    }
    infer_free(&m);
    net_free(&net);
}

static void test_parts_tile_each_layer(void **state)
{
    check_parts(4, 64, 0.25f);
    check_parts(1, 96, 0.5f);
}

/* "Finite or fail" on the inference model: the fixture's model passes; a NaN bias is named by its
 * layer; weights 1e20 times too large are all finite yet overflow on a plain gray image (what export
 * refuses, engine/infer/infer.h infer_check_finite); and infer_save writes nothing for a NaN. */
static void test_non_finite_models_are_named(void **state)
{
    (void)state;
    struct net net;
    build(&net);
    struct infer_model m;
    infer_from_net(&m, &net, 1);
    char what[200];
    assert_true(infer_check_finite(&m, what, sizeof what));
    float keep = m.weights[m.nweights - 1];
    m.weights[m.nweights - 1] = NAN;   /* the classifier's last bias */
    assert_false(infer_weights_finite(&m, what, sizeof what));
    if (!strstr(what, "(linear) bias [9] = nan")) fail_msg("named '%s'", what);
    struct capture cap;
    capture_stderr_begin(&cap);
    enum tipc_status st = infer_save(&m, "/tmp/tipc-test-infer-nan.tipc");
    char *err = capture_stderr_end(&cap);
    assert_int_equal(st, TIPC_ENUMERIC);
    assert_int_equal(access("/tmp/tipc-test-infer-nan.tipc", F_OK), -1);
    free(err);
    m.weights[m.nweights - 1] = keep;
    for (size_t i = 0; i < m.nweights; i++) m.weights[i] *= 1e20f;
    assert_true(infer_weights_finite(&m, what, sizeof what));
    assert_false(infer_check_finite(&m, what, sizeof what));
    if (!strstr(what, "on a plain gray image are not finite")) fail_msg("said '%s'", what);
    infer_free(&m);
    net_free(&net);
}

int main(void)
{
    isa_test_setup();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_folded_matches_pytorch_eval),
        cmocka_unit_test(test_parts_tile_each_layer),
        cmocka_unit_test(test_input_survives_plan),
        cmocka_unit_test(test_save_load_roundtrip_and_damage),
        cmocka_unit_test(test_non_finite_models_are_named),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
