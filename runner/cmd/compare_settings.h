/* compare_settings.h: the gate's thresholds (report/compare.h) as option-table rows, shared by
 * `tipc compare` and `tipc run --baseline`, each with its environment variable. */
#ifndef TIPC_COMPARE_SETTINGS_H
#define TIPC_COMPARE_SETTINGS_H
#include "../../core/options.h"
#include "../report/compare.h"

/* `th` is a struct cmp_thresholds lvalue (cmp_thresholds_default first). */
#define COMPARE_OPTS(th)                                                                                   \
    {"--max-ips-drop", NULL, OPT_DOUBLE, &(th).ips_drop, NULL, 0, 100, "PCT",                              \
     "gate: allowed ips drop against the baseline, percent (default 5)", "TIPC_MAX_IPS_DROP", NULL},       \
    {"--max-cpu-ips-drop", NULL, OPT_DOUBLE, &(th).cpu_drop, NULL, 0, 100, "PCT",                          \
     "gate: allowed drop of images per CPU-second, percent (default 5)", "TIPC_MAX_CPU_IPS_DROP", NULL},   \
    {"--max-loss-rise", NULL, OPT_DOUBLE, &(th).loss_rise, NULL, 0, 1e6, "PCT",                            \
     "gate: allowed rise of the final loss, percent of the baseline's (default 5)", "TIPC_MAX_LOSS_RISE", NULL}, \
    {"--max-top1-drop", NULL, OPT_DOUBLE, &(th).top1_drop, NULL, 0, 100, "POINTS",                         \
     "gate: allowed drop of eval top-1, percentage points (default 1)", "TIPC_MAX_TOP1_DROP", NULL}

#endif
