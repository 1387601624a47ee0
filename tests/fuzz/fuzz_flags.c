/* fuzz_flags.c: libFuzzer harness for the command-line parser (core/options.c, a table with every
 * option type, ranges, an environment-only entry and positionals, as the subcommands use it) and
 * `tipc launch`'s table (runner/launch/flags.c). The input is split on NUL bytes into argv words;
 * the first byte picks the table. Errors are fine; crashes, leaks and sanitizer reports are bugs.
 *   make fuzz FUZZ_SECONDS=600 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../core/options.h"
#include "../../core/strv.h"
#include "../../runner/launch/launch.h"

static enum tipc_status fn_any(const struct opt *o, const char *v, void *dst)
{
    (void)o;
    *(size_t *)dst = strlen(v);
    return TIPC_OK;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1) return 0;
    int which = data[0] & 1;
    char *buf = malloc(size);
    memcpy(buf, data + 1, size - 1);
    buf[size - 1] = 0;
    char *argv[65];
    int argc = 0;
    argv[argc++] = which ? "launch" : "train";
    for (char *p = buf; p < buf + size - 1 && argc < 64; p += strlen(p) + 1) argv[argc++] = p;
    argv[argc] = NULL;
    FILE *saved = stdout;
    stdout = fopen("/dev/null", "w");   /* --help prints the usage */
    if (which) {
        struct launch_opts o;
        launch_parse(&o, argc, argv, NULL);
        launch_opts_free(&o);
    } else {
        const char *s = NULL, *e = NULL;
        int i = 0;
        long l = 0;
        double d = 0;
        size_t n = 0;
        bool b = false, sw = false, seen = false;
        struct strv lst = STRV_INIT;
        const struct opt tbl[] = {
            {"--config", "-c", OPT_STR, &s, &seen, 0, 0, "YAML", "recipe", NULL, NULL},
            {"--epochs", "-e --epoch-count", OPT_INT, &i, NULL, 0, 1000, "N", "epochs", NULL, NULL},
            {"--bytes", NULL, OPT_LONG, &l, NULL, 1, 1 << 20, "B", "bytes", NULL, NULL},
            {"--lr", NULL, OPT_DOUBLE, &d, NULL, 0, 10, "F", "lr", NULL, NULL},
            {"--use-gpu", NULL, OPT_BOOL, &b, NULL, 0, 0, "BOOL", "gpu", NULL, NULL},
            {"--test-only", NULL, OPT_SWITCH, &sw, NULL, 0, 0, NULL, "test", NULL, NULL},
            {"--override", "-o", OPT_LIST, &lst, NULL, 0, 0, "K=V", "override", NULL, NULL},
            {"--fn", NULL, OPT_FN, &n, NULL, 0, 0, "X", "callback", NULL, fn_any},
            {"FUZZ_OPT_ENV", NULL, OPT_STR, &e, NULL, 0, 0, "V", "env only", "FUZZ_OPT_ENV", NULL},
            {NULL, NULL, OPT_STR, NULL, NULL, 0, 0, NULL, NULL, NULL, NULL},
        };
        const struct opt_cmd cmd = {.name = "train", .synopsis = "[options] A [B]", .opts = tbl, .max_pos = 2};
        const char *pos[2];
        struct opt_result r;
        opt_parse(&cmd, argc, argv, pos, &r);
        strv_clear(&lst);
    }
    fclose(stdout);
    stdout = saved;
    free(buf);
    return 0;
}
