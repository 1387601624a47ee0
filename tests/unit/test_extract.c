/* test_extract.c: prepare/extract refuses unsafe archives whole (absolute paths, `..`, links that
 * leave the tree) and writes nothing outside; good tar, tar.gz and zip archives are published
 * atomically, optionally from one folder of the archive. Archives are built with libarchive. */
#include "testutil.h"
#include <archive.h>
#include <archive_entry.h>
#include <dirent.h>
#include <sys/stat.h>
#include "../../prepare/extract.h"
#include "../../core/fs.h"

struct entry { const char *name; int type; const char *data_or_link; };   /* type: 'f' 'd' 's' 'h' */

static char root[256];

static void write_archive(const char *path, const char *fmt, const struct entry *e, int n)
{
    struct archive *a = archive_write_new();
    if (!strcmp(fmt, "zip")) archive_write_set_format_zip(a);
    else archive_write_set_format_pax_restricted(a);
    if (!strcmp(fmt, "tar.gz")) archive_write_add_filter_gzip(a);
    assert_int_equal(archive_write_open_filename(a, path), ARCHIVE_OK);
    for (int i = 0; i < n; i++) {
        struct archive_entry *en = archive_entry_new();
        archive_entry_set_pathname(en, e[i].name);
        archive_entry_set_perm(en, 0644);
        size_t len = 0;
        switch (e[i].type) {
        case 'f': archive_entry_set_filetype(en, AE_IFREG); len = strlen(e[i].data_or_link); break;
        case 'd': archive_entry_set_filetype(en, AE_IFDIR); break;
        case 's': archive_entry_set_filetype(en, AE_IFLNK); archive_entry_set_symlink(en, e[i].data_or_link); break;
        case 'h': archive_entry_set_filetype(en, AE_IFREG); archive_entry_set_hardlink(en, e[i].data_or_link); break;
        }
        archive_entry_set_size(en, (la_int64_t)len);
        assert_true(archive_write_header(a, en) >= ARCHIVE_WARN);
        if (len) assert_int_equal(archive_write_data(a, e[i].data_or_link, len), (la_ssize_t)len);
        archive_entry_free(en);
    }
    archive_write_close(a);
    archive_write_free(a);
}

static int count_entries(const char *dir)
{
    DIR *d = opendir(dir);
    int n = 0;
    struct dirent *e;
    while (d && (e = readdir(d)) != NULL) n += e->d_name[0] != '.' || (e->d_name[1] && strcmp(e->d_name, ".."));
    if (d) closedir(d);
    return n;
}

