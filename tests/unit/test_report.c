/* test_report.c: runner/report/report.c: the original's status line (its framing, green/red on a
 * terminal, plain otherwise and in the log), appended log, summary, JUnit names and escaping. */
#include "testutil.h"
#include "../../runner/report/report.h"

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
    assert_int_equal(report_stage(r, "train", "norm_train gpus=0", "python3.7 train.py --epochs=5   --x=1", NULL, 0,
                                  NULL, 1e9, 1.5, 14), TIPC_OK);
    assert_int_equal(report_stage(r, "infer", "", "a <b> & \"c\" > log 2>&1 ", NULL, 4, NULL, 1e9, 0.5, 27), TIPC_OK);
    report_summary(r, NULL, stdout);
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
        "1 passed, 1 failed, 0 skipped\n");
    free(out);
    assert_int_equal(report_failed(&r), 1);
    report_free(&r);
    report_init(&r, "cfg.txt", "m", "lite_train_lite_infer", logpath);
    r.color = true; /* the original's echo -e "\033[33m $msg  \033[0m" framing, green or red */
    out = capture_stdout(two_stages, &r);
    assert_string_equal(out,
        "\033[32m Run successfully with command - m - python3.7 train.py --epochs=5   --x=1!  \033[0m\n"
        "\033[31m Run failed with command - m - a <b> & \"c\" > log 2>&1 !  \033[0m\n"
        "1 passed, 1 failed, 0 skipped\n");
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
    /* short names from the loop values, the command (escaped) in the body, the exit code kept */
    assert_non_null(strstr(buf, "name=\"m.lite_train_lite_infer.train[norm_train gpus=0]\" classname=\"m.lite_train_lite_infer.train\""));
    assert_non_null(strstr(buf, "name=\"m.lite_train_lite_infer.infer\" classname=\"m.lite_train_lite_infer.infer\""));
    assert_non_null(strstr(buf, "command: a &lt;b&gt; &amp; &quot;c&quot; &gt; log 2&gt;&amp;1 \nconfig: cfg.txt:27"));
    assert_non_null(strstr(buf, "<failure message=\"exit status 4\" type=\"exit 4\">"));
    assert_non_null(strstr(buf, "config: cfg.txt:14"));
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
    enum tipc_status st = report_stage(&r, "train", "", "x", NULL, 0, NULL, 0, 0, 1);
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

/* A dependent stage is skipped with its reason; the table and the counts say so. */
static void test_skipped_and_table(void **state)
{
    char log[256], table[300];
    snprintf(log, sizeof log, "%s/report-skip-%d.log", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp", (int)getpid());
    snprintf(table, sizeof table, "%s.table", log);
    struct report r;
    report_init(&r, "cfg.txt", "m", "mode", log);
    r.color = r.color_err = false;
    FILE *devnull = fopen("/dev/null", "w");
    int saved = dup(1);
    fflush(stdout);
    dup2(fileno(devnull), 1);
    assert_int_equal(report_stage(&r, "train", "t", "train.py", NULL, 134, NULL, 0, 2.0, 13), TIPC_OK);
    struct capture c;
    capture_stderr_begin(&c);
    report_skip(&r, 2, 2, "eval", "t", "eval.py", "train[t] failed", 17, false);
    char *err = capture_stderr_end(&c);
    fflush(stdout);
    dup2(saved, 1);
    close(saved);
    fclose(devnull);
    assert_string_equal(err, "[2/2] eval t: skipped (train[t] failed)\n");
    free(err);
    assert_int_equal(report_count(&r, CASE_PASSED), 0);
    assert_int_equal(report_count(&r, CASE_FAILED), 1);
    assert_int_equal(report_count(&r, CASE_SKIPPED), 1);
    FILE *t = fopen(table, "w+"), *o = tmpfile();
    report_summary(&r, t, o);
    char buf[2048] = {0};
    rewind(t);
    size_t n = fread(buf, 1, sizeof buf - 1, t);
    buf[n] = 0;
    assert_non_null(strstr(buf, "train[t]  FAILED(134)"));
    assert_non_null(strstr(buf, "reason: killed by signal 6"));
    assert_non_null(strstr(buf, "eval[t]   skipped"));
    assert_non_null(strstr(buf, "reason: train[t] failed"));
    assert_null(strstr(buf, "\033["));
    rewind(o);
    n = fread(buf, 1, sizeof buf - 1, o);
    buf[n] = 0;
    assert_string_equal(buf, "0 passed, 1 failed, 1 skipped\n");
    fclose(t);
    fclose(o);
    unlink(table);
    unlink(log);
    report_free(&r);
}

static char *write_tmp(const char *name, const char *text)
{
    char *p = malloc(512);
    snprintf(p, 512, "%s/why-%d-%s", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp", (int)getpid(), name);
    FILE *f = fopen(p, "wb");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
    return p;
}

/* report_why: the error log's first line, else a Python exception, else a line that says error */
static void test_why_a_stage_failed(void **state)
{
    (void)state;
    char *errlog = write_tmp("errors", "tipc: error: -o: bad value 'abc' for 'Optimizer.momentum'\ntipc: error: later\n");
    char *log = write_tmp("log", "epoch 1\nTraceback (most recent call last):\n  File \"x.py\", line 3, in <module>\n"
                                 "    f()\nKeyError: 'x'\nDuring handling...\nTraceback (most recent call last):\n"
                                 "  File \"x.py\", line 5\npaddle.base.core.EnforceNotMet: \x1b[31mout of memory\x1b[0m\n"
                                 "avg_reader_cost: 0.1 error_rate 0\n");
    char *w = report_why(errlog, log);   /* the first tipc error line, without its "tipc: error: " */
    assert_string_equal(w, "-o: bad value 'abc' for 'Optimizer.momentum'");
    free(w);
    w = report_why("/nonexistent/errors", log);   /* the last exception line, colour codes dropped */
    assert_string_equal(w, "paddle.base.core.EnforceNotMet: out of memory");
    free(w);
    char *log2 = write_tmp("log2", "step 1\n[node 1:rank 3] tipc: error: rendezvous: port 9 in use\nbye\n"
                                   "progress 10%\rERROR: disk full\n");
    w = report_why(NULL, log2);   /* no exception: the last line with the word "error", as shown last */
    assert_string_equal(w, "ERROR: disk full");
    free(w);
    char *log3 = write_tmp("log3", "error_rate 0.1\nall fine\n");
    assert_null(report_why(NULL, log3));   /* "error_rate" is not the word error */
    char *long_line = malloc(1000);
    memset(long_line, 'x', 999);
    memcpy(long_line, "Error: ", 7);
    memcpy(long_line + 299, "\xe4\xb8\xad", 3);   /* a character across the 300-byte cut */
    long_line[999] = 0;
    char *log4 = write_tmp("log4", long_line);
    w = report_why(NULL, log4);
    assert_true(strlen(w) <= 303 && !strcmp(w + strlen(w) - 3, "..."));
    assert_int_equal(strlen(w), 299 + 3);   /* cut before the character, not inside it */
    free(w);
    const char *files[] = {errlog, log, log2, log3, log4};
    for (int i = 0; i < 5; i++) unlink(files[i]), free((char *)files[i]);
    free(long_line);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_skipped_and_table),
        cmocka_unit_test(test_why_a_stage_failed),
        cmocka_unit_test(test_status_lines_plain_and_coloured),
        cmocka_unit_test(test_unwritable_log_is_an_io_error),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
