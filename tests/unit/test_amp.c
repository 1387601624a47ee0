/* test_amp.c: mixed precision's conversions and CPU kernels (engine/ops/precision.h,
 * ops/cpu/sgd_amp.c): round-to-nearest-even conversions (ties, NaN, inf, overflow, subnormals),
 * the vector kernels equal to the scalar reference, the loss scaler's update rule. Through the
 * model (skipped steps, loss curves): test_amp_model.c. Run once per CPU kernel level by
 * tests/run.sh (isa_test.h); ops only, so it also runs cross-built under qemu-aarch64. */
#include "testutil.h"
#include "isa_test.h"

#include "../../engine/ops/ops.h"
#include "../../core/rng.h"

static uint16_t bf(uint32_t bits) { return bf16_from_f32(f32_from_bits(bits)); }

static void test_bf16_rounding(void **state)
{
    assert_int_equal(bf(0x3f800000u), 0x3f80);          /* 1.0 exact */
    assert_int_equal(bf(0x3f808000u), 0x3f80);          /* tie, even below: down */
    assert_int_equal(bf(0x3f818000u), 0x3f82);          /* tie, odd below: up to even */
    assert_int_equal(bf(0x3f808001u), 0x3f81);          /* above the tie: up */
    assert_int_equal(bf(0x3f807fffu), 0x3f80);          /* below the tie: down */
    assert_int_equal(bf(0xbf818000u), 0xbf82);          /* negative tie */
    assert_int_equal(bf(0x7f800000u), 0x7f80);          /* +inf */
    assert_int_equal(bf(0xff800000u), 0xff80);          /* -inf */
    assert_int_equal(bf(0x7f7fffffu), 0x7f80);          /* FLT_MAX rounds to inf */
    assert_int_equal(bf(0x80000000u), 0x8000);          /* -0 */
    assert_int_equal(bf(0x00018000u), 0x0002);          /* subnormal tie up to even, kept */
    uint16_t n = bf(0x7f800001u);                       /* signalling NaN with a low payload */
    assert_true((n & 0x7f80) == 0x7f80 && (n & 0x7f) != 0); /* still NaN (not inf) */
    assert_true(isnan(f32_from_bf16(bf(0xffc00000u))));
    assert_true(isnan(round_bf16(NAN)));
    assert_true(f32_from_bf16(0x3f82) == 1.015625f);
}

static void test_fp16_rounding(void **state)
{
    assert_int_equal(fp16_from_f32(1.0f), 0x3c00);
    assert_int_equal(fp16_from_f32(65504.0f), 0x7bff);      /* largest finite */
    assert_int_equal(fp16_from_f32(65519.0f), 0x7bff);      /* below the tie */
    assert_int_equal(fp16_from_f32(65520.0f), 0x7c00);      /* tie to even: inf */
    assert_int_equal(fp16_from_f32(1e9f), 0x7c00);
    assert_int_equal(fp16_from_f32(-INFINITY), 0xfc00);
    assert_int_equal(fp16_from_f32(1.0f + 1.0f / 2048), 0x3c00);     /* tie, even: down */
    assert_int_equal(fp16_from_f32(1.0f + 3.0f / 2048), 0x3c02);     /* tie, odd: up */
    assert_int_equal(fp16_from_f32(0x1p-24f), 0x0001);               /* smallest subnormal */
    assert_int_equal(fp16_from_f32(0x1p-25f), 0x0000);               /* tie to even: 0 */
    assert_int_equal(fp16_from_f32(0x3p-25f), 0x0002);               /* tie to even: 2 */
    assert_int_equal(fp16_from_f32(0x1.ff8p-15f), 0x03ff);           /* largest subnormal */
    assert_int_equal(fp16_from_f32(0x1.ffcp-15f), 0x0400);           /* tie: up to the even normal */
    assert_int_equal(fp16_from_f32(0x1p-14f), 0x0400);               /* smallest normal */
    assert_true(isnan(round_fp16(NAN)));
    assert_true(f32_from_fp16(0x0001) == 0x1p-24f && f32_from_fp16(0x8001) == -0x1p-24f);
    assert_true(round_fp16(65504.0f) == 65504.0f && isinf(round_fp16(70000.0f)));
}

