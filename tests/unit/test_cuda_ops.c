/* test_cuda_ops.c: every CUDA op against its CPU twin (the reference) on small random shapes,
 * through the two backends' op tables, then the whole reduced MobileNetV3 (forward, loss,
 * backward, two SGD steps; an eval forward replayed from a CUDA Graph) on both backends. TF32 is off (NVIDIA_TF32_OVERRIDE=0 and the
 * context's default), so fp32 against fp32: forward 1e-4 relative, backward 1e-3, with an
 * absolute floor scaled to the tensor's largest value (sums cancel).
 * Without a CUDA build or a device every test prints `SKIP: no CUDA device (reason)` and calls
 * cmocka's skip(), which tests/run.sh counts as skipped. */
#include "testutil.h"

#include "../../engine/backend/backend.h"
#include "../../engine/model/mobilenet_v3.h"
#include "../../engine/model/train_step.h"
#ifdef TIPC_HAVE_CUDA
#include "../../engine/ops/cuda/ops_cuda.h"
#endif

#include "cuda_test.h"   /* G, C, NEED_GPU(), group_setup/teardown, rnd, copy, dev, expect */

/* ---- conv2d: every path (pointwise, depthwise 3/5 stride 1/2, stem-like, grouped) ----------- */
static void conv_case(int N, int H, int W, int Cin, int Cout, int K, int stride, int groups)
{
    struct conv2d_desc d;
    conv2d_desc_init(&d, N, H, W, Cin, Cout, K, stride, (K - 1) / 2, groups);
    size_t ni = (size_t)N * H * W * Cin, no = (size_t)N * d.Ho * d.Wo * Cout, nw = (size_t)Cout * (Cin / groups) * K * K;
    float *x = rnd(ni, 1), *w = rnd(nw, 0.5f), *dy = rnd(no, 1), *din0 = rnd(ni, 1), *dw0 = rnd(nw, 1);
    float *scratch = calloc(conv2d_scratch_floats(&d) + 1, sizeof(float));
    float *y = malloc(no * sizeof(float)), *din = copy(din0, ni), *dw = copy(dw0, nw);
    float *gx = dev(x, ni), *gw = dev(w, nw), *gy = G.ops->alloc(G.ctx, no), *gdy = dev(dy, no);
    float *gdin = dev(din0, ni), *gdw = dev(dw0, nw);
    char label[96];
    snprintf(label, sizeof label, "conv N%d %dx%d %d->%d K%d s%d g%d", N, H, W, Cin, Cout, K, stride, groups);
    C->conv2d_forward(NULL, y, x, w, &d, scratch);
    G.ops->conv2d_forward(G.ctx, gy, gx, gw, &d, NULL);
    expect(gy, y, no, FWD, label);
    for (int acc = 1; acc >= 0; acc--) { /* acc 1 adds into din0; acc 0 overwrites */
        C->conv2d_backward(NULL, din, dw, dy, x, w, &d, scratch, acc);
        G.ops->conv2d_backward(G.ctx, gdin, gdw, gdy, gx, gw, &d, NULL, acc);
        expect(gdin, din, ni, BWD, acc ? "conv din (acc)" : "conv din");
        expect(gdw, dw, nw, BWD, "conv dw (accumulated)");
    }
    /* din NULL (first layer): only dw */
    C->conv2d_backward(NULL, NULL, dw, dy, x, w, &d, scratch, 0);
    G.ops->conv2d_backward(G.ctx, NULL, gdw, gdy, gx, gw, &d, NULL, 0);
    expect(gdw, dw, nw, BWD, "conv dw (no din)");
    float *bufs[] = {gx, gw, gy, gdy, gdin, gdw};
    for (size_t i = 0; i < 6; i++) G.ops->free(G.ctx, bufs[i]);
    free(x), free(w), free(dy), free(din0), free(dw0), free(scratch), free(y), free(din), free(dw);
}

