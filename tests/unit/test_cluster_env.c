/* test_cluster_env.c: the scheduler environments (runner/launch/cluster_env.c): Slurm hostlists expanded
 * as Slurm does (ranges, zero padding, several bracket groups, commas inside brackets), and each
 * scheduler's variables mapped to node count, node index, node list and master, with the variable
 * each came from; malformed or contradictory values are errors naming the variable. */
#include "testutil.h"

#include "../../runner/launch/cluster_env.h"
#include "../../core/strv.h"

static const char *const VARS[] = {
    "SLURM_JOB_NODELIST", "SLURM_NODELIST", "SLURM_STEP_NODELIST", "SLURM_NNODES", "SLURM_JOB_NUM_NODES",
    "SLURM_STEP_NUM_NODES", "SLURM_NODEID", "SLURM_PROCID", "SLURM_LOCALID", "SLURM_NTASKS", "PET_NNODES",
    "PET_NODE_RANK", "PET_MASTER_ADDR", "PET_MASTER_PORT", "PET_NPROC_PER_NODE", "MASTER_ADDR", "MASTER_PORT",
    "NODE_RANK", "PADDLE_TRAINER_ID", "PADDLE_TRAINERS", "PADDLE_NNODES", "PADDLE_MASTER", "PADDLE_RANK",
    "POD_IP", "PAI_TASK_INDEX", "PAI_CURRENT_TASK_ROLE_NAME", "PAI_TASK_ROLE_TASK_COUNT_worker",
    "PAI_TASK_ROLE_TASK_COUNT_ps", "PAI_HOST_IP_worker_0", "PAI_HOST_IP_worker_1", "TIPC_SCHEDULER",
    "SLURM_JOB_ID", NULL};

static int clear_env(void **s)
{
    (void)s;
    for (int i = 0; VARS[i]; i++) unsetenv(VARS[i]);
    return 0;
}

/* expand `s` and compare with the space-separated `want` */
static void expect_hosts(const char *s, const char *want)
{
    char **v = NULL;
    int n = 0;
    assert_int_equal(hostlist_expand("LIST", s, &v, &n), TIPC_OK);
    char *got = xstrdup("");
    for (int i = 0; i < n; i++) {
        char *t = xasprintf("%s%s%s", got, i ? " " : "", v[i]);
        free(got), got = t;
    }
    if (strcmp(got, want)) fprintf(stderr, "%s -> '%s', want '%s'\n", s, got, want);
    assert_string_equal(got, want);
    free(got);
    strv_free(v);
}

static void expect_bad(const char *s, const char *text)
{
    char **v = NULL;
    int n = 0;
    struct capture cap;
    capture_stderr_begin(&cap);
    enum tipc_status st = hostlist_expand("SLURM_JOB_NODELIST", s, &v, &n);
    char *err = capture_stderr_end(&cap);
    if (st != TIPC_EUSAGE || !strstr(err, text) || !strstr(err, "SLURM_JOB_NODELIST"))
        fprintf(stderr, "'%s': status %d, stderr %s", s, st, err);
    assert_int_equal(st, TIPC_EUSAGE);
    assert_non_null(strstr(err, text));
    free(err);
}

static void test_hostlist(void **s)
{
    (void)s;
    expect_hosts("node[1-2,5]", "node1 node2 node5");
    expect_hosts("a[01-03],b7", "a01 a02 a03 b7");
    expect_hosts("b7,a[01-03]", "b7 a01 a02 a03");
    expect_hosts("r[1-2]-n[1,3]", "r1-n1 r1-n3 r2-n1 r2-n3");
    expect_hosts("127.0.0.[1-2]", "127.0.0.1 127.0.0.2");
    expect_hosts("x[9-11]", "x9 x10 x11");
    expect_hosts("x[098-100]", "x098 x099 x100");
    expect_hosts("gpu[1-2]a,cpu[3]", "gpu1a gpu2a cpu3");
    expect_hosts("single", "single");
    expect_hosts("[1-2]", "1 2");
    expect_bad("a[1-2", "'[' without ']'");
    expect_bad("a]1", "']' without '['");
    expect_bad("a[2-1]", "range goes down");
    expect_bad("a[1-x]", "'N' or 'N-M'");
    expect_bad("a[]", "'N' or 'N-M'");
    expect_bad("a,,b", "empty name");
    expect_bad("", "empty name");
    expect_bad("a[[1]]", "nested");
    expect_bad("n[1-5000]", "more than 1024");
    expect_bad("n[1-600],m[1-600]", "more than 1024");
    expect_bad("n[1-40]-[1-40]", "more than 1024");
}

