/* test_plan.c: runner/plan/plan.c builds, for every mode, exactly the commands the original harnesses
 * build. The reference is tests/fixtures/golden/ (made by running the unmodified Step6 and
 * PaddleOCR scripts with a stub python; scripts/golden/make-golden.sh): 14 real configs x 5 modes.
 * Plus: the CUDA_VISIBLE_DEVICES each stage gets, our python:tipc mapping, and bad input. */
#include <dirent.h>
#include "testutil.h"
#include "../../runner/plan/config.h"
#include "../../runner/plan/plan.h"

#define GOLDEN "tests/fixtures/golden"

static char *read_text(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    rewind(f);
    char *s = calloc(1, (size_t)n + 1);
    if (fread(s, 1, (size_t)n, f) != (size_t)n) s[0] = 0;
    fclose(f);
    return s;
}

/* Compare the plan's commands with MODE.cmds (or MODE.cmds.firstcolon where our first-colon rule
 * changes a command, MODE.cmds.tipc where a later pass's inference log is renamed), and its echo
 * lines with the non-status lines of MODE.stdout. */
static int check_golden(const char *dir, const char *mode)
{
    char path[512];
    snprintf(path, sizeof path, "%s/config.txt", dir);
    struct tipc_config cfg;
    if (cfg_load(&cfg, path) != TIPC_OK) fail_msg("cannot load %s", path);
    struct plan p;
    if (plan_build(&p, &cfg, mode, NULL) != TIPC_OK) fail_msg("plan failed for %s %s", dir, mode);
    snprintf(path, sizeof path, "%s/%s.cmds.tipc", dir, mode);   /* no overwritten inference logs */
    char *want = read_text(path);
    if (!want) {
        snprintf(path, sizeof path, "%s/%s.cmds.firstcolon", dir, mode);
        want = read_text(path);
    }
    if (!want) {
        snprintf(path, sizeof path, "%s/%s.cmds", dir, mode);
        want = read_text(path);
    }
    assert_non_null(want);
    int k = 0, bad = 0;
    char *save = NULL;
    for (char *line = strtok_r(want, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        const char *cmd = strchr(line, '\t') + 1;
        while (k < p.n && p.st[k].kind == STAGE_NOTE) k++;
        if (k >= p.n) { fprintf(stderr, "%s %s: missing command '%s'\n", dir, mode, cmd); bad++; break; }
        if (strcmp(p.st[k].cmd, cmd)) {
            fprintf(stderr, "%s %s: command %d differs\n  got:  '%s'\n  want: '%s'\n", dir, mode, k, p.st[k].cmd, cmd);
            bad++;
        }
        k++;
    }
    while (k < p.n && p.st[k].kind == STAGE_NOTE) k++;
    if (k != p.n) { fprintf(stderr, "%s %s: %d extra stages\n", dir, mode, p.n - k); bad++; }
    free(want);
    /* echo lines: the stdout lines that are not status lines, in order */
    snprintf(path, sizeof path, "%s/%s.stdout", dir, mode);
    char *out = read_text(path);
    int e = 0;
    save = NULL;
    for (char *line = out ? strtok_r(out, "\n", &save) : NULL; line; line = strtok_r(NULL, "\n", &save)) {
        if (strstr(line, "Run successfully with command") || strstr(line, "Run failed with command")) continue;
        while (e < p.n && p.st[e].kind != STAGE_NOTE) e++;
        if (e >= p.n || strcmp(p.st[e].cmd, line)) {
            fprintf(stderr, "%s %s: echo line differs: got '%s' want '%s'\n", dir, mode, e < p.n ? p.st[e].cmd : "(none)", line);
            bad++;
            break;
        }
        e++;
    }
    free(out);
    plan_free(&p);
    cfg_free(&cfg);
    return bad;
}

static void test_golden_commands_every_config_every_mode(void **state)
{
    DIR *d = opendir(GOLDEN);
    if (!d) skip();
    struct dirent *de;
    int dirs = 0, bad = 0;
    while ((de = readdir(d))) {
        if (de->d_name[0] == '.') continue;
        char dir[300];
        snprintf(dir, sizeof dir, "%s/%s", GOLDEN, de->d_name);
        char cfgp[400];
        snprintf(cfgp, sizeof cfgp, "%s/config.txt", dir);
        if (access(cfgp, R_OK)) continue;
        dirs++;
        for (int m = 0; plan_modes[m]; m++)   /* benchmark_train's golden set is golden/benchmark (test_bench_plan) */
            if (strcmp(plan_modes[m], "benchmark_train")) bad += check_golden(dir, plan_modes[m]);
    }
    closedir(d);
    assert_true(dirs >= 12);
    assert_int_equal(bad, 0);
}

static struct plan build(const char *path, const char *mode, const char *gpuid)
{
    struct tipc_config cfg;
    if (cfg_load(&cfg, path) != TIPC_OK) fail_msg("load %s", path);
    struct plan p;
    struct plan_opts o = {.gpuid = gpuid};
    if (plan_build(&p, &cfg, mode, &o) != TIPC_OK) fail_msg("plan %s", path);
    cfg_free(&cfg);
    return p;
}

/* Step6: `eval $env` before eval and inference, `unset` after; the second gpu_list item's train
 * therefore runs with CUDA_VISIBLE_DEVICES unset. */
static void test_cuda_visible_devices_follow_the_shell(void **state)
{
    struct plan p = build(GOLDEN "/s6_train_infer/config.txt", "lite_train_lite_infer", NULL);
    enum stage_kind kinds[] = {STAGE_TRAIN, STAGE_EVAL, STAGE_EXPORT, STAGE_INFER, STAGE_INFER,
                               STAGE_TRAIN, STAGE_EVAL, STAGE_EXPORT, STAGE_INFER, STAGE_INFER};
    enum cvd_action cvd[] = {CVD_INHERIT, CVD_SET, CVD_SET, CVD_SET, CVD_SET,
                             CVD_UNSET, CVD_SET, CVD_SET, CVD_SET, CVD_SET};
    assert_int_equal(p.n, 10);
    for (int i = 0; i < 10; i++) {
        assert_int_equal(p.st[i].kind, kinds[i]);
        assert_int_equal(p.st[i].cvd, cvd[i]);
        if (cvd[i] == CVD_SET) assert_string_equal(p.st[i].cvd_value, "0");
    }
    assert_true(p.st[3].cat_log);
    assert_string_equal(p.st[3].log_path, "./test_tipc/output/mobilenet_v3_small/lite_train_lite_infer/python_infer_gpu_batchsize_1.log");
    assert_int_equal(p.st[0].line, 14);
    assert_int_equal(p.st[1].line, 17);
    assert_int_equal(p.st[2].line, 22);
    assert_int_equal(p.st[3].line, 27);
    plan_free(&p);
    /* whole_infer GPUID argument */
    p = build(GOLDEN "/s6_train_infer/config.txt", "whole_infer", "3");
    for (int i = 0; i < p.n; i++) {
        assert_int_equal(p.st[i].cvd, CVD_SET);
        assert_string_equal(p.st[i].cvd_value, "3");
    }
    plan_free(&p);
    /* fleet: training is multi-node, ips recorded for the launcher */
    p = build(GOLDEN "/s6_fleet/config.txt", "lite_train_lite_infer", NULL);
    assert_string_equal(p.st[0].ips, "192.168.0.1,192.168.0.2");
    assert_string_equal(p.st[0].cl.argv[0], "python3.7");
    assert_string_equal(p.st[0].cl.argv[2], "paddle.distributed.launch");
    plan_free(&p);
}

static void test_our_configs_map_to_tipc(void **state)
{
    struct plan p = build("configs/mobilenet_v3_small/train_fleet_infer.txt", "lite_train_lite_infer", NULL);
    assert_true(p.ours);
    assert_string_equal(p.log_dir, "./logs/mobilenet_v3_small/lite_train_lite_infer");
    assert_int_equal(p.n, 4);
    assert_string_equal(p.st[0].cmd,
        "tipc launch --ips=127.0.0.1,127.0.0.2 --gpus=0,1 train -c configs/mobilenet_v3_small/mobilenet_v3_small.yaml "
        "--output-dir=./logs/mobilenet_v3_small/lite_train_lite_infer/fleet_train_gpus_0,1_autocast_False_nodes_2.log "
        "--epochs=5   --batch-size=4");
    assert_string_equal(p.st[0].cl.argv[0], "tipc");
    assert_string_equal(p.st[0].cl.argv[1], "launch");
    assert_string_equal(p.st[3].cmd,
        "tipc infer --use-gpu=False --model-dir=./logs/mobilenet_v3_small/lite_train_lite_infer/"
        "fleet_train_gpus_0,1_autocast_False_nodes_2.log --batch-size=1   --benchmark=True > "
        "./logs/mobilenet_v3_small/lite_train_lite_infer/python_infer_cpu_batchsize_1.log 2>&1 ");
    plan_free(&p);
    /* our configs parse gpu_list by structure: one IP is still a multi-node item */
    p = build("configs/mobilenet_v3_small/train_amp_infer.txt", "lite_train_lite_infer", NULL);
    assert_string_equal(p.st[0].cmd,
        "tipc train -c configs/mobilenet_v3_small/mobilenet_v3_small.yaml --amp_level=O2 "
        "--output-dir=./logs/mobilenet_v3_small/lite_train_lite_infer/amp_train_gpus_0_autocast_True_nodes_1.log "
        "--epochs=5   --batch-size=4");
    assert_string_equal(p.st[5].cl.argv[1], "launch");
    assert_string_equal(p.st[5].cl.argv[2], "--gpus=0,1");
    plan_free(&p);
}

/* Build a plan from the Step6 train_infer fixture with one line replaced; return stderr. */
static char *plan_error(int line_no, const char *new_line, const char *mode, enum tipc_status *st)
{
    char *orig = read_text(GOLDEN "/s6_train_infer/config.txt");
    char *buf = calloc(1, strlen(orig) + strlen(new_line) + 8);
    char *p = orig;
    for (int i = 1; i < line_no; i++) p = strchr(p, '\n') + 1;
    char *e = strchr(p, '\n');
    memcpy(buf, orig, (size_t)(p - orig));
    strcat(buf, new_line);
    if (e) strcat(buf, e);
    struct tipc_config cfg;
    struct capture c;
    capture_stderr_begin(&c);
    *st = cfg_parse(&cfg, "cfg.txt", buf, strlen(buf));
    struct plan pl;
    if (*st == TIPC_OK) {
        *st = plan_build(&pl, &cfg, mode, NULL);
        if (*st == TIPC_OK) plan_free(&pl);
        else assert_int_equal(pl.n, 0); /* nothing half-built is handed back */
    }
    char *err = capture_stderr_end(&c);
    cfg_free(&cfg);
    free(buf);
    free(orig);
    return err;
}

/* `tipc run --max-restarts N` reaches our launched trainings only, as argv words of `tipc launch`:
 * not one-device trainings, other stages, or Paddle's launcher (golden commands unchanged). */
static void test_max_restarts_reach_our_launcher_only(void **state)
{
    (void)state;
    const char *paths[] = {"configs/mobilenet_v3_small/train_fleet_infer.txt", "configs/mobilenet_v3_small/train_infer.txt",
                           GOLDEN "/s6_fleet/config.txt"};
    int launched[3] = {0};
    for (int k = 0; k < 3; k++) {
        struct tipc_config cfg;
        if (cfg_load(&cfg, paths[k]) != TIPC_OK) fail_msg("load %s", paths[k]);
        struct plan p;
        struct plan_opts o = {.max_restarts = 2};
        assert_int_equal(plan_build(&p, &cfg, "lite_train_lite_infer", &o), TIPC_OK);
        for (int i = 0; i < p.n; i++) {
            const struct stage *s = &p.st[i];
            bool has = strstr(s->cmd, "max_restarts") != NULL;
            if (!has) continue;
            assert_int_equal(s->kind, STAGE_TRAIN);
            assert_true(p.ours);
            assert_string_equal(s->cl.argv[1], "launch");
            assert_string_equal(s->cl.argv[2], "--max_restarts=2");
            launched[k]++;
        }
        plan_free(&p);
        cfg_free(&cfg);
    }
    assert_int_equal(launched[0], 1);   /* the fleet training */
    assert_int_equal(launched[1], 1);   /* the gpu_list 0,1 item, not -1 or 0 */
    assert_int_equal(launched[2], 0);   /* python3.7 -m paddle.distributed.launch: not ours */
}

static void test_bad_input_names_file_and_line(void **state)
{
    struct { int line; const char *text, *mode, *want; } cases[] = {
        {2, "model_name:m", "lite_train_lite_ifer",
         "cfg.txt: unknown mode 'lite_train_lite_ifer': expected lite_train_lite_infer, lite_train_whole_infer, "
         "whole_infer, whole_train_whole_infer, klquant_whole_infer or benchmark_train\n"},
        {13, "trainer:norm_train|nrom_train", "lite_train_lite_infer",
         "cfg.txt:13: unknown trainer 'nrom_train': expected one of norm_train, norm, pact_train, fpgm_train, distill_train, "
         "amp_train, fleet_train, to_static_train or a trainer key of this file\n"},
        {4, "gpu_list:0|0,,1", "lite_train_lite_infer",
         "cfg.txt:4: malformed gpu_list item '0,,1': expected -1, a device list like 0,1, or IP1,IP2;0,1\n"},
        {4, "gpu_list:10.0.0.1;0,1", "lite_train_lite_infer",
         "cfg.txt:4: gpu_list item '10.0.0.1;0,1' has ';' but is 15 characters or shorter, so the original harness "
         "reads it as a device list; list at least two node IPs ('IP1,IP2;0,1')\n"},
        {4, "gpu_list:0,1,2,3,4,5,6,7,8,9", "lite_train_lite_infer",
         "cfg.txt:4: malformed gpu_list item '0,1,2,3,4,5,6,7,8,9': longer than 15 characters, so it must be "
         "'IP1,IP2;DEVICES' with exactly one ';'\n"},
        {4, "gpu_list:", "lite_train_lite_infer", "cfg.txt:4: empty gpu_list\n"},
        {14, "norm_train:train.py | tee x.log", "lite_train_lite_infer",
         "cfg.txt:14: shell syntax '|' is not supported in a command (tipc runs commands without a shell): "
         "python3.7 train.py | tee x.log --output-dir=./test_tipc/output/mobilenet_v3_small/lite_train_lite_infer/"
         "norm_train_gpus_0_autocast_False_nodes_1.log --epochs=5   --batch-size=4\n"},
        {6, "--epochs:lite_train_lite_infer=$(reboot)", "lite_train_lite_infer", NULL},
        {27, "inference:infer.py;rm", "whole_infer", NULL},
        {2, "model_name:", "lite_train_lite_infer", "cfg.txt:2: empty model_name\n"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        enum tipc_status st;
        char *err = plan_error(cases[i].line, cases[i].text, cases[i].mode, &st);
        assert_int_equal(st, TIPC_EUSAGE);
        if (cases[i].want) assert_string_equal(err, cases[i].want);
        else {
            char prefix[32];
            snprintf(prefix, sizeof prefix, "cfg.txt:%d: ", cases[i].line);
            if (strncmp(err, prefix, strlen(prefix))) fail_msg("case %zu: '%s' does not start with '%s'", i, err, prefix);
            assert_non_null(strstr(err, "is not supported"));
        }
        assert_non_null(strchr(err, '\n'));
        assert_null(strchr(err, '\n') + 1 == NULL ? NULL : strchr(strchr(err, '\n') + 1, '\n')); /* one line */
        free(err);
    }
}

/* '|' lists multiply; a runaway expansion is refused before it is built */
static void test_expansion_is_capped(void **state)
{
    char *line = calloc(1, 16384);
    strcat(line, "--batch-size:1");
    for (int i = 0; i < 2100; i++) strcat(line, "|1");
    enum tipc_status st;
    char *err = plan_error(29, line, "lite_train_lite_infer", &st);
    assert_int_equal(st, TIPC_EUSAGE);
    assert_string_equal(err, "cfg.txt:27: the config expands to more than 4096 commands or 8 MB of command text; "
                             "shorten its '|' lists\n");
    free(err);
    free(line);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_golden_commands_every_config_every_mode),
        cmocka_unit_test(test_cuda_visible_devices_follow_the_shell),
        cmocka_unit_test(test_our_configs_map_to_tipc),
        cmocka_unit_test(test_max_restarts_reach_our_launcher_only),
        cmocka_unit_test(test_bad_input_names_file_and_line),
        cmocka_unit_test(test_expansion_is_capped),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
