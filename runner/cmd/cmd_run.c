/* cmd_run.c: `tipc run CONFIG MODE`'s front door: the option table; the run itself is run/run.c
 * (read the config, build the plan, run every stage as the original harness does, report). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "../cmds.h"           /* defines: cmd_run */
#include "../run/run.h"        /* defines: run_config, struct run_opts */
#include "../../core/check.h"
#include "../../core/options.h" /* defines: opt_parse */
#include "compare_settings.h"  /* defines: COMPARE_OPTS */
#include "prepare_settings.h"  /* defines: PREPARE_ENV_OPTS */
#include "../../core/banned.h"

static const char about[] =
    "Run a TIPC config's chain for MODE, exactly as test_tipc/test_train_inference_python.sh would:\n"
    "training for each gpu_list item and trainer, eval, export, then inference for each use_gpu x\n"
    "batch size (x threads x mkldnn x trt x precision in 51-line configs). A failed stage does not\n"
    "stop the later ones. Each stage prints `Run successfully with command - MODEL - CMD!` or\n"
    "`Run failed with command - MODEL - CMD!` and appends it to OUTPUT/results_python.log; the run\n"
    "ends with `N passed, N failed` and exits 1 if any stage failed.\n"
    "\n"
    "MODE: lite_train_lite_infer, lite_train_whole_infer, whole_infer, whole_train_whole_infer,\n"
    "      klquant_whole_infer, benchmark_train. GPUID (whole_infer only): exported as\n"
    "      CUDA_VISIBLE_DEVICES.\n"
    "benchmark_train: the config's train_benchmark_params section, as the repo's\n"
    "test_tipc/benchmark_train.sh runs it: each batch size x precision x device layout trains, its\n"
    "log goes to SAVE_LOG/train_log/REPO_MODEL_bsN_FP_DP_NxCy_log and `tipc speed` turns it into the\n"
    "speed record SAVE_LOG/index/..._speed (SAVE_LOG: --output, else BENCHMARK_LOG_DIR, else the\n"
    "current folder; ./logs/MODEL/benchmark_train for python:tipc configs). PARAMS\n"
    "(MODELTYPE_bsN_FP_RUNMODE_NxCy, e.g. dynamic_bs8_fp32_DP_N1C1) runs that one case.\n";
static const char footer[] =
    "Commands run with fork/execvp, never through a shell: `> FILE`, `>> FILE` and `2>&1` are applied\n"
    "by tipc; other shell syntax in a command is refused (exit 2, nothing run).\n";

/* "300", "90s", "5m", "2h", "1d" (a number with an optional unit, as timeout(1) takes it) into
 * seconds in (0, 30 days]. */
static bool parse_duration(const char *v, double *out)
{
    char *end;
    errno = 0;
    double x = strtod(v, &end);
    if (end == v || errno || !(x > 0)) return false;
    double unit = 1;
    if (*end == 's') unit = 1, end++;
    else if (*end == 'm') unit = 60, end++;
    else if (*end == 'h') unit = 3600, end++;
    else if (*end == 'd') unit = 86400, end++;
    if (*end) return false;
    *out = x * unit;
    return *out <= 30 * 86400.0;
}

