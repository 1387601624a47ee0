/* test_core.c: core/: checked number parsing, the string vector and the error/die helpers. */
#include "testutil.h"
#include "../../core/parse.h"
#include "../../core/strv.h"

static void test_parse_int_accepts_only_whole_numbers(void **state)
{
    int v = -1;
    assert_true(parse_int("42", 0, 100, &v));
    assert_int_equal(v, 42);
    assert_false(parse_int("42x", 0, 100, &v));
    assert_false(parse_int("", 0, 100, &v));
    assert_false(parse_int("101", 0, 100, &v));
    assert_false(parse_int("-1", 0, 100, &v));
    assert_false(parse_int("99999999999999999999", 0, 100, &v));
    assert_int_equal(v, 42);
}

static void test_parse_bool_like_str2bool(void **state)
{
    bool b = false;
    assert_true(parse_bool("True", &b) && b);
    assert_true(parse_bool("t", &b) && b);
    assert_true(parse_bool("1", &b) && b);
    assert_true(parse_bool("FALSE", &b) && !b);
    assert_false(parse_bool("yes", &b));
}

static void test_parse_double_rejects_nan(void **state)
{
    double d;
    assert_true(parse_double("1e-3", &d));
    assert_true(fabs(d - 1e-3) < 1e-15);
    assert_false(parse_double("nan", &d));
    assert_false(parse_double("1.0.0", &d));
}

/* One string vector: split like cfg_split / --ips, NAME=value replaced in place, joined, detached. */
static void test_strv(void **state)
{
    (void)state;
    struct strv v = STRV_INIT;
    strv_split(&v, "a||b|", '|', true);   /* empty fields kept, no field after a trailing '|' */
    assert_int_equal(v.n, 3);
    assert_string_equal(v.v[1], "");
    assert_null(v.v[3]);
    strv_clear(&v);
    strv_split(&v, ",x,,y,", ',', false);
    assert_int_equal(v.n, 2);
    char *j = strv_join(v.v, -1, "+");
    assert_string_equal(j, "x+y");
    free(j);
    strv_clear(&v);
    strv_push(&v, "A=1");
    strv_pushf(&v, "B=%d", 2);
    strv_setenv(&v, strdup("A=3"));        /* replaces A, keeps its place */
    strv_setenv(&v, strdup("AB=4"));       /* a longer name is another variable */
    assert_int_equal(v.n, 3);
    assert_string_equal(v.v[0], "A=3");
    assert_string_equal(v.v[2], "AB=4");
    j = strv_join(v.v, 2, ",");
    assert_string_equal(j, "A=3,B=2");
    free(j);
    strv_clear(&v);
    char **empty = strv_detach(&v);        /* an empty vector is one NULL, not NULL */
    assert_non_null(empty);
    assert_null(empty[0]);
    strv_free(empty);
}

static void test_error_at_prints_file_line(void **state)
{
    struct capture c;
    capture_stderr_begin(&c);
    enum tipc_status st = error_at(TIPC_EUSAGE, "cfg.txt", 14, "unknown key '%s'", "gpu_lst");
    char *out = capture_stderr_end(&c);
    assert_int_equal(st, TIPC_EUSAGE);
    assert_string_equal(out, "cfg.txt:14: unknown key 'gpu_lst'\n");
    free(out);
}

static void test_check_goes_through_die_routine(void **state)
{
    tipc_set_die_routine(test_die_routine);
    test_die_code = 0;
    struct capture c;
    capture_stderr_begin(&c);
    if (setjmp(test_die_jmp) == 0) {
        CHECK(1 + 1 == 3, "arithmetic");
        fail_msg("CHECK did not die");
    }
    free(capture_stderr_end(&c));
    tipc_set_die_routine(NULL);
    assert_int_equal(test_die_code, TIPC_EINTERNAL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse_int_accepts_only_whole_numbers),
        cmocka_unit_test(test_parse_bool_like_str2bool),
        cmocka_unit_test(test_parse_double_rejects_nan),
        cmocka_unit_test(test_strv),
        cmocka_unit_test(test_error_at_prints_file_line),
        cmocka_unit_test(test_check_goes_through_die_routine),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
