/* test_comm.c: collectives through comm.h with real processes: the test forks 2-4 ranks that meet
 * through a real rendezvous server (this process, 127.0.0.1) and run Gloo over TCP. Data and exact
 * expected values follow nccl-tests' initData/CheckData: rank-dependent small integers whose sums
 * are exact in f32/f16/bf16, so a single wrong element fails.
 *
 * `test_comm --worker NAME` runs one scenario as a rank under `tipc launch` (env from the launcher);
 * the e2e tests use it as their real collective program. */
#include "testutil.h"

#include "comm_world.h"

/* ---- scenarios (run in a rank process; return its exit code) ---------------------------------- */
static int check_allreduce(struct comm *c, size_t n, enum comm_redop op)
{
    int rank = comm_rank(c), w = comm_world(c);
    float *b = malloc(n * sizeof *b);
    for (size_t i = 0; i < n; i++) b[i] = (float)((rank + 1) * (int)((i % 251) + 1));
    if (comm_allreduce(c, b, n, COMM_F32, op)) FAILF("allreduce of %zu failed", n);
    for (size_t i = 0; i < n; i++) {
        double want = (double)(w * (w + 1) / 2) * (double)((i % 251) + 1);
        if (op == COMM_AVG) want /= w;
        if (fabs(b[i] - want) > 1e-6 * want) FAILF("allreduce n=%zu [%zu] = %.9g, want %.9g", n, i, b[i], want);
    }
    free(b);
    return 0;
}

static int check_16bit(struct comm *c, enum comm_dtype dt)
{
    int rank = comm_rank(c), w = comm_world(c);
    unsigned short b[300];
    for (int i = 0; i < 300; i++)
        b[i] = dt == COMM_F16 ? comm_float_to_half((float)(rank + 1) * (float)(i % 16))
                              : comm_float_to_bf16((float)(rank + 1) * (float)(i % 16));
    if (comm_allreduce(c, b, 300, dt, COMM_SUM)) FAILF("16-bit allreduce failed");
    for (int i = 0; i < 300; i++) {
        float got = dt == COMM_F16 ? comm_half_to_float(b[i]) : comm_bf16_to_float(b[i]);
        float want = (float)(w * (w + 1) / 2 * (i % 16));
        if (got != want) FAILF("%s allreduce [%d] = %g, want %g", dt == COMM_F16 ? "f16" : "bf16", i, got, want);
    }
    return 0;
}

/* Fixed-order buckets give the flat result; comm_check_same passes on equal buffers and names the
 * rank whose buffer differs. */
static int check_buckets_and_same(struct comm *c)
{
    int rank = comm_rank(c), w = comm_world(c);
    size_t n = 10007;
    float *b = malloc(n * sizeof *b);
    for (size_t i = 0; i < n; i++) b[i] = (float)((rank + 1) * (int)(i % 97));
    if (comm_allreduce_buckets(c, b, n, COMM_F32, COMM_SUM, 4096)) FAILF("bucketed allreduce failed");
    for (size_t i = 0; i < n; i++)
        if (b[i] != (float)(w * (w + 1) / 2 * (int)(i % 97))) FAILF("bucket [%zu] = %g", i, b[i]);
    if (comm_check_same(c, b, n * sizeof *b, "parameters")) FAILF("identical buffers reported different");
    if (rank == w - 1) b[1234] += 1;
    comm_set_step(c, 99);
    struct capture cap;
    capture_stderr_begin(&cap);
    enum tipc_status st = comm_check_same(c, b, n * sizeof *b, "parameters");
    char *err = capture_stderr_end(&cap);
    char want[96];
    snprintf(want, sizeof want, "parameters (%zu bytes) differ across ranks at step 99: rank %d differs", n * 4, w - 1);
    int bad = st != TIPC_EDIST || !strstr(err, want);
    if (bad) fprintf(stderr, "rank %d: got: %s", rank, err);
    free(err);
    free(b);
    if (bad) FAILF("a differing rank was not reported");
    return 0;
}