static void test_conv(void **state)
{
    (void)state;
    NEED_GPU();
    conv_case(2, 5, 4, 8, 12, 1, 1, 1);     /* pointwise: cuBLAS */
    conv_case(1, 3, 5, 13, 7, 1, 1, 1);     /* pointwise, odd sizes (a transposed weight shows) */
    conv_case(2, 7, 5, 33, 33, 3, 2, 33);   /* depthwise, odd C: a 1-channel tail tile */
    conv_case(2, 7, 6, 40, 40, 3, 1, 40);   /* depthwise 3x3 s1, two channel tiles */
    conv_case(3, 9, 8, 24, 24, 3, 2, 24);   /* depthwise 3x3 s2 */
    conv_case(2, 11, 10, 36, 36, 5, 2, 36); /* depthwise 5x5 s2 */
    conv_case(1, 6, 6, 16, 16, 5, 1, 16);   /* depthwise 5x5 s1 */
    conv_case(2, 16, 16, 3, 8, 3, 2, 1);    /* the stem: cuDNN */
    conv_case(2, 8, 8, 8, 12, 3, 1, 2);     /* grouped: cuDNN */
    conv_case(2, 6, 6, 4, 4, 1, 2, 1);      /* 1x1 stride 2: not pointwise, cuDNN */
}

/* ---- batchnorm: train (statistics, running averages, saved mean/rstd) and eval --------------- */
static void bn_case(int M, int C_, int train)
{
    struct bn_desc d = {.M = M, .C = C_, .eps = 1e-3f, .momentum = 0.01f, .train = train};
    size_t n = (size_t)M * C_, c = (size_t)C_;
    float *x = rnd(n, 2), *g = rnd(c, 1), *b = rnd(c, 1), *rm = rnd(c, 1), *rv = rnd(c, 1), *dy = rnd(n, 1);
    for (size_t i = 0; i < n; i++) x[i] += 0.5f;             /* a non-zero mean */
    for (size_t i = 0; i < c; i++) rv[i] = 1.5f + rv[i];     /* positive variance */
    float *y = malloc(n * sizeof(float)), *sm = calloc(c, sizeof(float)), *sr = calloc(c, sizeof(float));
    float *din = rnd(n, 1), *dg = rnd(c, 1), *db = rnd(c, 1);
    float *gx = dev(x, n), *gg = dev(g, c), *gb = dev(b, c), *grm = dev(rm, c), *grv = dev(rv, c), *gdy = dev(dy, n);
    float *gy = G.ops->alloc(G.ctx, n), *gsm = G.ops->alloc(G.ctx, c), *gsr = G.ops->alloc(G.ctx, c);
    float *gdin = dev(din, n), *gdg = dev(dg, c), *gdb = dev(db, c);
    C->batchnorm_forward(NULL, y, sm, sr, x, g, b, rm, rv, &d);
    G.ops->batchnorm_forward(G.ctx, gy, gsm, gsr, gx, gg, gb, grm, grv, &d);
    expect(gy, y, n, FWD, train ? "bn out (train)" : "bn out (eval)");
    expect(grm, rm, c, FWD, "bn running mean");
    expect(grv, rv, c, FWD, "bn running var");
    if (train) {
        expect(gsm, sm, c, FWD, "bn save_mean");
        expect(gsr, sr, c, FWD, "bn save_rstd");
    }
    /* eval: backward takes the running mean as save_mean (net_walk.c does so) */
    const float *m_h = train ? sm : rm, *m_d = train ? gsm : grm;
    C->batchnorm_backward(NULL, din, dg, db, dy, x, m_h, sr, g, rv, &d, 1);
    G.ops->batchnorm_backward(G.ctx, gdin, gdg, gdb, gdy, gx, m_d, gsr, gg, grv, &d, 1);
    expect(gdin, din, n, BWD, "bn din (acc)");
    expect(gdg, dg, c, BWD, "bn dgamma");
    expect(gdb, db, c, BWD, "bn dbeta");
    C->batchnorm_backward(NULL, din, dg, db, dy, x, m_h, sr, g, rv, &d, 0);
    G.ops->batchnorm_backward(G.ctx, gdin, gdg, gdb, gdy, gx, m_d, gsr, gg, grv, &d, 0);
    expect(gdin, din, n, BWD, "bn din");
    float *bufs[] = {gx, gg, gb, grm, grv, gdy, gy, gsm, gsr, gdin, gdg, gdb};
    for (size_t i = 0; i < sizeof bufs / sizeof bufs[0]; i++) G.ops->free(G.ctx, bufs[i]);
    float *hb[] = {x, g, b, rm, rv, dy, y, sm, sr, din, dg, db};
    for (size_t i = 0; i < sizeof hb / sizeof hb[0]; i++) free(hb[i]);
}

