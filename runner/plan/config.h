/* config.h: the TIPC line-keyed config file, read the way the original harness reads it.
 *
 * The original does `awk 'NR==1, NR==N{print}' FILE` then splits on newlines into a bash array, so
 * an entry is the i-th NON-EMPTY physical line among the first N lines (N = 32 for the Step6
 * layout, 51 for the PaddleOCR/Clas/Det/Seg layout; whitespace-only lines count, empty ones do not).
 * Keys and values are then read by POSITION, never looked up by name. We keep every entry's
 * physical line so every error can say `file:line`.
 *
 * Deliberate difference (tipc-spec.md): key = text before the first ':', value = everything after
 * it (the original keeps only the text between the 1st and 2nd ':'; identical on every Step6
 * config, and it keeps URLs whole). No globbing, no echo option parsing. */
#ifndef TIPC_CONFIG_H
#define TIPC_CONFIG_H
#include <stdbool.h>
#include <stddef.h>
#include "../../core/status.h"

enum cfg_family {
    CFG_STEP6 = 32,   /* PaddlePaddle/models Step6 layout: `trainer:` at line 13 */
    CFG_FULL = 51,    /* PaddleOCR template layout (also Clas/Det/Seg): `trainer:` at line 15 */
};

struct cfg_entry {
    char *raw;    /* the whole line, without its newline */
    char *key;    /* text before the first ':' (the whole line if there is none) */
    char *value;  /* text after the first ':' ("" if there is none) */
    bool has_colon;
    int line;     /* 1-based physical line number in the file */
};

struct tipc_config {
    char *path;              /* as given */
    enum cfg_family family;
    struct cfg_entry *e;     /* (n) entries by position: e[0] is the header line */
    int n;
    int nlines;              /* physical lines in the file */
    bool short_layout;       /* 51-line layout that stops early (CFG_ALLOW_SHORT) */
    char sha256[65];         /* SHA-256 of the bytes read (hex): which config this is, for `tipc run`'s job id */
};

enum cfg_flags {
    CFG_ALLOW_SHORT = 1, /* accept a 51-line-layout file with fewer entries (PaddleClas train-only configs) */
    CFG_ALL_LINES = 2,   /* keep entries past physical line 51 (harnesses that `cat` the whole file) */
};

/* Parse `len` bytes of `text` (need not be NUL-terminated) read from `path`. On error prints one
 * line `path:line: what is wrong` and returns TIPC_EUSAGE; `cfg` is then empty (safe to free). */
enum tipc_status cfg_parse(struct tipc_config *cfg, const char *path, const char *text, size_t len);
enum tipc_status cfg_parse_opts(struct tipc_config *cfg, const char *path, const char *text, size_t len,
                                unsigned flags);
/* Read and parse a file. Missing/unreadable file is TIPC_EUSAGE with `path: reason`. */
enum tipc_status cfg_load(struct tipc_config *cfg, const char *path);
enum tipc_status cfg_load_opts(struct tipc_config *cfg, const char *path, unsigned flags);
void cfg_free(struct tipc_config *cfg);

/* The physical line that holds `word` (an option "--epoch=5" or a path): the entry keyed by its name
 * (the text before '='), else the first whose value holds it as a word; `fallback` when none. For
 * messages about one flag or file of a command built from several lines. */
int cfg_line_of(const struct tipc_config *cfg, const char *word, int fallback);

/* Entry at 0-based position i (the original's lines[i]); an empty static entry when out of range. */
const struct cfg_entry *cfg_at(const struct tipc_config *cfg, int i);

/* The original's func_parser_params: in value `m1=v1|m2=v2`, the text between the first and
 * second '=' of the first item whose mode equals `mode`; "" if none. Returns a malloc'ed string. */
char *cfg_mode_value(const char *value, const char *mode);

/* The original's func_set_params: " " if key is "null", or value is "null", " " or empty;
 * otherwise "key=value". Returns a malloc'ed string. */
char *cfg_set_param(const char *key, const char *value);

/* Split `s` on `sep` the way bash word-splits an unquoted expansion with a one-character,
 * non-whitespace IFS: empty fields between separators are kept, a trailing separator does not
 * start a new field, an empty string gives zero fields. Returns count; *out is a NULL-terminated
 * vector of malloc'ed strings (free with strv_free, core/strv.h), NULL for zero fields. */
int cfg_split(const char *s, char sep, char ***out);

#endif
