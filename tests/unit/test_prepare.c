/* test_prepare.c: prepare_for_run(), the entry point `tipc run` uses: offline by default (an http
 * upstream is not even tried), TIPC_OFFLINE=0 tries it and falls back, file:// sources work
 * offline, and what it prints is one line per item. Runs in a temp working directory. */
#include "testutil.h"
#include <sys/stat.h>
#include <sys/wait.h>
#include "../../prepare/prepare.h"
#include "../../core/fs.h"
#include "../../core/sha256.h"

static char root[256], cwd[1024];
/* What `tipc run`'s option table makes of an environment without TIPC_OFFLINE (run's default):
 * offline; a test asks for the network as TIPC_OFFLINE=0 TIPC_RETRIES=0 would. */
static struct prepare_opts run_opts;

static int setup(void **state)
{
    snprintf(root, sizeof root, "%s/tipc-prepare-XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    if (!mkdtemp(root) || !getcwd(cwd, sizeof cwd) || chdir(root) != 0) return -1;
    mkdir_p("configs/m");
    FILE *f = fopen("configs/m/train_infer.txt", "w");
    fputs("===========================train_params===========================\nmodel_name:m\npython:tipc\n", f);
    fclose(f);
    prepare_opts_default(&run_opts);
    run_opts.offline = true;
    return 0;
}

static int teardown(void **state)
{
    if (chdir(cwd) != 0) return -1;
    rm_rf(root);
    return 0;
}

static void write_manifest(const char *url, const char *sha)
{
    FILE *f = fopen("configs/datasets.yaml", "w");
    fprintf(f, "version: 1\nmodels:\n  m:\n    items:\n      d:\n        url: %s\n        sha256: %s\n"
               "        archive: tar\n        dest: data/d\n        fallback: synthetic\n"
               "        synthetic: {classes: 2, train_per_class: 1, val_per_class: 1}\n"
               "    modes:\n      lite_train_lite_infer: [d]\n", url, sha);
    fclose(f);
}

/* Run prepare_for_run with stdout captured into a file; return what it printed. */
static char *run(enum tipc_status want)
{
    fflush(stdout);
    int saved = dup(1);
    FILE *tmp = tmpfile();
    dup2(fileno(tmp), 1);
    struct capture c;
    capture_stderr_begin(&c);
    enum tipc_status st = prepare_for_run("configs/m/train_infer.txt", NULL, "lite_train_lite_infer", &run_opts);
    char *err = capture_stderr_end(&c);
    fflush(stdout);
    dup2(saved, 1);
    close(saved);
    long n = ftell(tmp);
    char *out = calloc(1, (size_t)n + strlen(err) + 1);
    rewind(tmp);
    if (fread(out, 1, (size_t)n, tmp) != (size_t)n) out[0] = 0;
    memcpy(out + strlen(out), err, strlen(err) + 1);   /* stdout then stderr */
    fclose(tmp);
    free(err);
    if (st != want) fail_msg("status %d, want %d; output:\n%s", st, want, out);
    return out;
}

static void test_offline_by_default_never_tries_http(void **state)
{
    write_manifest("http://127.0.0.1:1/d.tar", "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef");
    char *out = run(TIPC_OK);
    assert_non_null(strstr(out, "'data/d': offline, made the synthetic default (2 classes, 2 train + 2 val JPEGs)"));
    assert_null(strstr(out, "127.0.0.1"));
    free(out);
    assert_true(is_file("data/d/train_list.txt"));
    out = run(TIPC_OK);
    assert_non_null(strstr(out, "'data/d' is ready"));
    free(out);
    /* the manifest's synthetic parameters change: the dataset is made again */
    FILE *f = fopen("configs/datasets.yaml", "r+");
    char text[2048] = "";
    size_t n = fread(text, 1, sizeof text - 1, f);
    text[n] = 0;
    char *p = strstr(text, "classes: 2");
    p[9] = '3';
    rewind(f);
    fputs(text, f);
    fclose(f);
    out = run(TIPC_OK);
    assert_non_null(strstr(out, "which the manifest no longer lists; redoing it"));
    assert_non_null(strstr(out, "made the synthetic default (3 classes"));
    free(out);
}

static void test_online_when_asked_then_fallback(void **state)
{
    write_manifest("http://127.0.0.1:1/d.tar", "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef");
    run_opts.offline = false;   /* TIPC_OFFLINE=0 */
    run_opts.fetch.retries = 0;  /* TIPC_RETRIES=0 */
    char *out = run(TIPC_OK);
    assert_non_null(strstr(out, "prepare: note: cannot fetch 'http://127.0.0.1:1/d.tar'"));
    assert_null(strstr(out, "error:"));   /* the synthetic default is used by design: a note */
    assert_non_null(strstr(out, "no source could be fetched (see above), made the synthetic default"));
    free(out);
}

static void test_file_url_works_offline(void **state)
{
    mkdir_p("src/d/train/a");
    FILE *f = fopen("src/d/train_list.txt", "w");
    fputs("train/a/x.jpg 0\n", f);
    fclose(f);
    pid_t pid = fork();   /* tar it with the system tar: fork/exec, no shell */
    if (pid == 0) {
        execlp("tar", "tar", "-C", "src", "-cf", "d.tar", "d", (char *)NULL);
        _exit(127);
    }
    int ws = 0;
    waitpid(pid, &ws, 0);
    assert_true(WIFEXITED(ws) && WEXITSTATUS(ws) == 0);
    char sha[65], url[1400];
    assert_int_equal(sha256_file("d.tar", sha), TIPC_OK);
    snprintf(url, sizeof url, "file://%s/d.tar", root);
    write_manifest(url, sha);
    char *out = run(TIPC_OK);
    assert_non_null(strstr(out, "fetched file://"));
    free(out);
    assert_true(is_file("data/d/d/train_list.txt"));   /* no archive_root: the archive's top level */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_offline_by_default_never_tries_http, setup, teardown),
        cmocka_unit_test_setup_teardown(test_online_when_asked_then_fallback, setup, teardown),
        cmocka_unit_test_setup_teardown(test_file_url_works_offline, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