static enum tipc_status parse_args(int argc, char **argv, struct run_opts *a, bool *help)
{
    memset(a, 0, sizeof *a);
    prepare_opts_default(&a->prep);
    cmp_thresholds_default(&a->th);
    a->prep.offline = true;   /* a run never waits on the network unless asked */
    const struct opt opts[] = {
        {"--dry-run", NULL, OPT_SWITCH, &a->dry_run, NULL, 0, 0, NULL, "print the commands this node would run, run nothing", NULL, NULL},
        {"--node_ip", NULL, OPT_STR, &a->node_ip, NULL, 0, 0, "IP",
         "this node's address in gpu_list's IP list (passed to `tipc launch` as POD_IP)", NULL, NULL},
        {"--output", NULL, OPT_STR, &a->output, NULL, 0, 0, "DIR",
         "output root (default ./test_tipc/output/MODEL/MODE for Paddle configs and\n"
         "configs under a test_tipc/ folder, ./logs/MODEL/MODE for python:tipc configs)", NULL, NULL},
        {"--junit", NULL, OPT_STR, &a->junit, NULL, 0, 0, "FILE", "also write a JUnit XML report", NULL, NULL},
        {"--skip-gpu", NULL, OPT_STR, &a->skip_gpu, NULL, 0, 0, "REASON",
         "this machine has no GPU: report the stages that need one (inference with\n"
         "use_gpu=True; a Paddle config's training on a device) as skipped with REASON\n"
         "(table, JUnit, report) instead of running them; they do not fail the run\n"
         "(default: they run, and fail where there is no GPU)", "TIPC_SKIP_GPU", NULL},
        {"--real-data", NULL, OPT_SWITCH, &a->prep.real_data, NULL, 0, 0, NULL,
         "real data or fail: the dataset is downloaded when missing (unless TIPC_OFFLINE=1)\n"
         "and never replaced by the synthetic default, and training refuses synthetic\n"
         "data (exit 3); without it the reports say which data was used", "TIPC_REAL_DATA", NULL},
        {"--no-prepare", NULL, OPT_SWITCH, &a->no_prepare, NULL, 0, 0, NULL,
         "for python:tipc configs, do not run `tipc prepare CONFIG MODE` first\n"
         "(it is offline by default: TIPC_OFFLINE=0 lets it download; exit 3 on failure)", NULL, NULL},
        {"--stage-timeout", NULL, OPT_STR, &a->timeout_text, NULL, 0, 0, "DURATION",
         "stop a stage that runs longer (300, 90s, 5m, 2h, 1d; default: none): SIGTERM to it and every process it started, SIGKILL 5 s later; the\n"
         "stage is `Run failed` (status 124) with the reason on stderr, later stages run",
         "TIPC_STAGE_TIMEOUT", NULL},
        {"--dialect", NULL, OPT_STR, &a->dialect, NULL, 0, 0, "NAME",
         "whose harness to follow: auto (default: from the repo the config is in),\n"
         "reference, clas, det, seg, ocr, tmpl (README: dialects)", NULL, NULL},
        {"--prepare", NULL, OPT_SWITCH, &a->prepare, NULL, 0, 0, NULL,
         "first run the repo's own `bash test_tipc/prepare.sh CONFIG MODE` (from the\n"
         "current folder, no shell in between); its failure stops the run (exit 3)", NULL, NULL},
        {"--max-restarts", "--max_restarts", OPT_INT, &a->max_restarts, NULL, 0, 1000, "N",
         "a launched training (`tipc launch`, python:tipc configs) survives N rank failures:\n"
         "the job re-forms and resumes from its newest checkpoint (step checkpoints with\n"
         "Global.save_interval_steps / --save-steps, else the last epoch's); default 0",
         "TIPC_MAX_RESTARTS", NULL},
        {"--repeat", NULL, OPT_INT, &a->repeat, NULL, 1, 1000, "N",
         "benchmark_train: run every case N times, repeat K under SAVE_LOG/repeat_K/\n"
         "(the gate compares medians; the repeats' range is its noise); default 1", NULL, NULL},
        {"--baseline", NULL, OPT_STR, &a->baseline, NULL, 0, 0, "DIR",
         "at the end, compare this run's speed records (benchmark_train) or metrics with\n"
         "DIR's, as `tipc compare DIR THIS-RUN`: a table, a JUnit testcase per figure, the\n"
         "report's curves beside the baseline's; exit 1 on a regression", NULL, NULL},
        COMPARE_OPTS(a->th),
        PREPARE_ENV_OPTS(a->prep),
        {0},
    };
    const struct opt_cmd cmd = {.name = "run", .synopsis = "CONFIG MODE [GPUID|PARAMS] [options]", .about = about,
                                .opts = opts, .footer = footer, .max_pos = 3};
    const char *pos[3] = {0};
    struct opt_result r;
    TRY(opt_parse(&cmd, argc, argv, pos, &r));
    if ((*help = r.help)) return TIPC_OK;
    const char *opt[][2] = {{"--node_ip", a->node_ip}, {"--output", a->output}, {"--junit", a->junit},
                            {"--dialect", a->dialect}, {"--skip-gpu", a->skip_gpu}, {"--baseline", a->baseline}};
    for (size_t k = 0; k < sizeof opt / sizeof opt[0]; k++)
        if (opt[k][1] && !*opt[k][1]) return error_msg(TIPC_EUSAGE, "option '%s' needs a non-empty value", opt[k][0]);
    if (a->timeout_text && strcmp(a->timeout_text, "0") && !parse_duration(a->timeout_text, &a->timeout_s))
        return error_msg(TIPC_EUSAGE, "--stage-timeout (or TIPC_STAGE_TIMEOUT) '%s': want a duration in 1s..30d "
                         "such as 300, 90s, 5m, 2h (0: none)", a->timeout_text);
    /* real data asked for: the run may download it, unless the user said offline */
    const char *off = getenv("TIPC_OFFLINE");
    if (a->prep.real_data && !(off && *off)) a->prep.offline = false;
    if (r.npos < 2) {
        error_msg(TIPC_EUSAGE, "run: missing %s", r.npos ? "MODE" : "CONFIG and MODE");
        return opt_usage_error(&cmd);
    }
    a->config = pos[0];
    a->mode = pos[1];
    a->gpuid = pos[2];
    return TIPC_OK;
}

/* For the run's check of its tipc commands' options (run/optcheck.h). */
static run_cmd_fn find_cmd(const char *name)
{
    const struct cmd *c = cmd_find(name);
    return c ? c->fn : NULL;
}

int cmd_run(int argc, char **argv)
{
    struct run_opts a;
    bool help;
    enum tipc_status st = parse_args(argc, argv, &a, &help);
    if (st != TIPC_OK) {
        run_refused(&a, st);   /* no stale green in the --junit file */
        return st;
    }
    a.find_cmd = find_cmd;   /* after parse_args, which clears a */
    return help ? TIPC_OK : run_config(&a);
}
