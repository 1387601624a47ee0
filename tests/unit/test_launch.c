/* test_launch.c: `tipc launch` option parsing and node/master resolution (runner/launch/node.c):
 * Paddle's and torchrun's spellings, the precedence of flags and scheduler env (OpenPAI, Slurm,
 * torchrun), address matching against --ips, and the errors for every ambiguous case. The running
 * part is covered by tests/e2e/test_launch_*.sh with real processes. */
#include "testutil.h"

#include "../../runner/cmds.h"     /* defines: cmd_exists (what cmd_launch.c passes) */
#include "../../runner/launch/launch.h"

static const char *const ENVS[] = {"POD_IP", "PAI_TASK_INDEX", "PAI_HOST_IP_worker_0", "SLURM_NODEID",
                                   "SLURM_PROCID", "NODE_RANK", "MASTER_ADDR", "MASTER_PORT", "TIPC_MASTER",
                                   "TIPC_JOB_ID", "TIPC_JOB_TOKEN", "SLURM_JOB_NODELIST", "SLURM_NNODES",
                                   "SLURM_LOCALID", "SLURM_NTASKS", "PET_NNODES", "PET_NODE_RANK",
                                   "PET_MASTER_ADDR", "PET_MASTER_PORT", "PET_NPROC_PER_NODE", "PADDLE_TRAINERS",
                                   "PADDLE_TRAINER_ID", "PADDLE_NNODES", "PADDLE_RANK", "PADDLE_MASTER",
                                   "TIPC_SCHEDULER", NULL};
static int clear_env(void **s)
{
    (void)s;
    for (int i = 0; ENVS[i]; i++) unsetenv(ENVS[i]);
    setenv("TIPC_JOB_TOKEN", "unit-test-secret-0123456789", 1);   /* several hosts need a secret (launch/secret.c) */
    return 0;
}

/* parse + resolve argv (NULL-terminated); returns the status, output (and stderr) in o / *err */
static enum tipc_status run(struct launch_opts *o, char **err, const char **argv)
{
    int argc = 0;
    while (argv[argc]) argc++;
    struct capture cap;
    capture_stderr_begin(&cap);
    enum tipc_status st = launch_parse(o, argc, (char **)argv, cmd_exists);
    if (!st) st = launch_resolve(o);
    char *e = capture_stderr_end(&cap);
    if (err) *err = e;
    else free(e);
    return st;
}

static void test_paddle_flags(void **s)
{
    (void)s;
    struct launch_opts o;
    const char *argv[] = {"launch", "--ips=127.0.0.1,10.9.9.9", "--gpus", "2,3", "--log_dir=L", "--job_id=j1",
                          "train", "-c", "x.yaml", NULL};
    assert_int_equal(run(&o, NULL, argv), TIPC_OK);
    assert_int_equal(o.nnodes, 2);
    assert_int_equal(o.nproc, 2);
    assert_int_equal(o.gpus[0], 2);
    assert_int_equal(o.gpus[1], 3);
    assert_int_equal(o.node_rank, 0);          /* 127.0.0.1 is an interface address */
    assert_string_equal(o.master_host, "127.0.0.1");
    assert_int_equal(o.master_port, LAUNCH_DEFAULT_PORT);
    assert_string_equal(o.self_ip, "127.0.0.1");
    assert_string_equal(o.log_dir, "L");
    assert_true(o.is_subcommand);
    assert_int_equal(o.ncmd, 3);
    assert_string_equal(o.cmd[2], "x.yaml");
    assert_string_equal(o.token, "unit-test-secret-0123456789");   /* several hosts: the secret given */
    launch_opts_free(&o);
    unsetenv("TIPC_JOB_TOKEN");   /* and none at all: refused, never derived */
    char *err = NULL;
    assert_int_equal(run(&o, &err, argv), TIPC_EUSAGE);
    assert_non_null(strstr(err, "a job over several hosts needs a shared secret"));
    free(err);
    launch_opts_free(&o);
}

