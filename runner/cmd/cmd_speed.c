/* cmd_speed.c: `tipc speed`, Paddle's benchmark analysis.py with its command line: a training log
 * in, the speed record out (report/speed.h). `tipc run CONFIG benchmark_train` runs it after each
 * measured training, where benchmark_train.sh runs ${BENCHMARK_ROOT}/scripts/analysis.py. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../cmds.h"
#include "../report/speed.h"
#include "../../core/check.h"
#include "../../core/fs.h"       /* defines: mkdir_p */
#include "../../core/options.h"
#include "../../core/staged.h"   /* defines: write_file_atomic */
#include "../../core/banned.h"

static const char about[] =
    "Turn a training log into a speed record, as Paddle's benchmark analysis.py does (same options,\n"
    "same record: README, benchmark_train): ips is the mean of the KEYWORD values after the first\n"
    "--skip_steps and the max(5%, 5) fastest and slowest of the rest, times the cards of\n"
    "--device_num; convergence_value is the word after the last --convergence_key. The record's\n"
    "model_branch, model_commit, model_run_time, frame_commit and frame_version come from the\n"
    "environment variables of those names.\n";
static const char footer[] =
    "Exit codes: 0 a record with a speed; 1 too few KEYWORD values (more than skip_steps + 10 are\n"
    "needed) or no finite speed: the record is written with ips 0, as analysis.py writes it; 2 usage;\n"
    "5 the log cannot be read or the record written.\n";

int cmd_speed(int argc, char **argv)
{
    struct speed_args a = {.model_name = "model_name", .run_mode = "DP", .device_num = "N1C1",
                           .speed_unit = "images/s", .convergence_key = "", .skip_steps = 0};
    a.base_batch_size = -1;
    const struct opt opts[] = {
        {"--filename", NULL, OPT_STR, &a.filename, NULL, 0, 0, "LOG", "the training log (required)", NULL, NULL},
        {"--speed_log_file", NULL, OPT_STR, &a.speed_log_file, NULL, 0, 0, "FILE", "where the record goes (required)", NULL, NULL},
        {"--model_name", NULL, OPT_STR, &a.model_name, NULL, 0, 0, "NAME", "MODEL_bsN_FP_RUNMODE", NULL, NULL},
        {"--base_batch_size", NULL, OPT_INT, &a.base_batch_size, &a.has_batch, -1000000, 1000000000, "N", "batch size per card", NULL, NULL},
        {"--run_mode", NULL, OPT_STR, &a.run_mode, NULL, 0, 0, "MODE", "DP|MP|PP (default DP)", NULL, NULL},
        {"--fp_item", NULL, OPT_STR, &a.fp_item, NULL, 0, 0, "P", "fp32|fp16|amp|...", NULL, NULL},
        {"--keyword", NULL, OPT_STR, &a.keyword, NULL, 0, 0, "WORD", "the word before each speed value (required), e.g. ips:", NULL, NULL},
        {"--skip_steps", NULL, OPT_INT, &a.skip_steps, NULL, 0, 1000000000, "N", "speed values to skip first (default 0)", NULL, NULL},
        {"--device_num", NULL, OPT_STR, &a.device_num, NULL, 0, 0, "NxCy", "nodes x cards (default N1C1)", NULL, NULL},
        {"--speed_unit", NULL, OPT_STR, &a.speed_unit, NULL, 0, 0, "UNIT", "images/s, samples/s, ... (default images/s)", NULL, NULL},
        {"--convergence_key", NULL, OPT_STR, &a.convergence_key, NULL, 0, 0, "WORD", "the word before the loss, e.g. loss:", NULL, NULL},
        {0},
    };
    const struct opt_cmd cmd = {.name = "speed", .synopsis = "--filename LOG --speed_log_file FILE --keyword WORD [options]",
                                .about = about, .opts = opts, .footer = footer};
    struct opt_result r;
    TRY(opt_parse(&cmd, argc, argv, NULL, &r));
    if (r.help) return TIPC_OK;
    if (!a.filename || !a.speed_log_file || !a.keyword || !*a.keyword) {
        error_msg(TIPC_EUSAGE, "speed: --filename, --speed_log_file and --keyword are required");
        return opt_usage_error(&cmd);
    }
    struct speed_result res;
    enum tipc_status st = speed_analyze(&a, &res);
    if (st != TIPC_OK) res.raised = true;
    char *json = speed_record_json(&a, &res);
    const char *slash = strrchr(a.speed_log_file, '/');
    enum tipc_status ws = TIPC_OK;
    if (slash && slash != a.speed_log_file) {
        char *dir = xstrndup(a.speed_log_file, (size_t)(slash - a.speed_log_file));
        ws = mkdir_p(dir);
        free(dir);
    }
    if (ws == TIPC_OK) ws = write_file_atomic(a.speed_log_file, json, strlen(json));
    int skip = a.skip_steps;
    bool ok = res.ok;
    if (st == TIPC_OK && ok)
        printf("speed: %d '%s' values in %s: the first %d skipped, the mean of the middle ones (%g..%g) x %d "
               "card%s: ips %.3f %s\n", res.nrec, a.keyword, a.filename, skip, res.trimmed_min, res.trimmed_max,
               res.cards, res.cards == 1 ? "" : "s", res.ips, a.speed_unit);
    else if (st == TIPC_OK)
        error_msg(TIPC_EFAIL, "%s: %d '%s' value%s, more than %d needed (--skip_steps %d + 10): the record says ips 0%s",
                  a.filename, res.nrec, a.keyword, res.nrec == 1 ? "" : "s", skip + 10, skip,
                  a.base_batch_size <= 0 ? " (and --base_batch_size must be > 0)" : "");
    printf("%s\n", json);   /* analysis.py prints the record last */
    free(json);
    speed_result_free(&res);
    if (fflush(stdout)) return TIPC_EIO;
    if (st != TIPC_OK) return st;
    if (ws != TIPC_OK) return ws;
    return ok ? TIPC_OK : TIPC_EFAIL;
}
