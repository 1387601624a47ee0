/* test_rendezvous.c: the HTTP KV store with a real server on 127.0.0.1 and real libcurl clients
 * (threads in this process): put/get, long-poll wait, create-only, tokens, jobs, ports. */
#include "testutil.h"

#include <pthread.h>
#include <time.h>

#include "../../runner/launch/rdzv_server.h"
#include "../../core/time.h"

static struct rdzv_server *start(void)
{
    struct rdzv_server *S = NULL;
    assert_int_equal(rdzv_server_start(&S, "127.0.0.1", 0, "job1", "tok"), TIPC_OK);
    assert_true(rdzv_server_port(S) > 0);
    return S;
}

static void test_put_get(void **state)
{
    (void)state;
    struct rdzv_server *S = start();
    struct rdzv_client c;
    assert_int_equal(rdzv_client_init(&c, "127.0.0.1", rdzv_server_port(S), "job1", "tok", "test"), TIPC_OK);
    bool found = true;
    char *v = NULL;
    size_t n = 0;
    assert_int_equal(rdzv_get(&c, "node/0", 0, false, &found, &v, &n), TIPC_OK);
    assert_false(found);
    assert_true(rdzv_server_key_age(S, "node/0") < 0);
    const char bin[5] = {'a', 0, 'b', '/', 'c'};
    assert_int_equal(rdzv_put(&c, "node/0", bin, 5, false, NULL), TIPC_OK);
    assert_int_equal(rdzv_get(&c, "node/0", 0, false, &found, &v, &n), TIPC_OK);
    assert_true(found);
    assert_int_equal(n, 5);
    assert_memory_equal(v, bin, 5);
    free(v);
    double age = rdzv_server_key_age(S, "node/0");
    assert_true(age >= 0 && age < 5);
    /* key with odd characters survives escaping */
    assert_int_equal(rdzv_put(&c, "gloo/a b?c&d", "x", 1, false, NULL), TIPC_OK);
    assert_int_equal(rdzv_get(&c, "gloo/a b?c&d", 0, false, &found, &v, &n), TIPC_OK);
    assert_true(found);
    assert_string_equal(v, "x");
    free(v);
    rdzv_client_free(&c);
    rdzv_server_stop(S);
}

/* A restarted job's round K addresses its keys under rK/: a round never reads another's. */
static void test_rounds_keep_keys_apart(void **state)
{
    (void)state;
    struct rdzv_server *S = start();
    struct rdzv_client c;
    assert_int_equal(rdzv_client_init(&c, "127.0.0.1", rdzv_server_port(S), "job1", "tok", "test"), TIPC_OK);
    bool found = false, created = false;
    char *v = NULL;
    assert_int_equal(rdzv_put(&c, "fail", "round 0", 7, true, &created), TIPC_OK);
    rdzv_client_set_round(&c, 1);
    assert_int_equal(rdzv_get(&c, "fail", 0, false, &found, &v, NULL), TIPC_OK);
    assert_false(found);   /* round 0's notice is not round 1's */
    assert_int_equal(rdzv_put(&c, "fail", "round 1", 7, true, &created), TIPC_OK);
    assert_true(created);
    char *s0 = rdzv_server_get_copy(S, "fail"), *s1 = rdzv_server_get_copy(S, "r1/fail");
    assert_string_equal(s0, "round 0");
    assert_string_equal(s1, "round 1");
    free(s0), free(s1);
    rdzv_client_set_round(&c, 2);
    rdzv_client_set_round(&c, 0);   /* back to the unprefixed keys */
    assert_int_equal(rdzv_get(&c, "fail", 0, false, &found, &v, NULL), TIPC_OK);
    assert_true(found);
    assert_string_equal(v, "round 0");
    free(v);
    rdzv_client_free(&c);
    rdzv_server_stop(S);
}

static void test_create_only_keeps_first(void **state)
{
    (void)state;
    struct rdzv_server *S = start();
    struct rdzv_client c;
    rdzv_client_init(&c, "127.0.0.1", rdzv_server_port(S), "job1", "tok", "test");
    bool created = false, found;
    char *v;
    assert_int_equal(rdzv_put(&c, "fail", "first", 5, true, &created), TIPC_OK);
    assert_true(created);
    assert_int_equal(rdzv_put(&c, "fail", "second", 6, true, &created), TIPC_OK);
    assert_false(created);
    assert_int_equal(rdzv_get(&c, "fail", 0, false, &found, &v, NULL), TIPC_OK);
    assert_string_equal(v, "first");
    free(v);
    rdzv_client_free(&c);
    rdzv_server_stop(S);
}

struct later { int port; int delay_ms; };
static void *put_later(void *arg)
{
    struct later *l = arg;
    struct rdzv_client c;
    rdzv_client_init(&c, "127.0.0.1", l->port, "job1", "tok", "writer");
    usleep((useconds_t)l->delay_ms * 1000);
    rdzv_put(&c, "late", "here", 4, false, NULL);
    rdzv_client_free(&c);
    return NULL;
}

static void test_wait_wakes_on_put(void **state)
{
    (void)state;
    struct rdzv_server *S = start();
    struct later l = {rdzv_server_port(S), 300};
    pthread_t th;
    pthread_create(&th, NULL, put_later, &l);
    struct rdzv_client c;
    rdzv_client_init(&c, "127.0.0.1", l.port, "job1", "tok", "reader");
    double t0 = now_seconds();
    bool found;
    char *v = NULL;
    assert_int_equal(rdzv_get(&c, "late", 10000, false, &found, &v, NULL), TIPC_OK);
    double dt = now_seconds() - t0;
    assert_true(found);
    assert_string_equal(v, "here");
    assert_true(dt >= 0.25 && dt < 5);   /* woke on the put, not at the 10 s deadline */
    free(v);
    pthread_join(th, NULL);
    /* a missing key comes back after the wait, not before and not forever */
    t0 = now_seconds();
    assert_int_equal(rdzv_get(&c, "never", 400, false, &found, NULL, NULL), TIPC_OK);
    dt = now_seconds() - t0;
    assert_false(found);
    assert_true(dt >= 0.35 && dt < 3);
    rdzv_client_free(&c);
    rdzv_server_stop(S);
}