static void test_torchrun_spellings(void **s)
{
    (void)s;
    struct launch_opts o;
    const char *argv[] = {"launch", "--nnodes", "3", "--nproc-per-node=4", "--node-rank=2", "--master-addr=10.1.2.3",
                          "--master-port", "29500", "--rdzv-id=abc", "/bin/true", NULL};
    assert_int_equal(run(&o, NULL, argv), TIPC_OK);
    assert_int_equal(o.nnodes, 3);
    assert_int_equal(o.nproc, 4);
    assert_int_equal(o.node_rank, 2);
    assert_string_equal(o.master_host, "10.1.2.3");
    assert_int_equal(o.master_port, 29500);
    assert_string_equal(o.job_id, "abc");
    assert_false(o.is_subcommand);
    launch_opts_free(&o);
    const char *argv2[] = {"launch", "--nnodes=2", "--node_rank=1", "--rdzv-endpoint=[::1]:7000", "true", NULL};
    assert_int_equal(run(&o, NULL, argv2), TIPC_OK);
    assert_string_equal(o.master_host, "::1");
    assert_int_equal(o.master_port, 7000);
    launch_opts_free(&o);
}

static void test_scheduler_env(void **s)
{
    (void)s;
    struct launch_opts o;
    const char *argv[] = {"launch", "--ips=10.0.0.1,10.0.0.2,10.0.0.3", "true", NULL};
    setenv("PAI_TASK_INDEX", "2", 1);
    setenv("PAI_HOST_IP_worker_0", "10.0.0.1", 1);
    assert_int_equal(run(&o, NULL, argv), TIPC_OK);
    assert_int_equal(o.node_rank, 2);
    assert_string_equal(o.self_ip, "10.0.0.3");
    launch_opts_free(&o);
    unsetenv("PAI_TASK_INDEX");
    setenv("SLURM_NODEID", "1", 1);
    assert_int_equal(run(&o, NULL, argv), TIPC_OK);
    assert_int_equal(o.node_rank, 1);
    launch_opts_free(&o);
    setenv("POD_IP", "10.0.0.2", 1);   /* POD_IP and the scheduler agree */
    assert_int_equal(run(&o, NULL, argv), TIPC_OK);
    assert_int_equal(o.node_rank, 1);
    launch_opts_free(&o);
    setenv("POD_IP", "10.0.0.3", 1);   /* ... or the job would have two node 1s or none */
    char *err = NULL;
    assert_int_equal(run(&o, &err, argv), TIPC_EUSAGE);
    assert_non_null(strstr(err, "SLURM_NODEID (Slurm) says this is node 1 but POD_IP says node 2"));
    free(err);
    launch_opts_free(&o);
    clear_env(NULL);
    /* torchrun: no --ips, master from env, node from NODE_RANK */
    const char *argv2[] = {"launch", "--nnodes=2", "true", NULL};
    setenv("NODE_RANK", "1", 1), setenv("MASTER_ADDR", "127.0.0.1", 1), setenv("MASTER_PORT", "29511", 1);
    assert_int_equal(run(&o, NULL, argv2), TIPC_OK);
    assert_int_equal(o.node_rank, 1);
    assert_int_equal(o.master_port, 29511);
    assert_string_equal(o.self_ip, "127.0.0.1");   /* the address that routes to the master */
    launch_opts_free(&o);
    /* TIPC_MASTER (how `tipc run` passes --master) */
    setenv("TIPC_MASTER", "127.0.0.1:4444", 1);
    assert_int_equal(run(&o, NULL, argv2), TIPC_OK);
    assert_int_equal(o.master_port, 4444);
    launch_opts_free(&o);
}

static void expect_error(const char **argv, enum tipc_status want, const char *text)
{
    struct launch_opts o;
    char *err = NULL;
    enum tipc_status st = run(&o, &err, argv);
    if (st != want || !strstr(err, text)) fprintf(stderr, "got status %d, stderr: %s", st, err);
    assert_int_equal(st, want);
    assert_non_null(strstr(err, text));
    free(err);
    launch_opts_free(&o);
}

