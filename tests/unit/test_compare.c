/* test_compare.c: the gate (runner/report/compare.c) on records and metrics written here: a
 * regression past threshold and noise fails, a change within the repeats' range does not, a
 * missing case and an ips-0 record fail, metrics give ips, cpu_ips, loss and top-1, a benchmark
 * stage's CPU time joins its record's case. The real speeds are tests/e2e/test_bench_gate.sh's. */
#include <ftw.h>
#include <sys/stat.h>
#include "testutil.h"
#include "../../runner/report/compare.h"

static char root[] = "/tmp/tipc-test-compare-XXXXXX";

static void put(const char *rel, const char *text)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", root, rel);
    for (char *q = strchr(path + strlen(root) + 1, '/'); q; q = strchr(q + 1, '/')) {
        *q = 0;
        mkdir(path, 0755);
        *q = '/';
    }
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

/* A speed record of case m_bs4_fp32_DP N1C1 (as tipc speed writes it). */
static void record(const char *rel, double ips, const char *loss)
{
    char text[512];
    snprintf(text, sizeof text, "{\"model_branch\": null, \"model_commit\": null, \"model_name\": \"m_bs4_fp32_DP\", "
             "\"batch_size\": 4, \"fp_item\": \"fp32\", \"run_mode\": \"DP\", \"convergence_value\": %s, "
             "\"convergence_key\": \"loss:\", \"ips\": %g, \"speed_unit\": \"%s\", \"device_num\": \"N1C1\", "
             "\"model_run_time\": \"8\", \"frame_commit\": null, \"frame_version\": \"0.1.0\"}",
             loss, ips, ips > 0 ? "images/s" : "");
    put(rel, text);
}

static char *p(const char *rel)
{
    static char buf[4][512];
    static int k;
    k = (k + 1) % 4;
    snprintf(buf[k], sizeof buf[k], "%s/%s", root, rel);
    return buf[k];
}

static const struct cmp_row *row(const struct cmp_result *r, const char *name, enum cmp_figure f)
{
    for (int i = 0; i < r->n; i++)
        if (r->row[i].fig == f && !strcmp(r->row[i].case_name, name)) return &r->row[i];
    fail_msg("no row %s %s", name, cmp_figure_name(f));
    return NULL;
}

static int setup(void **s)
{
    (void)s;
    assert_non_null(mkdtemp(root));
    record("base/repeat_1/index/x_m_bs4_fp32_DP_N1C1_speed", 100, "\"2.0\"");
    record("base/repeat_2/index/x_m_bs4_fp32_DP_N1C1_speed", 101, "\"2.0\"");
    record("base/repeat_3/index/x_m_bs4_fp32_DP_N1C1_speed", 99, "\"2.0\"");
    record("slow/repeat_1/index/y_m_bs4_fp32_DP_N1C1_speed", 80, "\"2.0\"");
    record("slow/repeat_2/index/y_m_bs4_fp32_DP_N1C1_speed", 81, "\"2.0\"");
    record("slow/repeat_3/index/y_m_bs4_fp32_DP_N1C1_speed", 79, "\"2.0\"");
    record("same/repeat_1/index/y_m_bs4_fp32_DP_N1C1_speed", 98, "\"2.0\"");
    record("same/repeat_2/index/y_m_bs4_fp32_DP_N1C1_speed", 102, "\"2.0\"");
    record("same/repeat_3/index/y_m_bs4_fp32_DP_N1C1_speed", 100, "\"2.0\"");
    record("noisy/repeat_1/index/x_m_bs4_fp32_DP_N1C1_speed", 100, "\"2.0\"");
    record("noisy/repeat_2/index/x_m_bs4_fp32_DP_N1C1_speed", 70, "\"2.0\"");
    record("noisy/repeat_3/index/x_m_bs4_fp32_DP_N1C1_speed", 130, "\"2.0\"");
    record("one/index/y_m_bs4_fp32_DP_N1C1_speed", 85, "\"2.3\"");
    record("zero/index/y_m_bs4_fp32_DP_N1C1_speed", 0, "0");
    put("other/index/y_q_bs8_fp32_DP_N1C1_speed", "{\"model_name\": \"q_bs8_fp32_DP\", \"ips\": 50.0, "
        "\"speed_unit\": \"images/s\", \"device_num\": \"N1C1\", \"convergence_value\": \"1.0\"}");
    return 0;
}

