/* test_options.c: core/options.c, the one command-line parser: spellings (--a=b, --a b, '-'/'_',
 * aliases), numeric ranges (exit 2 naming the option and the range), environment defaults,
 * did-you-mean for options and commands, the generated usage, --help, and the words after a
 * stop_at_pos command's first positional word left alone (launch's CMD --help). */
#include "testutil.h"

#include "../../core/options.h"
#include "../../core/strv.h"

struct vals {
    const char *out, *mode;
    int epochs, nproc;
    long bytes;
    double lr;
    bool dry, gpu, s_epochs, solo;
    struct strv over;
};

static enum tipc_status even_only(const struct opt *o, const char *v, void *dst)
{
    int x = atoi(v);
    if (x % 2) return error_msg(TIPC_EUSAGE, "%s: '%s' is odd", o->name, v);
    *(int *)dst = x;
    return TIPC_OK;
}

static struct vals V;
static int even;
static const struct opt OPTS[] = {
    {"--output-dir", "-o", OPT_STR, &V.out, NULL, 0, 0, "DIR", "where to write", NULL, NULL},
    {"--epochs", NULL, OPT_INT, &V.epochs, &V.s_epochs, 0, 1000, "N", "epochs to train", NULL, NULL},
    {"--nproc_per_node", "--nproc-per-node --nproc", OPT_INT, &V.nproc, NULL, 1, 64, "N", "ranks", NULL, NULL},
    {"--bytes", NULL, OPT_LONG, &V.bytes, NULL, 1, 1L << 40, "B", "a size\nsecond line", "TEST_OPT_BYTES", NULL},
    {"--lr", NULL, OPT_DOUBLE, &V.lr, NULL, 0, 10, "F", "learning rate", NULL, NULL},
    {"--dry-run", NULL, OPT_SWITCH, &V.dry, NULL, 0, 0, NULL, "print only", NULL, NULL},
    {"--solo", NULL, OPT_FLAG, &V.solo, NULL, 0, 0, NULL, "no value at all", NULL, NULL},
    {"--use-gpu", NULL, OPT_BOOL, &V.gpu, NULL, 0, 0, "BOOL", "on a GPU", NULL, NULL},
    {"--override", "-O", OPT_LIST, &V.over, NULL, 0, 0, "K=V", "override", NULL, NULL},
    {"--even", NULL, OPT_FN, &even, NULL, 0, 0, "N", "an even number", NULL, even_only},
    {"TEST_OPT_MODE", NULL, OPT_STR, &V.mode, NULL, 0, 0, "M", "environment only", "TEST_OPT_MODE", NULL},
    {0},
};
static const struct opt_cmd CMD = {.name = "demo", .synopsis = "[options] A [B]\n--other", .about = "About it.\n",
                                   .opts = OPTS, .footer = "Footer.\n", .max_pos = 2};
static const struct opt_cmd LAUNCH = {.name = "launch", .synopsis = "[options] CMD [ARGS...]", .opts = OPTS,
                                      .stop_at_pos = true};

/* Parse a NULL-terminated argv; returns the status, stderr in *err (freed by the caller). */
static enum tipc_status parse(const struct opt_cmd *c, const char **argv, const char **pos, struct opt_result *r,
                              char **err)
{
    int argc = 0;
    while (argv[argc]) argc++;
    strv_clear(&V.over);
    memset(&V, 0, sizeof V);
    even = 0;
    struct capture cap;
    capture_stderr_begin(&cap);
    enum tipc_status st = opt_parse(c, argc, (char **)argv, pos, r);
    char *e = capture_stderr_end(&cap);
    if (err) *err = e;
    else free(e);
    return st;
}

static void expect_error(const char **argv, const char *text)
{
    const char *pos[2];
    struct opt_result r;
    char *err = NULL;
    enum tipc_status st = parse(&CMD, argv, pos, &r, &err);
    if (st != TIPC_EUSAGE || !strstr(err, text)) fprintf(stderr, "status %d, stderr: %s\n(want '%s')\n", st, err, text);
    assert_int_equal(st, TIPC_EUSAGE);
    assert_non_null(strstr(err, text));
    free(err);
}

