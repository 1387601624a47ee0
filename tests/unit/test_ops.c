/* test_ops.c: every CPU op's backward against central finite differences on tiny shapes
 * (ggml's MODE_GRAD), and each conv path's forward against a naive direct convolution. */
#include "testutil.h"
#include "isa_test.h"

#include <omp.h>

#include "../../engine/ops/ops.h"
#include "../../engine/ops/cpu/gemm.h"

/* deterministic uniform in [-1, 1) */
static uint64_t rs = 88172645463325252ULL;
static float frand(void)
{
    rs ^= rs << 13; rs ^= rs >> 7; rs ^= rs << 17;
    return (float)((rs >> 40) * (1.0 / 8388608.0)) - 1.0f;
}
static float *rnd(size_t n)
{
    float *p = malloc(n * sizeof(float));
    for (size_t i = 0; i < n; i++) p[i] = frand();
    return p;
}

/* A scalar objective L = sum(out * R) evaluated by a callback over the test's own state. */
typedef double (*objective_fn)(void *st);

/* Compare analytic dL/dx (grad) with central differences at up to 40 positions of x. */
static void gradcheck(const char *label, objective_fn f, void *st, float *x, size_t n, const float *grad)
{
    const float h = 1e-2f;
    size_t step = n > 40 ? n / 40 : 1;
    for (size_t i = 0; i < n; i += step) {
        float x0 = x[i];
        x[i] = x0 + h;
        double lp = f(st);
        x[i] = x0 - h;
        double lm = f(st);
        x[i] = x0;
        double num = (lp - lm) / (2.0 * h);
        if (fabs(num - grad[i]) > 2e-3 + 2e-2 * fabs(num)) {
            fprintf(stderr, "%s[%zu]: analytic %.6g numeric %.6g\n", label, i, (double)grad[i], num);
            fail();
        }
    }
}

static double dot(const float *a, const float *b, size_t n)
{
    double s = 0;
    for (size_t i = 0; i < n; i++) s += (double)a[i] * b[i];
    return s;
}

/* ---- conv2d ----------------------------------------------------------------------------------- */
struct conv_st { struct conv2d_desc d; float *x, *w, *out, *R, *scratch; };

static double conv_obj(void *p)
{
    struct conv_st *s = p;
    conv2d_forward_cpu(NULL, s->out, s->x, s->w, &s->d, s->scratch);
    return dot(s->out, s->R, (size_t)s->d.N * s->d.Ho * s->d.Wo * s->d.Cout);
}

/* naive NHWC grouped conv */
static void conv_naive(float *out, const float *x, const float *w, const struct conv2d_desc *d)
{
    int Cg = d->Cin / d->groups, Cog = d->Cout / d->groups;
    for (int n = 0; n < d->N; n++)
        for (int oy = 0; oy < d->Ho; oy++)
            for (int ox = 0; ox < d->Wo; ox++)
                for (int co = 0; co < d->Cout; co++) {
                    int g = co / Cog;
                    double s = 0;
                    for (int ci = 0; ci < Cg; ci++)
                        for (int ky = 0; ky < d->K; ky++)
                            for (int kx = 0; kx < d->K; kx++) {
                                int iy = oy * d->stride - d->pad + ky, ix = ox * d->stride - d->pad + kx;
                                if (iy < 0 || iy >= d->H || ix < 0 || ix >= d->W) continue;
                                s += x[((n * d->H + iy) * d->W + ix) * d->Cin + g * Cg + ci] *
                                     w[((co * Cg + ci) * d->K + ky) * d->K + kx];
                            }
                    out[((n * d->Ho + oy) * d->Wo + ox) * d->Cout + co] = (float)s;
                }
}