static int scenario_collectives(void)
{
    struct comm *c;
    if (init_comm(&c)) return 4;
    int rank = comm_rank(c), w = comm_world(c), rc = 0;
    size_t sizes[] = {1, 7, 1000, 262147};
    for (size_t k = 0; k < 4 && !rc; k++) rc = check_allreduce(c, sizes[k], COMM_SUM);
    if (!rc) rc = check_allreduce(c, 4099, COMM_AVG);
    if (!rc) rc = check_16bit(c, COMM_F16);
    if (!rc) rc = check_16bit(c, COMM_BF16);
    int root = w - 1, bc[1000];
    for (int i = 0; i < 1000 && !rc; i++) bc[i] = rank * 100000 + i;
    if (!rc && comm_broadcast(c, bc, sizeof bc, root)) FAILF("broadcast failed");
    for (int i = 0; i < 1000 && !rc; i++)
        if (bc[i] != root * 100000 + i) FAILF("broadcast [%d] = %d, want %d", i, bc[i], root * 100000 + i);
    int in[33], *out = calloc((size_t)w * 33, sizeof *out);
    for (int i = 0; i < 33; i++) in[i] = rank * 1000 + i;
    if (!rc && comm_allgather(c, in, out, sizeof in)) FAILF("allgather failed");
    for (int r = 0; r < w && !rc; r++)
        for (int i = 0; i < 33; i++)
            if (out[r * 33 + i] != r * 1000 + i) FAILF("allgather [%d][%d] = %d", r, i, out[r * 33 + i]);
    free(out);
    if (!rc && comm_barrier(c)) FAILF("barrier failed");
    if (!rc) rc = check_buckets_and_same(c);
    if (!rc) printf("rank %d of %d: collectives ok (backend %s%s)\n", rank, w, comm_backend_name(c),
                    getenv("TIPC_COMM_HIERARCHICAL") ? ", hierarchical" : "");
    comm_free(c);
    return rc;
}

/* The last rank dies right after joining; the others' allreduce must fail, not hang. */
static int scenario_peer_dies(void)
{
    struct comm *c;
    double t0 = now_seconds();
    /* the peer may die while the others still connect the mesh: init must then fail, and fast */
    if (init_comm(&c)) return now_seconds() - t0 < 8 ? 0 : 4;
    int rank = comm_rank(c), w = comm_world(c);
    if (rank == w - 1) _exit(3);
    comm_set_timeout(c, 5000);
    float b[1024] = {0};
    t0 = now_seconds();
    enum tipc_status st = comm_allreduce(c, b, 1024, COMM_F32, COMM_SUM);
    double dt = now_seconds() - t0;
    comm_free(c);
    if (st != TIPC_EDIST) FAILF("allreduce with a dead peer returned %d, want %d", st, TIPC_EDIST);
    if (dt > 8) FAILF("allreduce with a dead peer took %.1f s", dt);
    return 0;
}

/* Rank 1 skips the allreduce: rank 0 times out with a message naming the collective. */
static int scenario_skip(void) { return scenario_skip_names(0, NULL); }

/* Rank 1 stalls outside any collective; rank 0's allreduce has a long timeout, so only the
 * watchdog (TIPC_WATCHDOG=2) can end it: exit 4 and the job's failure notice. */
static int scenario_watchdog(void)
{
    setenv("TIPC_WATCHDOG", "2", 1);
    struct comm *c;
    if (init_comm(&c)) return 5;
    comm_set_timeout(c, 60000);
    comm_set_step(c, 7);
    if (comm_rank(c) == 1) {
        usleep(4 * 1000 * 1000);
        return 0;
    }
    float b[8] = {0};
    comm_allreduce(c, b, 8, COMM_F32, COMM_SUM);   /* the watchdog _exit()s during this */
    return 6;
}

/* Collectives in a loop until killed or N s pass (e2e: kill a rank mid-run). With hang_at >= 0,
 * rank 1 stops calling them at that step and sleeps (a hung GPU kernel, a deadlock). */
static int loop_until(long hang_at);
static int scenario_loop(void) { return loop_until(-1); }
static int scenario_hang(void) { return loop_until(5); }
static int loop_until(long hang_at)
{
    struct comm *c;
    if (init_comm(&c)) return 4;
    int rank = comm_rank(c);
    float b[4096];
    double t0 = now_seconds();
    for (long step = 0; now_seconds() - t0 < 60; step++) {
        comm_set_step(c, step);
        for (int i = 0; i < 4096; i++) b[i] = 1;
        if (comm_allreduce(c, b, 4096, COMM_F32, COMM_SUM)) return comm_free(c), 4;
        if (b[0] != (float)comm_world(c)) FAILF("loop: bad sum %g", b[0]);
        if (step == 0) printf("rank %d: looping\n", rank), fflush(stdout);
        if (step == hang_at && rank == 1) printf("rank 1: hanging at step %ld\n", step), fflush(stdout), sleep(60);
        usleep(20 * 1000);
    }
    comm_free(c);
    return 0;
}

