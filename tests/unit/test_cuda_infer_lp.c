/* test_cuda_infer_lp.c: GPU inference in fp16 and bf16 (ops/cuda/conv2d_lp.cu, act_lp.cu,
 * engine/infer/infer_cuda.c) against the CPU's fp32 reference, TF32 off.
 * - conversions: fp32 -> 16 bits -> fp32 equals precision.h's round_to bit for bit;
 * - each 16-bit op against its fp32 CPU twin run on the same rounded inputs: the difference is
 *   the output rounding plus summation order, so relative LP_TOL (fp16 2e-3 = 4 units of its
 *   2^-11 rounding, bf16 1.6e-2 = 4 units of 2^-8; floor 1/10 of that times the largest value);
 *   a linear layer writing fp32 (the logits) 1e-4;
 * - the whole reduced MobileNetV3 folded for inference: fp32 on the GPU within 1e-3 of the CPU;
 *   the GPU's 16-bit pass (16-bit activations and weights) against its twin, the CPU's op-by-op
 *   pass on the same rounded values (infer_set_precision), within TWIN_TOL (fp16 1e-2, bf16 4e-2
 *   of the largest logit: a value whose fp32 sum falls on the other side of a rounding boundary
 *   moves by one 16-bit unit, and the CPU also rounds the logits themselves), and against the CPU's
 *   fp32 logits within NET_TOL (3e-2 / 1.5e-1: ~60 layers of 16-bit rounding); probabilities in
 *   fp32; a CUDA Graph replay of the 16-bit pass equal to the plain pass.
 * These tolerances are set from the formats' rounding units, not from a GPU run (none yet).
 * Without a CUDA build or a device every test prints `SKIP: no CUDA device (reason)`. */
#include "cuda_test.h"

#include "../../engine/infer/infer.h"
#include "../../engine/model/mobilenet_v3.h"

#ifdef TIPC_HAVE_CUDA
#define LP_TOL(p) ((p) == PREC_FP16 ? 2e-3 : 1.6e-2)
#define NET_TOL(p) ((p) == PREC_FP16 ? 3e-2 : 1.5e-1)
#define TWIN_TOL(p) ((p) == PREC_FP16 ? 1e-2 : 4e-2)
static const enum precision precs[] = {PREC_FP16, PREC_BF16};

/* host values rounded to p (the inputs both sides see) */
static float *rounded(const float *h, size_t n, enum precision p)
{
    float *r = malloc((n ? n : 1) * sizeof(float));
    for (size_t i = 0; i < n; i++) r[i] = round_to(h[i], p);
    return r;
}
/* a 16-bit device copy of h (n values) */
static void *lp_dev(const float *h, size_t n, enum precision p)
{
    float *f = dev(h, n);
    void *l = G.ops->alloc(G.ctx, (n + 1) / 2 + 8);
    lp_from_f32_cuda(G.ctx, l, f, n, p);
    G.ops->free(G.ctx, f);
    return l;
}
static void *lp_alloc(size_t n) { return G.ops->alloc(G.ctx, (n + 1) / 2 + 8); }
static void expect_lp(const void *l, const float *want, size_t n, enum precision p, double rtol, const char *label)
{
    float *f = G.ops->alloc(G.ctx, n ? n : 1);
    lp_to_f32_cuda(G.ctx, f, l, n, p);
    expect(f, want, n, rtol, label);
    G.ops->free(G.ctx, f);
}
static void lp_free(void *l) { G.ops->free(G.ctx, (float *)l); }
#endif

static void test_lp_convert(void **state)
{
    (void)state;
    NEED_GPU();
#ifdef TIPC_HAVE_CUDA
    /* ties, the largest finite values, overflow, subnormals, signed zero */
    float v[] = {1.0f, 1.0f + 1.0f / 4096, 1.0f + 3.0f / 4096, 1.00390625f, 1.005859375f, 65504.0f, 65519.0f,
                 65520.0f, 1e6f, -1e6f, 3.0e38f, 6.0e-8f, 2.9e-8f, 1e-40f, -0.0f, 0.1f, -2.5f, 1.0f / 3};
    size_t n = sizeof v / sizeof v[0];
    for (size_t k = 0; k < 2; k++) {
        float *want = rounded(v, n, precs[k]);
        void *l = lp_dev(v, n, precs[k]);
        expect_lp(l, want, n, precs[k], 0, precs[k] == PREC_FP16 ? "fp16 conversion" : "bf16 conversion");
        lp_free(l);
        free(want);
    }
#endif
}