/* Placed only by a scheduler's variables: Slurm's node list becomes --ips, its node id the index. */
static void test_scheduler_place(void **s)
{
    (void)s;
    struct launch_opts o;
    char *err = NULL;
    setenv("SLURM_JOB_NODELIST", "127.0.0.[1-2]", 1);
    setenv("SLURM_NNODES", "2", 1);
    setenv("SLURM_NODEID", "1", 1);
    const char *argv[] = {"launch", "--nproc_per_node=2", "true", NULL};
    assert_int_equal(run(&o, &err, argv), TIPC_OK);
    assert_int_equal(o.nnodes, 2);
    assert_int_equal(o.nips, 2);
    assert_int_equal(o.node_rank, 1);
    assert_string_equal(o.self_ip, "127.0.0.2");
    assert_string_equal(o.master_host, "127.0.0.1");
    assert_int_equal(o.master_port, LAUNCH_DEFAULT_PORT);
    assert_non_null(strstr(err, "launch: placed by Slurm: node 1 (SLURM_NODEID) of 2 nodes (SLURM_NNODES)"));
    free(err);
    launch_opts_free(&o);
    /* the user's --ips in another order: the Slurm host of this node is found in it */
    setenv("SLURM_JOB_NODELIST", "10.0.0.[1-2]", 1);
    setenv("SLURM_NODEID", "0", 1);
    const char *argv2[] = {"launch", "--ips=10.0.0.2,10.0.0.1", "true", NULL};
    assert_int_equal(run(&o, NULL, argv2), TIPC_OK);
    assert_int_equal(o.node_rank, 1);
    assert_string_equal(o.self_ip, "10.0.0.1");
    assert_string_equal(o.master_host, "10.0.0.2");   /* node 0 of --ips serves the store */
    launch_opts_free(&o);
    const char *argv3[] = {"launch", "--ips=10.0.0.2,10.0.0.3", "true", NULL};
    assert_int_equal(run(&o, &err, argv3), TIPC_EUSAGE);
    assert_non_null(strstr(err, "places this task on '10.0.0.1' (entry 0 of SLURM_JOB_NODELIST, SLURM_NODEID), which is not in --ips"));
    free(err);
    launch_opts_free(&o);
    /* torchrun / Kubeflow PyTorchJob */
    clear_env(NULL);
    setenv("PET_NNODES", "2", 1), setenv("PET_NODE_RANK", "1", 1), setenv("PET_MASTER_ADDR", "127.0.0.1", 1);
    setenv("PET_MASTER_PORT", "29555", 1), setenv("PET_NPROC_PER_NODE", "3", 1);
    const char *argv4[] = {"launch", "true", NULL};
    assert_int_equal(run(&o, NULL, argv4), TIPC_OK);
    assert_int_equal(o.nnodes, 2);
    assert_int_equal(o.node_rank, 1);
    assert_int_equal(o.nproc, 3);
    assert_string_equal(o.master_host, "127.0.0.1");
    assert_int_equal(o.master_port, 29555);
    launch_opts_free(&o);
    /* Paddle operator: trainers and trainer id */
    clear_env(NULL);
    setenv("PADDLE_TRAINERS", "127.0.0.1,127.0.0.2", 1), setenv("PADDLE_TRAINER_ID", "0", 1);
    assert_int_equal(run(&o, NULL, argv4), TIPC_OK);
    assert_int_equal(o.nnodes, 2);
    assert_int_equal(o.node_rank, 0);
    assert_string_equal(o.self_ip, "127.0.0.1");
    launch_opts_free(&o);
}