static int run_scenario(const char *name)
{
    if (!strcmp(name, "collectives")) return scenario_collectives();
    if (!strcmp(name, "peer_dies")) return scenario_peer_dies();
    if (!strcmp(name, "skip")) return scenario_skip();
    if (!strcmp(name, "loop")) return scenario_loop();
    if (!strcmp(name, "hang")) return scenario_hang();
    if (!strcmp(name, "watchdog")) return scenario_watchdog();
    fprintf(stderr, "test_comm: unknown scenario '%s'\n", name);
    return 2;
}

static void test_collectives_exact(int world)
{
    int codes[8];
    double secs;
    run_world(world, "collectives", "tok", codes, &secs);
    for (int r = 0; r < world; r++) assert_int_equal(codes[r], 0);
}
static void test_collectives_2(void **s) { (void)s; test_collectives_exact(2); }
static void test_collectives_3(void **s) { (void)s; test_collectives_exact(3); }
static void test_collectives_4(void **s) { (void)s; test_collectives_exact(4); }

/* 2 nodes x 2 ranks, two-level allreduce: the same exact sums as the flat one */
static void test_collectives_hierarchical(void **s)
{
    (void)s;
    setenv("TIPC_COMM_HIERARCHICAL", "1", 1);
    setenv("TIPC_NNODES", "2", 1);
    setenv("LOCAL_WORLD_SIZE", "2", 1);
    int codes[8];
    double secs;
    run_world(4, "collectives", "tok", codes, &secs);
    unsetenv("TIPC_COMM_HIERARCHICAL"), unsetenv("TIPC_NNODES"), unsetenv("LOCAL_WORLD_SIZE");
    for (int r = 0; r < 4; r++) assert_int_equal(codes[r], 0);
}

static void test_dead_peer_fails_fast(void **s)
{
    (void)s;
    int codes[8];
    double secs;
    run_world(3, "peer_dies", "tok", codes, &secs);
    assert_int_equal(codes[0], 0);   /* 0 = got TIPC_EDIST quickly */
    assert_int_equal(codes[1], 0);
    assert_int_equal(codes[2], 3);
    assert_true(secs < 15);
}

static void test_skipped_collective_times_out(void **s)
{
    (void)s;
    int codes[8];
    double secs;
    run_world(2, "skip", "tok", codes, &secs);
    assert_int_equal(codes[0], 0);
    assert_int_equal(codes[1], 0);
}

static void test_watchdog_aborts_a_stuck_collective(void **s)
{
    (void)s;
    int codes[8];
    double secs;
    struct capture cap;
    capture_stderr_begin(&cap);
    run_world(2, "watchdog", "tok", codes, &secs);
    char *err = capture_stderr_end(&cap);
    fputs(err, stderr);
    assert_int_equal(codes[0], TIPC_EDIST);
    assert_true(secs < 12);
    assert_non_null(strstr(err, "rank 0 (node 0): no progress for 2 s in allreduce #1 (32 bytes) at step 7"));
    assert_non_null(last_notice);   /* every launcher would now stop its ranks */
    assert_non_null(strstr(last_notice, "allreduce #1"));
    free(err);
    free(last_notice);
    last_notice = NULL;
}

static void test_wrong_token_fails_init(void **s)
{
    (void)s;
    int codes[8];
    double secs;
    run_world(2, "collectives", "not-the-token", codes, &secs);
    assert_int_equal(codes[0], 4);
    assert_int_equal(codes[1], 4);
    assert_true(secs < 10);
}

static void test_world_of_one_needs_no_network(void **s)
{
    (void)s;
    unsetenv("MASTER_ADDR"), unsetenv("MASTER_PORT");
    setenv("WORLD_SIZE", "1", 1), setenv("RANK", "0", 1);
    struct comm *c = NULL;
    assert_int_equal(init_comm(&c), TIPC_OK);
    assert_string_equal(comm_backend_name(c), "none");
    float b[3] = {1, 2, 3}, g[3];
    assert_int_equal(comm_allreduce(c, b, 3, COMM_F32, COMM_AVG), TIPC_OK);
    assert_true(b[0] == 1 && b[1] == 2 && b[2] == 3);
    assert_int_equal(comm_allgather(c, b, g, sizeof b), TIPC_OK);
    assert_memory_equal(b, g, sizeof b);
    assert_int_equal(comm_barrier(c), TIPC_OK);
    struct comm_stats cs = comm_get_stats(c);
    assert_int_equal(cs.calls, 3);
    assert_true(cs.bytes == 24 && cs.seconds >= 0 && cs.seconds < 1);
    comm_free(c);
    unsetenv("WORLD_SIZE"), unsetenv("RANK");
}

