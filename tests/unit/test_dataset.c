/* test_dataset.c: engine/data/dataset: the PaddleClas list layout (errors with file:line), the
 * ImageFolder layout (labels = sorted folder index, empty class folders count), and the real
 * lite data of the original TIPC (../shared/data/lite_data.tar) read and decoded end to end. */
#include "testutil.h"
#include <sys/stat.h>
#include "../../prepare/extract.h"
#include "../../core/fs.h"
#include "../../engine/data/dataset.h"
#include "../../engine/data/jpeg.h"
#include "../../engine/data/loader.h"

static char root[256];

static int setup(void **state)
{
    snprintf(root, sizeof root, "%s/tipc-dataset-XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    return mkdtemp(root) ? 0 : -1;
}

static int teardown(void **state)
{
    rm_rf(root);
    return 0;
}

static void write_text(const char *path, const char *text)
{
    char *dir = path_dirname(path);
    mkdir_p(dir);
    free(dir);
    FILE *f = fopen(path, "w");
    fputs(text, f);
    fclose(f);
}

static void test_list_layout(void **state)
{
    char p[400];
    snprintf(p, sizeof p, "%s/l/train_list.txt", root);
    write_text(p, "a/x.jpg 3\n\n  b/y z.jpg   0  \r\n");
    snprintf(p, sizeof p, "%s/l", root);
    struct dataset ds;
    assert_int_equal(dataset_open(&ds, p, true), TIPC_OK);
    assert_int_equal(ds.n, 2);
    assert_int_equal(ds.num_classes, 4);
    assert_int_equal(ds.labels[1], 0);
    assert_int_equal(ds.list_lines[1], 3);
    snprintf(p, sizeof p, "%s/l/b/y z.jpg", root);   /* the label is the last field */
    assert_string_equal(ds.paths[1], p);
    dataset_free(&ds);
}

static void test_list_errors_name_file_and_line(void **state)
{
    char p[400];
    snprintf(p, sizeof p, "%s/l/val_list.txt", root);
    write_text(p, "a.jpg 1\nb.jpg one\n");
    snprintf(p, sizeof p, "%s/l", root);
    struct dataset ds;
    struct capture c;
    capture_stderr_begin(&c);
    enum tipc_status st = dataset_open(&ds, p, false);
    enum tipc_status st2 = dataset_open(&ds, root, true);   /* neither list nor folder */
    char *err = capture_stderr_end(&c);
    assert_int_equal(st, TIPC_EDATA);
    assert_int_equal(st2, TIPC_EDATA);
    assert_non_null(strstr(err, "val_list.txt:2: label 'one' is not a non-negative integer"));
    assert_non_null(strstr(err, "hint: run 'tipc prepare"));
    free(err);
}

static void test_image_folder_labels_are_sorted_folder_index(void **state)
{
    char p[400];
    const char *files[] = {"f/train/b_cls/2.JPEG", "f/train/b_cls/1.jpg", "f/train/a_cls/z.jpeg", "f/train/c_cls/readme.txt"};
    for (int i = 0; i < 4; i++) {
        snprintf(p, sizeof p, "%s/%s", root, files[i]);
        write_text(p, "x");
    }
    snprintf(p, sizeof p, "%s/f/train/0_empty", root);
    mkdir_p(p);
    snprintf(p, sizeof p, "%s/f", root);
    struct dataset ds;
    assert_int_equal(dataset_open(&ds, p, true), TIPC_OK);
    assert_int_equal(ds.n, 3);
    assert_int_equal(ds.num_classes, 4);      /* 0_empty a_cls b_cls c_cls */
    assert_null(ds.list_file);
    assert_int_equal(ds.labels[0], 1);
    assert_int_equal(ds.labels[1], 2);
    assert_int_equal(ds.labels[2], 2);
    assert_non_null(strstr(ds.paths[1], "b_cls/1.jpg"));   /* sorted within a class */
    dataset_free(&ds);
}

static void test_real_lite_data(void **state)
{
    /* $ROOT/../shared (main checkout) or $ROOT/../../shared (a worktree under wt/), or env */
    const char *cands[] = {getenv("TIPC_LITE_DATA"), "../shared/data/lite_data.tar", "../../shared/data/lite_data.tar"};
    const char *tar = NULL;
    for (int i = 0; i < 3 && !tar; i++)
        if (cands[i] && access(cands[i], R_OK) == 0) tar = cands[i];
    if (!tar) {
        printf("SKIP: ../shared/data/lite_data.tar is absent (the original TIPC lite data; see BRIEFING)\n");
        skip();
    }
    char dir[400];
    snprintf(dir, sizeof dir, "%s/lite_data", root);
    assert_int_equal(extract_archive(tar, dir, "lite_data", NULL), TIPC_OK);
    struct dataset tr, va;
    assert_int_equal(dataset_open(&tr, dir, true), TIPC_OK);
    assert_int_equal(dataset_open(&va, dir, false), TIPC_OK);
    assert_int_equal(tr.n, 16);
    assert_int_equal(va.n, 16);
    assert_int_equal(tr.num_classes, 1000);
    assert_non_null(strstr(tr.paths[0], "n01532829_3420.JPEG"));   /* first non-empty wnid */
    struct loader_config c = {.batch_size = 8, .crop = 224, .resize = 256, .train = true, .world = 1,
                              .seed = 1, .threads = 2, .prefetch = 1};
    struct loader *L;
    const struct batch *b;
    assert_int_equal(loader_init(&L, &tr, &c), TIPC_OK);
    for (int i = 0; i < 2; i++) {
        assert_int_equal(loader_next(L, &b), TIPC_OK);
        assert_int_equal(b->n, 8);
        long sum = 0;
        for (size_t k = 0; k < (size_t)8 * 224 * 224 * 3; k++) sum += b->images[k];
        assert_true(sum > 8L * 224 * 224 * 3 * 20);   /* real photos, not black */
    }
    loader_free(L);
    uint8_t *img = malloc(224 * 224 * 3);
    assert_int_equal(image_load_eval(va.paths[3], 256, 224, img), TIPC_OK);
    free(img);
    dataset_free(&tr);
    dataset_free(&va);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_list_layout, setup, teardown),
        cmocka_unit_test_setup_teardown(test_list_errors_name_file_and_line, setup, teardown),
        cmocka_unit_test_setup_teardown(test_image_folder_labels_are_sorted_folder_index, setup, teardown),
        cmocka_unit_test_setup_teardown(test_real_lite_data, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