static int setup(void **state)
{
    snprintf(root, sizeof root, "%s/tipc-extract-XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    if (!mkdtemp(root)) return -1;
    char p[300];
    snprintf(p, sizeof p, "%s/work", root);   /* targets live in root/work; root/ holds "outside" */
    mkdir(p, 0755);
    return 0;
}

static int teardown(void **state)
{
    rm_rf(root);
    return 0;
}

static void expect_refused(const struct entry *e, int n, const char *why)
{
    char ar[300], target[300], out[300];
    snprintf(ar, sizeof ar, "%s/bad.tar", root);
    snprintf(target, sizeof target, "%s/work/target", root);
    write_archive(ar, "tar", e, n);
    struct capture c;
    capture_stderr_begin(&c);
    enum tipc_status st = extract_archive(ar, target, NULL, NULL);
    char *err = capture_stderr_end(&c);
    assert_int_equal(st, TIPC_EDATA);
    if (!strstr(err, why)) fail_msg("expected '%s' in: %s", why, err);
    free(err);
    assert_int_equal(access(target, F_OK), -1);                   /* nothing published */
    snprintf(out, sizeof out, "%s/work", root);
    assert_int_equal(count_entries(out), 0);                      /* temp dir cleaned */
    assert_int_equal(count_entries(root), 2);                     /* only work/ and bad.tar */
    unlink(ar);
}

static void test_refuses_dotdot(void **state)
{
    struct entry e[] = {{"ok.txt", 'f', "fine"}, {"../evil", 'f', "pwned"}};
    expect_refused(e, 2, "'../evil': path contains '..'");
    struct entry e2[] = {{"a/../../evil", 'f', "pwned"}};
    expect_refused(e2, 1, "contains '..'");
}

static void test_refuses_absolute(void **state)
{
    char abs_name[320];
    snprintf(abs_name, sizeof abs_name, "%s/abs-evil", root);
    struct entry e[] = {{abs_name, 'f', "pwned"}};
    expect_refused(e, 1, "absolute path");
    assert_int_equal(access(abs_name, F_OK), -1);
}

static void test_refuses_escaping_links(void **state)
{
    struct entry e[] = {{"d", 'd', NULL}, {"d/link", 's', "../../outside"}};
    expect_refused(e, 2, "symlink pointing outside");
    struct entry e2[] = {{"link", 's', "/etc"}};
    expect_refused(e2, 1, "symlink pointing outside");
    struct entry e3[] = {{"a", 's', "."}, {"b", 's', "a/.."}};   /* `..` after a (possibly linked) folder */
    expect_refused(e3, 2, "symlink pointing outside");
    struct entry e4[] = {{"f", 'f', "x"}, {"h", 'h', "../../etc/passwd"}};
    expect_refused(e4, 2, "hardlink pointing outside");
    /* writing through a symlink that points inside is refused by libarchive's secure mode */
}

static void test_path_checks(void **state)
{
    assert_int_equal(extract_path_is_safe("a/b.jpg", NULL, 0), 0);
    assert_int_equal(extract_path_is_safe("a/..b/c", NULL, 0), 0);      /* '..b' is a name */
    assert_int_equal(extract_path_is_safe("a/../b", NULL, 0), -1);
    assert_int_equal(extract_path_is_safe("/a", NULL, 0), -1);
    assert_int_equal(extract_path_is_safe("a/l", "../b", 1), 0);        /* a/../b stays inside */
    assert_int_equal(extract_path_is_safe("a/l", "../../b", 1), -1);
    assert_int_equal(extract_path_is_safe("l", "b/c", 1), 0);
    assert_int_equal(extract_path_is_safe("l", "b/../c", 1), -1);
}

static void check_file(const char *path, const char *want)
{
    char buf[64] = "";
    FILE *f = fopen(path, "r");
    if (!f) fail_msg("missing %s", path);
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    buf[n] = 0;
    fclose(f);
    assert_string_equal(buf, want);
}

static void test_good_archives(void **state)
{
    static const char *const fmts[] = {"tar", "tar.gz", "zip"};
    struct entry e[] = {{"lite/", 'd', NULL}, {"lite/train/a.jpg", 'f', "AAA"}, {"lite/val/b.jpg", 'f', "BB"},
                        {"lite/alias.jpg", 's', "train/a.jpg"}, {"other.txt", 'f', "o"}};
    for (int i = 0; i < 3; i++) {
        char ar[300], target[300], p[400];
        snprintf(ar, sizeof ar, "%s/good.%s", root, fmts[i]);
        snprintf(target, sizeof target, "%s/work/data", root);
        write_archive(ar, fmts[i], e, 5);
        assert_int_equal(extract_archive(ar, target, "lite", NULL), TIPC_OK);
        snprintf(p, sizeof p, "%s/train/a.jpg", target);
        check_file(p, "AAA");
        snprintf(p, sizeof p, "%s/alias.jpg", target);
        check_file(p, "AAA");
        snprintf(p, sizeof p, "%s/other.txt", target);
        assert_int_equal(access(p, F_OK), -1);            /* only the 'lite' folder is published */
        snprintf(p, sizeof p, "%s/work", root);
        assert_int_equal(count_entries(p), 1);            /* no temp dir left */
        /* a second extraction replaces the tree in one rename */
        assert_int_equal(extract_archive(ar, target, NULL, NULL), TIPC_OK);
        snprintf(p, sizeof p, "%s/lite/val/b.jpg", target);
        check_file(p, "BB");
        rm_rf(target);
        unlink(ar);
    }
}

static void test_extract_into_single_top_folder(void **state)
{
    char ar[300], dir[300], p[400];
    snprintf(ar, sizeof ar, "%s/lite_data.tar", root);
    snprintf(dir, sizeof dir, "%s/work", root);
    struct entry e[] = {{"lite_data/train/x.jpg", 'f', "X"}};
    write_archive(ar, "tar", e, 1);
    char *out = NULL;
    assert_int_equal(extract_archive_into(ar, dir, NULL, &out), TIPC_OK);
    snprintf(p, sizeof p, "%s/lite_data", dir);
    assert_string_equal(out, p);
    snprintf(p, sizeof p, "%s/lite_data/train/x.jpg", dir);
    check_file(p, "X");
    free(out);
}

static void test_damaged_archive(void **state)
{
    char ar[300], target[300];
    snprintf(ar, sizeof ar, "%s/junk.tar.gz", root);
    snprintf(target, sizeof target, "%s/work/t", root);
    FILE *f = fopen(ar, "wb");
    fputs("\x1f\x8b\x08 this is not really gzip", f);
    fclose(f);
    struct capture c;
    capture_stderr_begin(&c);
    enum tipc_status st = extract_archive(ar, target, NULL, NULL);
    char *err = capture_stderr_end(&c);
    assert_int_equal(st, TIPC_EDATA);
    assert_non_null(strstr(err, "junk.tar.gz"));
    free(err);
    assert_int_equal(access(target, F_OK), -1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_path_checks),
        cmocka_unit_test_setup_teardown(test_refuses_dotdot, setup, teardown),
        cmocka_unit_test_setup_teardown(test_refuses_absolute, setup, teardown),
        cmocka_unit_test_setup_teardown(test_refuses_escaping_links, setup, teardown),
        cmocka_unit_test_setup_teardown(test_good_archives, setup, teardown),
        cmocka_unit_test_setup_teardown(test_extract_into_single_top_folder, setup, teardown),
        cmocka_unit_test_setup_teardown(test_damaged_archive, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
