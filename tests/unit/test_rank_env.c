/* test_rank_env.c: which launcher started a rank (engine/dist/rank_env.h), from the variables each
 * real launcher sets (torchrun 2.15's, paddle.distributed.launch 3.3's and srun 22.05's, as seen in
 * their workers' environments; Open MPI's and MPICH's documented names), and every malformed value
 * a usage error naming its variable. */
#include "testutil.h"

#include "../../engine/dist/rank_env.h"

static const char *const names[] = {
    "TORCHELASTIC_RUN_ID", "TORCHELASTIC_USE_AGENT_STORE", "TORCHELASTIC_RESTART_COUNT", "RANK", "WORLD_SIZE",
    "LOCAL_RANK", "LOCAL_WORLD_SIZE", "GROUP_RANK", "GROUP_WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT",
    "TIPC_JOB_TOKEN", "TIPC_NODE_RANK", "TIPC_NNODES", "TIPC_RESTART_COUNT", "PADDLE_TRAINER_ID",
    "PADDLE_TRAINERS_NUM", "PADDLE_TRAINER_ENDPOINTS", "PADDLE_MASTER", "PADDLE_LOCAL_RANK", "PADDLE_LOCAL_SIZE",
    "PADDLE_NNODES", "PADDLE_GLOBAL_RANK", "PADDLE_GLOBAL_SIZE", "PADDLE_RANK_IN_NODE", "OMPI_COMM_WORLD_RANK",
    "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_RANK", "OMPI_COMM_WORLD_LOCAL_SIZE", "PMI_RANK", "PMI_SIZE",
    "SLURM_STEP_NUM_TASKS", "SLURM_PROCID", "SLURM_LOCALID", "SLURM_NODEID", "SLURM_STEP_NUM_NODES", "SLURM_NNODES",
    "SLURM_STEP_TASKS_PER_NODE", "SLURM_STEP_NODELIST", "SLURM_JOB_NODELIST", "SLURM_JOB_ID", "TIPC_SCHEDULER",
};

/* Clear every launcher variable, then set "NAME=VALUE" items (NULL-terminated). */
static void env_is(const char *first, ...)
{
    for (size_t i = 0; i < sizeof names / sizeof *names; i++) unsetenv(names[i]);
    va_list ap;
    va_start(ap, first);
    for (const char *kv = first; kv; kv = va_arg(ap, const char *)) {
        const char *eq = strchr(kv, '=');
        char name[64];
        snprintf(name, sizeof name, "%.*s", (int)(eq - kv), kv);
        setenv(name, eq + 1, 1);
    }
    va_end(ap);
}

static void read_ok(struct rank_env *e)
{
    assert_int_equal(rank_env_read(e), TIPC_OK);
}

/* A usage error whose message contains `names_it`. */
static void read_bad(const char *names_it)
{
    struct rank_env e;
    struct capture cap;
    capture_stderr_begin(&cap);
    enum tipc_status st = rank_env_read(&e);
    char *err = capture_stderr_end(&cap);
    if (st != TIPC_EUSAGE || !strstr(err, names_it)) fprintf(stderr, "status %d, message: %s", st, err);
    assert_int_equal(st, TIPC_EUSAGE);
    assert_non_null(strstr(err, names_it));
    free(err);
}

static void test_torchrun(void **s)
{
    (void)s;
    struct rank_env e;
    env_is("TORCHELASTIC_RUN_ID=none", "TORCHELASTIC_USE_AGENT_STORE=True", "RANK=3", "WORLD_SIZE=4", "LOCAL_RANK=1",
           "LOCAL_WORLD_SIZE=2", "GROUP_RANK=1", "GROUP_WORLD_SIZE=2", "MASTER_ADDR=127.0.0.1", "MASTER_PORT=29500",
           "TORCHELASTIC_RESTART_COUNT=1", "TIPC_JOB_TOKEN=exported-for-tipc-launch", NULL);
    read_ok(&e);
    assert_string_equal(e.launcher, "torchrun");   /* the token exported for tipc launch does not fool it */
    assert_int_equal(e.store, RANK_STORE_C10D);
    assert_true(e.rank == 3 && e.world == 4 && e.local_rank == 1 && e.local_world == 2 && e.node == 1 && e.nnodes == 2);
    assert_string_equal(e.host, "127.0.0.1");
    assert_int_equal(e.port, 29500);
    assert_int_equal(e.restart, 1);
    assert_string_equal(rank_env_describe(&e), "torchrun, c10d store at 127.0.0.1:29500");
    setenv("TORCHELASTIC_USE_AGENT_STORE", "False", 1);   /* the agent runs none: rank 0 serves it */
    read_ok(&e);
    assert_int_equal(e.store, RANK_STORE_C10D_HOST);
}

