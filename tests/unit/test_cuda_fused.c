/* test_cuda_fused.c: the fused BN + activation and the vectorised elementwise CUDA kernels
 * against their CPU twins, TF32 off (fp32 against fp32): forward 1e-4 relative, backward 1e-3
 * (cuda_test.h's expect). The vectorised kernels take a float4 path only for 16-byte aligned
 * buffers (and C % 4 == 0 where a per-channel vector is read), the scalar path otherwise, and
 * a scalar tail for the last n % 4: every op runs at sizes with each tail length and at
 * pointers offset by 0..3 floats, so both paths and the tails are compared.
 * Without a CUDA build or a device every test prints `SKIP: no CUDA device (reason)`. */
#include "cuda_test.h"

/* ---- batchnorm + activation: train / eval, every activation, din (= / +=) and NULL ---------- */
static void bn_act_case(int M, int Cc, int train, enum act_kind act, size_t off)
{
    struct bn_desc d = {.M = M, .C = Cc, .eps = 1e-3f, .momentum = 0.01f, .train = train};
    size_t n = (size_t)M * Cc, c = (size_t)Cc;
    float *x = rnd(n, 2), *g = rnd(c, 1), *b = rnd(c, 1), *rm = rnd(c, 1), *rv = rnd(c, 1), *dy = rnd(n, 1);
    for (size_t i = 0; i < n; i++) x[i] += 0.5f;          /* a non-zero mean */
    for (size_t i = 0; i < c; i++) rv[i] = 1.5f + rv[i];  /* positive variance */
    float *y = malloc(n * sizeof(float)), *sm = calloc(c, sizeof(float)), *sr = calloc(c, sizeof(float));
    float *din = rnd(n, 1), *dg = rnd(c, 1), *db = rnd(c, 1);
    /* activations at an offset of `off` floats: off != 0 takes the scalar path */
    float *gxb = G.ops->alloc(G.ctx, n + 4), *gyb = G.ops->alloc(G.ctx, n + 4), *gdyb = G.ops->alloc(G.ctx, n + 4);
    float *gdinb = G.ops->alloc(G.ctx, n + 4);
    float *gx = gxb + off, *gy = gyb + off, *gdy = gdyb + off, *gdin = gdinb + off;
    G.ops->upload(G.ctx, gx, x, n);
    G.ops->upload(G.ctx, gdy, dy, n);
    G.ops->upload(G.ctx, gdin, din, n);
    float *gg = dev(g, c), *gb = dev(b, c), *grm = dev(rm, c), *grv = dev(rv, c);
    float *gsm = G.ops->alloc(G.ctx, c), *gsr = G.ops->alloc(G.ctx, c), *gdg = dev(dg, c), *gdb = dev(db, c);
    char label[128];
    snprintf(label, sizeof label, "bn+%s M%d C%d %s off%zu", act_name(act), M, Cc, train ? "train" : "eval", off);
    C->batchnorm_act_forward(NULL, y, sm, sr, x, g, b, rm, rv, &d, act);
    G.ops->batchnorm_act_forward(G.ctx, gy, gsm, gsr, gx, gg, gb, grm, grv, &d, act);
    expect(gy, y, n, FWD, label);
    expect(grm, rm, c, FWD, "bn+act running mean");
    expect(grv, rv, c, FWD, "bn+act running var");
    if (train) {
        expect(gsm, sm, c, FWD, "bn+act save_mean");
        expect(gsr, sr, c, FWD, "bn+act save_rstd");
    }
    /* Backward from the CPU's saved statistics on both sides: the activation's derivative is a
     * step, and the same statistics make both recompute bit-identical pre-activations, so its
     * kinks fall on the same elements (eval: the running mean stands for save_mean). */
    const float *m_h = train ? sm : rm;
    G.ops->upload(G.ctx, gsm, m_h, c);
    G.ops->upload(G.ctx, gsr, sr, c);
    for (int acc = 1; acc >= 0; acc--) {
        C->batchnorm_act_backward(NULL, din, dg, db, dy, x, m_h, sr, g, b, rv, &d, acc, act);
        G.ops->batchnorm_act_backward(G.ctx, gdin, gdg, gdb, gdy, gx, gsm, gsr, gg, gb, grv, &d, acc, act);
        expect(gdin, din, n, BWD, acc ? "bn+act din (acc)" : "bn+act din");
        expect(gdg, dg, c, BWD, "bn+act dgamma (accumulated)");
        expect(gdb, db, c, BWD, "bn+act dbeta (accumulated)");
    }
    C->batchnorm_act_backward(NULL, NULL, dg, db, dy, x, m_h, sr, g, b, rv, &d, 0, act);
    G.ops->batchnorm_act_backward(G.ctx, NULL, gdg, gdb, gdy, gx, gsm, gsr, gg, gb, grv, &d, 0, act);
    expect(gdg, dg, c, BWD, "bn+act dgamma (no din)");
    float *bufs[] = {gxb, gyb, gdyb, gdinb, gg, gb, grm, grv, gsm, gsr, gdg, gdb};
    for (size_t i = 0; i < sizeof bufs / sizeof bufs[0]; i++) G.ops->free(G.ctx, bufs[i]);
    float *hb[] = {x, g, b, rm, rv, dy, y, sm, sr, din, dg, db};
    for (size_t i = 0; i < sizeof hb / sizeof hb[0]; i++) free(hb[i]);
}

