/* test_launch_watchdog.c: node 0's verdict on the job's heartbeats (runner/launch/watchdog.c), on
 * made-up alive/N values: a silent rank, a rank that has not reached the collective the others wait
 * in, every rank in the same collective, and a healthy job (no verdict). */
#include "testutil.h"

#include "../../runner/launch/internal.h"

static struct launch_opts opts(int nnodes, int nproc)
{
    struct launch_opts o = {0};
    o.nnodes = nnodes, o.nproc = nproc;
    return o;
}

static void test_silent_rank_is_named(void **s)
{
    (void)s;
    struct launch_opts o = opts(2, 1);
    /* rank,pid,seq,op,step,secs,age,state */
    char *alive[] = {"0,100,12,allreduce,40,9.0,0.3,S", "1,200,11,-,40,0.5,9.5,T"};
    char *m = watchdog_verdict(&o, alive, 5);
    assert_non_null(m);
    assert_non_null(strstr(m, "stuck: rank 1 (node 1, pid 200) sent no heartbeat for 10 s, process stopped (SIGSTOP"));
    assert_non_null(strstr(m, "last seen computing at step 40"));
    assert_non_null(strstr(m, "waiting: rank 0 in allreduce #12 (step 40) for 9 s"));
    free(m);
}

static void test_rank_not_in_the_collective_is_named(void **s)
{
    (void)s;
    struct launch_opts o = opts(2, 2);
    char *alive[] = {"0,100,7,barrier,3,6.0,0.2,S 1,101,7,barrier,3,6.1,0.1,S",
                     "2,200,7,barrier,3,6.0,0.4,S 3,201,6,-,3,6.5,0.3,R"};
    char *m = watchdog_verdict(&o, alive, 5);
    assert_non_null(m);
    assert_non_null(strstr(m, "stuck: rank 3 (node 1, pid 201) has not reached collective #7: process running, "
                              "last seen computing at step 3"));
    assert_null(strstr(m, "rank 0 (node"));
    free(m);
}

static void test_all_in_one_collective_blames_the_transport(void **s)
{
    (void)s;
    struct launch_opts o = opts(2, 1);
    char *alive[] = {"0,100,3,allgather,1,8.0,0.2,S", "1,200,3,allgather,1,8.0,0.2,S"};
    char *m = watchdog_verdict(&o, alive, 5);
    assert_non_null(m);
    assert_non_null(strstr(m, "every rank waits in the same collective"));
    free(m);
}

static void test_healthy_or_unknown_is_no_verdict(void **s)
{
    (void)s;
    struct launch_opts o = opts(2, 1);
    char *ok[] = {"0,100,3,allreduce,1,0.2,0.2,S", "1,200,3,-,1,1.0,0.4,R"};
    assert_null(watchdog_verdict(&o, ok, 5));
    char *none[] = {NULL, "-"};
    assert_null(watchdog_verdict(&o, none, 5));
    char *junk[] = {"garbage ,,, 1,2", "9999999999999999999,x"};
    assert_null(watchdog_verdict(&o, junk, 5));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_silent_rank_is_named),
        cmocka_unit_test(test_rank_not_in_the_collective_is_named),
        cmocka_unit_test(test_all_in_one_collective_blames_the_transport),
        cmocka_unit_test(test_healthy_or_unknown_is_no_verdict),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
