/* test_comm_shm.c: the shared-memory allreduce of ranks on one host (comm_shm.h), with real forked
 * ranks that meet through a real rendezvous server (comm_world.h) and then share a real /dev/shm
 * segment. Checks: exact sums over several chunks; the documented summation order bit for bit
 * (random floats, so a different order would show); a dead peer and a skipped call fail fast with
 * their names, never hang; `on` where it cannot work is an error; a full /dev/shm (a 1 MB tmpfs the
 * test mounts over it in its own mount namespace) falls back to TCP with a note under `auto` and is
 * an error under `on`; no segment is left in /dev/shm. */
#include "testutil.h"

#include <dirent.h>
#include <errno.h>
#include <sched.h>
#include <sys/mount.h>

#include "comm_world.h"
#include "../../core/rng.h"

/* rank j's value at i: a deterministic "random" float */
static float value(int j, size_t i)
{
    uint64_t h = rng_mix64(((uint64_t)j << 40) ^ (uint64_t)i);
    return (float)((double)(h >> 40) / (double)(1 << 24) - 0.5) * 3.0f;
}

/* The contract: scale * (((v0 + v1) + v2) + ...) for every element, on every rank. */
static int check_order(struct comm *c, size_t n, enum comm_redop op)
{
    int rank = comm_rank(c), w = comm_world(c);
    float *b = malloc(n * sizeof *b);
    for (size_t i = 0; i < n; i++) b[i] = value(rank, i);
    if (comm_allreduce(c, b, n, COMM_F32, op)) FAILF("allreduce of %zu failed", n);
    float scale = op == COMM_AVG ? 1.0f / (float)w : 1.0f;
    for (size_t i = 0; i < n; i++) {
        float s = value(0, i) + value(1, i);
        for (int j = 2; j < w; j++) s += value(j, i);
        if (op == COMM_AVG) s *= scale;
        if (memcmp(&s, &b[i], sizeof s)) FAILF("n=%zu [%zu] = %.9g, want %.9g (the fixed order)", n, i, b[i], s);
    }
    if (comm_check_same(c, b, n * sizeof *b, "allreduce results")) FAILF("ranks hold different results");
    free(b);
    return 0;
}

static int scenario_exact(void)
{
    struct comm *c;
    if (init_comm(&c)) return 4;
    int rank = comm_rank(c), w = comm_world(c);
    const char *want = getenv("WANT_TRANSPORT");
    if (want && strcmp(comm_transport(c), want)) FAILF("transport %s, want %s", comm_transport(c), want);
    /* 1 element, odd sizes, one slot (2 MB = 524288 floats) exactly, and three chunks */
    size_t sizes[] = {1, 7, 1000, 262147, 524288, 1300001};
    for (size_t k = 0; k < 6; k++) {
        size_t n = sizes[k];
        float *b = malloc(n * sizeof *b);
        for (size_t i = 0; i < n; i++) b[i] = (float)((rank + 1) * (int)((i % 251) + 1));
        if (comm_allreduce(c, b, n, COMM_F32, COMM_SUM)) FAILF("allreduce of %zu failed", n);
        for (size_t i = 0; i < n; i++)
            if (b[i] != (float)(w * (w + 1) / 2 * (int)((i % 251) + 1))) FAILF("n=%zu [%zu] = %g", n, i, b[i]);
        free(b);
    }
    if (check_order(c, 1300001, COMM_SUM) || check_order(c, 4099, COMM_AVG)) return 1;
    unsigned short h[64];   /* 16-bit types still go through Gloo */
    for (int i = 0; i < 64; i++) h[i] = comm_float_to_half((float)(rank + 1) * (float)(i % 8));
    if (comm_allreduce(c, h, 64, COMM_F16, COMM_SUM)) FAILF("f16 allreduce failed");
    for (int i = 0; i < 64; i++)
        if (comm_half_to_float(h[i]) != (float)(w * (w + 1) / 2 * (i % 8))) FAILF("f16 [%d]", i);
    comm_free(c);
    return 0;
}

/* The last rank dies after joining: the others fail at once (its pid), naming it. */
static int scenario_peer_dies(void)
{
    struct comm *c;
    if (init_comm(&c)) return 4;
    int rank = comm_rank(c), w = comm_world(c);
    if (rank == w - 1) _exit(3);
    float *b = calloc(700000, sizeof *b);
    struct capture cap;
    capture_stderr_begin(&cap);
    double t0 = now_seconds();
    enum tipc_status st = comm_allreduce(c, b, 700000, COMM_F32, COMM_SUM);
    double dt = now_seconds() - t0;
    char *err = capture_stderr_end(&cap);
    fputs(err, stderr);
    char want[64];
    snprintf(want, sizeof want, "rank %d (pid ", w - 1);
    int bad = st != TIPC_EDIST || dt > 3 || !strstr(err, want) || !strstr(err, "on this host is gone");
    free(err);
    free(b);
    comm_free(c);
    if (bad) FAILF("dead peer: status %d after %.1f s", st, dt);
    return 0;
}

/* Rank 1 skips the allreduce: rank 0's times out (1.5 s), naming the rank it waited for. */
static int scenario_skip(void) { return scenario_skip_names(1.4, "timed out waiting for rank 1"); }

/* init must fail (exit 4) and say why */
static int scenario_init_fails(void)
{
    struct comm *c;
    return init_comm(&c) ? 4 : 0;
}