static void test_spellings(void **s)
{
    (void)s;
    const char *pos[2];
    struct opt_result r;
    const char *argv[] = {"demo", "a", "--epochs=3", "-o", "D", "--nproc-per-node", "4", "--bytes", "1024",
                          "--lr=0.5", "--dry_run", "--use-gpu", "False", "-O", "x=1", "--override=y=2",
                          "--even", "6", "b", NULL};
    assert_int_equal(parse(&CMD, argv, pos, &r, NULL), TIPC_OK);
    assert_false(r.help);
    assert_int_equal(r.npos, 2);
    assert_string_equal(pos[0], "a");
    assert_string_equal(pos[1], "b");
    assert_int_equal(V.epochs, 3);
    assert_true(V.s_epochs);
    assert_string_equal(V.out, "D");
    assert_int_equal(V.nproc, 4);
    assert_int_equal(V.bytes, 1024);
    assert_true(V.lr == 0.5);
    assert_true(V.dry);
    assert_false(V.gpu);
    assert_int_equal(V.over.n, 2);
    assert_string_equal(V.over.v[1], "y=2");
    assert_int_equal(even, 6);
    /* the third spelling, '-' and '_' mixed; `--` makes the rest positional */
    const char *argv2[] = {"demo", "--nproc=2", "--dry-run=false", "--solo", "--", "--epochs", NULL};
    assert_int_equal(parse(&CMD, argv2, pos, &r, NULL), TIPC_OK);
    assert_true(V.solo);
    assert_int_equal(V.nproc, 2);
    assert_false(V.dry);
    assert_int_equal(r.npos, 1);
    assert_string_equal(pos[0], "--epochs");
    assert_false(V.s_epochs);
    strv_clear(&V.over);
}

static void test_ranges_and_values(void **s)
{
    (void)s;
    expect_error((const char *[]){"demo", "--epochs=1001", NULL}, "demo: option '--epochs' must be in 0..1000, got 1001");
    expect_error((const char *[]){"demo", "--epochs", "-1", NULL}, "must be in 0..1000, got -1");
    expect_error((const char *[]){"demo", "--epochs=x", NULL}, "option '--epochs' needs an integer, got 'x'");
    expect_error((const char *[]){"demo", "--nproc_per_node=0", NULL}, "option '--nproc_per_node' must be in 1..64, got 0");
    expect_error((const char *[]){"demo", "--lr=11", NULL}, "option '--lr' must be in 0..10, got 11");
    expect_error((const char *[]){"demo", "--lr=nan", NULL}, "option '--lr' needs a number, got 'nan'");
    expect_error((const char *[]){"demo", "--lr=abc", NULL}, "option '--lr' needs a number, got 'abc'");
    expect_error((const char *[]){"demo", "--bytes=0", NULL}, "option '--bytes' must be in 1..1099511627776, got 0");
    expect_error((const char *[]){"demo", "--use-gpu=maybe", NULL}, "option '--use-gpu' needs True or False");
    expect_error((const char *[]){"demo", "--epochs", NULL}, "option '--epochs' needs a value");
    expect_error((const char *[]){"demo", "--even=3", NULL}, "--even: '3' is odd");
    expect_error((const char *[]){"demo", "a", "b", "c", NULL}, "unexpected argument 'c'");
    expect_error((const char *[]){"demo", "--help=1", NULL}, "takes no value");
    expect_error((const char *[]){"demo", "--solo=1", NULL}, "demo: '--solo=1' takes no value");
    /* the bounds themselves are accepted */
    const char *pos[2];
    struct opt_result r;
    assert_int_equal(parse(&CMD, (const char *[]){"demo", "--epochs=0", "--lr=10", NULL}, pos, &r, NULL), TIPC_OK);
    assert_int_equal(parse(&CMD, (const char *[]){"demo", "--epochs=1000", NULL}, pos, &r, NULL), TIPC_OK);
    assert_int_equal(V.epochs, 1000);
}

static void test_env(void **s)
{
    (void)s;
    const char *pos[2];
    struct opt_result r;
    setenv("TEST_OPT_BYTES", "4096", 1);
    assert_int_equal(parse(&CMD, (const char *[]){"demo", NULL}, pos, &r, NULL), TIPC_OK);
    assert_int_equal(V.bytes, 4096);
    /* the command line wins over the environment */
    assert_int_equal(parse(&CMD, (const char *[]){"demo", "--bytes=8", NULL}, pos, &r, NULL), TIPC_OK);
    assert_int_equal(V.bytes, 8);
    setenv("TEST_OPT_BYTES", "0", 1);
    expect_error((const char *[]){"demo", NULL}, "TEST_OPT_BYTES (environment, for --bytes) must be in 1..1099511627776, got 0");
    unsetenv("TEST_OPT_BYTES");
    /* an environment-only setting: read from the environment, never from the command line */
    setenv("TEST_OPT_MODE", "fast", 1);
    assert_int_equal(parse(&CMD, (const char *[]){"demo", NULL}, pos, &r, NULL), TIPC_OK);
    assert_string_equal(V.mode, "fast");
    unsetenv("TEST_OPT_MODE");
    expect_error((const char *[]){"demo", "--TEST_OPT_MODE=x", NULL}, "unknown option '--TEST_OPT_MODE'");
}