/* A scheduler saying N nodes while the flags say otherwise: never N silent one-node jobs. */
static void test_scheduler_disagrees(void **s)
{
    (void)s;
    setenv("SLURM_JOB_NODELIST", "n[1-2]", 1);
    setenv("SLURM_NNODES", "2", 1);
    setenv("SLURM_NODEID", "1", 1);
    expect_error((const char *[]){"launch", "--nnodes=1", "true", NULL}, TIPC_EUSAGE,
                 "Slurm runs this job on 2 nodes (SLURM_NNODES) but --nnodes says 1");
    expect_error((const char *[]){"launch", "--standalone", "true", NULL}, TIPC_EUSAGE,
                 "but --standalone means 1");
    expect_error((const char *[]){"launch", "--ips=127.0.0.1", "true", NULL}, TIPC_EUSAGE, "but --ips lists 1");
    expect_error((const char *[]){"launch", "--nnodes=2", "--node_rank=0", "--master=127.0.0.1:1", "true", NULL},
                 TIPC_EUSAGE, "SLURM_NODEID (Slurm) says this is node 1 but --node_rank says node 0");
    setenv("TIPC_SCHEDULER", "none", 1);   /* the way out, documented */
    struct launch_opts o;
    assert_int_equal(run(&o, NULL, (const char *[]){"launch", "--nnodes=1", "true", NULL}), TIPC_OK);
    assert_int_equal(o.nnodes, 1);
    launch_opts_free(&o);
}

/* torchrun's and Paddle's other flags: accepted; those not used say so (--max_restarts is used:
 * launch/round.c, tests/e2e/test_launch_restart.sh). */
static void test_more_flags(void **s)
{
    (void)s;
    struct launch_opts o;
    char *err = NULL;
    const char *argv[] = {"launch", "--standalone", "--nproc-per-node=2", "--rdzv-backend=c10d", "--rdzv-conf",
                          "timeout=900", "--max-restarts=3", "true", NULL};
    assert_int_equal(run(&o, &err, argv), TIPC_OK);
    assert_true(o.standalone);
    assert_int_equal(o.nnodes, 1);
    assert_int_equal(o.nproc, 2);
    assert_int_equal(o.max_restarts, 3);
    assert_non_null(strstr(err, "--rdzv_backend=c10d is accepted but not used"));
    assert_non_null(strstr(err, "--rdzv_conf=timeout=900 is accepted but not used"));
    assert_null(strstr(err, "max_restarts"));
    free(err);
    launch_opts_free(&o);
    const char *argv2[] = {"launch", "--nnodes=2", "--rank=1", "--devices=0,1", "--max_restart=0", "--job_id=j",
                           "--log_dir=L", "--master=127.0.0.1:7001", "true", NULL};
    assert_int_equal(run(&o, &err, argv2), TIPC_OK);
    assert_int_equal(o.node_rank, 1);
    assert_int_equal(o.ngpus, 2);
    assert_string_equal(o.log_dir, "L");
    assert_int_equal(o.max_restarts, 0);
    free(err);
    launch_opts_free(&o);
    expect_error((const char *[]){"launch", "--standalone=1", "true", NULL}, TIPC_EUSAGE, "takes no value");
    expect_error((const char *[]){"launch", "--standalone", "--nnodes=2", "true", NULL}, TIPC_EUSAGE,
                 "--standalone runs one node");
    expect_error((const char *[]){"launch", "--max-restarts=-1", "true", NULL}, TIPC_EUSAGE,
                 "'--max_restarts' must be in 0..1000, got -1");
}

static void test_one_node_defaults(void **s)
{
    (void)s;
    struct launch_opts o;
    setenv("MASTER_ADDR", "192.0.2.1", 1);   /* an outer job's: ignored for one node */
    const char *argv[] = {"launch", "--nproc_per_node=3", "true", NULL};
    assert_int_equal(run(&o, NULL, argv), TIPC_OK);
    assert_int_equal(o.nnodes, 1);
    assert_int_equal(o.node_rank, 0);
    assert_int_equal(o.gpus[2], 2);
    assert_string_equal(o.master_host, "127.0.0.1");
    assert_int_equal(o.master_port, 0);
    launch_opts_free(&o);
    setenv("TIPC_JOB_TOKEN", "secret", 1);
    assert_int_equal(run(&o, NULL, argv), TIPC_OK);
    assert_string_equal(o.token, "secret");
    launch_opts_free(&o);
}