static void test_batchnorm(void **state)
{
    (void)state;
    NEED_GPU();
    bn_case(126, 40, 1);
    bn_case(5000, 20, 1); /* many row chunks */
    bn_case(1, 7, 1);     /* M = 1: unbiased variance falls back to biased */
    bn_case(126, 40, 0);
}

/* ---- elementwise: activations (with kinks), bias+act, add, dropout, normalise, SGD ---------- */
static void test_elementwise(void **state)
{
    (void)state;
    NEED_GPU();
    const size_t n = 1003;
    const int Cb = 17;
    float *x = rnd(n, 5), *dy = rnd(n, 1), *acc0 = rnd(n, 1), *b = rnd((size_t)Cb, 1);
    float *y = malloc(n * sizeof(float)), *din = malloc(n * sizeof(float)), *db2 = malloc(n * sizeof(float));
    float *gx = dev(x, n), *gdy = dev(dy, n), *gb = dev(b, (size_t)Cb), *gy = G.ops->alloc(G.ctx, n);
    float *gdin = G.ops->alloc(G.ctx, n), *gdb2 = G.ops->alloc(G.ctx, n);
    size_t M = n / Cb;
    for (int k = ACT_NONE; k <= ACT_HARDSIGMOID; k++) {
        C->act_forward(NULL, y, x, n, (enum act_kind)k);
        G.ops->act_forward(G.ctx, gy, gx, n, (enum act_kind)k);
        expect(gy, y, n, FWD, act_name((enum act_kind)k));
        for (int acc = 0; acc < 2; acc++) {
            memcpy(din, acc0, n * sizeof(float));
            G.ops->upload(G.ctx, gdin, acc0, n);
            C->act_backward(NULL, din, dy, x, n, (enum act_kind)k, acc);
            G.ops->act_backward(G.ctx, gdin, gdy, gx, n, (enum act_kind)k, acc);
            expect(gdin, din, n, BWD, "act backward");
        }
        memcpy(y, x, n * sizeof(float));
        G.ops->upload(G.ctx, gy, x, n);
        C->bias_act_forward(NULL, y, b, M, Cb, (enum act_kind)k);
        G.ops->bias_act_forward(G.ctx, gy, gb, M, Cb, (enum act_kind)k);
        expect(gy, y, M * Cb, FWD, "bias_act");
    }
    C->add_forward(NULL, y, x, dy, n);
    G.ops->add_forward(G.ctx, gy, gx, gdy, n);
    expect(gy, y, n, FWD, "add");
    memcpy(din, acc0, n * sizeof(float));
    G.ops->upload(G.ctx, gdin, acc0, n);
    C->add_backward(NULL, din, db2, dy, n, 1, 0);
    G.ops->add_backward(G.ctx, gdin, gdb2, gdy, n, 1, 0);
    expect(gdin, din, n, BWD, "add da (acc)");
    expect(gdb2, db2, n, BWD, "add db");
    /* dropout: the same mask bit for bit (counter-based RNG from the seed) */
    float *mask = malloc(n * sizeof(float)), *gmask = G.ops->alloc(G.ctx, n);
    C->dropout_forward(NULL, y, mask, x, n, 0.3f, 12345);
    G.ops->dropout_forward(G.ctx, gy, gmask, gx, n, 0.3f, 12345);
    float *hm = malloc(n * sizeof(float));
    G.ops->download(G.ctx, hm, gmask, n);
    assert_allclose(hm, mask, n, 0, 0, "dropout mask");
    expect(gy, y, n, FWD, "dropout out");
    C->dropout_backward(NULL, din, dy, mask, n, 1);
    G.ops->dropout_backward(G.ctx, gdin, gdy, gmask, n, 1);
    expect(gdin, din, n, BWD, "dropout din (acc)");
    C->dropout_backward(NULL, din, dy, mask, n, 0);
    G.ops->dropout_backward(G.ctx, gdin, gdy, gmask, n, 0);
    expect(gdin, din, n, BWD, "dropout din");
    /* SGD: p, m updated in place */
    float *p = copy(x, n), *m = copy(acc0, n), *gp = dev(x, n), *gm = dev(acc0, n);
    for (int s = 0; s < 3; s++) {
        C->sgd_step(NULL, p, m, dy, n, 0.1f, 0.9f, 1e-4f);
        G.ops->sgd_step(G.ctx, gp, gm, gdy, n, 0.1f, 0.9f, 1e-4f);
    }
    expect(gp, p, n, FWD, "sgd params");
    expect(gm, m, n, FWD, "sgd momentum");
    /* uint8 input: host pixels in, normalised floats on the device */
    uint8_t img[3 * 333];
    for (size_t i = 0; i < sizeof img; i++) img[i] = (uint8_t)(i * 37 + 11);
    C->normalize_u8(NULL, y, img, 333);
    G.ops->normalize_u8(G.ctx, gy, img, 333);
    expect(gy, y, 999, FWD, "normalize_u8");
    float *bufs[] = {gx, gdy, gb, gy, gdin, gdb2, gmask, gp, gm};
    for (size_t i = 0; i < sizeof bufs / sizeof bufs[0]; i++) G.ops->free(G.ctx, bufs[i]);
    float *hb[] = {x, dy, acc0, b, y, din, db2, mask, hm, p, m};
    for (size_t i = 0; i < sizeof hb / sizeof hb[0]; i++) free(hb[i]);
}

