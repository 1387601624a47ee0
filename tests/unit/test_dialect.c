/* test_dialect.c: runner/plan/dialect.c picks the repo's harness from the folders around a config
 * (markers, template path, the harness file's own text, --dialect), and the PaddleClas dialect
 * builds its harness's plan: train-only configs, train status from train.log, inference in deploy/.
 * Whole command lists are checked against the real harness in tests/e2e/test_run_dialects.sh. */
#include <limits.h>
#include <sys/stat.h>
#include <unistd.h>
#include "testutil.h"
#include "../../runner/plan/config.h"
#include "../../runner/plan/dialect.h"
#include "../../runner/plan/plan.h"

#define CLAS "tests/fixtures/golden/dialects/clas/"

static char tmpl_dir[PATH_MAX];

static void mk(const char *fmt, const char *sub)
{
    char p[PATH_MAX * 2];
    snprintf(p, sizeof p, fmt, tmpl_dir, sub);
    char *q = p;
    while ((q = strchr(q + 1, '/')) != NULL) {
        *q = 0;
        mkdir(p, 0755);
        *q = '/';
    }
    mkdir(p, 0755);
}

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static int setup(void **state)
{
    (void)state;
    snprintf(tmpl_dir, sizeof tmpl_dir, "/tmp/tipc-dialect-XXXXXX");
    return mkdtemp(tmpl_dir) ? 0 : -1;
}

static const struct dialect *choose(const char *cfg_rel, const char *override, char *why, size_t n)
{
    char p[PATH_MAX * 2];
    snprintf(p, sizeof p, "%s/%s", tmpl_dir, cfg_rel);
    write_file(p, "x\n");
    return dialect_choose(p, override, why, n);
}

static void test_markers_and_harness_text_name_the_repo(void **state)
{
    (void)state;
    char why[PATH_MAX + 256];
    mk("%s/%s", "clas/ppcls");
    mk("%s/%s", "clas/test_tipc/configs/m");
    const struct dialect *d = choose("clas/test_tipc/configs/m/c.txt", NULL, why, sizeof why);
    assert_int_equal(d->id, DIALECT_CLAS);
    assert_non_null(strstr(why, "/clas/ppcls/ exists"));

    mk("%s/%s", "det/test_tipc/configs");
    char p[PATH_MAX * 2];
    snprintf(p, sizeof p, "%s/det/test_tipc/test_train_inference_python.sh", tmpl_dir);
    write_file(p, "#!/bin/bash\nsource test_tipc/utils_func.sh\n");
    d = choose("det/test_tipc/configs/c.txt", "auto", why, sizeof why);
    assert_int_equal(d->id, DIALECT_DET);
    assert_non_null(strstr(why, "harness"));

    mk("%s/%s", "models/tutorials/tipc/train_infer_python/template/test");
    d = choose("models/tutorials/tipc/train_infer_python/template/test/c.txt", NULL, why, sizeof why);
    assert_int_equal(d->id, DIALECT_TMPL);

    mk("%s/%s", "plain/sub");
    d = choose("plain/sub/c.txt", NULL, why, sizeof why);
    assert_int_equal(d->id, DIALECT_REF);
    assert_non_null(strstr(why, "no repo marker"));
}

static void test_override_wins_and_unknown_names_are_refused(void **state)
{
    (void)state;
    char why[PATH_MAX + 256];
    mk("%s/%s", "clas2/ppcls");
    const struct dialect *d = choose("clas2/c.txt", "reference", why, sizeof why);
    assert_int_equal(d->id, DIALECT_REF);
    assert_string_equal(why, "--dialect reference");
    struct capture c;
    capture_stderr_begin(&c);
    d = choose("clas2/c.txt", "paddleclas", why, sizeof why);
    char *err = capture_stderr_end(&c);
    assert_null(d);
    assert_non_null(strstr(err, "unknown dialect 'paddleclas': expected auto, reference, clas"));
    free(err);
}

static struct plan dialect_plan(enum dialect_id id, const char *file, const char *mode, struct tipc_config *cfg)
{
    assert_int_equal(cfg_load_opts(cfg, file, CFG_ALLOW_SHORT | CFG_ALL_LINES), TIPC_OK);
    struct plan p;
    struct plan_opts o = {.dialect = dialect_get(id), .dialect_why = "test"};
    assert_int_equal(plan_build(&p, cfg, mode, &o), TIPC_OK);
    return p;
}

static struct plan clas_plan(const char *file, const char *mode, struct tipc_config *cfg)
{
    return dialect_plan(DIALECT_CLAS, file, mode, cfg);
}

/* PaddleDetection runs `timeout 5m CMD > LOG` but reports CMD; PaddleSeg names the weights only
 * after the train has run (the token), and falls back to iter_EPOCHS/model.pdparams. */
