/* test_comm_async.c: comm_async (comm.h), the allreduces that overlap backward, with real
 * processes: 2-4 forked ranks, a real rendezvous server, Gloo over TCP (comm_world.h).
 *  - buckets of mixed sizes queued back to front (as backward produces them) give exactly the sums
 *    and averages of the blocking allreduce, round after round, and blocking collectives work
 *    again after the wait;
 *  - a rank that dies while buckets are in flight makes the others' wait fail with TIPC_EDIST
 *    at once, not hang; the buckets queued behind the failed one are skipped;
 *  - a rank that stops calling collectives: the communication thread's call times out (the
 *    collective timeout applies there), and with a long timeout the watchdog, which sees the
 *    thread's call in progress, aborts the process with the job's failure notice. */
#include "comm_world.h"


/* bucket edges of a 300000-float buffer, back to front: 7, 1000, 65536 and the rest */
static const size_t EDGES[] = {300000, 299993, 298993, 233457, 0};

static int scenario_exact(void)
{
    struct comm *c;
    if (init_comm(&c)) return 4;
    int rank = comm_rank(c), w = comm_world(c);
    int dummy_stream;   /* Gloo has no streams: the thread is used whatever the caller passes */
    struct comm_async *a = comm_async_open(c, &dummy_stream);
    if (comm_async_on_stream(a)) FAILF("gloo reported a stream");
    size_t n = EDGES[0];
    float *b = malloc(n * sizeof *b);
    for (int round = 0; round < 3; round++) {
        enum comm_redop op = round == 1 ? COMM_AVG : COMM_SUM;
        for (size_t i = 0; i < n; i++) b[i] = (float)((rank + 1) * (int)((i + (size_t)round) % 251 + 1));
        comm_set_step(c, round);
        for (int k = 0; k + 1 < 5; k++)
            comm_async_allreduce(a, b + EDGES[k + 1], EDGES[k] - EDGES[k + 1], COMM_F32, op);
        double waited = -1, busy = -1;
        if (comm_async_wait(a, &waited, &busy)) FAILF("async wait failed in round %d", round);
        if (waited < 0 || busy <= 0) FAILF("round %d: waited %g s, busy %g s", round, waited, busy);
        for (size_t i = 0; i < n; i++) {
            float want = (float)(w * (w + 1) / 2 * (int)((i + (size_t)round) % 251 + 1));
            if (op == COMM_AVG) want *= 1.0f / (float)w;   /* exactly comm.c's scaling */
            if (b[i] != want) FAILF("round %d: [%zu] = %.9g, want %.9g", round, i, b[i], want);
        }
        if (comm_check_same(c, b, n * sizeof *b, "buckets")) FAILF("blocking collective after the wait failed");
    }
    double waited = -1;
    if (comm_async_wait(a, &waited, NULL) || waited < 0) FAILF("an empty wait failed");
    comm_async_close(a);
    free(b);
    comm_free(c);
    return 0;
}

/* The last rank dies while its second round of buckets is in flight (its communication thread
 * mid-send); the others must get TIPC_EDIST from the wait within the 5 s timeout (+ margin). */
static int scenario_peer_dies(void)
{
    struct comm *c;
    if (init_comm(&c)) return 4;
    int rank = comm_rank(c), w = comm_world(c);
    comm_set_timeout(c, 5000);
    struct comm_async *a = comm_async_open(c, NULL);
    size_t n = 4u << 20;   /* 16 MB: the transfer takes a while on loopback */
    float *b = calloc(n, sizeof *b);
    comm_async_allreduce(a, b, 1024, COMM_F32, COMM_SUM);
    if (comm_async_wait(a, NULL, NULL)) FAILF("the first round failed");
    comm_set_step(c, 1);
    struct capture cap;   /* from here: the communication thread may report the failure at once */
    capture_stderr_begin(&cap);
    for (int k = 0; k < 4; k++) comm_async_allreduce(a, b + (size_t)k * (n / 4), n / 4, COMM_F32, COMM_SUM);
    if (rank == w - 1) {
        usleep(2000);
        _exit(3);
    }
    double t0 = now_seconds();
    enum tipc_status st = comm_async_wait(a, NULL, NULL);
    char *err = capture_stderr_end(&cap);
    double dt = now_seconds() - t0;
    fputs(err, stderr);
    comm_async_close(a);
    comm_free(c);
    free(b);
    int named = strstr(err, "allreduce #") && strstr(err, "at step 1") != NULL;
    free(err);
    if (st != TIPC_EDIST) FAILF("wait with a dead peer returned %d, want %d", st, TIPC_EDIST);
    if (dt > 9) FAILF("wait with a dead peer took %.1f s", dt);
    if (!named) FAILF("the error does not name the collective and the step");
    return 0;
}