/* ---- squeeze-excite: channel scale, global average pool, linear ------------------------------ */
static void test_se_pool_linear(void **state)
{
    (void)state;
    NEED_GPU();
    const int N = 3, P = 21, Cc = 40, Co = 17;
    size_t nx = (size_t)N * P * Cc, ng = (size_t)N * Cc;
    float *x = rnd(nx, 1), *g = rnd(ng, 1), *dy = rnd(nx, 1), *dx = rnd(nx, 1), *dg = rnd(ng, 1);
    float *y = malloc(nx * sizeof(float));
    float *gx = dev(x, nx), *gg = dev(g, ng), *gdy = dev(dy, nx), *gdx = dev(dx, nx), *gdg = dev(dg, ng);
    float *gy = G.ops->alloc(G.ctx, nx);
    C->scale_forward(NULL, y, x, g, N, P, Cc);
    G.ops->scale_forward(G.ctx, gy, gx, gg, N, P, Cc);
    expect(gy, y, nx, FWD, "scale");
    for (int a = 0; a < 4; a++) {
        C->scale_backward(NULL, dx, dg, dy, x, g, N, P, Cc, a & 1, a >> 1);
        G.ops->scale_backward(G.ctx, gdx, gdg, gdy, gx, gg, N, P, Cc, a & 1, a >> 1);
        expect(gdx, dx, nx, BWD, "scale dx");
        expect(gdg, dg, ng, BWD, "scale dgate");
    }
    C->avgpool_forward(NULL, y, x, N, P, Cc);
    G.ops->avgpool_forward(G.ctx, gy, gx, N, P, Cc);
    expect(gy, y, ng, FWD, "avgpool");
    for (int acc = 0; acc < 2; acc++) {
        C->avgpool_backward(NULL, dx, g, N, P, Cc, acc);
        G.ops->avgpool_backward(G.ctx, gdx, gg, N, P, Cc, acc);
        expect(gdx, dx, nx, BWD, "avgpool din");
    }
    /* linear on the pooled (N, Cc) vectors, with and without bias, din accumulated or not */
    size_t nw = (size_t)Co * Cc, no = (size_t)N * Co;
    float *w = rnd(nw + Co, 0.5f), *dw = rnd(nw + Co, 1), *dyl = rnd(no, 1), *out = malloc(no * sizeof(float));
    float *gw = dev(w, nw + Co), *gdw = dev(dw, nw + Co), *gdyl = dev(dyl, no), *gout = G.ops->alloc(G.ctx, no);
    for (int bias = 0; bias < 2; bias++) {
        C->linear_forward(NULL, out, x, w, bias ? w + nw : NULL, N, Cc, Co);
        G.ops->linear_forward(G.ctx, gout, gx, gw, bias ? gw + nw : NULL, N, Cc, Co);
        expect(gout, out, no, FWD, "linear");
        C->linear_backward(NULL, dx, dw, bias ? dw + nw : NULL, dyl, x, w, N, Cc, Co, bias);
        G.ops->linear_backward(G.ctx, gdx, gdw, bias ? gdw + nw : NULL, gdyl, gx, gw, N, Cc, Co, bias);
        expect(gdx, dx, (size_t)N * Cc, BWD, "linear din");
        expect(gdw, dw, nw + Co, BWD, "linear dw, db");
    }
    float *bufs[] = {gx, gg, gdy, gdx, gdg, gy, gw, gdw, gdyl, gout};
    for (size_t i = 0; i < sizeof bufs / sizeof bufs[0]; i++) G.ops->free(G.ctx, bufs[i]);
    float *hb[] = {x, g, dy, dx, dg, y, w, dw, dyl, out};
    for (size_t i = 0; i < sizeof hb / sizeof hb[0]; i++) free(hb[i]);
}

