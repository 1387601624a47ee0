/* cmd_compare.c: `tipc compare BASELINE NEW`, the speed and convergence gate (report/compare.h):
 * a table per case and figure, exit 1 past the limits. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../cmds.h"
#include "compare_settings.h"   /* defines: COMPARE_OPTS */
#include "../report/compare.h"
#include "../report/report.h"   /* defines: report_compare_junit */
#include "../../core/check.h"
#include "../../core/options.h"
#include "../../core/banned.h"

static const char about[] =
    "Compare a new run's speed and convergence with a baseline's. BASELINE and NEW are each a speed\n"
    "record (index/..._speed, from `tipc run CONFIG benchmark_train` or Paddle's analysis.py), a\n"
    "run's tipc/metrics.jsonl, or a folder: every speed record under it, else every metrics.jsonl.\n"
    "Several records of one case (repeat_K/ folders, several runs) are its repeats: the median is\n"
    "compared, and the range of the repeats is the noise. A figure fails when it is worse than its\n"
    "threshold and than that noise; past the threshold but within the noise it is `within noise`.\n"
    "Figures: ips (images/s), final loss, eval top-1 (metrics files).\n";
static const char footer[] =
    "Exit codes: 0 no regression; 1 a regression, a case the new run lacks, or a new figure that is no\n"
    "number (a training whose analysis found too few steps); 2 usage, or an input that holds nothing\n"
    "to compare; 5 an input or --junit cannot be read or written.\n";

int cmd_compare(int argc, char **argv)
{
    struct cmp_thresholds th;
    cmp_thresholds_default(&th);
    const char *junit = NULL;
    const struct opt opts[] = {
        COMPARE_OPTS(th),
        {"--junit", NULL, OPT_STR, &junit, NULL, 0, 0, "FILE", "also write a JUnit report: a testcase per figure", NULL, NULL},
        {0},
    };
    const struct opt_cmd cmd = {.name = "compare", .synopsis = "BASELINE NEW [options]", .about = about, .opts = opts,
                                .footer = footer, .max_pos = 2};
    const char *pos[2] = {0};
    struct opt_result r;
    TRY(opt_parse(&cmd, argc, argv, pos, &r));
    if (r.help) return TIPC_OK;
    if (r.npos < 2) {
        error_msg(TIPC_EUSAGE, "compare: missing %s", r.npos ? "NEW" : "BASELINE and NEW");
        return opt_usage_error(&cmd);
    }
    if (junit && !*junit) return error_msg(TIPC_EUSAGE, "option '--junit' needs a non-empty value");
    struct cmp_result res;
    TRY(compare_paths(pos[0], pos[1], &th, &res));
    compare_print(&res, stdout);
    enum tipc_status st = junit ? report_compare_junit(&res, junit) : TIPC_OK;
    int fails = compare_failures(&res);
    compare_free(&res);
    if (fflush(stdout)) return TIPC_EIO;
    return st != TIPC_OK ? st : fails ? TIPC_EFAIL : TIPC_OK;
}
