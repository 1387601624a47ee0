/* test_cuda_amp.c: the GPU's mixed precision training ops (ops/cuda/sgd_amp.cu) against their CPU
 * twins (ops/cpu/sgd_amp.c), and the AMP training step on both backends.
 * - amp_round / amp_scale: bit for bit (NaN stays NaN: its payload may differ), over random bit
 *   patterns of every class, at every tail length and unaligned offsets;
 * - amp_unscale_check: the unscaled gradients bit for bit, and the flag (0 when finite; 1 for an
 *   inf or a NaN in the float4 body or in the scalar tail);
 * - sgd_step_amp: the update when the flag is 0 (1e-4, as sgd_step), nothing at all when it is 1;
 * - amp_update: the whole state equal over a sequence of finite and overflowing steps (growth,
 *   backoff, the 2^24 cap and the 2^-24 floor);
 * - the scaler's step (unscale + check, skippable SGD, update) captured ONCE in a CUDA Graph and
 *   replayed over steps whose gradients overflow or not: the same parameters, momentum and state as
 *   the CPU taking the same steps. The skip and the scale change are decided on the device (a
 *   replayed graph has no host decision in it);
 * - the reduced MobileNetV3 training in bf16 and fp16 (net_train_step with an AMP policy) on both
 *   backends: loss 1e-3, logits 1e-2, gradients 5e-2 and parameters 1e-2 relative (fp32's test_cuda_ops
 *   bounds x10: the GPU's fp32 sums round to a different 16-bit value only where they straddle a
 *   rounding boundary); a forced overflow (scale 2^24 in fp16) skips the step on both and halves
 *   the scale. These bounds are reasoned, not yet measured on a GPU.
 * Without a CUDA build or a device every test prints `SKIP: no CUDA device (reason)`. */
#include "cuda_test.h"

#include "../../engine/model/mobilenet_v3.h"
#include "../../engine/model/train_step.h"

static const enum precision precs[] = {PREC_BF16, PREC_FP16};
static const size_t sizes[] = {1, 3, 4, 5, 7, 1003, 4096 + 2};

/* random bit patterns: every class of float (NaN, inf, subnormal, normal, both signs) */
static float *rnd_bits(size_t n)
{
    float *p = malloc((n ? n : 1) * sizeof(float));
    for (size_t i = 0; i < n; i++) {
        rs ^= rs << 13; rs ^= rs >> 7; rs ^= rs << 17;
        uint32_t u = (uint32_t)(rs >> 17);
        if (i % 5 == 0) u = (u & 0x807fffffu) | ((uint32_t)(100 + (rs >> 59)) << 23); /* near 1 */
        p[i] = f32_from_bits(u);
    }
    return p;
}

/* device buffer == host, bit for bit except that NaN matches any NaN */
static void expect_bits(const float *d, const float *want, size_t n, const char *label)
{
    float *got = malloc((n ? n : 1) * sizeof(float));
    G.ops->download(G.ctx, got, d, n);
    size_t bad = 0;
    for (size_t i = 0; i < n; i++) {
        bool same = isnan(want[i]) ? isnan(got[i]) : f32_bits(got[i]) == f32_bits(want[i]);
        if (!same && bad++ < 5)
            fprintf(stderr, "%s[%zu]: got %08x want %08x\n", label, i, f32_bits(got[i]), f32_bits(want[i]));
    }
    free(got);
    if (bad) fail_msg("%s: %zu of %zu differ", label, bad, n);
}

