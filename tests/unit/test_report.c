/* test_report.c: runner/report.c: the original's status line (coloured byte for byte on a
 * terminal, plain otherwise and in the log), appended log, summary, JUnit escaping. */
#include "testutil.h"
#include "../../runner/report.h"

static char *capture_stdout(void (*fn)(void *), void *arg)
{
    fflush(stdout);
    FILE *tmp = tmpfile();
    int saved = dup(1);
    dup2(fileno(tmp), 1);
    fn(arg);
    fflush(stdout);
    dup2(saved, 1);
    close(saved);
    long n = ftell(tmp);
    char *s = calloc(1, (size_t)n + 1);
    rewind(tmp);
    if (fread(s, 1, (size_t)n, tmp) != (size_t)n) s[0] = 0;
    fclose(tmp);
    return s;
}

static char logpath[256];

static void two_stages(void *arg)
{
    struct report *r = arg;
    assert_int_equal(report_stage(r, "train", "python3.7 train.py --epochs=5   --x=1", NULL, 0, 1.5, 14), TIPC_OK);
    assert_int_equal(report_stage(r, "infer", "a <b> & \"c\" > log 2>&1 ", NULL, 2, 0.5, 27), TIPC_OK);
    report_summary(r, stdout);
}

static void test_status_lines_plain_and_coloured(void **state)
{
    snprintf(logpath, sizeof logpath, "%s/report-%d.log", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp", (int)getpid());
    unlink(logpath);
    struct report r;
    report_init(&r, "cfg.txt", "mobilenet_v3_small", "lite_train_lite_infer", logpath);
    r.color = false;
    char *out = capture_stdout(two_stages, &r);
    assert_string_equal(out,
        "Run successfully with command - mobilenet_v3_small - python3.7 train.py --epochs=5   --x=1!\n"
        "Run failed with command - mobilenet_v3_small - a <b> & \"c\" > log 2>&1 !\n"
        "1 passed, 1 failed\n");
    free(out);
    assert_int_equal(report_failed(&r), 1);
    report_free(&r);
    report_init(&r, "cfg.txt", "m", "lite_train_lite_infer", logpath);
    r.color = true; /* the original's echo -e "\033[33m $msg  \033[0m" */
    out = capture_stdout(two_stages, &r);
    assert_string_equal(out,
        "\033[33m Run successfully with command - m - python3.7 train.py --epochs=5   --x=1!  \033[0m\n"
        "\033[33m Run failed with command - m - a <b> & \"c\" > log 2>&1 !  \033[0m\n"
        "1 passed, 1 failed\n");
    free(out);
    /* the log is appended (tee -a) and never coloured */
    FILE *f = fopen(logpath, "r");
    char buf[4096] = {0};
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = 0;
    assert_string_equal(buf,
        "Run successfully with command - mobilenet_v3_small - python3.7 train.py --epochs=5   --x=1!\n"
        "Run failed with command - mobilenet_v3_small - a <b> & \"c\" > log 2>&1 !\n"
        "Run successfully with command - m - python3.7 train.py --epochs=5   --x=1!\n"
        "Run failed with command - m - a <b> & \"c\" > log 2>&1 !\n");
    /* JUnit escapes the command */
    char xml[300];
    snprintf(xml, sizeof xml, "%s.xml", logpath);
    assert_int_equal(report_junit(&r, xml), TIPC_OK);
    f = fopen(xml, "r");
    n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = 0;
    assert_non_null(strstr(buf, "tests=\"2\" failures=\"1\""));
    assert_non_null(strstr(buf, "name=\"02 infer: a &lt;b&gt; &amp; &quot;c&quot; &gt; log 2&gt;&amp;1 \""));
    assert_non_null(strstr(buf, "<failure message=\"exit status 2\">"));
    assert_non_null(strstr(buf, "line=\"14\""));
    unlink(xml);
    unlink(logpath);
    report_free(&r);
}

static void test_unwritable_log_is_an_io_error(void **state)
{
    struct report r;
    report_init(&r, "cfg.txt", "m", "mode", "/nonexistent-dir/results_python.log");
    r.color = false;
    struct capture c;
    capture_stderr_begin(&c);
    fflush(stdout);
    FILE *devnull = fopen("/dev/null", "w");
    int saved = dup(1);
    dup2(fileno(devnull), 1);
    enum tipc_status st = report_stage(&r, "train", "x", NULL, 0, 0, 1);
    fflush(stdout);
    dup2(saved, 1);
    close(saved);
    fclose(devnull);
    char *err = capture_stderr_end(&c);
    assert_int_equal(st, TIPC_EIO);
    assert_string_equal(err, "/nonexistent-dir/results_python.log: cannot append to results log: No such file or directory\n");
    free(err);
    report_free(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_status_lines_plain_and_coloured),
        cmocka_unit_test(test_unwritable_log_is_an_io_error),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
