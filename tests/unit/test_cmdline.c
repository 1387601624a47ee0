/* test_cmdline.c: runner/plan/cmdline.c splits command strings like the shell would after `eval`,
 * applies only the redirections the original uses, and refuses other shell syntax. */
#include "testutil.h"
#include "../../runner/plan/cmdline.h"

static void parse_ok(const char *s, struct cmdline *c)
{
    char err[256], bad;
    enum tipc_status st = cmdline_parse(s, c, err, sizeof err, &bad);
    if (st != TIPC_OK) fail_msg("'%s': %s", s, err);
}

static void test_words_and_spacing(void **state)
{
    struct cmdline c;
    parse_ok("python3.7 train.py --output-dir=./o/x.log --epochs=5   --batch-size=4", &c);
    assert_int_equal(c.argc, 5);
    assert_string_equal(c.argv[0], "python3.7");
    assert_string_equal(c.argv[3], "--epochs=5");
    assert_string_equal(c.argv[4], "--batch-size=4");
    assert_null(c.argv[5]);
    assert_int_equal(c.nredir, 0);
    cmdline_free(&c);
}

static void test_redirections_in_order(void **state)
{
    struct cmdline c;
    parse_ok("python3.7 infer.py --a=1 > ./log/x.log 2>&1 ", &c);
    assert_int_equal(c.argc, 3);
    assert_int_equal(c.nredir, 2);
    assert_int_equal(c.redir[0].fd, 1);
    assert_int_equal(c.redir[0].kind, REDIR_TRUNC);
    assert_string_equal(c.redir[0].path, "./log/x.log");
    assert_int_equal(c.redir[1].fd, 2);
    assert_int_equal(c.redir[1].kind, REDIR_DUP);
    assert_int_equal(c.redir[1].dup_fd, 1);
    cmdline_free(&c);
    parse_ok("a >>out.log 2>err.log", &c);
    assert_int_equal(c.argc, 1);
    assert_int_equal(c.redir[0].kind, REDIR_APPEND);
    assert_string_equal(c.redir[0].path, "out.log");
    assert_int_equal(c.redir[1].fd, 2);
    assert_string_equal(c.redir[1].path, "err.log");
    cmdline_free(&c);
    parse_ok("a b>log &>all", &c);
    assert_int_equal(c.argc, 2);
    assert_string_equal(c.argv[1], "b");
    assert_int_equal(c.nredir, 3);
    assert_string_equal(c.redir[1].path, "all");
    assert_int_equal(c.redir[2].kind, REDIR_DUP);
    cmdline_free(&c);
}

static void test_quotes_escapes_env_tilde(void **state)
{
    struct cmdline c;
    setenv("HOME", "/home/u", 1);
    parse_ok("FLAGS_x=1 A_B=c d 'x y' \"p q\" a\\ b ~/data \"\" -o K=[1,2]", &c);
    assert_int_equal(c.nenv, 2);
    assert_string_equal(c.env[0], "FLAGS_x=1");
    assert_int_equal(c.argc, 8);
    assert_string_equal(c.argv[0], "d");
    assert_string_equal(c.argv[7], "K=[1,2]");
    assert_string_equal(c.argv[1], "x y");
    assert_string_equal(c.argv[2], "p q");
    assert_string_equal(c.argv[3], "a b");
    assert_string_equal(c.argv[4], "/home/u/data");
    assert_string_equal(c.argv[5], "");
    assert_string_equal(c.argv[6], "-o");
    cmdline_free(&c);
    parse_ok("x --opt op.x.devices=\"0\"", &c);
    assert_string_equal(c.argv[1], "--opt");
    assert_string_equal(c.argv[2], "op.x.devices=0");
    cmdline_free(&c);
}

static void test_refused_shell_syntax(void **state)
{
    struct { const char *s; char bad; } cases[] = {
        {"a | b", '|'}, {"a ; b", ';'}, {"a && b", '&'}, {"a & ", '&'}, {"a < in", '<'},
        {"a $(rm -rf x)", '$'}, {"a `id`", '`'}, {"a $HOME", '$'}, {"a \"$x\"", '$'}, {"a (b)", '('},
        {"a #comment", '#'}, {"a {x,y}", '{'}, {"a 'open", '\''}, {"a \"open", '"'}, {"", 0}, {"   ", 0},
        {"a >", '>'}, {"a\nb", '\n'}, {"a 2>&3", '>'}, {"a >&", '>'}, {"a 3>x", '>'},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct cmdline c;
        char err[256], bad = 'X';
        enum tipc_status st = cmdline_parse(cases[i].s, &c, err, sizeof err, &bad);
        assert_int_equal(st, TIPC_EUSAGE);
        assert_int_equal(bad, cases[i].bad);
        assert_true(strlen(err) > 0);
        assert_null(c.argv);
    }
    /* literal glob characters and braces without a comma pass through unchanged */
    struct cmdline c;
    parse_ok("a *.txt x? [0] {} {a}", &c);
    assert_int_equal(c.argc, 6);
    assert_string_equal(c.argv[1], "*.txt");
    assert_string_equal(c.argv[5], "{a}");
    cmdline_free(&c);
}

/* '\r' (CRLF configs), '\v' and '\f' are ordinary characters to the shell, not separators */
static void test_carriage_return_is_part_of_a_word(void **state)
{
    struct cmdline c;
    parse_ok("a\rb c\r \v", &c);
    assert_int_equal(c.argc, 3);
    assert_string_equal(c.argv[0], "a\rb");
    assert_string_equal(c.argv[1], "c\r");
    assert_string_equal(c.argv[2], "\v");
    cmdline_free(&c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_words_and_spacing),
        cmocka_unit_test(test_redirections_in_order),
        cmocka_unit_test(test_quotes_escapes_env_tilde),
        cmocka_unit_test(test_refused_shell_syntax),
        cmocka_unit_test(test_carriage_return_is_part_of_a_word),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