static int rm_one(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
    (void)sb, (void)flag, (void)ftw;
    return remove(path);
}

static int teardown(void **s)
{
    (void)s;
    return nftw(root, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

static void run(const char *base, const char *now, struct cmp_result *r)
{
    struct cmp_thresholds th;
    cmp_thresholds_default(&th);
    assert_int_equal(compare_paths(p(base), p(now), &th, r), TIPC_OK);
}

static void test_planted_slowdown_fails(void **s)
{
    (void)s;
    struct cmp_result r;
    run("base", "slow", &r);
    const struct cmp_row *ips = row(&r, "m_bs4_fp32_DP N1C1", FIG_IPS);
    assert_int_equal(ips->verdict, CMP_REGRESSION);
    assert_int_equal(ips->base.n, 3);
    assert_true(fabs(ips->change + 20) < 1e-9);   /* medians 100 -> 80 */
    assert_true(fabs(ips->limit + 5) < 1e-9);     /* the repeats' range (2%) is under the threshold */
    assert_int_equal(row(&r, "m_bs4_fp32_DP N1C1", FIG_LOSS)->verdict, CMP_OK);
    assert_int_equal(compare_failures(&r), 1);
    compare_free(&r);
}

static void test_same_build_passes(void **s)
{
    (void)s;
    struct cmp_result r;
    run("base", "same", &r);
    assert_int_equal(compare_failures(&r), 0);
    assert_int_equal(row(&r, "m_bs4_fp32_DP N1C1", FIG_IPS)->verdict, CMP_OK);
    compare_free(&r);
}

static void test_change_within_the_repeats_range_is_noise(void **s)
{
    (void)s;
    struct cmp_result r;
    run("noisy", "one", &r);   /* 100 (range 60%) -> 85: -15%, past 5% but inside the range */
    const struct cmp_row *ips = row(&r, "m_bs4_fp32_DP N1C1", FIG_IPS);
    assert_int_equal(ips->verdict, CMP_NOISE);
    assert_true(fabs(ips->limit + 60) < 1e-9);
    assert_int_equal(row(&r, "m_bs4_fp32_DP N1C1", FIG_LOSS)->verdict, CMP_REGRESSION);   /* 2.0 -> 2.3: +15% */
    compare_free(&r);
}

static void test_missing_case_and_failed_analysis_fail(void **s)
{
    (void)s;
    struct cmp_result r;
    run("other", "zero", &r);   /* the baseline's case q is not in the new run; m is new there */
    assert_int_equal(row(&r, "q_bs8_fp32_DP N1C1", FIG_IPS)->verdict, CMP_MISSING);
    assert_int_equal(row(&r, "m_bs4_fp32_DP N1C1", FIG_IPS)->verdict, CMP_NEW);
    compare_free(&r);
    run("base", "zero", &r);    /* ips 0, no unit: analysis found too few values */
    assert_int_equal(row(&r, "m_bs4_fp32_DP N1C1", FIG_IPS)->verdict, CMP_INVALID);
    assert_true(compare_failures(&r) >= 1);
    compare_free(&r);
}

/* A run's metrics: rank 0's epochs, its last loss, the eval, the stage's CPU seconds. */
static void metrics(const char *rel, const char *stage, double ips, double loss, double top1, double cpu)
{
    char text[2048];
    snprintf(text, sizeof text,
             "{\"event\": \"run\", \"t\": 1}\n"
             "{\"event\": \"train_start\", \"stage\": \"%s\", \"rank\": 0, \"world\": 2}\n"
             "{\"event\": \"train_start\", \"stage\": \"%s\", \"rank\": 1, \"world\": 2}\n"
             "{\"event\": \"epoch\", \"stage\": \"%s\", \"rank\": 0, \"epoch\": 0, \"seconds\": 10, \"images\": 500}\n"
             "{\"event\": \"epoch\", \"stage\": \"%s\", \"rank\": 0, \"epoch\": 1, \"seconds\": 1, \"images\": %g}\n"
             "{\"event\": \"train_step\", \"stage\": \"%s\", \"rank\": 1, \"loss\": 9.0}\n"
             "{\"event\": \"train_step\", \"stage\": \"%s\", \"rank\": 0, \"loss\": %g}\n"
             "{\"event\": \"eval\", \"stage\": \"%s\", \"rank\": 0, \"top1\": %g}\n"
             "{\"event\": \"stage\", \"name\": \"%s\", \"kind\": \"train\", \"cpu_s\": %g}\n",
             stage, stage, stage, stage, ips, stage, stage, loss, stage, top1, stage, cpu);
    put(rel, text);
}

static void test_metrics_figures(void **s)
{
    (void)s;
    const char *st = "m.lite_train_lite_infer.train[norm_train gpus=0,1]";
    metrics("mb/tipc/metrics.jsonl", st, 100, 2.0, 50.0, 10);
    metrics("mn/tipc/metrics.jsonl", st, 100, 2.0, 48.5, 20);
    struct cmp_result r;
    run("mb", "mn", &r);
    const struct cmp_row *ips = row(&r, st, FIG_IPS), *cpu = row(&r, st, FIG_CPU), *top1 = row(&r, st, FIG_TOP1);
    assert_true(fabs(ips->base.median - 100) < 1e-9);   /* epoch 1 only: the first warms up */
    assert_int_equal(ips->verdict, CMP_OK);
    /* this node's 2 of 2 ranks: (500 + 100) images / 10 cpu-s = 60, then / 20 = 30 */
    assert_true(fabs(cpu->base.median - 60) < 1e-9 && fabs(cpu->now.median - 30) < 1e-9);
    assert_int_equal(cpu->verdict, CMP_REGRESSION);
    assert_true(fabs(top1->change + 1.5) < 1e-9);
    assert_int_equal(top1->verdict, CMP_REGRESSION);
    assert_true(fabs(row(&r, st, FIG_LOSS)->base.median - 2.0) < 1e-9);   /* rank 0's, not rank 1's 9.0 */
    compare_free(&r);
}

static void test_benchmark_stage_joins_its_record(void **s)
{
    (void)s;
    record("bb/index/z_m_bs4_fp32_DP_N1C1_speed", 100, "\"2.0\"");
    metrics("bb/tipc/metrics.jsonl", "m.benchmark_train.train[bs4_fp32_DP_N1C1]", 100, 2.0, 0, 10);
    record("bn/repeat_1/index/z_m_bs4_fp32_DP_N1C1_speed", 100, "\"2.0\"");
    metrics("bn/tipc/metrics.jsonl", "m.benchmark_train.train[bs4_fp32_DP_N1C1 repeat=1]", 100, 2.0, 0, 10);
    struct cmp_result r;
    run("bb", "bn", &r);
    const struct cmp_row *cpu = row(&r, "m_bs4_fp32_DP N1C1", FIG_CPU);
    assert_int_equal(cpu->base.n, 1);
    assert_int_equal(cpu->now.n, 1);
    assert_int_equal(compare_failures(&r), 0);
    for (int i = 0; i < r.n; i++) assert_null(strstr(r.row[i].case_name, "benchmark_train"));
    compare_free(&r);
}

static void test_records_against_metrics_is_a_usage_error(void **s)
{
    (void)s;
    struct cmp_result r;
    struct cmp_thresholds th;
    cmp_thresholds_default(&th);
    struct capture c;
    capture_stderr_begin(&c);
    enum tipc_status st = compare_paths(p("base"), p("mb"), &th, &r);
    char *err = capture_stderr_end(&c);
    assert_int_equal(st, TIPC_EUSAGE);
    assert_non_null(strstr(err, "compare records with records"));
    free(err);
    compare_free(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_planted_slowdown_fails),
        cmocka_unit_test(test_same_build_passes),
        cmocka_unit_test(test_change_within_the_repeats_range_is_noise),
        cmocka_unit_test(test_missing_case_and_failed_analysis_fail),
        cmocka_unit_test(test_metrics_figures),
        cmocka_unit_test(test_benchmark_stage_joins_its_record),
        cmocka_unit_test(test_records_against_metrics_is_a_usage_error),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