static void conv_case(int N, int H, int W, int Cin, int Cout, int K, int stride, int pad, int groups)
{
    struct conv_st s;
    conv2d_desc_init(&s.d, N, H, W, Cin, Cout, K, stride, pad, groups);
    size_t nx = (size_t)N * H * W * Cin, nw = (size_t)Cout * (Cin / groups) * K * K;
    size_t no = (size_t)N * s.d.Ho * s.d.Wo * Cout;
    s.x = rnd(nx); s.w = rnd(nw); s.R = rnd(no);
    s.out = malloc(no * sizeof(float));
    s.scratch = malloc((conv2d_scratch_floats(&s.d) + 1) * sizeof(float));
    float *ref = malloc(no * sizeof(float));
    conv_naive(ref, s.x, s.w, &s.d);
    conv_obj(&s);
    assert_allclose(s.out, ref, no, 1e-5, 1e-4, "conv forward");
    float *dx = calloc(nx, sizeof(float)), *dw = calloc(nw, sizeof(float));
    /* accumulate semantics: start from 1 and subtract it afterwards */
    for (size_t i = 0; i < nx; i++) dx[i] = 1.0f;
    conv2d_backward_cpu(NULL, dx, dw, s.R, s.x, s.w, &s.d, s.scratch, 1);
    for (size_t i = 0; i < nx; i++) dx[i] -= 1.0f;
    gradcheck("conv din", conv_obj, &s, s.x, nx, dx);
    /* acc = 0 overwrites: garbage in din must not leak into the result */
    float *dx2 = malloc(nx * sizeof(float)), *dw2 = calloc(nw, sizeof(float));
    for (size_t i = 0; i < nx; i++) dx2[i] = 1e6f;
    conv2d_backward_cpu(NULL, dx2, dw2, s.R, s.x, s.w, &s.d, s.scratch, 0);
    assert_allclose(dx2, dx, nx, 1e-5, 1e-4, "conv din overwrite");
    free(dx2);
    free(dw2);
    gradcheck("conv dw", conv_obj, &s, s.w, nw, dw);
    free(s.x); free(s.w); free(s.R); free(s.out); free(s.scratch); free(ref); free(dx); free(dw);
}

static void test_conv_general(void **state) { conv_case(2, 5, 6, 4, 6, 3, 2, 1, 2); }
static void test_conv_stem(void **state)
{
    conv_case(2, 8, 8, 3, 8, 3, 2, 1, 1);     /* Cout tail (< 16) */
    conv_case(1, 12, 22, 3, 16, 3, 2, 1, 1);  /* the patch GEMM: full and short row blocks */
    conv_case(1, 7, 19, 3, 32, 3, 1, 1, 1);
}
static void test_conv_depthwise(void **state)
{
    conv_case(2, 5, 5, 10, 10, 5, 1, 2, 10);
    conv_case(2, 7, 6, 17, 17, 3, 2, 1, 17);
    conv_case(1, 6, 13, 32, 32, 3, 1, 1, 32);  /* 4-pixel interior blocks, 16-channel chunks */
    conv_case(1, 9, 19, 48, 48, 5, 2, 2, 48);
    conv_case(1, 5, 12, 24, 24, 3, 1, 1, 24); /* 16 + 8 chunks */
    conv_case(1, 6, 14, 28, 28, 3, 2, 1, 28); /* not a multiple of 8: pixel path with scalar tail */
    conv_case(1, 7, 7, 80, 80, 5, 1, 2, 80);  /* 7x7 map: every pixel on the border, 64 + 16 chunks */
    /* 7-pixel row segments (conv2d_dw.c): border and interior segments, the last one moved left */
    conv_case(1, 5, 20, 40, 40, 3, 1, 1, 40);
    conv_case(1, 9, 30, 24, 24, 5, 2, 2, 24);
    conv_case(1, 6, 16, 16, 16, 3, 2, 1, 16);
}
static void test_conv_pointwise(void **state) { conv_case(3, 4, 3, 5, 7, 1, 1, 0, 1); }

/* ---- batchnorm -------------------------------------------------------------------------------- */
struct bn_st { struct bn_desc d; float *x, *g, *b, *rm, *rv, *sm, *sr, *out, *R; };

static double bn_obj(void *p)
{
    struct bn_st *s = p;
    batchnorm_forward_cpu(NULL, s->out, s->sm, s->sr, s->x, s->g, s->b, s->rm, s->rv, &s->d);
    return dot(s->out, s->R, (size_t)s->d.M * s->d.C);
}