/* ---- loss: softmax, cross-entropy with label smoothing (loss on the host), its gradient -------- */
static void test_softmax_xent(void **state)
{
    (void)state;
    NEED_GPU();
    const int N = 5, K = 300; /* K > 256: more than one element per thread of a row */
    size_t n = (size_t)N * K;
    float *z = rnd(n, 4), *p = malloc(n * sizeof(float)), *dz = malloc(n * sizeof(float));
    int32_t y[5] = {0, 299, 17, 17, 150};
    float *gz = dev(z, n), *gp = G.ops->alloc(G.ctx, n), *gdz = G.ops->alloc(G.ctx, n);
    C->softmax_forward(NULL, p, z, N, K);
    G.ops->softmax_forward(G.ctx, gp, gz, N, K);
    expect(gp, p, n, FWD, "softmax");
    for (int s = 0; s < 2; s++) {
        float eps = s ? 0.1f : 0.0f;
        float lc = C->xent_forward(NULL, p, z, y, N, K, eps), lg = G.ops->xent_forward(G.ctx, gp, gz, y, N, K, eps);
        assert_allclose(&lg, &lc, 1, 1e-6, FWD, "xent loss");
        expect(gp, p, n, FWD, "xent probs");
        C->xent_backward(NULL, dz, p, y, N, K, eps);
        G.ops->xent_backward(G.ctx, gdz, gp, y, N, K, eps);
        expect(gdz, dz, n, BWD, "xent dlogits");
    }
    G.ops->free(G.ctx, gz), G.ops->free(G.ctx, gp), G.ops->free(G.ctx, gdz);
    free(z), free(p), free(dz);
}

/* ---- the whole reduced net: training steps (forward, loss, backward, SGD), CPU vs CUDA ------- */
/* one net_train_step; the net keeps the step's logits and gradients for the comparisons */
static void net_step(struct net *net, const uint8_t *img, const int32_t *y, int n, uint64_t seed, float *loss)
{
    struct micro_batch mb = {img, y, n, seed};
    struct train_step s = {.mb = &mb, .lr = 0.1f, .momentum = 0.9f, .weight_decay = 1e-4f, .label_smoothing = 0.1f};
    assert_int_equal(net_train_step(net, NULL, &s), TIPC_OK);
    *loss = s.loss;
}

