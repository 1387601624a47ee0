/* test_recipe.c: the YAML recipe: the repository's file loads, -o overrides, unknown keys and
 * bad values are errors with file:line, and the LR schedules (warmup, cosine, piecewise,
 * constant) give the values their definitions say. */
#include "testutil.h"

#include "../../engine/io/recipe.h"

static char *write_tmp(const char *text)
{
    char *path = strdup("/tmp/tipc-test-recipe-XXXXXX");
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    assert_true(write(fd, text, strlen(text)) == (ssize_t)strlen(text));
    close(fd);
    return path;
}

static void test_repo_recipe_loads(void **state)
{
    struct recipe r;
    recipe_defaults(&r);
    assert_int_equal(recipe_load(&r, "configs/mobilenet_v3_small/mobilenet_v3_small.yaml"), TIPC_OK);
    assert_string_equal(r.arch, "mobilenet_v3_small");
    assert_int_equal(r.num_classes, 1000);
    assert_int_equal(r.n_decay, 3);
    assert_int_equal(r.decay_epochs[2], 90);
    assert_int_equal(recipe_override(&r, "Optimizer.lr.name=Piecewise"), TIPC_OK);
    assert_int_equal(r.lr_name, LR_PIECEWISE);
    assert_int_equal(recipe_override(&r, "Arch.class_num=10"), TIPC_OK);
    assert_int_equal(r.num_classes, 10);
    /* the gradient buckets: 1 MB, overlapping backward; both switches can be turned off */
    assert_int_equal(r.fuse_grad_size_in_MB, 1);
    assert_true(r.fuse_all_reduce_ops && r.overlap_allreduce);
    assert_int_equal(recipe_override(&r, "Distributed.fuse_all_reduce_ops=false"), TIPC_OK);
    assert_int_equal(recipe_override(&r, "Distributed.overlap_allreduce=false"), TIPC_OK);
    assert_false(r.fuse_all_reduce_ops || r.overlap_allreduce);
}

static void expect_error(const char *yaml, const char *want)
{
    char *p = write_tmp(yaml);
    struct recipe r;
    recipe_defaults(&r);
    struct capture c;
    capture_stderr_begin(&c);
    enum tipc_status st = recipe_load(&r, p);
    char *err = capture_stderr_end(&c);
    assert_int_equal(st, TIPC_EUSAGE);
    char *full = xasprintf("%s%s", p, want);
    if (!strstr(err, full)) fail_msg("want '%s' in '%s'", full, err);
    free(full);
    free(err);
    unlink(p);
    free(p);
}

static void test_errors_name_file_and_line(void **state)
{
    expect_error("Global:\n  epochs: 3\n  epohcs: 3\n", ":3: unknown key 'Global.epohcs'");
    expect_error("Arch:\n  class_num: ten\n", ":2: bad value 'ten' for 'Arch.class_num'");
    expect_error("Optimizer:\n  lr:\n    name: Step\n", ":3: unknown lr schedule 'Step'");
    expect_error("Optimizer:\n  name: Adam\n", ":2: optimizer 'Adam' is not supported");
    expect_error("Global: [1, 2]\n", ":1: unknown key 'Global'");
    expect_error("Global:\n  epochs: 3\n bad indent\n", ":3: YAML:");
    struct recipe r;
    recipe_defaults(&r);
    struct capture c;
    capture_stderr_begin(&c);
    enum tipc_status st = recipe_override(&r, "Loss.smoothing=0.1");
    char *err = capture_stderr_end(&c);
    assert_int_equal(st, TIPC_EUSAGE);
    assert_non_null(strstr(err, "unknown key 'Loss.smoothing'"));
    free(err);
}

static void test_lr_schedules(void **state)
{
    struct recipe r;
    recipe_defaults(&r);
    r.epochs = 10, r.lr = 0.1, r.warmup_epochs = 2, r.warmup_start_lr = 0.0;
    assert_true(fabs(recipe_lr(&r, 0.0) - 0.0) < 1e-12);
    assert_true(fabs(recipe_lr(&r, 1.0) - 0.05) < 1e-12);     /* linear warmup */
    assert_true(fabs(recipe_lr(&r, 2.0) - 0.1) < 1e-12);      /* cosine starts at the peak */
    assert_true(fabs(recipe_lr(&r, 6.0) - 0.05) < 1e-12);     /* half way: half */
    assert_true(fabs(recipe_lr(&r, 10.0) - 0.0) < 1e-12);
    r.lr_name = LR_PIECEWISE, r.warmup_epochs = 0, r.n_decay = 2, r.decay_epochs[0] = 3, r.decay_epochs[1] = 6;
    r.gamma = 0.1;
    assert_true(fabs(recipe_lr(&r, 2.9) - 0.1) < 1e-12);
    assert_true(fabs(recipe_lr(&r, 3.0) - 0.01) < 1e-12);
    assert_true(fabs(recipe_lr(&r, 7.0) - 0.001) < 1e-12);
    r.lr_name = LR_CONSTANT;
    assert_true(fabs(recipe_lr(&r, 9.0) - 0.1) < 1e-12);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_repo_recipe_loads),
        cmocka_unit_test(test_errors_name_file_and_line),
        cmocka_unit_test(test_lr_schedules),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