static void test_tipc_launch(void **s)
{
    (void)s;
    struct rank_env e;
    env_is("TIPC_JOB_TOKEN=t", "TIPC_NODE_RANK=1", "TIPC_NNODES=2", "RANK=3", "WORLD_SIZE=4", "LOCAL_RANK=1",
           "LOCAL_WORLD_SIZE=2", "MASTER_ADDR=10.0.0.1", "MASTER_PORT=6170", "PADDLE_TRAINER_ID=3",
           "PADDLE_TRAINERS_NUM=4", "PADDLE_TRAINER_ENDPOINTS=10.0.0.1:6170", NULL);
    read_ok(&e);
    assert_string_equal(e.launcher, "tipc launch");
    assert_int_equal(e.store, RANK_STORE_HTTP);
    assert_true(e.rank == 3 && e.world == 4 && e.node == 1 && e.nnodes == 2 && e.port == 6170);
}

static void test_paddle(void **s)
{
    (void)s;
    struct rank_env e;
    env_is("PADDLE_TRAINER_ID=1", "PADDLE_TRAINERS_NUM=2", "PADDLE_GLOBAL_RANK=1", "PADDLE_GLOBAL_SIZE=2",
           "PADDLE_LOCAL_RANK=0", "PADDLE_LOCAL_SIZE=1", "PADDLE_NNODES=2", "PADDLE_MASTER=127.0.0.1:36674",
           "PADDLE_TRAINER_ENDPOINTS=127.0.0.1:36675,127.0.0.2:43505", NULL);
    read_ok(&e);
    assert_string_equal(e.launcher, "Paddle");
    assert_int_equal(e.store, RANK_STORE_C10D_HOST);
    assert_true(e.rank == 1 && e.world == 2 && e.node == 1 && e.nnodes == 2);
    assert_string_equal(e.host, "127.0.0.1");
    assert_int_equal(e.port, 36674);
    unsetenv("PADDLE_MASTER");   /* launched with --ips: rank 0's own endpoint */
    setenv("PADDLE_TRAINER_ENDPOINTS", "[fd00::1]:6170,[fd00::2]:6170", 1);
    read_ok(&e);
    assert_string_equal(e.host, "fd00::1");
    assert_int_equal(e.port, 6170);
    setenv("PADDLE_TRAINER_ENDPOINTS", "nohost", 1);
    read_bad("PADDLE_TRAINER_ENDPOINTS='nohost'");
    unsetenv("PADDLE_TRAINER_ENDPOINTS");
    setenv("PADDLE_MASTER", "127.0.0.1:0", 1);
    read_bad("PADDLE_MASTER");
}

static void test_mpirun(void **s)
{
    (void)s;
    struct rank_env e;
    env_is("OMPI_COMM_WORLD_RANK=1", "OMPI_COMM_WORLD_SIZE=2", "OMPI_COMM_WORLD_LOCAL_RANK=1",
           "OMPI_COMM_WORLD_LOCAL_SIZE=2", "MASTER_PORT=29500", NULL);
    read_ok(&e);
    assert_string_equal(e.launcher, "mpirun");
    assert_int_equal(e.store, RANK_STORE_C10D_HOST);
    assert_string_equal(e.host, "127.0.0.1");   /* every rank on this host */
    assert_true(e.rank == 1 && e.world == 2 && e.local_world == 2 && e.nnodes == 1);
    setenv("OMPI_COMM_WORLD_LOCAL_SIZE", "1", 1);   /* ranks on other hosts: the address must be given */
    read_bad("MASTER_ADDR is not set");
    env_is("PMI_RANK=0", "PMI_SIZE=3", "MASTER_ADDR=node1", "MASTER_PORT=29500", NULL);
    read_ok(&e);
    assert_true(e.rank == 0 && e.world == 3);
    assert_string_equal(e.host, "node1");
    setenv("PMI_SIZE", "three", 1);
    read_bad("PMI_SIZE='three'");
}