static void test_round_scale(void **state)
{
    (void)state;
    NEED_GPU();
    char label[64];
    float st[AMP_STATE_FLOATS] = {1024.0f, 0, 0, 0};
    float *gst = dev(st, AMP_STATE_FLOATS);
    for (size_t k = 0; k < 2; k++)
        for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++)
            for (size_t off = 0; off < 4; off += 3) {
                enum precision p = precs[k];
                size_t n = sizes[s];
                float *x = rnd_bits(n), *y = malloc(n * sizeof(float)), *base = G.ops->alloc(G.ctx, n + 4);
                float *gx = dev(x, n), *gy = base + off;
                C->amp_round(NULL, y, x, n, p);
                G.ops->amp_round(G.ctx, gy, gx, n, p);
                snprintf(label, sizeof label, "amp_round %s n%zu off%zu", precision_name(p), n, off);
                expect_bits(gy, y, n, label);
                G.ops->upload(G.ctx, gy, x, n);
                C->amp_scale(NULL, x, n, st, p);
                G.ops->amp_scale(G.ctx, gy, n, gst, p);
                snprintf(label, sizeof label, "amp_scale %s n%zu off%zu", precision_name(p), n, off);
                expect_bits(gy, x, n, label);
                G.ops->free(G.ctx, gx), G.ops->free(G.ctx, base);
                free(x), free(y);
            }
    G.ops->free(G.ctx, gst);
}

static void unscale_case(size_t n, size_t off, size_t plant, float bad_value)
{
    /* the flag starts at 1: the op clears it */
    float st[AMP_STATE_FLOATS] = {4096.0f, 1.0f, 3.0f, 2.0f}, got[AMP_STATE_FLOATS];
    float *g = rnd(n, 1000.0f), *base = G.ops->alloc(G.ctx, n + 4), *gg = base + off, *gst = dev(st, AMP_STATE_FLOATS);
    if (plant < n) g[plant] = bad_value;
    G.ops->upload(G.ctx, gg, g, n);
    C->amp_unscale_check(NULL, g, n, st);
    G.ops->amp_unscale_check(G.ctx, gg, n, gst);
    char label[96];
    snprintf(label, sizeof label, "unscaled grads n%zu off%zu plant%zu", n, off, plant);
    expect_bits(gg, g, n, label);
    G.ops->download(G.ctx, got, gst, AMP_STATE_FLOATS);
    assert_true(st[AMP_FOUND_INF] == (plant < n ? 1.0f : 0.0f));
    assert_memory_equal(got, st, sizeof st);
    G.ops->free(G.ctx, base), G.ops->free(G.ctx, gst);
    free(g);
}

static void test_unscale_check(void **state)
{
    (void)state;
    NEED_GPU();
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++)
        for (size_t off = 0; off < 4; off++) {
            size_t n = sizes[s];
            unscale_case(n, off, n, 0);                 /* all finite: flag 0 */
            unscale_case(n, off, n - 1, INFINITY);      /* in the tail (or the body when n % 4 == 0) */
            unscale_case(n, off, n / 2, NAN);           /* in the body */
            unscale_case(n, off, 0, -INFINITY);
        }
}

static void test_sgd_amp(void **state)
{
    (void)state;
    NEED_GPU();
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++)
        for (int flag = 0; flag < 2; flag++) {
            size_t n = sizes[s];
            float st[AMP_STATE_FLOATS] = {1.0f, (float)flag, 0, 0};
            float *p = rnd(n, 1), *m = rnd(n, 1), *g = rnd(n, 1), *p0 = copy(p, n), *m0 = copy(m, n);
            float *gp = dev(p, n), *gm = dev(m, n), *gg = dev(g, n), *gst = dev(st, AMP_STATE_FLOATS);
            C->sgd_step_amp(NULL, p, m, g, n, 0.1f, 0.9f, 1e-4f, st);
            G.ops->sgd_step_amp(G.ctx, gp, gm, gg, n, 0.1f, 0.9f, 1e-4f, gst);
            if (flag) { /* skipped: untouched, bit for bit */
                expect_bits(gp, p0, n, "skipped step: params");
                expect_bits(gm, m0, n, "skipped step: momentum");
            } else {
                expect(gp, p, n, FWD, "amp sgd params");
                expect(gm, m, n, FWD, "amp sgd momentum");
            }
            float *bufs[] = {gp, gm, gg, gst};
            for (size_t i = 0; i < 4; i++) G.ops->free(G.ctx, bufs[i]);
            free(p), free(m), free(g), free(p0), free(m0);
        }
}

