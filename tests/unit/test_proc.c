/* test_proc.c: runner/run/proc.c runs real child processes with fork/execvp: exit codes as the shell
 * reports them, redirections applied by us, environment edits, `tipc` mapped to our binary. */
#include "testutil.h"
#include "../../runner/run/proc.h"
#include "../../core/spawn.h"

static char tmpdir[256];

static int setup(void **state)
{
    snprintf(tmpdir, sizeof tmpdir, "%s/proc-XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    return mkdtemp(tmpdir) ? 0 : -1;
}

static int teardown(void **state)
{
    char cmd[512];
    snprintf(cmd, sizeof cmd, "%s", tmpdir);
    /* files created by the tests */
    const char *names[] = {"out.log", "app.log", "env.log", "self.log", "missing.log"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        char p[600];
        snprintf(p, sizeof p, "%s/%s", tmpdir, names[i]);
        unlink(p);
    }
    rmdir(cmd);
    return 0;
}

static int run(const char *line, const struct proc_env *env)
{
    struct cmdline c;
    char err[256], bad;
    if (cmdline_parse(line, &c, err, sizeof err, &bad) != TIPC_OK) fail_msg("%s", err);
    int st = proc_run(&c, env, NULL);
    cmdline_free(&c);
    return st;
}

static char *slurp(const char *name)
{
    char p[600];
    snprintf(p, sizeof p, "%s/%s", tmpdir, name);
    FILE *f = fopen(p, "rb");
    if (!f) return NULL;
    char *buf = calloc(1, 65536);
    size_t n = fread(buf, 1, 65535, f);
    buf[n] = 0;
    fclose(f);
    return buf;
}

static void test_exit_codes(void **state)
{
    assert_int_equal(run("true", NULL), 0);
    assert_int_equal(run("false", NULL), 1);
    assert_int_equal(run("sh -c 'exit 42'", NULL), 42);
    assert_int_equal(run("sh -c 'kill -9 $$'", NULL), 128 + 9);
}

static void test_redirect_stdout_and_stderr_to_one_file(void **state)
{
    char line[800];
    snprintf(line, sizeof line, "sh -c 'echo out; echo err >&2; exit 3' > %s/out.log 2>&1 ", tmpdir);
    assert_int_equal(run(line, NULL), 3);
    char *s = slurp("out.log");
    assert_non_null(s);
    assert_string_equal(s, "out\nerr\n");
    free(s);
    snprintf(line, sizeof line, "echo again >> %s/out.log", tmpdir);
    assert_int_equal(run(line, NULL), 0);
    s = slurp("out.log");
    assert_string_equal(s, "out\nerr\nagain\n");
    free(s);
    snprintf(line, sizeof line, "echo fresh > %s/out.log", tmpdir);
    assert_int_equal(run(line, NULL), 0);
    s = slurp("out.log");
    assert_string_equal(s, "fresh\n");
    free(s);
}

static void test_missing_program_and_bad_redirect(void **state)
{
    char line[800];
    snprintf(line, sizeof line, "no-such-program-tipc --x > %s/missing.log 2>&1", tmpdir);
    assert_int_equal(run(line, NULL), 127);
    char *s = slurp("missing.log");
    assert_non_null(s);
    assert_string_equal(s, "tipc: error: cannot run 'no-such-program-tipc': No such file or directory\n");
    free(s);
    snprintf(line, sizeof line, "true > %s/no/such/dir/x.log", tmpdir);
    assert_int_equal(run(line, NULL), 1);
}

static void test_environment_edits(void **state)
{
    setenv("CUDA_VISIBLE_DEVICES", "7", 1);
    setenv("TIPC_TEST_DROP", "x", 1);
    const char *set[] = {"CUDA_VISIBLE_DEVICES=0", NULL};
    const char *unset[] = {"TIPC_TEST_DROP", NULL};
    struct proc_env env = {.self_exe = NULL, .set = set, .unset = unset};
    char line[800];
    snprintf(line, sizeof line, "FLAGS_demo=1 env > %s/env.log", tmpdir);
    assert_int_equal(run(line, &env), 0);
    char *s = slurp("env.log");
    assert_non_null(strstr(s, "\nCUDA_VISIBLE_DEVICES=0\n"));
    assert_non_null(strstr(s, "FLAGS_demo=1\n"));
    assert_null(strstr(s, "TIPC_TEST_DROP"));
    free(s);
    /* the parent is untouched */
    assert_string_equal(getenv("CUDA_VISIBLE_DEVICES"), "7");
    unsetenv("CUDA_VISIBLE_DEVICES");
    unsetenv("TIPC_TEST_DROP");
}

static void test_tipc_maps_to_self_exe(void **state)
{
    struct proc_env env = {.self_exe = "/bin/echo"};
    char line[800];
    snprintf(line, sizeof line, "tipc train --epochs=5 > %s/self.log", tmpdir);
    assert_int_equal(run(line, &env), 0);
    char *s = slurp("self.log");
    assert_string_equal(s, "train --epochs=5\n");
    free(s);
}

static int run_res(const char *line, const struct proc_env *env, struct proc_result *res)
{
    struct cmdline c;
    char err[256], bad;
    if (cmdline_parse(line, &c, err, sizeof err, &bad) != TIPC_OK) fail_msg("%s", err);
    int st = proc_run(&c, env, res);
    cmdline_free(&c);
    return st;
}

/* A child that outlives its time is stopped with its own child: status 124, nothing left. */
static void test_timeout_stops_the_tree(void **state)
{
    spawn_become_subreaper();
    struct proc_env env = {.timeout_s = 0.5};
    struct proc_result res;
    assert_int_equal(run_res("sh -c 'sleep 30 & exec sleep 31'", &env, &res), 124);
    assert_true(res.timed_out);
    assert_int_equal(spawn_count_descendants(), 0);
}

/* What a child leaves running when it ends (in its group or not) is stopped and counted. */
static void test_leftovers_are_stopped(void **state)
{
    spawn_become_subreaper();
    struct proc_env env = {.self_exe = NULL};
    struct proc_result res;
    assert_int_equal(run_res("sh -c 'sleep 30 & setsid sleep 31 & (sleep 32 &); exit 3'", &env, &res), 3);
    assert_false(res.timed_out);
    assert_true(res.leftovers >= 3); /* 3 sleeps, and the subshell if it had not ended yet */
    assert_int_equal(spawn_count_descendants(), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_exit_codes),
        cmocka_unit_test(test_redirect_stdout_and_stderr_to_one_file),
        cmocka_unit_test(test_missing_program_and_bad_redirect),
        cmocka_unit_test(test_environment_edits),
        cmocka_unit_test(test_tipc_maps_to_self_exe),
        cmocka_unit_test(test_timeout_stops_the_tree),
        cmocka_unit_test(test_leftovers_are_stopped),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
