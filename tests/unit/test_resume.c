/* test_resume.c: a run stopped mid-epoch and resumed from its step checkpoint ends with the same
 * checkpoint, byte for byte (parameters, momentum, BN statistics, RNG, position), as the run that
 * went straight through: same batches, LR, momentum and dropout draws (engine/model/trainer.c,
 * resume.c, the v2 checkpoint's mid-epoch position), and in fp16 mixed precision the same loss
 * scale (the v3 checkpoint's scaler state). Tiny model, synthetic data, one rank. */
#include "testutil.h"

#include <sys/stat.h>

#include "../../core/fs.h"
#include "../../engine/io/checkpoint.h"
#include "../../engine/model/trainer.h"

static char root[] = "/tmp/tipc_resume_XXXXXX";

static char *dir(const char *name)
{
    char *p = xasprintf("%s/%s", root, name);
    mkdir(p, 0755);
    return p;
}

static void *slurp(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    fseek(f, 0, SEEK_END);
    long len = ftell(f);
    fseek(f, 0, SEEK_SET);
    void *b = xmalloc((size_t)len + 1);
    assert_int_equal(fread(b, 1, (size_t)len, f), (size_t)len);
    fclose(f);
    *n = (size_t)len;
    return b;
}

static void assert_same_file(const char *a, const char *b)
{
    size_t na, nb;
    void *x = slurp(a, &na), *y = slurp(b, &nb);
    assert_int_equal(na, nb);
    assert_memory_equal(x, y, na);
    free(x), free(y);
}

static void copy_file(const char *from, const char *to)
{
    size_t n;
    void *b = slurp(from, &n);
    FILE *f = fopen(to, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(b, 1, n, f), n);
    assert_int_equal(fclose(f), 0);
    free(b);
}

/* 2 epochs of 8 steps (32 synthetic images, batch 4), a checkpoint every 3 steps, dropout on;
 * amp NULL: fp32. */
static enum tipc_status train_amp(const char *out, const char *resume, bool resume_auto, int batch,
                                  const struct amp_policy *amp)
{
    struct train_opts o = {0};
    if (amp) o.amp = *amp;
    recipe_defaults(&o.r);
    o.r.num_classes = 4, o.r.width_mult = 0.25, o.r.image_size = 32, o.r.dropout = 0.2;
    o.r.batch_size = o.r.eval_batch_size = batch;
    o.r.synthetic_size = 32, o.r.epochs = 2, o.r.print_freq = 100, o.r.seed = 7, o.r.save_interval_steps = 3;
    snprintf(o.r.synthetic, sizeof o.r.synthetic, "true");
    snprintf(o.r.output_dir, sizeof o.r.output_dir, "%s", out);
    o.resume = resume, o.resume_auto = resume_auto, o.world = 1;
    o.run_id = "test-resume";   /* one id for every run here: their files are compared byte for byte */
    assert_int_equal(backend_open(&o.be, "cpu", 1, NULL), TIPC_OK);
    enum tipc_status st = train_run(&o);
    backend_close(&o.be);
    return st;
}

static enum tipc_status train(const char *out, const char *resume, bool resume_auto, int batch)
{
    return train_amp(out, resume, resume_auto, batch, NULL);
}

static uint32_t file_version(const char *path)
{
    size_t n;
    unsigned char *b = slurp(path, &n);
    assert_true(n > 12);
    uint32_t v;
    memcpy(&v, b + 8, 4);   /* after the 8-byte magic */
    free(b);
    return v;
}

/* fp16, dynamic scaling from 2^20 with growth every 2 finite steps: the first steps overflow and
 * back off, later ones grow, so the scale, its good-step count and the skip count all move. */
static struct amp_policy fp16_policy(void)
{
    struct amp_policy a = {.prec = PREC_FP16, .level = 2, .ls = amp_scaler_defaults(PREC_FP16)};
    a.ls.init_scale = 1048576.0f;
    a.ls.growth_interval = 2;
    return a;
}

static void test_mid_epoch_resume_equals_straight_run(void **state)
{
    (void)state;
    char *a = dir("straight"), *b = dir("resumed");
    assert_int_equal(train(a, NULL, false, 4), TIPC_OK);
    /* the last two step checkpoints are kept: 12 (epoch 2, 4 of 8 steps done) and 15 */
    char *s12 = xasprintf("%s/step_12.ckpt", a), *s9 = xasprintf("%s/step_9.ckpt", a);
    assert_true(access(s12, F_OK) == 0);
    assert_true(access(s9, F_OK) != 0);
    struct ckpt_meta m;
    assert_int_equal(ckpt_read_meta(s12, &m), TIPC_OK);
    assert_int_equal(m.epoch, 1);
    assert_int_equal(m.step, 12);
    assert_int_equal(m.step_in_epoch, 4);
    assert_int_equal(m.steps_per_epoch, 8);
    assert_int_equal(train(b, s12, false, 4), TIPC_OK);
    char *fa = xasprintf("%s/epoch_2.ckpt", a), *fb = xasprintf("%s/epoch_2.ckpt", b);
    assert_same_file(fa, fb);
    free(a), free(b), free(s12), free(s9), free(fa), free(fb);
}