static void bn_case(int train)
{
    struct bn_st s = {.d = {.M = 12, .C = 5, .eps = 1e-3f, .momentum = 0.1f, .train = train}};
    size_t n = 60;
    s.x = rnd(n); s.R = rnd(n); s.g = rnd(5); s.b = rnd(5);
    s.rm = rnd(5); s.rv = rnd(5);
    for (int c = 0; c < 5; c++) s.rv[c] = 1.0f + s.rv[c] * 0.5f;
    s.sm = calloc(5, 4); s.sr = calloc(5, 4); s.out = malloc(n * 4);
    float rv0[5];
    memcpy(rv0, s.rv, sizeof rv0);
    bn_obj(&s);
    float *dx = calloc(n, 4), *dg = calloc(5, 4), *db = calloc(5, 4);
    batchnorm_backward_cpu(NULL, dx, dg, db, s.R, s.x, train ? s.sm : s.rm, s.sr, s.g, s.rv, &s.d, 1);
    if (train) {
        /* running var moved towards the unbiased batch variance */
        double mean = 0, var = 0;
        for (int m = 0; m < 12; m++) mean += s.x[m * 5];
        mean /= 12;
        for (int m = 0; m < 12; m++) var += (s.x[m * 5] - mean) * (s.x[m * 5] - mean);
        float want = 0.9f * rv0[0] + 0.1f * (float)(var / 11);
        assert_allclose(&s.rv[0], &want, 1, 1e-6, 1e-5, "running var");
    }
    gradcheck("bn din", bn_obj, &s, s.x, n, dx);
    gradcheck("bn dgamma", bn_obj, &s, s.g, 5, dg);
    gradcheck("bn dbeta", bn_obj, &s, s.b, 5, db);
    free(s.x); free(s.R); free(s.g); free(s.b); free(s.rm); free(s.rv); free(s.sm); free(s.sr);
    free(s.out); free(dx); free(dg); free(db);
}
static void test_bn_train(void **state) { bn_case(1); }
static void test_bn_eval(void **state) { bn_case(0); }

/* BN + activation fused: equals BN then the activation both ways (forward bit for bit, the
 * backward within rounding, overwrite and accumulate), and its own finite differences. */
struct bna_st { struct bn_st b; enum act_kind k; };
static double bna_obj(void *p)
{
    struct bna_st *s = p;
    struct bn_st *b = &s->b;
    batchnorm_act_forward_cpu(NULL, b->out, b->sm, b->sr, b->x, b->g, b->b, b->rm, b->rv, &b->d, s->k);
    return dot(b->out, b->R, (size_t)b->d.M * b->d.C);
}
static void test_bn_act_fused(void **state)
{
    enum act_kind kinds[] = {ACT_RELU, ACT_HARDSWISH, ACT_HARDSIGMOID, ACT_NONE};
    for (int t = 0; t < 8; t++) {
        int train = t < 4;
        struct bna_st s = {.b = {.d = {.M = 24, .C = 5, .eps = 1e-3f, .momentum = 0.1f, .train = train}},
                           .k = kinds[t % 4]};
        struct bn_st *b = &s.b;
        size_t n = 120;
        b->x = rnd(n); b->R = rnd(n); b->g = rnd(5); b->b = rnd(5); b->rm = rnd(5); b->rv = rnd(5);
        for (int c = 0; c < 5; c++) b->g[c] *= 4.0f, b->b[c] *= 2.0f, b->rv[c] = 1.0f + b->rv[c] * 0.5f;
        b->sm = calloc(5, 4); b->sr = calloc(5, 4); b->out = malloc(n * 4);
        float *rm0 = malloc(5 * 4), *rv0 = malloc(5 * 4), *y = malloc(n * 4), *z = malloc(n * 4);
        memcpy(rm0, b->rm, 5 * 4), memcpy(rv0, b->rv, 5 * 4);
        /* unfused reference */
        batchnorm_forward_cpu(NULL, y, b->sm, b->sr, b->x, b->g, b->b, b->rm, b->rv, &b->d);
        act_forward_cpu(NULL, z, y, n, s.k);
        float *dy = malloc(n * 4), *dx_ref = malloc(n * 4), dg_ref[5] = {0}, db_ref[5] = {0};
        act_backward_cpu(NULL, dy, b->R, y, n, s.k, 0);
        for (size_t i = 0; i < n; i++) dx_ref[i] = 0.5f;
        batchnorm_backward_cpu(NULL, dx_ref, dg_ref, db_ref, dy, b->x, train ? b->sm : b->rm, b->sr, b->g, b->rv, &b->d, 1);
        /* fused, from the same running statistics */
        memcpy(b->rm, rm0, 5 * 4), memcpy(b->rv, rv0, 5 * 4);
        bna_obj(&s);
        assert_allclose(b->out, z, n, 0, 0, "fused forward");
        float *dx = malloc(n * 4), dg[5] = {0}, db[5] = {0};
        for (size_t i = 0; i < n; i++) dx[i] = 0.5f;
        batchnorm_act_backward_cpu(NULL, dx, dg, db, b->R, b->x, train ? b->sm : b->rm, b->sr, b->g, b->b, b->rv, &b->d,
                                   1, s.k);
        assert_allclose(dx, dx_ref, n, 1e-5, 1e-4, "fused din (accumulate)");
        assert_allclose(dg, dg_ref, 5, 1e-5, 1e-4, "fused dgamma");
        assert_allclose(db, db_ref, 5, 1e-5, 1e-4, "fused dbeta");
        for (size_t i = 0; i < n; i++) dx[i] = NAN;
        float dg2[5] = {0}, db2[5] = {0};
        batchnorm_act_backward_cpu(NULL, dx, dg2, db2, b->R, b->x, train ? b->sm : b->rm, b->sr, b->g, b->b, b->rv,
                                   &b->d, 0, s.k);
        for (size_t i = 0; i < n; i++) dx[i] += 0.5f;
        assert_allclose(dx, dx_ref, n, 1e-5, 1e-4, "fused din (overwrite)");
        /* finite differences, in eval mode (no batch statistics couple the rows), with every BN
         * output moved away from the activation's kinks (0, -3, 3) by more than a step moves it */
        if (!train) {
            for (size_t i = 0; i < n; i++) {
                int c = (int)(i % 5);
                float sc = b->g[c] / sqrtf(b->rv[c] + b->d.eps), v = (b->x[i] - b->rm[c]) * sc + b->b[c];
                for (float kink = -3; kink <= 3; kink += 3)
                    if (fabsf(v - kink) < 0.3f) b->x[i] += (0.6f - (v - kink)) / sc;
            }
            memset(dg2, 0, sizeof dg2), memset(db2, 0, sizeof db2);
            batchnorm_act_backward_cpu(NULL, dx, dg2, db2, b->R, b->x, b->rm, b->sr, b->g, b->b, b->rv, &b->d, 0, s.k);
            gradcheck("fused din", bna_obj, &s, b->x, n, dx);
            gradcheck("fused dgamma", bna_obj, &s, b->g, 5, dg2);
            gradcheck("fused dbeta", bna_obj, &s, b->b, 5, db2);
        }
        free(b->x); free(b->R); free(b->g); free(b->b); free(b->rm); free(b->rv); free(b->sm); free(b->sr);
        free(b->out); free(rm0); free(rv0); free(y); free(z); free(dy); free(dx_ref); free(dx);
    }
}