#ifdef TIPC_HAVE_CUDA
static void conv_lp_case(int N, int H, int W, int Cin, int Cout, int K, int stride, int groups, enum precision p)
{
    struct conv2d_desc d;
    conv2d_desc_init(&d, N, H, W, Cin, Cout, K, stride, (K - 1) / 2, groups);
    size_t ni = (size_t)N * H * W * Cin, no = (size_t)N * d.Ho * d.Wo * Cout, nw = (size_t)Cout * (Cin / groups) * K * K;
    float *x0 = rnd(ni, 1), *w0 = rnd(nw, 0.5f), *x = rounded(x0, ni, p), *w = rounded(w0, nw, p);
    float *y = malloc(no * sizeof(float)), *scratch = calloc(conv2d_scratch_floats(&d) + 1, sizeof(float));
    void *gx = lp_dev(x0, ni, p), *gw = lp_dev(w0, nw, p), *gy = lp_alloc(no);
    C->conv2d_forward(NULL, y, x, w, &d, scratch);
    conv2d_forward_lp_cuda(G.ctx, gy, gx, gw, &d, p);
    char label[96];
    snprintf(label, sizeof label, "%s conv N%d %dx%d %d->%d K%d s%d g%d", precision_name(p), N, H, W, Cin, Cout, K,
             stride, groups);
    expect_lp(gy, y, no, p, LP_TOL(p), label);
    lp_free(gx), lp_free(gw), lp_free(gy);
    free(x0), free(w0), free(x), free(w), free(y), free(scratch);
}
#endif

static void test_lp_conv_linear(void **state)
{
    (void)state;
    NEED_GPU();
#ifdef TIPC_HAVE_CUDA
    for (size_t k = 0; k < 2; k++) {
        enum precision p = precs[k];
        conv_lp_case(2, 5, 4, 8, 12, 1, 1, 1, p);     /* pointwise: GemmEx */
        conv_lp_case(1, 3, 5, 13, 7, 1, 1, 1, p);     /* pointwise, odd sizes */
        conv_lp_case(2, 7, 5, 33, 33, 3, 2, 33, p);   /* depthwise 3x3 s2 */
        conv_lp_case(2, 7, 6, 40, 40, 3, 1, 40, p);   /* depthwise 3x3 s1 */
        conv_lp_case(2, 11, 10, 36, 36, 5, 2, 36, p); /* depthwise 5x5 s2 */
        conv_lp_case(2, 16, 16, 3, 8, 3, 2, 1, p);    /* the stem: cuDNN (or the direct kernel) */
        conv_lp_case(2, 8, 8, 8, 12, 3, 1, 2, p);     /* grouped */
        /* linear: 16-bit out, and fp32 out (the logits) */
        const int N = 3, Ci = 40, Co = 17;
        size_t ni = (size_t)N * Ci, nw = (size_t)Co * Ci, no = (size_t)N * Co;
        float *x0 = rnd(ni, 1), *w0 = rnd(nw, 0.5f), *x = rounded(x0, ni, p), *w = rounded(w0, nw, p);
        float *y = malloc(no * sizeof(float)), *gyf = G.ops->alloc(G.ctx, no);
        void *gx = lp_dev(x0, ni, p), *gw = lp_dev(w0, nw, p), *gy = lp_alloc(no);
        C->linear_forward(NULL, y, x, w, NULL, N, Ci, Co);
        linear_forward_lp_cuda(G.ctx, gy, 0, gx, gw, N, Ci, Co, p);
        expect_lp(gy, y, no, p, LP_TOL(p), "linear, 16-bit out");
        linear_forward_lp_cuda(G.ctx, gyf, 1, gx, gw, N, Ci, Co, p);
        expect(gyf, y, no, 1e-4, "linear, fp32 out");
        lp_free(gx), lp_free(gw), lp_free(gy), G.ops->free(G.ctx, gyf);
        free(x0), free(w0), free(x), free(w), free(y);
    }
#endif
}

static void test_lp_elementwise(void **state)
{
    (void)state;
    NEED_GPU();
#ifdef TIPC_HAVE_CUDA
    const int N = 3, P = 21, Cc = 40;
    size_t n = (size_t)N * P * Cc, ng = (size_t)N * Cc;
    for (size_t k = 0; k < 2; k++) {
        enum precision p = precs[k];
        float *x0 = rnd(n, 5), *z0 = rnd(n, 2), *g0 = rnd(ng, 1), *b = rnd((size_t)Cc, 1);
        float *x = rounded(x0, n, p), *z = rounded(z0, n, p), *g = rounded(g0, ng, p), *y = malloc(n * sizeof(float));
        void *gx = lp_dev(x0, n, p), *gz = lp_dev(z0, n, p), *gg = lp_dev(g0, ng, p), *gy = lp_alloc(n);
        float *gb = dev(b, (size_t)Cc);
        char label[64];
        for (int a = ACT_NONE; a <= ACT_HARDSIGMOID; a++) {
            snprintf(label, sizeof label, "%s %s", precision_name(p), act_name((enum act_kind)a));
            C->act_forward(NULL, y, x, n, (enum act_kind)a);
            act_lp_cuda(G.ctx, gy, gx, n, (enum act_kind)a, p);
            expect_lp(gy, y, n, p, LP_TOL(p), label);
            memcpy(y, x, n * sizeof(float));
            G.ops->free(G.ctx, (float *)gy);
            gy = lp_dev(x0, n, p);
            C->bias_act_forward(NULL, y, b, (size_t)N * P, Cc, (enum act_kind)a);
            bias_act_lp_cuda(G.ctx, gy, gb, (size_t)N * P, Cc, (enum act_kind)a, p);
            expect_lp(gy, y, n, p, LP_TOL(p), "bias_act");
        }
        C->add_forward(NULL, y, x, z, n);
        add_lp_cuda(G.ctx, gy, gx, gz, n, p);
        expect_lp(gy, y, n, p, LP_TOL(p), "add");
        C->scale_forward(NULL, y, x, g, N, P, Cc);
        scale_lp_cuda(G.ctx, gy, gx, gg, N, P, Cc, p);
        expect_lp(gy, y, n, p, LP_TOL(p), "se scale");
        C->avgpool_forward(NULL, y, x, N, P, Cc);
        avgpool_lp_cuda(G.ctx, gy, gx, N, P, Cc, p);
        expect_lp(gy, y, ng, p, LP_TOL(p), "avgpool");
        lp_free(gx), lp_free(gz), lp_free(gg), lp_free(gy), G.ops->free(G.ctx, gb);
        free(x0), free(z0), free(g0), free(b), free(x), free(z), free(g), free(y);
    }
#endif
}