static struct cluster_place detect_ok(void)
{
    struct cluster_place c;
    assert_int_equal(cluster_detect(&c), TIPC_OK);
    return c;
}

static void detect_err(const char *text)
{
    struct cluster_place c;
    struct capture cap;
    capture_stderr_begin(&cap);
    enum tipc_status st = cluster_detect(&c);
    char *err = capture_stderr_end(&cap);
    if (st != TIPC_EUSAGE || !strstr(err, text)) fprintf(stderr, "status %d, stderr %s", st, err);
    assert_int_equal(st, TIPC_EUSAGE);
    assert_non_null(strstr(err, text));
    free(err);
}

static void test_none(void **s)
{
    (void)s;
    struct cluster_place c = detect_ok();
    assert_null(c.scheduler);
    setenv("MASTER_ADDR", "10.0.0.1", 1);   /* an outer job's MASTER_ADDR alone is no scheduler */
    c = detect_ok();
    assert_null(c.scheduler);
    setenv("SLURM_NNODES", "2", 1);
    setenv("TIPC_SCHEDULER", "none", 1);
    c = detect_ok();
    assert_null(c.scheduler);
    setenv("TIPC_SCHEDULER", "slurmish", 1);
    detect_err("TIPC_SCHEDULER='slurmish'");
}

static void test_slurm(void **s)
{
    (void)s;
    setenv("SLURM_JOB_NODELIST", "node[1-2]", 1);
    setenv("SLURM_NNODES", "2", 1);
    setenv("SLURM_NODEID", "1", 1);
    setenv("SLURM_PROCID", "0", 1);   /* NODEID wins */
    setenv("SLURM_LOCALID", "0", 1);
    setenv("PET_NNODES", "5", 1);     /* Slurm comes before torchrun */
    struct cluster_place c = detect_ok();
    assert_string_equal(c.scheduler, "Slurm");
    assert_int_equal(c.nnodes, 2);
    assert_string_equal(c.nnodes_var, "SLURM_NNODES");
    assert_int_equal(c.node_rank, 1);
    assert_string_equal(c.rank_var, "SLURM_NODEID");
    assert_int_equal(c.nhosts, 2);
    assert_string_equal(c.hosts[1], "node2");
    assert_string_equal(c.master_host, "node1");
    assert_string_equal(c.master_var, "SLURM_JOB_NODELIST");
    assert_int_equal(c.master_port, -1);
    char *d = cluster_describe(&c);
    assert_string_equal(d, "Slurm: node 1 (SLURM_NODEID) of 2 nodes (SLURM_NNODES); nodes node1,node2 "
                           "(SLURM_JOB_NODELIST); master node1 (SLURM_JOB_NODELIST)");
    free(d);
    cluster_place_free(&c);
    setenv("SLURM_JOB_ID", "123456", 1);   /* port from the job id: jobs sharing node 0 differ */
    c = detect_ok();
    assert_int_equal(c.master_port, 15000 + 3456);
    assert_string_equal(c.port_var, "SLURM_JOB_ID");
    cluster_place_free(&c);
    /* torchrun-on-Slurm scripts export MASTER_ADDR/MASTER_PORT; PROCID when one task per node */
    unsetenv("SLURM_NODEID");
    setenv("SLURM_PROCID", "1", 1);
    setenv("SLURM_NTASKS", "2", 1);
    setenv("MASTER_ADDR", "node2", 1), setenv("MASTER_PORT", "29400", 1);
    c = detect_ok();
    assert_int_equal(c.node_rank, 1);
    assert_string_equal(c.rank_var, "SLURM_PROCID");
    assert_string_equal(c.master_host, "node2");
    assert_int_equal(c.master_port, 29400);
    assert_string_equal(c.port_var, "MASTER_PORT");
    cluster_place_free(&c);
    setenv("SLURM_NTASKS", "4", 1);   /* 2 tasks per node: PROCID is no node index */
    c = detect_ok();
    assert_int_equal(c.node_rank, -1);
    cluster_place_free(&c);
    /* the step's list beats the job's (srun -N1 inside a 2-node allocation) */
    setenv("SLURM_STEP_NODELIST", "node2", 1);
    setenv("SLURM_NNODES", "1", 1);
    setenv("SLURM_NODEID", "0", 1);
    c = detect_ok();
    assert_int_equal(c.nnodes, 1);
    assert_string_equal(c.hosts_var, "SLURM_STEP_NODELIST");
    cluster_place_free(&c);
    unsetenv("SLURM_STEP_NODELIST");
    setenv("SLURM_NNODES", "3", 1);
    detect_err("SLURM_NNODES=3 but SLURM_JOB_NODELIST='node[1-2]' names 2 nodes");
    setenv("SLURM_NNODES", "2", 1);
    setenv("SLURM_LOCALID", "1", 1);
    detect_err("more than one task on this node (SLURM_LOCALID=1)");
    setenv("SLURM_LOCALID", "0", 1);
    setenv("SLURM_NODEID", "2", 1);
    detect_err("node index 2 (SLURM_NODEID) is out of range for 2 nodes (SLURM_NNODES)");
    setenv("SLURM_NODEID", "x", 1);
    detect_err("SLURM_NODEID='x' is not a number");
    setenv("SLURM_NODEID", "0", 1);
    setenv("SLURM_JOB_NODELIST", "node[1-2", 1);
    detect_err("SLURM_JOB_NODELIST='node[1-2'");
}

