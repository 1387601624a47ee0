/* comm_world.h: the harness of the collective tests (test_comm.c, test_comm_async.c): a real
 * rendezvous server in the test process (127.0.0.1) and N forked ranks that join it through the
 * launcher's environment and run one scenario (the including file's run_scenario) over Gloo/TCP.
 * Header-only (static): each test binary is one translation unit. */
#ifndef TIPC_TEST_COMM_WORLD_H
#define TIPC_TEST_COMM_WORLD_H
#include "testutil.h"

#include <signal.h>
#include <sys/wait.h>
#include <time.h>

#include "../../engine/dist/comm.h"
#include "../../runner/launch/rdzv_server.h"
#include "../../core/time.h"

/* the including test's scenarios: run one as a rank, return its exit code */
static int run_scenario(const char *name);

/* The collectives' knobs as `tipc train` passes them: its options --comm-backend, --comm-timeout,
 * --watchdog, --comm-hierarchical, --comm-shm default to these variables, which the scenarios set. */
static enum tipc_status init_comm(struct comm **c)
{
    const char *t = getenv("TIPC_COMM_TIMEOUT"), *w = getenv("TIPC_WATCHDOG"), *shm = getenv("TIPC_COMM_SHM");
    struct comm_opts o = {.backend = getenv("TIPC_COMM_BACKEND"),
                          .timeout_s = t ? (int)strtol(t, NULL, 10) : 0,
                          .watchdog_s = w ? (int)strtol(w, NULL, 10) : 0,
                          .hierarchical = getenv("TIPC_COMM_HIERARCHICAL") != NULL,
                          .shm = !shm ? COMM_SHM_AUTO : !strcmp(shm, "on") ? COMM_SHM_ON
                                                      : !strcmp(shm, "off") ? COMM_SHM_OFF : COMM_SHM_AUTO};
    return comm_init_from_env(c, &o);
}

#define FAILF(...) do { fprintf(stderr, "rank %d: ", rank); fprintf(stderr, __VA_ARGS__); fputc('\n', stderr); return 1; } while (0)

/* Rank 1 skips an allreduce (anchors #8) and sleeps 6 s: rank 0's call, with a 1.5 s timeout, must
 * fail with TIPC_EDIST after at least min_s and at most 5 s, its message naming the call (#1), the
 * step (42), rank 0, and `also` (the transport's own words; NULL: nothing more). */
static inline int scenario_skip_names(double min_s, const char *also)
{
    struct comm *c;
    if (init_comm(&c)) return 4;
    int rank = comm_rank(c);
    comm_set_timeout(c, 1500);
    comm_set_step(c, 42);
    if (rank == 1) {
        usleep(6 * 1000 * 1000);
        comm_free(c);
        return 0;
    }
    float b[16] = {0};
    struct capture cap;
    capture_stderr_begin(&cap);
    double t0 = now_seconds();
    enum tipc_status st = comm_allreduce(c, b, 16, COMM_F32, COMM_SUM);
    double dt = now_seconds() - t0;
    char *err = capture_stderr_end(&cap);
    fputs(err, stderr);
    int bad = st != TIPC_EDIST || dt < min_s || dt > 5 || !strstr(err, "allreduce #1") || !strstr(err, "step 42") ||
              !strstr(err, "rank 0") || (also && !strstr(err, also));
    free(err);
    comm_free(c);
    if (bad) FAILF("skipped allreduce: status %d after %.1f s", st, dt);
    return 0;
}

/* ---- harness: a server here, N forked ranks -------------------------------------------------- */
static void child(int rank, int world, int rfd, const char *scenario, const char *token)
{
    int port = 0;
    if (read(rfd, &port, sizeof port) != sizeof port) _exit(99);
    char v[32];
    snprintf(v, sizeof v, "%d", rank), setenv("RANK", v, 1);
    snprintf(v, sizeof v, "%d", world), setenv("WORLD_SIZE", v, 1);
    snprintf(v, sizeof v, "%d", port), setenv("MASTER_PORT", v, 1);
    setenv("MASTER_ADDR", "127.0.0.1", 1);
    setenv("TIPC_NODE_IP", "127.0.0.1", 1);
    setenv("TIPC_JOB_ID", "unit", 1);
    setenv("TIPC_JOB_TOKEN", token, 1);
    setenv("TIPC_COMM_TIMEOUT", "20", 1);
    const char *lw = getenv("LOCAL_WORLD_SIZE");
    int L = lw ? (int)strtol(lw, NULL, 10) : 1;
    if (L < 1) L = 1;
    snprintf(v, sizeof v, "%d", rank % L), setenv("LOCAL_RANK", v, 1);
    snprintf(v, sizeof v, "%d", rank / L), setenv("TIPC_NODE_RANK", v, 1);
    fflush(stdout);
    int rc = run_scenario(scenario);
    fflush(stdout);
    fflush(stderr);
    _exit(rc);
}

/* Run `scenario` on `world` ranks; codes[r] = exit code of rank r (signals as 128+N). */
static char *last_notice;   /* the job's failure notice after run_world, if any (owned) */

static void run_world(int world, const char *scenario, const char *child_token, int *codes, double *secs)
{
    pid_t pids[8];
    int fds[8];
    for (int r = 0; r < world; r++) {
        int p[2];
        assert_int_equal(pipe(p), 0);
        fflush(stdout), fflush(stderr);
        pids[r] = fork();
        if (pids[r] == 0) {
            close(p[1]);
            child(r, world, p[0], scenario, child_token);
        }
        close(p[0]);
        fds[r] = p[1];
    }
    struct rdzv_server *S = NULL;
    assert_int_equal(rdzv_server_start(&S, "127.0.0.1", 0, "unit", "tok"), TIPC_OK);
    int port = rdzv_server_port(S);
    double t0 = now_seconds();
    for (int r = 0; r < world; r++) {
        assert_int_equal(write(fds[r], &port, sizeof port), sizeof port);
        close(fds[r]);
    }
    for (int r = 0; r < world; r++) {
        int st = 0;
        waitpid(pids[r], &st, 0);
        codes[r] = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
    }
    *secs = now_seconds() - t0;
    free(last_notice);
    last_notice = NULL;
    struct rdzv_client cl;
    bool found = false;
    rdzv_client_init(&cl, "127.0.0.1", port, "unit", "tok", "test");
    rdzv_get(&cl, "fail", 0, false, &found, &last_notice, NULL);
    rdzv_client_free(&cl);
    rdzv_server_stop(S);
}

#endif
