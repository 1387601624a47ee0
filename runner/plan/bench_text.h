/* bench_text.h: a config's text as physical lines, edited the way benchmark_train.sh edits its copy
 * test_tipc/benchmark_train.txt with sed (plan/bench.c). Line numbers are 1-based physical lines,
 * as sed counts them (empty lines count here; the harness's lines[] skips them). */
#ifndef TIPC_PLAN_BENCH_TEXT_H
#define TIPC_PLAN_BENCH_TEXT_H
#include <stdbool.h>
#include <stddef.h>

struct btext {
    char **line;          /* (n) without their newlines */
    int n;
    bool final_newline;   /* the last line ended with '\n' */
};

void btext_init(struct btext *t, const char *text, size_t len);
void btext_free(struct btext *t);
/* The text again (malloc'ed, NUL-terminated; *len without the NUL). */
char *btext_join(const struct btext *t, size_t *len);
/* Physical line `line`, NULL past the end. */
const char *btext_get(const struct btext *t, int line);

/* Line `line` becomes `text`, as it is (our own rows' edits, not a script's sed). */
void btext_put(struct btext *t, int line, const char *text);
/* Does some line hold `text`? */
bool btext_has(const struct btext *t, const char *text);

/* `sed -i 'LINEs/.*\/TEXT/'`: the line becomes TEXT (sed's `&` and `\c` in it are honoured). No
 * edit, false returned, past the end of the file or when TEXT holds a '/' (sed refuses the s command). */
bool btext_set(struct btext *t, int line, const char *text);
/* func_sed_params FILE LINE VALUE: the line becomes KEY:VALUE, KEY its text before the first ':'. */
bool btext_set_value(struct btext *t, int line, const char *value);
/* `sed -i 's/FROM/TO/g'` (FROM literal: the scripts' patterns hold no regex characters but '.'
 * matching itself). False, no edit, when either holds a '/'. */
bool btext_replace_all(struct btext *t, const char *from, const char *to);

#endif
