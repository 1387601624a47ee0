/* test_resume.c: a run stopped mid-epoch and resumed from its step checkpoint ends with the same
 * checkpoint, byte for byte (parameters, momentum, BN statistics, RNG, position), as the run that
 * went straight through: same batches, LR, momentum and dropout draws (engine/model/trainer.c,
 * resume.c, the v2 checkpoint's mid-epoch position). Tiny model, synthetic data, one rank. */
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

/* 2 epochs of 8 steps (32 synthetic images, batch 4), a checkpoint every 3 steps, dropout on. */
static enum tipc_status train(const char *out, const char *resume, bool resume_auto, int batch)
{
    struct train_opts o = {0};
    recipe_defaults(&o.r);
    o.r.num_classes = 4, o.r.width_mult = 0.25, o.r.image_size = 32, o.r.dropout = 0.2;
    o.r.batch_size = o.r.eval_batch_size = batch;
    o.r.synthetic_size = 32, o.r.epochs = 2, o.r.print_freq = 100, o.r.seed = 7, o.r.save_interval_steps = 3;
    snprintf(o.r.synthetic, sizeof o.r.synthetic, "true");
    snprintf(o.r.output_dir, sizeof o.r.output_dir, "%s", out);
    o.resume = resume, o.resume_auto = resume_auto, o.world = 1;
    assert_int_equal(backend_open(&o.be, "cpu", 1, NULL), TIPC_OK);
    enum tipc_status st = train_run(&o);
    backend_close(&o.be);
    return st;
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

int main(void)
{
    if (!mkdtemp(root)) return 1;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_mid_epoch_resume_equals_straight_run),
        cmocka_unit_test(test_auto_resume_takes_the_newest),
        cmocka_unit_test(test_mid_epoch_resume_with_other_batches_is_refused),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    rm_rf(root);
    return rc;
}
