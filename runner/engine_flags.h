/* engine_flags.h: the flag parser shared by the subcommands (train, export, infer, bench,
 * run). Step6/argparse style: `--name value` and `--name=value`, short aliases (`-c`, `-b`),
 * switches (`--test-only`, also `--test-only=True`), repeatable lists (`-o K=V`). Numbers go
 * through parse.h; a bad value, a number outside the flag's range or an unknown flag is a usage
 * error naming the flag.
 * Not here: the YAML recipe (engine/io/recipe.h). */
#ifndef TIPC_ENGINE_FLAGS_H
#define TIPC_ENGINE_FLAGS_H
#include <stdbool.h>
#include <stddef.h>

#include "../core/status.h"

enum flag_type { FLAG_STR, FLAG_INT, FLAG_DOUBLE, FLAG_BOOL, FLAG_SWITCH, FLAG_LIST };

struct flag {
    const char *name;   /* "--batch-size" */
    const char *alias;  /* "-b" or NULL */
    enum flag_type type;
    void *dst;          /* char ** | int * | double * | bool * | bool * | struct flag_list * */
    bool *seen;         /* optional: set when the flag was given */
    double min, max;    /* FLAG_INT / FLAG_DOUBLE: the allowed range, checked when min < max (a value
                         * outside it is a usage error naming the flag and the range) */
};

struct flag_list { char **v; int n; size_t cap; };
void flag_list_free(struct flag_list *l);

/* Parse argv[1..argc) against the table (NULL-name terminated). `--help`/`-h` prints usage
 * to stdout and returns TIPC_OK with *help set. Values of FLAG_STR point into argv. */
enum tipc_status flags_parse(const char *cmd, const char *usage, int argc, char **argv,
                             const struct flag *tbl, bool *help);
/* The same, also taking up to `maxpos` positional arguments (in order) into pos[0..*npos);
 * one more is a usage error. flags_parse is this with maxpos 0. */
enum tipc_status flags_parse_args(const char *cmd, const char *usage, int argc, char **argv,
                                  const struct flag *tbl, bool *help, const char **pos, int maxpos, int *npos);

#endif