static void test_update(void **state)
{
    (void)state;
    NEED_GPU();
    struct loss_scaler ls = {.init_scale = 8, .growth_factor = 2, .backoff_factor = 0.5f, .growth_interval = 3,
                             .dynamic = true};
    const int flags[] = {0, 0, 0, 1, 0, 0, 1, 1, 0, 0, 0, 0, 0, 0, 0};
    for (int dyn = 0; dyn < 2; dyn++) {
        ls.dynamic = dyn;
        float st[AMP_STATE_FLOATS] = {ls.init_scale, 0, 0, 0}, got[AMP_STATE_FLOATS];
        float *gst = dev(st, AMP_STATE_FLOATS);
        for (size_t i = 0; i < sizeof flags / sizeof flags[0]; i++) {
            st[AMP_FOUND_INF] = (float)flags[i];
            G.ops->upload(G.ctx, gst + AMP_FOUND_INF, &st[AMP_FOUND_INF], 1);
            C->amp_update(NULL, st, &ls);
            G.ops->amp_update(G.ctx, gst, &ls);
            G.ops->download(G.ctx, got, gst, AMP_STATE_FLOATS);
            assert_memory_equal(got, st, sizeof st);
        }
        G.ops->free(G.ctx, gst);
    }
    /* the cap and the floor */
    ls.dynamic = true, ls.growth_interval = 1;
    float caps[2][AMP_STATE_FLOATS] = {{16777216.0f, 0, 0, 0}, {1.0f / 16777216.0f, 1, 0, 0}}, got[AMP_STATE_FLOATS];
    for (int c = 0; c < 2; c++) {
        float *gst = dev(caps[c], AMP_STATE_FLOATS);
        C->amp_update(NULL, caps[c], &ls);
        G.ops->amp_update(G.ctx, gst, &ls);
        G.ops->download(G.ctx, got, gst, AMP_STATE_FLOATS);
        assert_memory_equal(got, caps[c], sizeof got);
        assert_true(caps[c][AMP_SCALE] == (c ? 1.0f / 16777216.0f : 16777216.0f));
        G.ops->free(G.ctx, gst);
    }
}

/* the scaler's step in a CUDA Graph, replayed over overflowing and finite steps */
static void test_step_graph(void **state)
{
    (void)state;
    NEED_GPU();
    const size_t n = 1003;
    struct loss_scaler ls = {.init_scale = 1024, .growth_factor = 2, .backoff_factor = 0.5f, .growth_interval = 2,
                             .dynamic = true};
    float st[AMP_STATE_FLOATS] = {ls.init_scale, 0, 0, 0}, got[AMP_STATE_FLOATS];
    float *p = rnd(n, 1), *m = rnd(n, 0.1f), *g = malloc(n * sizeof(float));
    float *gp = dev(p, n), *gm = dev(m, n), *gg = G.ops->alloc(G.ctx, n), *gst = dev(st, AMP_STATE_FLOATS);
    /* warm-up: one step outside the graph on both sides (finite) */
    const int overflow[] = {0, 1, 0, 0, 0, 1, 1, 0, 0};
    bool captured = false;
    for (size_t s = 0; s < sizeof overflow / sizeof overflow[0]; s++) {
        for (size_t i = 0; i < n; i++) g[i] = (frand() * 100.0f) * st[AMP_SCALE];
        if (overflow[s]) g[s * 97 % n] = s % 2 ? INFINITY : NAN;
        G.ops->upload(G.ctx, gg, g, n); /* the new gradients (outside the graph, as a backward would write them) */
        C->amp_unscale_check(NULL, g, n, st);
        C->sgd_step_amp(NULL, p, m, g, n, 0.05f, 0.9f, 1e-4f, st);
        C->amp_update(NULL, st, &ls);
        if (s == 0) {
            G.ops->amp_unscale_check(G.ctx, gg, n, gst);
            G.ops->sgd_step_amp(G.ctx, gp, gm, gg, n, 0.05f, 0.9f, 1e-4f, gst);
            G.ops->amp_update(G.ctx, gst, &ls);
        } else {
            if (!captured) {
                assert_true(backend_graph_begin(&G));
                G.ops->amp_unscale_check(G.ctx, gg, n, gst);
                G.ops->sgd_step_amp(G.ctx, gp, gm, gg, n, 0.05f, 0.9f, 1e-4f, gst);
                G.ops->amp_update(G.ctx, gst, &ls);
                backend_graph_end(&G);
                captured = true;
            }
            backend_graph_launch(&G);
        }
        G.ops->download(G.ctx, got, gst, AMP_STATE_FLOATS);
        char label[64];
        snprintf(label, sizeof label, "step %zu (overflow %d): params", s, overflow[s]);
        assert_memory_equal(got, st, sizeof st);
        expect(gp, p, n, FWD, label);
        expect(gm, m, n, FWD, "momentum");
    }
    assert_true(st[AMP_SKIPPED] == 3.0f);
    float *bufs[] = {gp, gm, gg, gst};
    for (size_t i = 0; i < 4; i++) G.ops->free(G.ctx, bufs[i]);
    free(p), free(m), free(g);
}