/* The last rank stops calling collectives while the others' buckets are in flight: their
 * communication thread's allreduce times out (1.5 s) and the wait returns TIPC_EDIST; with a long
 * timeout the watchdog (TIPC_WATCHDOG=2), which sees the thread's call, ends the process (exit 4). */
static int stalled(bool watchdog)
{
    if (watchdog) setenv("TIPC_WATCHDOG", "2", 1);
    struct comm *c;
    if (init_comm(&c)) return 5;
    int rank = comm_rank(c), w = comm_world(c);
    comm_set_timeout(c, watchdog ? 60000 : 1500);
    comm_set_step(c, 9);
    if (rank == w - 1) {
        usleep(5 * 1000 * 1000);
        return 0;
    }
    struct comm_async *a = comm_async_open(c, NULL);
    float b[4096] = {0};
    comm_async_allreduce(a, b, 2048, COMM_F32, COMM_SUM);
    comm_async_allreduce(a, b + 2048, 2048, COMM_F32, COMM_SUM);
    double t0 = now_seconds();
    enum tipc_status st = comm_async_wait(a, NULL, NULL);   /* the watchdog _exit()s during this */
    double dt = now_seconds() - t0;
    comm_async_close(a);
    comm_free(c);
    if (watchdog) FAILF("the watchdog did not end a stuck bucket (status %d after %.1f s)", st, dt);
    if (st != TIPC_EDIST || dt > 5) FAILF("stalled peer: status %d after %.1f s", st, dt);
    return 0;
}

static int run_scenario(const char *name)
{
    if (!strcmp(name, "stalled")) return stalled(false);
    if (!strcmp(name, "stalled_watchdog")) return stalled(true);
    if (!strcmp(name, "exact")) return scenario_exact();
    if (!strcmp(name, "peer_dies")) return scenario_peer_dies();
    fprintf(stderr, "test_comm_async: unknown scenario '%s'\n", name);
    return 2;
}

static void exact(int world)
{
    int codes[8];
    double secs;
    run_world(world, "exact", "tok", codes, &secs);
    for (int r = 0; r < world; r++) assert_int_equal(codes[r], 0);
}
static void test_exact_2(void **s) { (void)s; exact(2); }
static void test_exact_4(void **s) { (void)s; exact(4); }

static void test_dead_peer_mid_bucket_fails_fast(void **s)
{
    (void)s;
    int codes[8];
    double secs;
    run_world(3, "peer_dies", "tok", codes, &secs);
    assert_int_equal(codes[0], 0);   /* 0 = TIPC_EDIST in time, naming the collective */
    assert_int_equal(codes[1], 0);
    assert_int_equal(codes[2], 3);
    assert_true(secs < 20);
}

static void test_stalled_peer_times_out(void **s)
{
    (void)s;
    int codes[8];
    double secs;
    run_world(2, "stalled", "tok", codes, &secs);
    assert_int_equal(codes[0], 0);
    assert_int_equal(codes[1], 0);
}

static void test_watchdog_sees_the_communication_thread(void **s)
{
    (void)s;
    int codes[8];
    double secs;
    struct capture cap;
    capture_stderr_begin(&cap);
    run_world(2, "stalled_watchdog", "tok", codes, &secs);
    char *err = capture_stderr_end(&cap);
    fputs(err, stderr);
    assert_int_equal(codes[0], TIPC_EDIST);
    assert_true(secs < 12);
    assert_non_null(strstr(err, "rank 0 (node 0): no progress for "));   /* 2 s, or 3 under load */
    assert_non_null(strstr(err, " s in allreduce #1 (8192 bytes) at step 9; aborting the job"));
    assert_non_null(last_notice);   /* every launcher would now stop its ranks */
    free(err);
    free(last_notice);
    last_notice = NULL;
}

int main(int argc, char **argv)
{
    if (argc == 3 && !strcmp(argv[1], "--worker")) return run_scenario(argv[2]);
    signal(SIGPIPE, SIG_IGN);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_exact_2),
        cmocka_unit_test(test_exact_4),
        cmocka_unit_test(test_dead_peer_mid_bucket_fails_fast),
        cmocka_unit_test(test_stalled_peer_times_out),
        cmocka_unit_test(test_watchdog_sees_the_communication_thread),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