static void test_slurm(void **s)
{
    (void)s;
    struct rank_env e;
    env_is("SLURM_STEP_NUM_TASKS=4", "SLURM_PROCID=3", "SLURM_LOCALID=1", "SLURM_NODEID=1", "SLURM_STEP_NUM_NODES=2",
           "SLURM_STEP_TASKS_PER_NODE=2(x2)", "SLURM_STEP_NODELIST=n[01-02]", "SLURM_JOB_NODELIST=n[01-02]",
           "SLURM_JOB_ID=70123", NULL);
    read_ok(&e);
    assert_string_equal(e.launcher, "Slurm");
    assert_true(e.rank == 3 && e.world == 4 && e.local_rank == 1 && e.local_world == 2 && e.node == 1 && e.nnodes == 2);
    assert_string_equal(e.host, "n01");
    assert_int_equal(e.port, 15000 + 70123 % 10000);
    setenv("SLURM_STEP_NODELIST", "r[1-2]-n[1,3],b7", 1);
    setenv("SLURM_STEP_TASKS_PER_NODE", "1,3", 1);
    read_ok(&e);
    assert_string_equal(e.host, "r1-n1");
    assert_int_equal(e.local_world, 3);
    setenv("MASTER_ADDR", "10.0.0.9", 1), setenv("MASTER_PORT", "29999", 1);
    read_ok(&e);
    assert_string_equal(e.host, "10.0.0.9");
    assert_int_equal(e.port, 29999);
    setenv("SLURM_STEP_TASKS_PER_NODE", "two", 1);
    read_bad("SLURM_STEP_TASKS_PER_NODE='two'");
    env_is("SLURM_STEP_NUM_TASKS=4", "SLURM_PROCID=3", "TIPC_SCHEDULER=none", NULL);   /* an outer step's variables */
    read_ok(&e);
    assert_int_equal(e.world, 1);
    env_is("SLURM_STEP_NUM_TASKS=1", "SLURM_PROCID=0", NULL);   /* srun -n1: one process */
    read_ok(&e);
    assert_int_equal(e.world, 1);
    assert_int_equal(e.store, RANK_STORE_NONE);
}

static void test_env_init(void **s)
{
    (void)s;
    struct rank_env e;
    env_is("RANK=1", "WORLD_SIZE=2", "MASTER_ADDR=pytorchjob-master-0", "MASTER_PORT=23456", NULL);   /* PyTorchJob */
    read_ok(&e);
    assert_string_equal(e.launcher, "env://");
    assert_int_equal(e.store, RANK_STORE_C10D_HOST);
    assert_string_equal(rank_env_describe(&e), "env://, c10d store at pytorchjob-master-0:23456 (served by rank 0)");
    env_is(NULL);
    read_ok(&e);
    assert_null(e.launcher);
    assert_true(e.world == 1 && e.rank == 0 && e.store == RANK_STORE_NONE);
    env_is("RANK=0", NULL);   /* rank 0 of one, as some shells leave it */
    read_ok(&e);
    assert_int_equal(e.world, 1);
}

static void test_malformed(void **s)
{
    (void)s;
    env_is("WORLD_SIZE=abc", NULL);
    read_bad("WORLD_SIZE='abc'");
    env_is("WORLD_SIZE=2", "RANK=2", "MASTER_ADDR=h", "MASTER_PORT=1", NULL);
    read_bad("RANK='2'");
    env_is("WORLD_SIZE=2", "RANK=-1", "MASTER_ADDR=h", "MASTER_PORT=1", NULL);
    read_bad("RANK='-1'");
    env_is("WORLD_SIZE=2", "RANK=1", "MASTER_ADDR=h", "MASTER_PORT=99999", NULL);
    read_bad("MASTER_PORT='99999'");
    env_is("WORLD_SIZE=2", NULL);
    read_bad("RANK is not set");
    env_is("RANK=3", NULL);
    read_bad("WORLD_SIZE");
    env_is("WORLD_SIZE=2", "RANK=1", "MASTER_ADDR=h", NULL);
    read_bad("MASTER_PORT is not set");
    env_is("TORCHELASTIC_RUN_ID=x", "RANK=0", "WORLD_SIZE=2", "MASTER_ADDR=h", "MASTER_PORT=1", "LOCAL_RANK=x", NULL);
    read_bad("LOCAL_RANK='x'");
    env_is(NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_torchrun), cmocka_unit_test(test_tipc_launch), cmocka_unit_test(test_paddle),
        cmocka_unit_test(test_mpirun), cmocka_unit_test(test_slurm), cmocka_unit_test(test_env_init),
        cmocka_unit_test(test_malformed),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
