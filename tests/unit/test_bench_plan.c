/* test_bench_plan.c: benchmark_train's plan (runner/plan/bench.c) on our configs: the layouts, the
 * trainer line our row writes, the speed stage's analysis arguments, and the errors (a layout the
 * config's IP list cannot take, no section, a malformed layout). Paddle configs' plans are checked
 * against their repos' own scripts in tests/e2e/test_bench_golden.sh. */
#include "testutil.h"
#include "../../runner/plan/bench.h"
#include "../../runner/plan/dialect.h"

#define FLEET "configs/mobilenet_v3_small/train_fleet_infer.txt"

static char *text_of(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    char *buf = xmalloc(1 << 16);
    *len = fread(buf, 1, (1 << 16) - 1, f);
    buf[*len] = 0;
    fclose(f);
    return buf;
}

static enum tipc_status build(struct plan *p, const char *path, const char *text, size_t len, const char *params)
{
    struct plan_opts po = {.dialect = dialect_get(DIALECT_REF), .dialect_why = "test"};
    struct bench_opts bo = {params, "repo", "SAVE", "True", 1};
    return plan_build_benchmark(p, path, text, len, &po, &bo);
}

static void test_gpu_ids(void **s)
{
    (void)s;
    char err[200];
    static const char *const t[][2] = {{"N1C1", "0"}, {"N1C4", "0,1,2,3"}, {"N2C4", "0,1"}, {"N4C32", "0,1,2,3,4,5,6,7"},
                                       {"N2C3", "0,1"}};
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
        char *g = bench_gpu_ids(t[i][0], err, sizeof err);
        assert_non_null(g);
        assert_string_equal(g, t[i][1]);
        free(g);
    }
    assert_null(bench_gpu_ids("N0C1", err, sizeof err));
    assert_null(bench_gpu_ids("C4", err, sizeof err));
    assert_null(bench_gpu_ids("N1C4x", err, sizeof err));
    assert_non_null(strstr(err, "N<nodes>C<cards>"));
}

static void test_fleet_default_layout_is_its_own(void **s)
{
    (void)s;
    size_t len;
    char *text = text_of(FLEET, &len);
    struct plan p;
    assert_int_equal(build(&p, FLEET, text, len, NULL), TIPC_OK);
    assert_int_equal(p.n, 2);
    const struct stage *t = &p.st[0], *sp = &p.st[1];
    assert_int_equal(t->kind, STAGE_TRAIN);
    assert_non_null(strstr(t->cmd, "tipc launch --ips=127.0.0.1,127.0.0.2 --gpus=0,1 train -c "));
    assert_non_null(strstr(t->cmd, " --print-freq=1 -o Global.eval_during_train=false --workers=2 "));
    assert_non_null(strstr(t->cmd, " --epochs=3 "));
    assert_non_null(strstr(t->cmd, " --batch-size=4"));
    assert_string_equal(t->tee_log, "SAVE/train_log/repo_mobilenet_v3_small_bs4_fp32_DP_N2C4_log");
    assert_int_equal(sp->kind, STAGE_SPEED);
    assert_int_equal(sp->dep, 0);
    assert_string_equal(sp->record, "SAVE/index/repo_mobilenet_v3_small_bs4_fp32_DP_N2C4_speed");
    assert_string_equal(sp->status_log, "SAVE/benchmark_log/results.log");
    assert_string_equal(sp->cmd, "tipc speed --filename SAVE/train_log/repo_mobilenet_v3_small_bs4_fp32_DP_N2C4_log "
                        "--speed_log_file 'SAVE/index/repo_mobilenet_v3_small_bs4_fp32_DP_N2C4_speed' --model_name "
                        "mobilenet_v3_small_bs4_fp32_DP --base_batch_size 4 --run_mode DP --fp_item fp32 --keyword "
                        "avg_ips: --skip_steps 2 --device_num N2C4 --speed_unit images/s --convergence_key loss:");
    plan_free(&p);
    free(text);
}

static void test_params_one_node_and_precision(void **s)
{
    (void)s;
    size_t len;
    char *text = text_of(FLEET, &len);
    struct plan p;
    assert_int_equal(build(&p, FLEET, text, len, "dynamic_bs8_bf16_DP_N1C2"), TIPC_OK);
    assert_int_equal(p.n, 2);
    assert_non_null(strstr(p.st[0].cmd, "tipc launch --gpus=0,1 train -c "));
    assert_non_null(strstr(p.st[0].cmd, " --precision=bf16 "));
    assert_non_null(strstr(p.st[0].cmd, " --batch-size=8"));
    assert_non_null(strstr(p.st[0].cmd, "norm_train_gpus_0,1_"));   /* PARAMS names the model type norm_train */
    assert_null(p.st[0].ips);
    plan_free(&p);
    free(text);
}

static void test_layout_the_ip_list_cannot_take(void **s)
{
    (void)s;
    size_t len;
    char *text = text_of(FLEET, &len);
    struct plan p;
    struct capture c;
    capture_stderr_begin(&c);
    enum tipc_status st = build(&p, FLEET, text, len, "dynamic_bs4_fp32_DP_N3C6");
    char *err = capture_stderr_end(&c);
    assert_int_equal(st, TIPC_EUSAGE);
    assert_non_null(strstr(err, FLEET ":4: layout N3C6 needs 3 nodes with 2 cards each"));
    free(err);
    capture_stderr_begin(&c);
    st = build(&p, FLEET, text, len, "dynamic_bs4_fp32_DP_M2");
    err = capture_stderr_end(&c);
    assert_int_equal(st, TIPC_EUSAGE);
    assert_non_null(strstr(err, "device layout 'M2'"));
    free(err);
    free(text);
}

static void test_no_section(void **s)
{
    (void)s;
    size_t len;
    char *text = text_of(FLEET, &len);
    char *cut = strstr(text, "====train_benchmark_params");
    assert_non_null(cut);
    while (cut > text && cut[-1] != '\n') cut--;
    *cut = 0;
    struct plan p;
    struct capture c;
    capture_stderr_begin(&c);
    enum tipc_status st = build(&p, FLEET, text, (size_t)(cut - text), NULL);
    char *err = capture_stderr_end(&c);
    assert_int_equal(st, TIPC_EUSAGE);
    assert_non_null(strstr(err, "no train_benchmark_params section"));
    free(err);
    free(text);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_gpu_ids),
        cmocka_unit_test(test_fleet_default_layout_is_its_own),
        cmocka_unit_test(test_params_one_node_and_precision),
        cmocka_unit_test(test_layout_the_ip_list_cannot_take),
        cmocka_unit_test(test_no_section),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