/* ---- the whole folded net: fp32, fp16, bf16 passes on the GPU against the CPU ------------------ */
#ifdef TIPC_HAVE_CUDA
/* an inference model of net cn on backend be (batch N), in precision p, with the images set */
static void model_on(struct infer_model *m, const struct net *cn, int N, struct backend be, enum precision p,
                     const uint8_t *img)
{
    infer_from_net(m, cn, N);
    infer_move(m, be);
    infer_set_precision(m, p);
    infer_set_input_u8(m, img, N);
}
#endif

static void test_lp_net(void **state)
{
    (void)state;
    NEED_GPU();
#ifdef TIPC_HAVE_CUDA
    struct mbv3_config cfg = {.num_classes = 10, .width_mult = 0.25f, .resolution = 64, .dropout = 0.2f};
    const int N = 4, K = 10;
    const struct backend cpu = {&backend_cpu_ops, NULL, {0}};
    struct net cn;
    mobilenet_v3_small_build(&cn, &cfg, N, cpu);
    net_init_params(&cn, 7);
    size_t ni = (size_t)N * 64 * 64 * 3;
    uint8_t *img = malloc(ni);
    for (size_t i = 0; i < ni; i++) img[i] = (uint8_t)((i * 2654435761u) >> 13);
    float want[40], wantp[40], twin[40], got[40], plain[40];
    struct infer_model mc, mg;
    model_on(&mc, &cn, N, cpu, PREC_FP32, img);
    infer_forward(&mc, N);
    infer_logits_host(&mc, want, N);
    infer_output_host(&mc, wantp, N);
    infer_free(&mc);
    model_on(&mg, &cn, N, G, PREC_FP32, img);
    infer_forward(&mg, N);
    infer_logits_host(&mg, got, N);
    assert_allclose(got, want, (size_t)N * K, 1e-4, 1e-3, "fp32 logits (GPU schedule)");
    infer_free(&mg);
    double mx = 0;
    for (int i = 0; i < N * K; i++) mx = fmax(mx, fabs((double)want[i]));
    for (size_t k = 0; k < 2; k++) {
        enum precision p = precs[k];
        char label[80];
        /* the CPU's twin: the same rounded weights, every layer's output rounded, op by op */
        model_on(&mc, &cn, N, cpu, p, img);
        infer_forward(&mc, N);
        infer_logits_host(&mc, twin, N);
        infer_free(&mc);
        model_on(&mg, &cn, N, G, p, img);
        assert_non_null(mg.lp_acts); /* the 16-bit pass, not the op-by-op fallback */
        infer_forward(&mg, N);
        infer_logits_host(&mg, got, N);
        snprintf(label, sizeof label, "%s logits vs the CPU's %s pass", precision_name(p), precision_name(p));
        assert_allclose(got, twin, (size_t)N * K, TWIN_TOL(p) * mx, TWIN_TOL(p), label);
        snprintf(label, sizeof label, "%s logits vs CPU fp32", precision_name(p));
        assert_allclose(got, want, (size_t)N * K, NET_TOL(p) * mx, NET_TOL(p), label);
        infer_output_host(&mg, got, N);
        assert_allclose(got, wantp, (size_t)N * K, NET_TOL(p), NET_TOL(p), "probabilities");
        infer_logits_host(&mg, plain, N);
        /* captured once after the plain pass, replayed into a cleared output */
        assert_true(backend_graph_begin(&mg.be));
        infer_forward(&mg, N);
        backend_graph_end(&mg.be);
        mg.be.ops->zero(mg.be.ctx, (float *)infer_logits(&mg), (size_t)N * K);
        backend_graph_launch(&mg.be);
        infer_logits_host(&mg, got, N);
        assert_allclose(got, plain, (size_t)N * K, 1e-6, 1e-6, "16-bit pass replayed from a CUDA Graph");
        infer_free(&mg);
    }
    free(img);
    net_free(&cn);
#endif
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_lp_convert),
        cmocka_unit_test(test_lp_conv_linear),
        cmocka_unit_test(test_lp_elementwise),
        cmocka_unit_test(test_lp_net),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