/* amp_round_cpu / amp_scale_cpu (AVX-512 bodies, scalar tails, OpenMP chunks) == the scalar
 * reference, bit for bit, over random bit patterns (every class: NaN, inf, subnormal, normal) */
static void test_vector_round_equals_scalar(void **state)
{
    size_t n = 100003; /* odd: tails, and above OMP_MIN_WORK: several chunks */
    float *x = malloc(n * sizeof *x), *y = malloc(n * sizeof *y);
    struct rng r;
    rng_seed(&r, 5);
    for (enum precision p = PREC_BF16; p <= PREC_FP16; p++) {
        for (size_t i = 0; i < n; i++) {
            uint32_t u = (uint32_t)(rng_u64(&r) >> 32);
            if (i % 3 == 0) u = (u & 0x807fffffu) | ((uint32_t)(100 + i % 60) << 23); /* fp16's range */
            x[i] = f32_from_bits(u);
        }
        amp_round_cpu(NULL, y, x, n, p);
        for (size_t i = 0; i < n; i++) {
            float ref = round_to(x[i], p);
            if (isnan(ref)) assert_true(isnan(y[i]));
            else if (f32_bits(ref) != f32_bits(y[i]))
                fail_msg("%s: x=%08x: got %08x want %08x", precision_name(p), f32_bits(x[i]), f32_bits(y[i]),
                         f32_bits(ref));
        }
        float st[AMP_STATE_FLOATS] = {[AMP_SCALE] = 1024.0f};
        memcpy(y, x, n * sizeof *y);
        amp_scale_cpu(NULL, y, n, st, p);
        for (size_t i = 0; i < n; i += 7) {
            float ref = round_to(x[i] * 1024.0f, p);
            assert_true(isnan(ref) ? isnan(y[i]) : f32_bits(ref) == f32_bits(y[i]));
        }
    }
    free(x);
    free(y);
}

static void test_unscale_check_and_update(void **state)
{
    float g[40], st[AMP_STATE_FLOATS] = {[AMP_SCALE] = 8.0f};
    for (int i = 0; i < 40; i++) g[i] = (float)i;
    amp_unscale_check_cpu(NULL, g, 40, st);
    assert_true(st[AMP_FOUND_INF] == 0 && g[8] == 1.0f && g[39] == 39.0f / 8);
    g[17] = INFINITY;
    amp_unscale_check_cpu(NULL, g, 40, st);
    assert_true(st[AMP_FOUND_INF] == 1);
    g[17] = NAN;
    amp_unscale_check_cpu(NULL, g, 40, st);
    assert_true(st[AMP_FOUND_INF] == 1);
    /* skipped step: sgd untouched; update halves and counts */
    float p[40] = {0}, m[40] = {0};
    sgd_step_amp_cpu(NULL, p, m, g, 40, 0.1f, 0.9f, 0, st);
    for (int i = 0; i < 40; i++) assert_true(p[i] == 0 && m[i] == 0);
    struct loss_scaler ls = {.init_scale = 8, .growth_factor = 2, .backoff_factor = 0.5f, .growth_interval = 3,
                             .dynamic = true};
    amp_update_cpu(NULL, st, &ls);
    assert_true(st[AMP_SCALE] == 4.0f && st[AMP_SKIPPED] == 1 && st[AMP_GOOD] == 0);
    /* three finite steps: growth on the third, count restarts */
    st[AMP_FOUND_INF] = 0;
    for (int k = 1; k <= 3; k++) {
        amp_update_cpu(NULL, st, &ls);
        assert_true(st[AMP_SCALE] == (k < 3 ? 4.0f : 8.0f));
    }
    assert_true(st[AMP_GOOD] == 0 && st[AMP_SKIPPED] == 1);
    /* static: skip still counted, the scale never moves */
    ls.dynamic = false;
    st[AMP_FOUND_INF] = 1;
    amp_update_cpu(NULL, st, &ls);
    st[AMP_FOUND_INF] = 0;
    for (int k = 0; k < 5; k++) amp_update_cpu(NULL, st, &ls);
    assert_true(st[AMP_SCALE] == 8.0f && st[AMP_SKIPPED] == 2);
}

int main(void)
{
    isa_test_setup();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bf16_rounding),
        cmocka_unit_test(test_fp16_rounding),
        cmocka_unit_test(test_vector_round_equals_scalar),
        cmocka_unit_test(test_unscale_check_and_update),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
