/* test_speed.c: `tipc speed` (runner/report/speed.c) writes the very bytes Paddle's benchmark
 * analysis.py writes: tests/fixtures/golden/speed/NAME.speed were made by the original script
 * (scripts/golden/speed.sh) from NAME.log with NAME.args and NAME.env; and Python's float repr. */
#include "testutil.h"
#include "../../runner/report/speed.h"

#define DIR "tests/fixtures/golden/speed/"

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    char *buf = xmalloc(1 << 16);
    size_t n = fread(buf, 1, (1 << 16) - 1, f);
    buf[n] = 0;
    fclose(f);
    return buf;
}

static const char *const env_names[] = {"model_branch", "model_commit", "model_run_time", "frame_commit",
                                        "frame_version", NULL};

/* NAME.args into a (its words point into *words), NAME.env into the environment. */
static void load_case(const char *name, struct speed_args *a, char **words)
{
    char path[256];
    snprintf(path, sizeof path, DIR "%s.args", name);
    *words = slurp(path);
    assert_non_null(*words);
    memset(a, 0, sizeof *a);
    a->run_mode = "DP", a->device_num = "N1C1", a->speed_unit = "images/s", a->convergence_key = "";
    a->model_name = "model_name", a->base_batch_size = -1;
    char *save, *w = strtok_r(*words, " \n", &save);
    while (w) {
        char *v = strtok_r(NULL, " \n", &save);
        assert_non_null(v);
        if (!strcmp(w, "--model_name")) a->model_name = v;
        else if (!strcmp(w, "--base_batch_size")) a->base_batch_size = (int)strtol(v, NULL, 10), a->has_batch = true;
        else if (!strcmp(w, "--run_mode")) a->run_mode = v;
        else if (!strcmp(w, "--fp_item")) a->fp_item = v;
        else if (!strcmp(w, "--keyword")) a->keyword = v;
        else if (!strcmp(w, "--skip_steps")) a->skip_steps = (int)strtol(v, NULL, 10);
        else if (!strcmp(w, "--device_num")) a->device_num = v;
        else if (!strcmp(w, "--speed_unit")) a->speed_unit = v;
        else if (!strcmp(w, "--convergence_key")) a->convergence_key = v;
        else fail_msg("%s.args: unknown option %s", name, w);
        w = strtok_r(NULL, " \n", &save);
    }
    for (int i = 0; env_names[i]; i++) unsetenv(env_names[i]);
    snprintf(path, sizeof path, DIR "%s.env", name);
    char *env = slurp(path), *line = env;
    assert_non_null(env);
    while (line && *line) {
        char *nl = strchr(line, '\n'), *eq = strchr(line, '=');
        if (nl) *nl = 0;
        if (eq) *eq = 0, setenv(line, eq + 1, 1);
        line = nl ? nl + 1 : NULL;
    }
    free(env);
}

static void check_case(const char *name, bool want_ok)
{
    struct speed_args a;
    char *words, log[256], want_path[256];
    load_case(name, &a, &words);
    snprintf(log, sizeof log, DIR "%s.log", name);
    snprintf(want_path, sizeof want_path, DIR "%s.speed", name);
    a.filename = log;
    struct speed_result r;
    assert_int_equal(speed_analyze(&a, &r), TIPC_OK);
    assert_int_equal(r.ok, want_ok);
    char *got = speed_record_json(&a, &r), *want = slurp(want_path);
    assert_non_null(want);
    if (strcmp(got, want)) fail_msg("%s:\n got  %s\n want %s", name, got, want);
    free(got), free(want), free(words);
    speed_result_free(&r);
}

static void test_step6_log(void **s) { (void)s; check_case("step6_n1c1", true); }
static void test_clas_log_four_cards(void **s) { (void)s; check_case("clas_n1c4", true); }
static void test_too_few_values(void **s) { (void)s; check_case("too_few", false); }
static void test_keyword_inside_a_word_is_no_value(void **s) { (void)s; check_case("substring_only", false); }
static void test_collective_unicode_env(void **s) { (void)s; check_case("collective_n4c32", true); }
static void test_no_batch_size_no_loss(void **s) { (void)s; check_case("tiny_no_loss", false); }

static void test_unreadable_log(void **s)
{
    (void)s;
    struct speed_args a = {.filename = DIR "no-such.log", .keyword = "ips:", .device_num = "N1C1"};
    struct speed_result r;
    struct capture c;
    capture_stderr_begin(&c);
    enum tipc_status st = speed_analyze(&a, &r);
    char *err = capture_stderr_end(&c);
    assert_int_equal(st, TIPC_EIO);
    assert_non_null(strstr(err, "no-such.log"));
    free(err);
    speed_result_free(&r);
}

static void test_python_float_repr(void **s)
{
    (void)s;
    static const struct { double x; const char *repr; } t[] = {
        {0, "0.0"}, {1, "1.0"}, {35312, "35312.0"}, {0.0001, "0.0001"}, {1.0000000000000001e-05, "1e-05"},
        {1e16, "1e+16"}, {1.4999999999999999e-07, "1.5e-07"}, {20.469000000000001, "20.469"},
        {0.30000000000000004, "0.30000000000000004"}, {-2.5, "-2.5"}, {123456789012345.59, "123456789012345.6"},
        {9999999999999998, "9999999999999998.0"}, {0.00012344999999999999, "0.00012345"}, {1e22, "1e+22"},
        {4.9406564584124654e-324, "5e-324"},
    };
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
        char buf[64];
        speed_py_float(t[i].x, buf, sizeof buf);
        if (strcmp(buf, t[i].repr)) fail_msg("repr(%.17g): got %s, want %s", t[i].x, buf, t[i].repr);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_step6_log),
        cmocka_unit_test(test_clas_log_four_cards),
        cmocka_unit_test(test_too_few_values),
        cmocka_unit_test(test_keyword_inside_a_word_is_no_value),
        cmocka_unit_test(test_collective_unicode_env),
        cmocka_unit_test(test_no_batch_size_no_loss),
        cmocka_unit_test(test_unreadable_log),
        cmocka_unit_test(test_python_float_repr),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