/* ---- activations ------------------------------------------------------------------------------ */
struct act_st { enum act_kind k; float *x, *out, *R; size_t n; };
static double act_obj(void *p)
{
    struct act_st *s = p;
    act_forward_cpu(NULL, s->out, s->x, s->n, s->k);
    return dot(s->out, s->R, s->n);
}
static void test_activations(void **state)
{
    enum act_kind kinds[] = {ACT_RELU, ACT_HARDSWISH, ACT_HARDSIGMOID, ACT_NONE};
    for (int t = 0; t < 4; t++) {
        struct act_st s = {.k = kinds[t], .n = 64};
        s.x = rnd(64); s.R = rnd(64); s.out = malloc(64 * 4);
        for (size_t i = 0; i < 64; i++) {
            s.x[i] *= 5.0f; /* span the -3..3 knees; keep away from the kinks */
            if (fabsf(s.x[i]) < 0.05f || fabsf(fabsf(s.x[i]) - 3.0f) < 0.05f) s.x[i] += 0.2f;
        }
        float *dx = calloc(64, 4);
        act_backward_cpu(NULL, dx, s.R, s.x, 64, s.k, 1);
        gradcheck(act_name(s.k), act_obj, &s, s.x, 64, dx);
        float dx2[64];
        for (int i = 0; i < 64; i++) dx2[i] = NAN;
        act_backward_cpu(NULL, dx2, s.R, s.x, 64, s.k, 0); /* overwrite ignores what was there */
        assert_allclose(dx2, dx, 64, 0, 0, "act overwrite");
        /* values at known points */
        float pts[3] = {-4.0f, 1.5f, 4.0f}, o[3];
        act_forward_cpu(NULL, o, pts, 3, s.k);
        if (s.k == ACT_HARDSWISH) assert_true(o[0] == 0.0f && fabsf(o[1] - 1.125f) < 1e-6f && o[2] == 4.0f);
        if (s.k == ACT_HARDSIGMOID) assert_true(o[0] == 0.0f && fabsf(o[1] - 0.75f) < 1e-6f && o[2] == 1.0f);
        free(s.x); free(s.R); free(s.out); free(dx);
    }
}