static void test_bad_env_is_an_error(void **s)
{
    (void)s;
    setenv("WORLD_SIZE", "2", 1), setenv("RANK", "2", 1);   /* rank out of range: a usage error naming it */
    struct comm *c = NULL;
    struct capture cap;
    capture_stderr_begin(&cap);
    enum tipc_status st = init_comm(&c);
    char *err = capture_stderr_end(&cap);
    assert_int_equal(st, TIPC_EUSAGE);
    assert_non_null(strstr(err, "RANK='2'"));
    free(err);
    setenv("WORLD_SIZE", "abc", 1);   /* malformed: never a silent one-rank job */
    capture_stderr_begin(&cap);
    st = init_comm(&c);
    err = capture_stderr_end(&cap);
    assert_int_equal(st, TIPC_EUSAGE);
    assert_non_null(strstr(err, "WORLD_SIZE='abc'"));
    free(err);
    setenv("WORLD_SIZE", "2", 1), setenv("RANK", "1", 1);   /* in range, but where is the store? */
    capture_stderr_begin(&cap);
    st = init_comm(&c);
    err = capture_stderr_end(&cap);
    assert_int_equal(st, TIPC_EUSAGE);
    assert_non_null(strstr(err, "MASTER_ADDR is not set"));
    free(err);
    setenv("MASTER_ADDR", "127.0.0.1", 1), setenv("MASTER_PORT", "1", 1), setenv("TIPC_JOB_TOKEN", "x", 1);
    setenv("TIPC_NODE_RANK", "0", 1);   /* as tipc launch starts a rank */
    setenv("TIPC_COMM_BACKEND", "nccl", 1);
    capture_stderr_begin(&cap);
    st = init_comm(&c);
    free(capture_stderr_end(&cap));
    assert_int_equal(st, TIPC_ENOTBUILT);
    unsetenv("TIPC_COMM_BACKEND"), unsetenv("MASTER_ADDR"), unsetenv("MASTER_PORT"), unsetenv("TIPC_JOB_TOKEN");
    unsetenv("WORLD_SIZE"), unsetenv("RANK"), unsetenv("TIPC_NODE_RANK");
}

static void test_half_conversions_round_trip(void **s)
{
    (void)s;
    float vals[] = {0.0f, 1.0f, -2.5f, 65504.0f, 6.103515625e-05f, 5.9604645e-08f, 0.333251953125f};
    for (size_t i = 0; i < sizeof vals / sizeof *vals; i++)
        assert_true(comm_half_to_float(comm_float_to_half(vals[i])) == vals[i]);
    assert_int_equal(comm_float_to_half(1.0f), 0x3c00);
    assert_int_equal(comm_float_to_half(1.0f + 1.0f / 4096), 0x3c00);   /* ties to even */
    assert_int_equal(comm_float_to_bf16(1.0f), 0x3f80);
    assert_true(comm_bf16_to_float(comm_float_to_bf16(-3.0f)) == -3.0f);
    assert_true(isinf(comm_half_to_float(comm_float_to_half(1e6f))));
}

int main(int argc, char **argv)
{
    if (argc == 3 && !strcmp(argv[1], "--worker")) return run_scenario(argv[2]);
    signal(SIGPIPE, SIG_IGN);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_half_conversions_round_trip),
        cmocka_unit_test(test_world_of_one_needs_no_network),
        cmocka_unit_test(test_bad_env_is_an_error),
        cmocka_unit_test(test_collectives_2),
        cmocka_unit_test(test_collectives_3),
        cmocka_unit_test(test_collectives_4),
        cmocka_unit_test(test_collectives_hierarchical),
        cmocka_unit_test(test_dead_peer_fails_fast),
        cmocka_unit_test(test_skipped_collective_times_out),
        cmocka_unit_test(test_wrong_token_fails_init),
        cmocka_unit_test(test_watchdog_aborts_a_stuck_collective),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