static void test_bn_act(void **state)
{
    (void)state;
    NEED_GPU();
    for (int k = ACT_NONE; k <= ACT_HARDSIGMOID; k++) {
        enum act_kind a = (enum act_kind)k;
        bn_act_case(126, 40, 1, a, 0);  /* C % 4 == 0: float4 apply */
        bn_act_case(126, 40, 0, a, 0);
        bn_act_case(5000, 24, 1, a, 0); /* many row chunks */
        bn_act_case(130, 17, 1, a, 0);  /* C % 4 != 0: scalar apply */
        bn_act_case(64, 16, 1, a, 1);   /* unaligned activations: scalar apply */
        bn_act_case(1, 8, 1, a, 0);     /* M = 1 */
    }
}

/* ---- the vectorised elementwise ops: every tail length, aligned and offset pointers ---------- */
static const size_t sizes[] = {1, 2, 3, 4, 5, 7, 64, 1003, 4096 + 2};

/* a device copy of h at an offset of off floats in a fresh buffer (free base) */
static float *dev_at(const float *h, size_t n, size_t off, float **base)
{
    *base = G.ops->alloc(G.ctx, n + 4);
    G.ops->upload(G.ctx, *base + off, h, n);
    return *base + off;
}

static void ew_case(size_t n, size_t off)
{
    char label[96];
    float *x = rnd(n, 5), *dy = rnd(n, 1), *a0 = rnd(n, 1), *y = malloc(n * sizeof(float)), *din = copy(a0, n);
    float *db = copy(a0, n), *bx, *bdy, *ba, *bb, *by;
    float *gx = dev_at(x, n, off, &bx), *gdy = dev_at(dy, n, off, &bdy), *ga = dev_at(a0, n, off, &ba);
    float *gb = dev_at(a0, n, 0, &bb), *gy = dev_at(x, n, off, &by);
    for (int k = ACT_NONE; k <= ACT_HARDSIGMOID; k++) {
        snprintf(label, sizeof label, "%s n%zu off%zu", act_name((enum act_kind)k), n, off);
        C->act_forward(NULL, y, x, n, (enum act_kind)k);
        G.ops->act_forward(G.ctx, gy, gx, n, (enum act_kind)k);
        expect(gy, y, n, FWD, label);
        for (int acc = 0; acc < 2; acc++) {
            memcpy(din, a0, n * sizeof(float));
            G.ops->upload(G.ctx, ga, a0, n);
            C->act_backward(NULL, din, dy, x, n, (enum act_kind)k, acc);
            G.ops->act_backward(G.ctx, ga, gdy, gx, n, (enum act_kind)k, acc);
            expect(ga, din, n, BWD, acc ? "act backward (acc)" : "act backward");
        }
    }
    /* in place (out == in) */
    memcpy(y, x, n * sizeof(float));
    G.ops->upload(G.ctx, gy, x, n);
    C->act_forward(NULL, y, y, n, ACT_HARDSWISH);
    G.ops->act_forward(G.ctx, gy, gy, n, ACT_HARDSWISH);
    expect(gy, y, n, FWD, "hardswish in place");
    snprintf(label, sizeof label, "add n%zu off%zu", n, off);
    C->add_forward(NULL, y, x, dy, n);
    G.ops->add_forward(G.ctx, gy, gx, gdy, n);
    expect(gy, y, n, FWD, label);
    for (int acc = 0; acc < 4; acc++) { /* da at off, db aligned: mixed alignment takes the scalar path */
        memcpy(din, a0, n * sizeof(float));
        memcpy(db, a0, n * sizeof(float));
        G.ops->upload(G.ctx, ga, a0, n);
        G.ops->upload(G.ctx, gb, a0, n);
        C->add_backward(NULL, din, db, dy, n, acc & 1, acc >> 1);
        G.ops->add_backward(G.ctx, ga, gb, gdy, n, acc & 1, acc >> 1);
        expect(ga, din, n, BWD, "add da");
        expect(gb, db, n, BWD, "add db");
    }
    /* SGD: p = x, m = a0, g = dy, three steps */
    float *p = copy(x, n), *m = copy(a0, n);
    G.ops->upload(G.ctx, gy, x, n);
    G.ops->upload(G.ctx, ga, a0, n);
    for (int s = 0; s < 3; s++) {
        C->sgd_step(NULL, p, m, dy, n, 0.1f, 0.9f, 1e-4f);
        G.ops->sgd_step(G.ctx, gy, ga, gdy, n, 0.1f, 0.9f, 1e-4f);
    }
    snprintf(label, sizeof label, "sgd params n%zu off%zu", n, off);
    expect(gy, p, n, FWD, label);
    expect(ga, m, n, FWD, "sgd momentum");
    float *bufs[] = {bx, bdy, ba, bb, by};
    for (size_t i = 0; i < sizeof bufs / sizeof bufs[0]; i++) G.ops->free(G.ctx, bufs[i]);
    float *hb[] = {x, dy, a0, y, din, db, p, m};
    for (size_t i = 0; i < sizeof hb / sizeof hb[0]; i++) free(hb[i]);
}