static void test_wrong_token_is_403_with_hint(void **state)
{
    (void)state;
    struct rdzv_server *S = start();
    struct rdzv_client c;
    rdzv_client_init(&c, "127.0.0.1", rdzv_server_port(S), "job1", "WRONG", "rank 3");
    struct capture cap;
    capture_stderr_begin(&cap);
    enum tipc_status st = rdzv_put(&c, "k", "v", 1, false, NULL);
    char *err = capture_stderr_end(&cap);
    assert_int_equal(st, TIPC_EDIST);
    assert_non_null(strstr(err, "rank 3"));
    assert_non_null(strstr(err, "refused the job token"));
    assert_non_null(strstr(err, "TIPC_JOB_TOKEN"));
    free(err);
    bool found;
    capture_stderr_begin(&cap);
    st = rdzv_get(&c, "k", 0, false, &found, NULL, NULL);
    free(capture_stderr_end(&cap));
    assert_int_equal(st, TIPC_EDIST);
    rdzv_client_free(&c);
    /* the value was not stored */
    assert_true(rdzv_server_key_age(S, "k") < 0);
    rdzv_server_stop(S);
}

static void test_other_job_is_rejected(void **state)
{
    (void)state;
    struct rdzv_server *S = start();
    struct rdzv_client c;
    rdzv_client_init(&c, "127.0.0.1", rdzv_server_port(S), "job2", "tok", "node 1");
    struct capture cap;
    capture_stderr_begin(&cap);
    enum tipc_status st = rdzv_put(&c, "k", "v", 1, false, NULL);
    char *err = capture_stderr_end(&cap);
    assert_int_equal(st, TIPC_EDIST);
    assert_non_null(strstr(err, "unknown job"));
    free(err);
    rdzv_client_free(&c);
    rdzv_server_stop(S);
}

static void test_port_in_use(void **state)
{
    (void)state;
    struct rdzv_server *S = start(), *S2 = NULL;
    int port = rdzv_server_port(S);
    struct capture cap;
    capture_stderr_begin(&cap);
    enum tipc_status st = rdzv_server_start(&S2, "127.0.0.1", port, "job1", "tok");
    char *err = capture_stderr_end(&cap);
    assert_int_equal(st, TIPC_EDIST);
    char want[64];
    snprintf(want, sizeof want, "port %d in use", port);
    assert_non_null(strstr(err, want));
    assert_non_null(strstr(err, "hint:"));
    free(err);
    /* two servers on port 0 get different ports (two jobs on one host) */
    assert_int_equal(rdzv_server_start(&S2, "127.0.0.1", 0, "job2", "tok2"), TIPC_OK);
    assert_int_not_equal(rdzv_server_port(S2), port);
    rdzv_server_stop(S2);
    rdzv_server_stop(S);
}

static void test_unreachable_server_fails_fast(void **state)
{
    (void)state;
    struct rdzv_server *S = start();
    int port = rdzv_server_port(S);
    rdzv_server_stop(S);   /* nothing listens there now */
    struct rdzv_client c;
    rdzv_client_init(&c, "127.0.0.1", port, "job1", "tok", "rank 1");
    struct capture cap;
    capture_stderr_begin(&cap);
    double t0 = now_seconds();
    bool found;
    enum tipc_status st = rdzv_get(&c, "k", 5000, false, &found, NULL, NULL);
    double dt = now_seconds() - t0;
    char *err = capture_stderr_end(&cap);
    assert_int_equal(st, TIPC_EDIST);
    assert_true(dt < 4);
    assert_non_null(strstr(err, "rank 1: cannot reach the rendezvous server"));
    free(err);
    rdzv_client_free(&c);
}

static void *get_forever(void *arg)
{
    int *port = arg;
    struct rdzv_client c;
    rdzv_client_init(&c, "127.0.0.1", *port, "job1", "tok", "waiter");
    bool found = true;
    rdzv_get(&c, "never", 60000, true, &found, NULL, NULL);
    rdzv_client_free(&c);
    return (void *)(intptr_t)found;
}

static void test_stop_wakes_waiters(void **state)
{
    (void)state;
    struct rdzv_server *S = start();
    int port = rdzv_server_port(S);
    pthread_t th;
    pthread_create(&th, NULL, get_forever, &port);
    usleep(200 * 1000);
    double t0 = now_seconds();
    rdzv_server_stop(S);
    void *ret;
    pthread_join(th, &ret);
    assert_true(now_seconds() - t0 < 5);
    assert_int_equal((intptr_t)ret, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_put_get),
        cmocka_unit_test(test_rounds_keep_keys_apart),
        cmocka_unit_test(test_create_only_keeps_first),
        cmocka_unit_test(test_wait_wakes_on_put),
        cmocka_unit_test(test_wrong_token_is_403_with_hint),
        cmocka_unit_test(test_other_job_is_rejected),
        cmocka_unit_test(test_port_in_use),
        cmocka_unit_test(test_unreachable_server_fails_fast),
        cmocka_unit_test(test_stop_wakes_waiters),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
