/* fuzz_config.c: libFuzzer harness for the TIPC config reader and the plan builder.
 * Any byte string is parsed as a config file and, when it parses, expanded for every MODE
 * (which also runs the command-line parser on every generated command). Errors are fine;
 * crashes, leaks, hangs and sanitizer reports are bugs.
 *   make fuzz FUZZ_SECONDS=600      (corpus seeds: tests/fuzz/corpus/) */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "../../runner/plan/config.h"
#include "../../runner/plan/plan.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct tipc_config cfg;
    if (cfg_parse(&cfg, "fuzz.txt", (const char *)data, size) != TIPC_OK) return 0;
    for (int i = 0; plan_modes[i]; i++) {
        struct plan p;
        struct plan_opts o = {.gpuid = i == 2 ? "0" : NULL};
        if (plan_build(&p, &cfg, plan_modes[i], &o) == TIPC_OK) plan_free(&p);
    }
    char *v = cfg_mode_value(cfg_at(&cfg, 5)->value, "lite_train_lite_infer");
    char *s = cfg_set_param(cfg_at(&cfg, 5)->key, v);
    free(v);
    free(s);
    cfg_free(&cfg);
    return 0;
}