static void test_det_and_seg_runtime_decisions(void **state)
{
    (void)state;
    struct tipc_config cfg;
    struct plan p = dialect_plan(DIALECT_DET, "tests/fixtures/golden/dialects/det/ppyolo__ppyolo_mbv3_large_coco_train_infer_python.txt",
                                 "lite_train_lite_infer", &cfg);
    int k = 0;
    while (p.st[k].kind != STAGE_TRAIN) k++;
    assert_non_null(strstr(p.st[k].cmd, "LearningRate.base_lr=0.0001 log_iter=1"));
    assert_null(strstr(p.st[k].cmd, "timeout"));
    assert_string_equal(p.st[k].cl.argv[0], "timeout");
    assert_string_equal(p.st[k].cl.argv[1], "5m");
    assert_true(p.st[k].cat_log);
    plan_free(&p);
    cfg_free(&cfg);
    p = dialect_plan(DIALECT_SEG, "tests/fixtures/golden/dialects/seg/mobileseg_mv3__train_infer_python.txt",
                     "lite_train_lite_infer", &cfg);
    k = 0;
    while (p.st[k].kind != STAGE_TRAIN) k++;
    assert_non_null(p.st[k].model_probe);
    assert_non_null(strstr(p.st[k].model_fallback, "iter_"));
    assert_non_null(strstr(p.st[k + 1].cmd, PB_MODEL_TOKEN)); /* eval's weights */
    assert_non_null(p.seg_model);
    assert_non_null(strstr(p.results_header, "lite_train_lite_infer"));
    plan_free(&p);
    cfg_free(&cfg);
}

static void test_clas_short_config_trains_and_reports_the_rest(void **state)
{
    (void)state;
    const char *f = CLAS "GeneralRecognition__GeneralRecognition_PPLCNet_x2_5_train_custom_sampler.txt";
    struct tipc_config cfg;
    /* the reference harness refuses a 26-line file */
    struct capture c;
    capture_stderr_begin(&c);
    assert_int_equal(cfg_load(&cfg, f), TIPC_EUSAGE);
    free(capture_stderr_end(&c));
    struct plan p = clas_plan(f, "lite_train_lite_infer", &cfg);
    assert_int_equal(plan_count_runs(&p), 2); /* gpu_list 0|0,1: two trainings, nothing else */
    assert_int_equal(p.st[0].kind, STAGE_TRAIN);
    assert_non_null(strstr(p.st[0].cmd, "-o Global.epochs=2   -o AMP.use_amp=False"));
    assert_non_null(strstr(p.st[1].cmd, "-m paddle.distributed.launch --devices=0,1 tools/train.py"));
    assert_non_null(strstr(p.st[1].cmd, "-o Global.print_mem_info=True -o Global.log_ranks=0,1,2,3,4,5,6,7"));
    /* GeneralRecognition trains into RecModel/; the status is that train.log, appended to SAVE.log */
    assert_non_null(strstr(p.st[0].status_file, "norm_train_gpus_0_autocast_null_nodes_1/RecModel/train.log"));
    assert_non_null(strstr(p.st[0].append_to, "norm_train_gpus_0_autocast_null_nodes_1.log"));
    assert_int_equal(p.log_dir[0], '/'); /* $(pwd)/test_tipc/output/... */
    assert_int_equal(p.st[2].kind, STAGE_NOTE);
    assert_non_null(strstr(p.st[2].cmd, "eval, export, inference: not configured"));
    plan_free(&p);
    cfg_free(&cfg);
    p = clas_plan(f, "whole_infer", &cfg);
    assert_int_equal(plan_count_runs(&p), 0);
    assert_non_null(strstr(p.st[0].cmd, "whole_infer: not configured"));
    plan_free(&p);
    cfg_free(&cfg);
}

static void test_clas_inference_runs_in_deploy(void **state)
{
    (void)state;
    struct tipc_config cfg;
    struct plan p = clas_plan(CLAS "MobileNetV3__MobileNetV3_large_x1_0_train_infer_python.txt", "lite_train_lite_infer", &cfg);
    int infer = 0;
    for (int i = 0; i < p.n; i++) {
        if (p.st[i].kind != STAGE_INFER) continue;
        infer++;
        assert_string_equal(p.st[i].cwd[0], "deploy");
        assert_int_equal(p.st[i].log_path[0], '/');
    }
    assert_true(infer > 0);
    assert_null(p.st[0].cwd[0]);
    assert_int_equal(p.st[0].cvd, CVD_SET); /* single device: exported before training */
    plan_free(&p);
    cfg_free(&cfg);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_markers_and_harness_text_name_the_repo),
        cmocka_unit_test(test_override_wins_and_unknown_names_are_refused),
        cmocka_unit_test(test_clas_short_config_trains_and_reports_the_rest),
        cmocka_unit_test(test_clas_inference_runs_in_deploy),
        cmocka_unit_test(test_det_and_seg_runtime_decisions),
    };
    return cmocka_run_group_tests(tests, setup, NULL);
}