static int run_scenario(const char *name)
{
    if (!strcmp(name, "exact")) return scenario_exact();
    if (!strcmp(name, "peer_dies")) return scenario_peer_dies();
    if (!strcmp(name, "skip")) return scenario_skip();
    if (!strcmp(name, "init_fails")) return scenario_init_fails();
    fprintf(stderr, "test_comm_shm: unknown scenario '%s'\n", name);
    return 2;
}

/* segments named by this test's ranks still in /dev/shm */
static int leftovers(void)
{
    DIR *d = opendir("/dev/shm");
    if (!d) return 0;
    int n = 0;
    for (struct dirent *e; (e = readdir(d));) n += !strncmp(e->d_name, "tipc-", 5);
    closedir(d);
    return n;
}

/* Run `scenario` on `world` ranks that all run on this host, as `tipc launch --nproc_per_node=W`
 * says, with --comm-shm `mode`; the variables (WANT_TRANSPORT too) are gone afterwards. */
static void run_on_one_host(int world, const char *mode, const char *scenario, int *codes, double *secs)
{
    char v[16];
    snprintf(v, sizeof v, "%d", world);
    setenv("LOCAL_WORLD_SIZE", v, 1);
    setenv("TIPC_NNODES", "1", 1);
    setenv("TIPC_COMM_SHM", mode, 1);
    run_world(world, scenario, "tok", codes, secs);
    unsetenv("LOCAL_WORLD_SIZE"), unsetenv("TIPC_NNODES"), unsetenv("TIPC_COMM_SHM"), unsetenv("WANT_TRANSPORT");
}

static void run_exact(int world, const char *mode, const char *want)
{
    int codes[8], before = leftovers();
    double secs;
    setenv("WANT_TRANSPORT", want, 1);
    run_on_one_host(world, mode, "exact", codes, &secs);
    for (int r = 0; r < world; r++) assert_int_equal(codes[r], 0);
    assert_int_equal(leftovers(), before);
}
static void test_exact_2(void **s) { (void)s; run_exact(2, "on", "shared memory"); }
static void test_exact_3(void **s) { (void)s; run_exact(3, "auto", "shared memory"); }
static void test_exact_4(void **s) { (void)s; run_exact(4, "on", "shared memory"); }
static void test_off_is_tcp(void **s) { (void)s; run_exact(2, "off", "tcp"); }

static void test_dead_peer_fails_fast(void **s)
{
    (void)s;
    int codes[8];
    double secs;
    run_on_one_host(3, "on", "peer_dies", codes, &secs);
    assert_int_equal(codes[0], 0);
    assert_int_equal(codes[1], 0);
    assert_int_equal(codes[2], 3);
    assert_true(secs < 10);
}

static void test_skipped_call_times_out(void **s)
{
    (void)s;
    int codes[8];
    double secs;
    run_on_one_host(2, "on", "skip", codes, &secs);
    assert_int_equal(codes[0], 0);
    assert_int_equal(codes[1], 0);
}

/* on, with ranks on two hosts: a usage error on every rank, with the reason */
static void test_on_needs_one_host(void **s)
{
    (void)s;
    int codes[8];
    double secs;
    setenv("TIPC_COMM_SHM", "on", 1);
    setenv("TIPC_NNODES", "2", 1);
    setenv("LOCAL_WORLD_SIZE", "1", 1);
    struct capture cap;
    capture_stderr_begin(&cap);
    run_world(2, "init_fails", "tok", codes, &secs);
    char *err = capture_stderr_end(&cap);
    unsetenv("TIPC_COMM_SHM"), unsetenv("TIPC_NNODES"), unsetenv("LOCAL_WORLD_SIZE");
    assert_int_equal(codes[0], 4);
    assert_int_equal(codes[1], 4);
    assert_non_null(strstr(err, "needs every rank on this host"));
    free(err);
}

/* /dev/shm too small (a 1 MB tmpfs over it, in this process's own mount namespace): auto falls back
 * to TCP with a note and stays exact; on is an error. Last test: the namespace stays. */
static void test_full_dev_shm(void **s)
{
    (void)s;
    if (unshare(CLONE_NEWNS) || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) ||
        mount("tmpfs", "/dev/shm", "tmpfs", 0, "size=1m")) {
        printf("SKIP: cannot mount a small tmpfs over /dev/shm here (%s)\n", strerror(errno));
        skip();
    }
    int codes[8];
    double secs;
    struct capture cap;
    capture_stderr_begin(&cap);
    run_exact(2, "auto", "tcp");
    char *err = capture_stderr_end(&cap);
    assert_non_null(strstr(err, "note: allreduce over TCP, not shared memory: cannot reserve memory for"));
    free(err);
    capture_stderr_begin(&cap);
    run_on_one_host(2, "on", "init_fails", codes, &secs);
    err = capture_stderr_end(&cap);
    assert_int_equal(codes[0], 4);
    assert_int_equal(codes[1], 4);
    assert_non_null(strstr(err, "--comm-shm on:"));
    free(err);
    assert_int_equal(leftovers(), 0);
}

int main(int argc, char **argv)
{
    if (argc == 3 && !strcmp(argv[1], "--worker")) return run_scenario(argv[2]);
    signal(SIGPIPE, SIG_IGN);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_exact_2),
        cmocka_unit_test(test_exact_3),
        cmocka_unit_test(test_exact_4),
        cmocka_unit_test(test_off_is_tcp),
        cmocka_unit_test(test_dead_peer_fails_fast),
        cmocka_unit_test(test_skipped_call_times_out),
        cmocka_unit_test(test_on_needs_one_host),
        cmocka_unit_test(test_full_dev_shm),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