static void test_did_you_mean(void **s)
{
    (void)s;
    expect_error((const char *[]){"demo", "--epoch=3", NULL}, "did you mean '--epochs'?");
    expect_error((const char *[]){"demo", "--dryrun", NULL}, "did you mean '--dry-run'?");
    expect_error((const char *[]){"demo", "--dyr-run", NULL}, "did you mean '--dry-run'?");   /* transposition */
    expect_error((const char *[]){"demo", "--epo", NULL}, "did you mean '--epochs'?");        /* unique prefix */
    char *err = NULL;
    const char *pos[2];
    struct opt_result r;
    assert_int_equal(parse(&CMD, (const char *[]){"demo", "--zzzzzz", NULL}, pos, &r, &err), TIPC_EUSAGE);
    assert_non_null(strstr(err, "unknown option '--zzzzzz'"));
    assert_null(strstr(err, "did you mean"));
    assert_non_null(strstr(err, "see 'tipc help demo'"));
    free(err);
    const char *const cmds[] = {"run", "prepare", "launch", "train", "export", "infer", "bench", "version", "help", NULL};
    assert_string_equal(opt_suggest("runn", cmds), "run");
    assert_string_equal(opt_suggest("lanuch", cmds), "launch");
    assert_string_equal(opt_suggest("trian", cmds), "train");
    assert_null(opt_suggest("frobnicate", cmds));
    assert_null(opt_suggest("run", cmds));   /* an exact match is no typo */
    assert_int_equal(opt_edit_distance("abc", "acb"), 1);
    assert_int_equal(opt_edit_distance("", "abc"), 3);
    assert_int_equal(opt_edit_distance("kitten", "sitting"), 3);
}

static char *usage_of(const struct opt_cmd *c)
{
    FILE *f = tmpfile();
    opt_usage(c, f);
    long n = ftell(f);
    rewind(f);
    char *s = calloc(1, (size_t)n + 1);
    assert_int_equal(fread(s, 1, (size_t)n, f), (size_t)n);
    fclose(f);
    return s;
}

static void test_usage(void **s)
{
    (void)s;
    char *u = usage_of(&CMD);
    assert_non_null(strstr(u, "usage: tipc demo [options] A [B]\n   or: tipc demo --other\n\nAbout it.\n\noptions:\n"));
    /* every spelling, the value's name, the range and the environment variable */
    assert_non_null(strstr(u, "  -o, --output-dir DIR    where to write\n"));
    assert_non_null(strstr(u, "  --epochs N              epochs to train (0..1000)\n"));
    assert_non_null(strstr(u, "  --nproc_per_node, --nproc-per-node, --nproc N\n                          ranks (1..64)\n"));
    assert_non_null(strstr(u, "  --bytes B               a size\n                          second line (1..1099511627776; env TEST_OPT_BYTES)\n"));
    assert_non_null(strstr(u, "  --dry-run               print only\n"));
    assert_non_null(strstr(u, "  -h, --help              show this help\n\nenvironment:\n"
                              "  TEST_OPT_MODE=M         environment only\n"));
    assert_true(strlen(u) > strlen("Footer.\n") && !strcmp(u + strlen(u) - 9, "\nFooter.\n"));
    assert_null(strstr(u, "exit codes"));
    free(u);
}

static void test_help_and_passthrough(void **s)
{
    (void)s;
    const char *pos[2];
    struct opt_result r;
    /* --help anywhere among the options prints the usage and parses nothing (not even bad values) */
    FILE *saved = stdout;
    stdout = tmpfile();
    assert_int_equal(parse(&CMD, (const char *[]){"demo", "--epochs=99999", "--help", NULL}, pos, &r, NULL), TIPC_OK);
    assert_true(r.help);
    long n = ftell(stdout);
    fclose(stdout);
    stdout = saved;
    assert_true(n > 0);
    /* ... but an option's value that looks like --help is a value */
    assert_int_equal(parse(&CMD, (const char *[]){"demo", "-o", "--help", NULL}, pos, &r, NULL), TIPC_OK);
    assert_false(r.help);
    assert_string_equal(V.out, "--help");
    /* launch: the first positional word ends the options; its --help belongs to CMD */
    const char *argv[] = {"launch", "--nproc=2", "-o", "L", "train", "--help", "--epochs=5", NULL};
    assert_int_equal(parse(&LAUNCH, argv, NULL, &r, NULL), TIPC_OK);
    assert_false(r.help);
    assert_int_equal(r.rest, 4);
    assert_int_equal(V.nproc, 2);
    assert_false(V.s_epochs);
    const char *argv2[] = {"launch", "--nproc=2", "--", "--odd-program", "--help", NULL};
    assert_int_equal(parse(&LAUNCH, argv2, NULL, &r, NULL), TIPC_OK);
    assert_false(r.help);
    assert_int_equal(r.rest, 3);
    const char *argv3[] = {"launch", "--nproc=2", NULL};
    assert_int_equal(parse(&LAUNCH, argv3, NULL, &r, NULL), TIPC_OK);
    assert_int_equal(r.rest, 2);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_spellings),
        cmocka_unit_test(test_ranges_and_values),
        cmocka_unit_test(test_env),
        cmocka_unit_test(test_did_you_mean),
        cmocka_unit_test(test_usage),
        cmocka_unit_test(test_help_and_passthrough),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