/* --resume auto picks the newest complete checkpoint of the folder; none: from the beginning */
static void test_auto_resume_takes_the_newest(void **state)
{
    (void)state;
    char *a = xasprintf("%s/straight", root), *c = dir("auto"), *e = dir("empty");
    char *s12 = xasprintf("%s/step_12.ckpt", a), *c12 = xasprintf("%s/step_12.ckpt", c);
    char *e1 = xasprintf("%s/epoch_1.ckpt", a), *c1 = xasprintf("%s/epoch_1.ckpt", c);
    copy_file(s12, c12);
    copy_file(e1, c1);   /* older: step 8 */
    assert_int_equal(train(c, NULL, true, 4), TIPC_OK);
    char *fa = xasprintf("%s/epoch_2.ckpt", a), *fc = xasprintf("%s/epoch_2.ckpt", c), *fe = xasprintf("%s/epoch_2.ckpt", e);
    assert_same_file(fa, fc);
    assert_int_equal(train(e, NULL, true, 4), TIPC_OK);
    assert_same_file(fa, fe);
    free(a), free(c), free(e), free(s12), free(c12), free(e1), free(c1), free(fa), free(fc), free(fe);
}

/* mid-epoch with another epoch length (batch 2: 16 steps) cannot be the same run: refused */
static void test_mid_epoch_resume_with_other_batches_is_refused(void **state)
{
    (void)state;
    char *s12 = xasprintf("%s/straight/step_12.ckpt", root), *d = dir("other");
    assert_int_equal(train(d, s12, false, 2), TIPC_EUSAGE);
    free(s12), free(d);
}

/* fp16 AMP: resumed at step 12 == straight; the checkpoint (version 4) holds a scaler that has
 * moved (else the test would prove nothing); fp32 checkpoints are version 4 without one. */
static void test_fp16_resume_keeps_the_loss_scaler(void **state)
{
    (void)state;
    struct amp_policy amp = fp16_policy();
    char *a = dir("fp16_straight"), *b = dir("fp16_resumed");
    assert_int_equal(train_amp(a, NULL, false, 4, &amp), TIPC_OK);
    char *s12 = xasprintf("%s/step_12.ckpt", a);
    struct ckpt_meta m;
    assert_int_equal(ckpt_read_meta(s12, &m), TIPC_OK);
    assert_int_equal(file_version(s12), 4);
    assert_true(m.has_scaler);
    assert_int_equal(m.precision, PREC_FP16);
    print_message("fp16 at step 12: loss scale %g, %g good steps, %g skipped\n", m.scaler[AMP_SCALE],
                  m.scaler[AMP_GOOD], m.scaler[AMP_SKIPPED]);
    assert_true(m.scaler[AMP_SKIPPED] >= 1);
    assert_true(m.scaler[AMP_SCALE] != amp.ls.init_scale || m.scaler[AMP_GOOD] != 0);
    assert_int_equal(train_amp(b, s12, false, 4, &amp), TIPC_OK);
    char *fa = xasprintf("%s/epoch_2.ckpt", a), *fb = xasprintf("%s/epoch_2.ckpt", b);
    assert_same_file(fa, fb);
    /* --resume auto (the launcher's restarts take the same path) from the same file */
    char *c = dir("fp16_auto"), *c12 = xasprintf("%s/step_12.ckpt", c), *fc = xasprintf("%s/epoch_2.ckpt", c);
    copy_file(s12, c12);
    assert_int_equal(train_amp(c, NULL, true, 4, &amp), TIPC_OK);
    assert_same_file(fa, fc);
    char *f32 = xasprintf("%s/straight/epoch_2.ckpt", root);
    assert_int_equal(file_version(f32), 4);
    assert_int_equal(ckpt_read_meta(f32, &m), TIPC_OK);
    assert_false(m.has_scaler);
    assert_string_equal(m.run_id, "test-resume");
    free(a), free(b), free(c), free(s12), free(c12), free(fa), free(fb), free(fc), free(f32);
}

/* Another precision's checkpoint found by --resume auto is another run's: refused (exit 2); the
 * same file given by hand is a deliberate switch and runs, its scaler unused. */
static void test_auto_resume_of_another_precision_is_refused(void **state)
{
    (void)state;
    struct amp_policy bf16 = {.prec = PREC_BF16, .level = 2, .ls = amp_scaler_defaults(PREC_BF16)};
    char *s12 = xasprintf("%s/fp16_straight/step_12.ckpt", root), *d = dir("bf16_auto"), *d12 = xasprintf("%s/step_12.ckpt", d);
    copy_file(s12, d12);
    assert_int_equal(train_amp(d, NULL, true, 4, &bf16), TIPC_EUSAGE);
    assert_int_equal(train(d, NULL, true, 4), TIPC_EUSAGE);
    char *e = dir("bf16_by_hand");
    assert_int_equal(train_amp(e, s12, false, 4, &bf16), TIPC_OK);
    free(s12), free(d), free(d12), free(e);
}

int main(void)
{
    if (!mkdtemp(root)) return 1;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_mid_epoch_resume_equals_straight_run),
        cmocka_unit_test(test_auto_resume_takes_the_newest),
        cmocka_unit_test(test_mid_epoch_resume_with_other_batches_is_refused),
        cmocka_unit_test(test_fp16_resume_keeps_the_loss_scaler),
        cmocka_unit_test(test_auto_resume_of_another_precision_is_refused),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    rm_rf(root);
    return rc;
}