static void test_torchrun(void **s)
{
    (void)s;
    setenv("PET_NNODES", "2", 1);
    setenv("PET_NODE_RANK", "1", 1);
    setenv("PET_MASTER_ADDR", "trainer-master-0", 1);
    setenv("PET_MASTER_PORT", "23456", 1);
    setenv("PET_NPROC_PER_NODE", "4", 1);
    setenv("MASTER_ADDR", "other", 1);   /* PET_ first */
    struct cluster_place c = detect_ok();
    assert_string_equal(c.scheduler, "torchrun");
    assert_int_equal(c.nnodes, 2);
    assert_string_equal(c.nnodes_var, "PET_NNODES");
    assert_int_equal(c.node_rank, 1);
    assert_string_equal(c.rank_var, "PET_NODE_RANK");
    assert_string_equal(c.master_host, "trainer-master-0");
    assert_string_equal(c.master_var, "PET_MASTER_ADDR");
    assert_int_equal(c.master_port, 23456);
    assert_int_equal(c.nproc, 4);
    assert_null(c.hosts);
    cluster_place_free(&c);
    clear_env(NULL);
    setenv("NODE_RANK", "0", 1), setenv("MASTER_ADDR", "10.0.0.1", 1), setenv("MASTER_PORT", "29500", 1);
    setenv("PET_NPROC_PER_NODE", "auto", 1);   /* left to --nproc_per_node */
    c = detect_ok();
    assert_int_equal(c.node_rank, 0);
    assert_string_equal(c.rank_var, "NODE_RANK");
    assert_string_equal(c.master_var, "MASTER_ADDR");
    assert_int_equal(c.master_port, 29500);
    assert_int_equal(c.nnodes, -1);
    assert_int_equal(c.nproc, -1);
    cluster_place_free(&c);
    setenv("PET_NNODES", "3:3", 1);
    c = detect_ok();
    assert_int_equal(c.nnodes, 3);
    cluster_place_free(&c);
    setenv("PET_NNODES", "1:4", 1);
    detect_err("elastic node counts are not supported");
    setenv("PET_NNODES", "two", 1);
    detect_err("PET_NNODES='two' is not a node count");
}