static void test_whole_net(void **state)
{
    (void)state;
    NEED_GPU();
    struct mbv3_config cfg = {.num_classes = 10, .width_mult = 0.25f, .resolution = 64, .dropout = 0.2f};
    const int N = 4;
    struct net cn, gn;
    mobilenet_v3_small_build(&cn, &cfg, N, (struct backend){.ops = &backend_cpu_ops});
    mobilenet_v3_small_build(&gn, &cfg, N, G);
    net_init_params(&cn, 7);
    net_init_params(&gn, 7);
    size_t ni = (size_t)N * 64 * 64 * 3;
    uint8_t *img = malloc(ni);
    for (size_t i = 0; i < ni; i++) img[i] = (uint8_t)((i * 2654435761u) >> 13);
    int32_t y[4] = {1, 9, 0, 4};
    for (int step = 0; step < 2; step++) {
        float lc, lg;
        net_step(&cn, img, y, N, 100 + step, &lc);
        net_step(&gn, img, y, N, 100 + step, &lg);
        assert_allclose(&lg, &lc, 1, 1e-6, 1e-4, "net loss");
        expect(net_logits(&gn), net_logits(&cn), (size_t)N * 10, 1e-3, "net logits");
        /* 60 layers of fp32 sums in other orders: gradients of early layers drift more */
        expect(gn.grads, cn.grads, cn.nparams, 1e-2, "net grads");
    }
    expect(gn.params, cn.params, cn.nparams, 1e-3, "params after 2 SGD steps");
    expect(gn.stats, cn.stats, cn.nstats, 1e-3, "BN running statistics");
    /* eval mode (running statistics), a partial batch */
    cn.train = gn.train = false;
    net_set_input_u8(&cn, img, 3);
    net_set_input_u8(&gn, img, 3);
    net_forward(&cn, 3);
    net_forward(&gn, 3);
    expect(net_logits(&gn), net_logits(&cn), 30, 1e-3, "eval logits");
    /* the same forward captured as a CUDA Graph, then replayed into a cleared output */
    assert_true(backend_graph_begin(&gn.be));
    net_forward(&gn, 3);
    backend_graph_end(&gn.be);
    gn.be.ops->zero(gn.be.ctx, (float *)net_logits(&gn), 30);
    backend_graph_launch(&gn.be);
    expect(net_logits(&gn), net_logits(&cn), 30, 1e-3, "eval logits (graph replay)");
    free(img);
    net_free(&cn);
    net_free(&gn);
}

/* Without a GPU: `--device gpu` is refused with TIPC_ENOTBUILT and a message saying why. This
 * one runs everywhere (it is what a CPU-only machine can check). */
static void test_open_without_gpu(void **state)
{
    (void)state;
    if (have) {
        printf("SKIP: a CUDA device is present (this test checks the refusal without one)\n");
        skip();
    }
    struct backend b;
    struct capture cap;
    capture_stderr_begin(&cap);
    enum tipc_status st = backend_open(&b, "gpu", 1, NULL);
    char *err = capture_stderr_end(&cap);
    assert_int_equal(st, TIPC_ENOTBUILT);
    assert_non_null(strstr(err, "CUDA"));
    free(err);
    capture_stderr_begin(&cap);
    st = backend_open(&b, "tpu", 1, NULL);
    err = capture_stderr_end(&cap);
    assert_int_equal(st, TIPC_EUSAGE);
    assert_non_null(strstr(err, "unknown device 'tpu'"));
    free(err);
    assert_int_equal(backend_open(&b, "cpu", 1, NULL), TIPC_OK);
    assert_ptr_equal(b.ops, &backend_cpu_ops);
    backend_close(&b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_conv),
        cmocka_unit_test(test_batchnorm),
        cmocka_unit_test(test_elementwise),
        cmocka_unit_test(test_se_pool_linear),
        cmocka_unit_test(test_softmax_xent),
        cmocka_unit_test(test_whole_net),
        cmocka_unit_test(test_open_without_gpu),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
