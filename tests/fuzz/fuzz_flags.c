/* fuzz_flags.c: libFuzzer harness for the command-line parsers: the subcommands' flag parser
 * (runner/engine_flags.c, a table with every flag type and positionals, as `tipc train` and `tipc
 * run` use it) and `tipc launch`'s (runner/launch.c). The input is split on NUL bytes into argv
 * words; the first byte picks the parser. Errors are fine; crashes, leaks and sanitizer reports are
 * bugs.   make fuzz FUZZ_SECONDS=600 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../../runner/engine_flags.h"
#include "../../runner/launch.h"

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
    if (which) {
        struct launch_opts o;
        launch_parse(&o, argc, argv);
        launch_opts_free(&o);
    } else {
        char *s = NULL;
        int i = 0;
        double d = 0;
        bool b = false, sw = false, help = false, seen = false;
        struct flag_list l = {0};
        const struct flag tbl[] = {
            {"--config", "-c", FLAG_STR, &s, &seen}, {"--epochs", "-e", FLAG_INT, &i, NULL},
            {"--lr", NULL, FLAG_DOUBLE, &d, NULL},   {"--use-gpu", NULL, FLAG_BOOL, &b, NULL},
            {"--test-only", NULL, FLAG_SWITCH, &sw, NULL}, {"--override", "-o", FLAG_LIST, &l, NULL},
            {NULL, NULL, FLAG_STR, NULL, NULL},
        };
        const char *pos[2];
        int npos = 0;
        flags_parse_args("train", "usage: fuzz\n", argc, argv, tbl, &help, pos, 2, &npos);
        flag_list_free(&l);
    }
    free(buf);
    return 0;
}
