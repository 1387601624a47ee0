/* test_synth.c: the embedded synthetic dataset: deterministic bytes, real decodable JPEGs of
 * ImageNet-like sizes, PaddleClas lists that dataset_open reads, atomic publication, and
 * classes that differ in colour (the signal a small CNN learns). */
#include "testutil.h"
#include <sys/stat.h>
#include <turbojpeg.h>
#include "../../prepare/synth.h"
#include "../../core/fs.h"
#include "../../core/sha256.h"
#include "../../engine/data/dataset.h"
#include "../../engine/data/jpeg.h"

static char root[256];

static int setup(void **state)
{
    snprintf(root, sizeof root, "%s/tipc-synth-XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    return mkdtemp(root) ? 0 : -1;
}

static int teardown(void **state)
{
    rm_rf(root);
    return 0;
}

static void test_same_seed_same_bytes_other_seed_differs(void **state)
{
    struct synth_config c;
    synth_config_default(&c);
    unsigned char *a = NULL, *b = NULL, *d = NULL;
    unsigned long na = 0, nb = 0, nd = 0;
    assert_int_equal(synth_jpeg(&c, 3, 7, 0, 0, &a, &na), TIPC_OK);
    assert_int_equal(synth_jpeg(&c, 3, 7, 0, 0, &b, &nb), TIPC_OK);
    c.seed = 2;
    assert_int_equal(synth_jpeg(&c, 3, 7, 0, 0, &d, &nd), TIPC_OK);
    assert_int_equal(na, nb);
    assert_memory_equal(a, b, na);
    assert_true(na != nd || memcmp(a, d, na) != 0);
    tjhandle tj = tjInitDecompress();
    int w, h, sub, cs;
    assert_int_equal(tjDecompressHeader3(tj, a, na, &w, &h, &sub, &cs), 0);
    assert_true(w >= 300 && w <= 500 && h >= 300 && h <= 500);   /* ImageNet-like photo sizes */
    tjDestroy(tj);
    tjFree(a); tjFree(b); tjFree(d);
}

/* Mean colour of the centre of image `cls` decoded at 64 px. */
static void centre_mean(const char *path, float rgb[3])
{
    uint8_t img[64 * 64 * 3];
    assert_int_equal(image_load_eval(path, 64, 64, img), TIPC_OK);
    double s[3] = {0};
    for (int y = 16; y < 48; y++)
        for (int x = 16; x < 48; x++)
            for (int c = 0; c < 3; c++) s[c] += img[(y * 64 + x) * 3 + c];
    for (int c = 0; c < 3; c++) rgb[c] = (float)(s[c] / (32 * 32));
}

static void test_dataset_layout_and_lists(void **state)
{
    struct synth_config c = {.classes = 4, .train_per_class = 3, .val_per_class = 2, .quality = 90, .seed = 5};
    char dir[300];
    snprintf(dir, sizeof dir, "%s/lite", root);
    assert_int_equal(synth_dataset(dir, &c), TIPC_OK);
    struct dataset tr, va;
    assert_int_equal(dataset_open(&tr, dir, true), TIPC_OK);
    assert_int_equal(dataset_open(&va, dir, false), TIPC_OK);
    assert_int_equal(tr.n, 12);
    assert_int_equal(va.n, 8);
    assert_int_equal(tr.num_classes, 4);
    assert_non_null(tr.list_file);
    for (int i = 0; i < tr.n; i++) assert_int_equal(tr.labels[i], i % 4);   /* interleaved classes */
    /* classes differ visibly: the red class-0 centre is redder than the cyan class-5-like class 2 */
    float m0[3], m2[3];
    centre_mean(tr.paths[0], m0);
    centre_mean(tr.paths[2], m2);
    assert_true(m0[0] - m0[2] > m2[0] - m2[2] + 20);
    /* regenerating gives byte-identical files */
    char h1[65], h2[65];
    assert_int_equal(sha256_file(tr.paths[5], h1), TIPC_OK);
    assert_int_equal(synth_dataset(dir, &c), TIPC_OK);
    assert_int_equal(sha256_file(tr.paths[5], h2), TIPC_OK);
    assert_string_equal(h1, h2);
    dataset_free(&tr);
    dataset_free(&va);
}

static void test_unwritable_target_fails_cleanly(void **state)
{
    struct synth_config c;
    synth_config_default(&c);
    char blocker[300], dir[320];
    snprintf(blocker, sizeof blocker, "%s/file", root);
    FILE *f = fopen(blocker, "w");
    fclose(f);
    snprintf(dir, sizeof dir, "%s/sub/lite", blocker);   /* a parent is a regular file */
    struct capture cap;
    capture_stderr_begin(&cap);
    enum tipc_status st = synth_dataset(dir, &c);
    char *err = capture_stderr_end(&cap);
    assert_int_equal(st, TIPC_EDATA);
    assert_non_null(strstr(err, blocker));
    free(err);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_same_seed_same_bytes_other_seed_differs),
        cmocka_unit_test_setup_teardown(test_dataset_layout_and_lists, setup, teardown),
        cmocka_unit_test_setup_teardown(test_unwritable_target_fails_cleanly, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