/* ---- the AMP training step of the whole reduced net, CPU vs CUDA ----------------------------- */
static void amp_step(struct net *net, const uint8_t *img, const int32_t *y, int n, uint64_t seed, struct train_step *s)
{
    struct micro_batch mb = {img, y, n, seed};
    *s = (struct train_step){.mb = &mb, .lr = 0.1f, .momentum = 0.9f, .weight_decay = 1e-4f, .label_smoothing = 0.1f,
                             .amp_report = true};
    assert_int_equal(net_train_step(net, NULL, s), TIPC_OK);
    s->mb = NULL;
}

static void test_amp_net(void **state)
{
    (void)state;
    NEED_GPU();
    const int N = 4;
    size_t ni = (size_t)N * 64 * 64 * 3;
    uint8_t *img = malloc(ni);
    for (size_t i = 0; i < ni; i++) img[i] = (uint8_t)((i * 2654435761u) >> 13);
    int32_t y[4] = {1, 9, 0, 4};
    for (size_t k = 0; k < 2; k++) {
        enum precision p = precs[k];
        struct mbv3_config cfg = {.num_classes = 10, .width_mult = 0.25f, .resolution = 64, .dropout = 0.2f};
        cfg.amp = (struct amp_policy){.prec = p, .level = 2, .ls = amp_scaler_defaults(p)};
        struct net cn, gn;
        mobilenet_v3_small_build(&cn, &cfg, N, (struct backend){&backend_cpu_ops, NULL, {0}});
        mobilenet_v3_small_build(&gn, &cfg, N, G);
        net_init_params(&cn, 7);
        net_init_params(&gn, 7);
        char label[64];
        for (int step = 0; step < 3; step++) {
            struct train_step sc, sg;
            if (step == 2 && p == PREC_FP16) { /* a forced overflow: skipped on both, scale halved */
                net_amp_set_scale(&cn, 16777216.0f);
                net_amp_set_scale(&gn, 16777216.0f);
            }
            amp_step(&cn, img, y, N, 100 + step, &sc);
            amp_step(&gn, img, y, N, 100 + step, &sg);
            snprintf(label, sizeof label, "%s step %d loss", precision_name(p), step);
            assert_allclose(&sg.loss, &sc.loss, 1, 1e-6, 1e-3, label);
            assert_int_equal(sg.skipped, sc.skipped);
            assert_true(sg.loss_scale == sc.loss_scale);
            assert_int_equal(sg.skipped_total, sc.skipped_total);
            expect(net_logits(&gn), net_logits(&cn), (size_t)N * 10, 1e-2, "AMP logits");
            expect(gn.grads, cn.grads, cn.nparams, 5e-2, "AMP grads (unscaled)");
        }
        float st[AMP_STATE_FLOATS];
        assert_true(net_amp_read(&gn, st));
        if (p == PREC_FP16) assert_true(st[AMP_SKIPPED] >= 1.0f);
        expect(gn.params, cn.params, cn.nparams, 1e-2, "AMP params after 3 steps");
        expect(gn.mom, cn.mom, cn.nparams, 1e-2, "AMP momentum");
        net_free(&cn);
        net_free(&gn);
    }
    free(img);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_round_scale),
        cmocka_unit_test(test_unscale_check),
        cmocka_unit_test(test_sgd_amp),
        cmocka_unit_test(test_update),
        cmocka_unit_test(test_step_graph),
        cmocka_unit_test(test_amp_net),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