/* ---- scale / pool / linear / add / dropout ----------------------------------------------------- */
struct misc_st { float *x, *g, *w, *b, *out, *R, *mask; int N, P, C, O; };
static double scale_obj(void *p)
{
    struct misc_st *s = p;
    scale_forward_cpu(NULL, s->out, s->x, s->g, s->N, s->P, s->C);
    return dot(s->out, s->R, (size_t)s->N * s->P * s->C);
}
static double pool_obj(void *p)
{
    struct misc_st *s = p;
    avgpool_forward_cpu(NULL, s->out, s->x, s->N, s->P, s->C);
    return dot(s->out, s->R, (size_t)s->N * s->C);
}
static double linear_obj(void *p)
{
    struct misc_st *s = p;
    linear_forward_cpu(NULL, s->out, s->x, s->w, s->b, s->N, s->C, s->O);
    return dot(s->out, s->R, (size_t)s->N * s->O);
}
static double dropout_obj(void *p)
{
    struct misc_st *s = p;
    dropout_forward_cpu(NULL, s->out, s->mask, s->x, (size_t)s->N * s->C, 0.3f, 1234);
    return dot(s->out, s->R, (size_t)s->N * s->C);
}

static void test_scale_pool(void **state)
{
    struct misc_st s = {.N = 2, .P = 6, .C = 5};
    size_t n = 60;
    s.x = rnd(n); s.g = rnd(10); s.R = rnd(n); s.out = malloc(n * 4);
    float *dx = calloc(n, 4), *dg = calloc(10, 4);
    scale_backward_cpu(NULL, dx, dg, s.R, s.x, s.g, 2, 6, 5, 1, 1);
    gradcheck("scale dx", scale_obj, &s, s.x, n, dx);
    gradcheck("scale dg", scale_obj, &s, s.g, 10, dg);
    memset(dx, 0, n * 4);
    avgpool_backward_cpu(NULL, dx, s.R, 2, 6, 5, 1);
    gradcheck("pool dx", pool_obj, &s, s.x, n, dx);
    free(s.x); free(s.g); free(s.R); free(s.out); free(dx); free(dg);
}

static void test_linear(void **state)
{
    struct misc_st s = {.N = 3, .C = 7, .O = 4};
    s.x = rnd(21); s.w = rnd(28); s.b = rnd(4); s.R = rnd(12); s.out = malloc(12 * 4);
    float *dx = calloc(21, 4), *dw = calloc(28, 4), *db = calloc(4, 4);
    linear_backward_cpu(NULL, dx, dw, db, s.R, s.x, s.w, 3, 7, 4, 1);
    gradcheck("linear dx", linear_obj, &s, s.x, 21, dx);
    gradcheck("linear dw", linear_obj, &s, s.w, 28, dw);
    gradcheck("linear db", linear_obj, &s, s.b, 4, db);
    free(s.x); free(s.w); free(s.b); free(s.R); free(s.out); free(dx); free(dw); free(db);
}

static void test_add_dropout(void **state)
{
    float a[4] = {1, 2, 3, 4}, b[4] = {10, 20, 30, 40}, o[4], da[4] = {0}, db[4] = {1, 1, 1, 1};
    add_forward_cpu(NULL, o, a, b, 4);
    assert_true(o[3] == 44.0f);
    float g[4] = {0.5f, -1, 2, 3};
    add_backward_cpu(NULL, da, db, g, 4, 1, 1);
    assert_true(da[1] == -1.0f && db[2] == 3.0f);

    struct misc_st s = {.N = 4, .C = 50};
    s.x = rnd(200); s.R = rnd(200); s.out = malloc(800); s.mask = malloc(800);
    dropout_obj(&s);
    int zeros = 0;
    for (int i = 0; i < 200; i++) {
        zeros += s.mask[i] == 0.0f;
        assert_true(s.mask[i] == 0.0f || fabsf(s.mask[i] - 1.0f / 0.7f) < 1e-6f);
    }
    assert_true(zeros > 30 && zeros < 90); /* p = 0.3 of 200 */
    float *dx = calloc(200, 4);
    dropout_backward_cpu(NULL, dx, s.R, s.mask, 200, 1);
    gradcheck("dropout dx", dropout_obj, &s, s.x, 200, dx);
    free(s.x); free(s.R); free(s.out); free(s.mask); free(dx);
}

