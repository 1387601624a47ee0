/* options.h: the one command-line parser of every tipc command (git's parse-options): each command
 * declares a table of its options, and the parser, the usage text (`tipc help CMD`, `CMD --help`),
 * range checks, environment defaults and did-you-mean hints all come from that table.
 *
 * Spellings: `--name value` and `--name=value`; '-' and '_' are the same inside a name
 * (`--amp-level` = `--amp_level`); `alias` adds spellings (`-b`, torchrun's `--nproc-per-node`);
 * a switch also takes `--name=True|False`. `--` ends the options. A bad value, a value outside
 * [min, max] or an unknown option is a usage error (TIPC_EUSAGE, exit 2) naming the option.
 * Adding an option is one line in the command's table. */
#ifndef TIPC_OPTIONS_H
#define TIPC_OPTIONS_H
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "status.h"

enum opt_type {
    OPT_STR,     /* const char ** (points into argv or the environment) */
    OPT_INT,     /* int * */
    OPT_LONG,    /* long * */
    OPT_DOUBLE,  /* double * */
    OPT_BOOL,    /* bool *; a value is required: True/False, 1/0, yes/no */
    OPT_SWITCH,  /* bool *; no value (true), or --name=BOOL */
    OPT_FLAG,    /* bool *; no value at all (true); --name=X is an error */
    OPT_LIST,    /* struct strv * (strv.h); every occurrence is appended (a copy) */
    OPT_FN,      /* fn(opt, value, dst) parses the value itself */
};

struct opt;
typedef enum tipc_status (*opt_fn)(const struct opt *o, const char *value, void *dst);

/* An entry whose name does not start with '-' is an environment-only setting: `env` is read, the
 * command line cannot set it, and the usage lists it under "environment:". */
struct opt {
    const char *name;   /* "--batch-size" (or "TIPC_OFFLINE": environment only); NULL ends the table */
    const char *alias;  /* other spellings, space separated ("-b", "--devices --selected_gpus"), or NULL */
    enum opt_type type;
    void *dst;          /* see enum opt_type */
    bool *seen;         /* optional: set when the option was given (or came from `env`) */
    double min, max;    /* numeric types: allowed range when min < max (inclusive) */
    const char *arg;    /* value's name in the usage ("N", "DIR"); NULL: "VALUE" */
    const char *help;   /* what it does, for the usage; '\n' starts a continuation line */
    const char *env;    /* environment variable used when the option is not given, or NULL */
    opt_fn fn;          /* OPT_FN only */
};


/* A command's command line. */
struct opt_cmd {
    const char *name;      /* "train": messages say "train: ...", hints 'tipc help train' */
    const char *synopsis;  /* after "usage: tipc NAME "; further lines "\n" are "   or: tipc NAME ..." */
    const char *about;     /* paragraph(s) between the synopsis and the options, or NULL */
    const struct opt *opts;
    const char *footer;    /* paragraph(s) after the options, or NULL */
    int max_pos;           /* positional arguments taken (in order) */
    bool stop_at_pos;      /* the first positional argument ends the options (launch's CMD ARGS...) */
};

/* What opt_parse found besides the options. */
struct opt_result {
    bool help;          /* --help/-h was given: the usage was printed to stdout, nothing else parsed */
    const char **pos;   /* positional arguments (caller's array of max_pos entries) */
    int npos;
    int rest;           /* stop_at_pos: index in argv of the first word not parsed (argc if none) */
};

/* Parse argv[1..argc) (argv[0] is the command word). `pos` holds max_pos entries (may be NULL when
 * max_pos is 0). Errors are printed; returns TIPC_OK or TIPC_EUSAGE. */
enum tipc_status opt_parse(const struct opt_cmd *c, int argc, char **argv, const char **pos,
                           struct opt_result *r);
/* Check mode, for `tipc run --dry-run`, which checks the command lines of tipc's own commands that a
 * config builds without running them: while on, opt_parse parses argv as usual (an unknown option
 * or a bad value is an error with its did-you-mean hint) but neither reads the environment nor
 * honours --help, and on success returns as for --help (r->help set, nothing printed), so the
 * command returns without doing anything else. opt_check_result() then says where a stop_at_pos
 * command's CMD starts (launch's), and on an error which word was wrong. */
struct opt_check {
    int rest;            /* index of the first word not parsed (argc if none) */
    const char *bad;     /* the word being parsed when the error came, NULL when none */
};
void opt_check_mode(bool on);
const struct opt_check *opt_check_result(void);

/* Describe mode, for `tipc help man` and `tipc help completion`, which are generated from the option
 * tables: while a hook is set, opt_parse hands the command's table to it (valid during the call only)
 * and returns as for --help, nothing parsed or printed. NULL: off. */
typedef void (*opt_describe_fn)(const struct opt_cmd *c, void *ctx);
void opt_describe(opt_describe_fn fn, void *ctx);
/* Does the option take a value (not a switch or flag)? Is it an environment-only row? */
bool opt_takes_value(const struct opt *o);
bool opt_env_only(const struct opt *o);

/* The generated usage text. */
void opt_usage(const struct opt_cmd *c, FILE *f);
/* Print the usage to stderr (for bad usage); returns TIPC_EUSAGE. */
enum tipc_status opt_usage_error(const struct opt_cmd *c);

/* An OPT_FN parser for `on|off` (also True/False, 1/0) into a bool *dst. */
enum tipc_status opt_on_off(const struct opt *o, const char *value, void *dst);
/* An OPT_FN parser for `auto|on|off` into an int *dst: 0 auto, 1 off, 2 on (the order of
 * enum comm_shm_mode and the like). */
enum tipc_status opt_auto_on_off(const struct opt *o, const char *value, void *dst);

/* Damerau-Levenshtein (optimal string alignment) distance between a and b. */
int opt_edit_distance(const char *a, const char *b);
/* The candidate closest to `word`, if close enough to be a plausible typo (git's did-you-mean),
 * else NULL. candidates: NULL-terminated. */
const char *opt_suggest(const char *word, const char *const *candidates);

#endif