static void test_elementwise_vec(void **state)
{
    (void)state;
    NEED_GPU();
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++)
        for (size_t off = 0; off < 4; off++) ew_case(sizes[s], off);
}

/* ---- per-channel ops: bias + act and the SE scale, C % 4 == 0 (float4) and not ------------- */
static void channel_case(int N, int P, int Cc, size_t off)
{
    size_t n = (size_t)N * P * Cc, ng = (size_t)N * Cc;
    float *x = rnd(n, 4), *b = rnd((size_t)Cc, 1), *g = rnd(ng, 1), *y = malloc(n * sizeof(float)), *bx, *by, *bg;
    float *gx = dev_at(x, n, off, &bx), *gy = dev_at(x, n, off, &by), *gg = dev_at(g, ng, 0, &bg), *gb = dev(b, (size_t)Cc);
    char label[96];
    for (int k = ACT_NONE; k <= ACT_HARDSIGMOID; k++) {
        memcpy(y, x, n * sizeof(float));
        G.ops->upload(G.ctx, gy, x, n);
        C->bias_act_forward(NULL, y, b, (size_t)N * P, Cc, (enum act_kind)k);
        G.ops->bias_act_forward(G.ctx, gy, gb, (size_t)N * P, Cc, (enum act_kind)k);
        snprintf(label, sizeof label, "bias+%s N%d P%d C%d off%zu", act_name((enum act_kind)k), N, P, Cc, off);
        expect(gy, y, n, FWD, label);
    }
    C->scale_forward(NULL, y, x, g, N, P, Cc);
    G.ops->scale_forward(G.ctx, gy, gx, gg, N, P, Cc);
    snprintf(label, sizeof label, "se scale N%d P%d C%d off%zu", N, P, Cc, off);
    expect(gy, y, n, FWD, label);
    G.ops->free(G.ctx, bx), G.ops->free(G.ctx, by), G.ops->free(G.ctx, bg), G.ops->free(G.ctx, gb);
    free(x), free(b), free(g), free(y);
}

static void test_channel_vec(void **state)
{
    (void)state;
    NEED_GPU();
    for (size_t off = 0; off < 4; off++) {
        channel_case(3, 21, 40, off); /* C % 4 == 0 */
        channel_case(2, 9, 17, off);  /* C % 4 == 1 */
        channel_case(2, 5, 6, off);   /* C % 4 == 2 */
        channel_case(1, 1, 4, off);   /* one float4 */
    }
}

/* ---- uint8 normalise: pixel counts whose 3*npix leaves each tail, output offset ------------ */
static void test_normalize_vec(void **state)
{
    (void)state;
    NEED_GPU();
    const size_t npixs[] = {1, 2, 3, 4, 333, 1000};
    for (size_t s = 0; s < sizeof npixs / sizeof npixs[0]; s++)
        for (size_t off = 0; off < 4; off++) {
            size_t np = npixs[s], n = np * 3;
            uint8_t *img = malloc(n);
            for (size_t i = 0; i < n; i++) img[i] = (uint8_t)(i * 37 + 11 + s);
            float *y = malloc(n * sizeof(float)), *base = G.ops->alloc(G.ctx, n + 4);
            C->normalize_u8(NULL, y, img, np);
            G.ops->normalize_u8(G.ctx, base + off, img, np);
            char label[64];
            snprintf(label, sizeof label, "normalize_u8 npix%zu off%zu", np, off);
            expect(base + off, y, n, FWD, label);
            G.ops->free(G.ctx, base);
            free(img), free(y);
        }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bn_act),
        cmocka_unit_test(test_elementwise_vec),
        cmocka_unit_test(test_channel_vec),
        cmocka_unit_test(test_normalize_vec),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