/* ---- cross-entropy ---------------------------------------------------------------------------- */
struct xent_st { float *z, *p; int32_t y[3]; float eps; };
static double xent_obj(void *p)
{
    struct xent_st *s = p;
    return xent_forward_cpu(NULL, s->p, s->z, s->y, 3, 5, s->eps);
}
static void test_xent(void **state)
{
    for (int t = 0; t < 2; t++) {
        struct xent_st s = {.y = {0, 4, 2}, .eps = t ? 0.1f : 0.0f};
        s.z = rnd(15); s.p = malloc(60);
        float loss = (float)xent_obj(&s);
        /* eps = 0: loss = mean(-log p[y]) */
        if (t == 0) {
            double want = 0;
            for (int n = 0; n < 3; n++) {
                double se = 0;
                for (int k = 0; k < 5; k++) se += exp(s.z[n * 5 + k]);
                want += -(s.z[n * 5 + s.y[n]] - log(se));
            }
            float w = (float)(want / 3);
            assert_allclose(&loss, &w, 1, 1e-6, 1e-5, "xent loss");
        }
        float *dz = calloc(15, 4);
        xent_backward_cpu(NULL, dz, s.p, s.y, 3, 5, s.eps);
        gradcheck("xent dz", xent_obj, &s, s.z, 15, dz);
        free(s.z); free(s.p); free(dz);
    }
}

static void test_sgd(void **state)
{
    float p[2] = {1.0f, -2.0f}, m[2] = {0.5f, 0.0f}, g[2] = {0.1f, 0.2f};
    sgd_step_cpu(NULL, p, m, g, 2, 0.1f, 0.9f, 0.01f);
    /* d = g + wd*p = {0.11, 0.18}; m = {0.45+0.11, 0.18}; p -= 0.1*m */
    float want_m[2] = {0.56f, 0.18f}, want_p[2] = {1.0f - 0.056f, -2.0f - 0.018f};
    assert_allclose(m, want_m, 2, 1e-6, 1e-6, "sgd momentum");
    assert_allclose(p, want_p, 2, 1e-6, 1e-6, "sgd params");
}

/* gemm_cpu's split paths (rows, columns, each transpose) against a naive product; the third
 * shape is a weight gradient's (C small, K long: one block per thread) */
static void test_gemm_split(void **state)
{
    int shapes[4][3] = {{2000, 64, 48}, {40, 2000, 80}, {24, 72, 4000}, {1, 300, 200}}; /* last: gemv */
    omp_set_num_threads(2);
    for (int sh = 0; sh < 4; sh++)
        for (int ta = 0; ta < 2; ta++)
            for (int tb = 0; tb < 2; tb++) {
                int M = shapes[sh][0], N = shapes[sh][1], K = shapes[sh][2];
                float *A = rnd((size_t)M * K), *B = rnd((size_t)K * N), *C = rnd((size_t)M * N);
                float *want = malloc(sizeof(float) * (size_t)M * N);
                int lda = ta ? M : K, ldb = tb ? K : N;
                for (int m = 0; m < M; m++)
                    for (int n = 0; n < N; n++) {
                        double acc = 0.5 * C[(size_t)m * N + n]; /* beta 0.5 */
                        for (int k = 0; k < K; k++)
                            acc += (double)(ta ? A[(size_t)k * lda + m] : A[(size_t)m * lda + k]) *
                                   (tb ? B[(size_t)n * ldb + k] : B[(size_t)k * ldb + n]);
                        want[(size_t)m * N + n] = (float)acc;
                    }
                gemm_cpu(ta, tb, M, N, K, A, lda, B, ldb, 0.5f, C, N);
                assert_allclose(C, want, (size_t)M * N, 1e-4, 1e-4, "gemm_cpu");
                free(A); free(B); free(C); free(want);
            }
}

int main(void)
{
    isa_test_setup();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_conv_general),  cmocka_unit_test(test_conv_stem),
        cmocka_unit_test(test_bn_act_fused),
        cmocka_unit_test(test_conv_depthwise), cmocka_unit_test(test_conv_pointwise),
        cmocka_unit_test(test_bn_train),      cmocka_unit_test(test_bn_eval),
        cmocka_unit_test(test_activations),   cmocka_unit_test(test_scale_pool),
        cmocka_unit_test(test_linear),        cmocka_unit_test(test_add_dropout),
        cmocka_unit_test(test_xent),          cmocka_unit_test(test_sgd),
        cmocka_unit_test(test_gemm_split),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