static void test_paddle(void **s)
{
    (void)s;
    setenv("PADDLE_TRAINERS", "10.0.0.1,10.0.0.2", 1);
    setenv("PADDLE_TRAINER_ID", "1", 1);
    struct cluster_place c = detect_ok();
    assert_string_equal(c.scheduler, "Paddle");
    assert_int_equal(c.nnodes, 2);
    assert_string_equal(c.nnodes_var, "PADDLE_TRAINERS");
    assert_int_equal(c.node_rank, 1);
    assert_string_equal(c.rank_var, "PADDLE_TRAINER_ID");
    assert_string_equal(c.master_host, "10.0.0.1");
    cluster_place_free(&c);
    clear_env(NULL);
    setenv("PADDLE_NNODES", "2", 1);
    setenv("PADDLE_RANK", "0", 1);
    setenv("PADDLE_TRAINER_ID", "1", 1);   /* PADDLE_RANK (the launcher's node rank) first */
    setenv("PADDLE_MASTER", "10.0.0.9:8090", 1);
    c = detect_ok();
    assert_int_equal(c.node_rank, 0);
    assert_string_equal(c.rank_var, "PADDLE_RANK");
    assert_string_equal(c.master_host, "10.0.0.9");
    assert_int_equal(c.master_port, 8090);
    assert_string_equal(c.port_var, "PADDLE_MASTER");
    cluster_place_free(&c);
    setenv("PADDLE_MASTER", "10.0.0.9", 1);
    detect_err("PADDLE_MASTER='10.0.0.9' is not HOST:PORT");
    unsetenv("PADDLE_MASTER");
    setenv("PADDLE_TRAINERS", "a,b,c", 1);
    detect_err("PADDLE_NNODES=2 but PADDLE_TRAINERS='a,b,c' names 3 nodes");
}

static void test_openpai(void **s)
{
    (void)s;
    setenv("PAI_TASK_ROLE_TASK_COUNT_worker", "2", 1);
    setenv("PAI_TASK_INDEX", "1", 1);
    setenv("PAI_HOST_IP_worker_0", "10.1.0.1", 1);
    setenv("PAI_HOST_IP_worker_1", "10.1.0.2", 1);
    struct cluster_place c = detect_ok();
    assert_string_equal(c.scheduler, "OpenPAI");
    assert_int_equal(c.nnodes, 2);
    assert_int_equal(c.node_rank, 1);
    assert_string_equal(c.rank_var, "PAI_TASK_INDEX");
    assert_int_equal(c.nhosts, 2);
    assert_string_equal(c.hosts[1], "10.1.0.2");
    assert_string_equal(c.master_host, "10.1.0.1");
    cluster_place_free(&c);
    unsetenv("PAI_HOST_IP_worker_1");   /* hosts only when all are there; master still worker_0 */
    c = detect_ok();
    assert_null(c.hosts);
    assert_string_equal(c.master_host, "10.1.0.1");
    cluster_place_free(&c);
    setenv("PAI_TASK_ROLE_TASK_COUNT_ps", "1", 1);
    detect_err("2 task roles");
    setenv("PAI_CURRENT_TASK_ROLE_NAME", "worker", 1);
    c = detect_ok();
    assert_int_equal(c.nnodes, 2);
    cluster_place_free(&c);
    setenv("PAI_TASK_INDEX", "5", 1);
    detect_err("node index 5 (PAI_TASK_INDEX) is out of range for 2 nodes");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_hostlist, clear_env),
        cmocka_unit_test_setup(test_none, clear_env),
        cmocka_unit_test_setup(test_slurm, clear_env),
        cmocka_unit_test_setup(test_torchrun, clear_env),
        cmocka_unit_test_setup(test_paddle, clear_env),
        cmocka_unit_test_setup(test_openpai, clear_env),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
