/* test_manifest.c: prepare/manifest: the YAML schema of configs/datasets.yaml (url as string or
 * list, defaults, modes) and its errors with file:line; the repository's own manifest loads. */
#include "testutil.h"
#include "../../prepare/manifest.h"

static char path[256];

static void write_manifest(const char *text)
{
    snprintf(path, sizeof path, "%s/tipc-manifest-%d.yaml", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp", (int)getpid());
    FILE *f = fopen(path, "w");
    fputs(text, f);
    fclose(f);
}

#define HEAD "version: 1\nmodels:\n  m:\n    items:\n"
#define SHA "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

static void test_items_and_modes(void **state)
{
    write_manifest(HEAD
                   "      d:\n        url: http://x/d.tar\n        sha256: " SHA "\n        archive: tar\n"
                   "        dest: data/d\n        fallback: synthetic\n        synthetic: {classes: 3, seed: 9}\n"
                   "      w:\n        kind: weights\n        url: [http://a/w, file:///b/w]\n        sha256: " SHA "\n"
                   "        dest: w.ckpt\n"
                   "    modes:\n      one: [d]\n      both: [d, w]\n");
    struct manifest m;
    assert_int_equal(manifest_load(&m, path, "m"), TIPC_OK);
    assert_int_equal(m.n_items, 2);
    assert_int_equal(m.items[0].n_urls, 1);
    assert_string_equal(m.items[0].archive, "tar");
    assert_int_equal(m.items[0].fallback, FALLBACK_SYNTHETIC);
    assert_int_equal(m.items[0].synth.classes, 3);
    assert_int_equal(m.items[0].synth.train_per_class, 10);   /* default kept */
    assert_int_equal((int)m.items[0].synth.seed, 9);
    assert_int_equal(m.items[0].line, 5);
    assert_true(m.items[1].weights);
    assert_int_equal(m.items[1].n_urls, 2);
    assert_string_equal(m.items[1].urls[1], "file:///b/w");
    assert_string_equal(m.items[1].archive, "none");
    assert_int_equal(m.items[1].fallback, FALLBACK_ERROR);     /* default */
    const struct manifest_mode *md = manifest_find_mode(&m, "both");
    assert_non_null(md);
    assert_int_equal(md->n, 2);
    assert_int_equal(md->items[1], 1);
    assert_null(manifest_find_mode(&m, "three"));
    manifest_free(&m);
    unlink(path);
}

static void expect_error(const char *text, const char *model, enum tipc_status want, const char *msg)
{
    write_manifest(text);
    struct manifest m;
    struct capture c;
    capture_stderr_begin(&c);
    enum tipc_status st = manifest_load(&m, path, model);
    char *err = capture_stderr_end(&c);
    manifest_free(&m);
    unlink(path);
    assert_int_equal(st, want);
    if (!strstr(err, msg)) fail_msg("expected '%s' in: %s", msg, err);
    free(err);
}

static void test_errors_name_line(void **state)
{
    expect_error(HEAD "      d:\n        url: http://x\n        dest: d\n    modes: {}\n", "m", TIPC_EDATA,
                 ":5: item 'd' has a url but no valid sha256");
    expect_error(HEAD "      d:\n        dest: d\n        kind: folder\n    modes: {}\n", "m", TIPC_EUSAGE,
                 "kind must be 'dataset' or 'weights'");
    expect_error(HEAD "      d:\n        kind: weights\n        dest: d\n        fallback: synthetic\n    modes: {}\n", "m",
                 TIPC_EUSAGE, "weights cannot fall back to synthetic");
    expect_error(HEAD "      d:\n        archive: rar\n        dest: d\n    modes: {}\n", "m", TIPC_EUSAGE,
                 "archive must be none, tar, tar.gz or zip");
    expect_error(HEAD "      d:\n        url: x\n    modes: {}\n", "m", TIPC_EUSAGE, "item 'd' has no 'dest'");
    expect_error(HEAD "      d:\n        url: x\n        sha256: " SHA "\n        dest: d\n    modes: {}\n", "m", TIPC_EUSAGE,
                 "a dataset download needs 'archive'");
    expect_error(HEAD "      d:\n        dest: d\n        synthetic: {classes: many}\n    modes: {}\n", "m", TIPC_EUSAGE,
                 ":7: 'classes' must be an integer");
    expect_error(HEAD "      d:\n        dest: d\n    modes:\n      x: [e]\n", "m", TIPC_EUSAGE,
                 ":8: mode 'x' names unknown item 'e'");
    expect_error(HEAD "      d: {dest: d}\n    modes: {}\n", "other", TIPC_EUSAGE, "no entry for model 'other'");
    expect_error("version: 2\nmodels: {}\n", "m", TIPC_EUSAGE, "manifest version 2 is not supported");
    expect_error("models: [a, b\n", "m", TIPC_EUSAGE, "bad YAML");
}

static void test_repository_manifest_loads(void **state)
{
    struct manifest m;
    assert_int_equal(manifest_load(&m, "configs/datasets.yaml", "mobilenet_v3_small"), TIPC_OK);
    const char *modes[] = {"lite_train_lite_infer", "lite_train_whole_infer", "whole_train_whole_infer", "whole_infer"};
    for (int i = 0; i < 4; i++) assert_non_null(manifest_find_mode(&m, modes[i]));
    assert_string_equal(m.items[0].dest, "data/lite_data");
    assert_int_equal(m.items[0].fallback, FALLBACK_SYNTHETIC);
    assert_string_equal(m.items[0].sha256, "8742241c249b45430a973ad834ed8fe4df6ded3c673f9869fa309f22fdd6aa1c");
    manifest_free(&m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_items_and_modes),
        cmocka_unit_test(test_errors_name_line),
        cmocka_unit_test(test_repository_manifest_loads),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