static void test_errors(void **s)
{
    (void)s;
    expect_error((const char *[]){"launch", "--gpus=0,1", NULL}, TIPC_EUSAGE, "no command to run");
    expect_error((const char *[]){"launch", "--gpus=0,x", "true", NULL}, TIPC_EUSAGE, "--gpus 'x' is not an integer");
    expect_error((const char *[]){"launch", "--ips=1.2.3.4", "--nnodes=2", "true", NULL}, TIPC_EUSAGE,
                 "--nnodes=2 but --ips lists 1 nodes");
    expect_error((const char *[]){"launch", "--nnodes=1:4", "true", NULL}, TIPC_EUSAGE, "elastic --nnodes");
    expect_error((const char *[]){"launch", "--master=nohost", "true", NULL}, TIPC_EUSAGE, "is not HOST:PORT");
    expect_error((const char *[]){"launch", "--nnodes=2", "--node_rank=1", "--master=10.0.0.1:0", "true", NULL},
                 TIPC_EUSAGE, "port 0 (auto) only works on one node");
    expect_error((const char *[]){"launch", "--nnodes=2", "--node_rank=2", "--master=10.0.0.1:1", "true", NULL},
                 TIPC_EUSAGE, "node index 2 is out of range for 2 nodes");
    expect_error((const char *[]){"launch", "--nnodes=2", "true", NULL}, TIPC_EUSAGE, "cannot tell which of the 2 nodes");
    expect_error((const char *[]){"launch", "--job_id=a/b", "true", NULL}, TIPC_EUSAGE, "job id 'a/b'");
    expect_error((const char *[]){"launch", "--ips=10.0.0.1,10.0.0.1", "--node_ip=10.0.0.1", "true", NULL},
                 TIPC_EDIST, "appears more than once");
    expect_error((const char *[]){"launch", "--help=1", "true", NULL}, TIPC_EUSAGE, "takes no value");
}

static void test_match_node(void **s)
{
    (void)s;
    char *addrs[] = {"127.0.0.1", "10.0.0.2", "::1", NULL};
    char *ips1[] = {"10.0.0.1", "10.0.0.2"};
    assert_int_equal(launch_match_node(ips1, 2, addrs), 1);
    char *ips2[] = {"10.0.0.7", "10.0.0.8"};
    assert_int_equal(launch_match_node(ips2, 2, addrs), -1);
    char *ips3[] = {"10.0.0.2", "127.0.0.1"};   /* both are this host: ambiguous, never a silent pick */
    assert_int_equal(launch_match_node(ips3, 2, addrs), -2);
    char *ips4[] = {"10.0.0.9", "localhost"};   /* names are resolved */
    assert_int_equal(launch_match_node(ips4, 2, addrs), 1);
    char **mine = launch_host_addrs();
    bool lo = false;
    for (char **p = mine; *p; p++) lo = lo || !strcmp(*p, "127.0.0.1"), free(*p);
    free(mine);
    assert_true(lo);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_paddle_flags, clear_env),
        cmocka_unit_test_setup(test_torchrun_spellings, clear_env),
        cmocka_unit_test_setup(test_scheduler_env, clear_env),
        cmocka_unit_test_setup(test_one_node_defaults, clear_env),
        cmocka_unit_test_setup(test_errors, clear_env),
        cmocka_unit_test_setup(test_scheduler_place, clear_env),
        cmocka_unit_test_setup(test_scheduler_disagrees, clear_env),
        cmocka_unit_test_setup(test_more_flags, clear_env),
        cmocka_unit_test_setup(test_match_node, clear_env),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
