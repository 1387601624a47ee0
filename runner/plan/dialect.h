/* dialect.h: which Paddle repo's harness a config is run the way of.
 *
 * Every Paddle repo ships its own test_tipc/test_train_inference_python.sh and they differ (launch
 * flags, extra train arguments, save dirs, log paths, how a train's status is decided, what
 * whole_infer does). A dialect is one repo's harness: a row of data (below) plus, where a table
 * cannot say it, that harness's own plan builder (plan_<name>.c). The reference dialect is
 * today's behaviour: Step6's harness for 32-line configs, PaddleOCR's (038a9330) for 51-line ones.
 * 32-line configs always follow Step6, whatever the dialect.
 *
 * Chosen by `--dialect NAME`, else from the repo the config lives in (dialect_detect). */
#ifndef TIPC_DIALECT_H
#define TIPC_DIALECT_H
#include <stdbool.h>
#include <stddef.h>

enum dialect_id { DIALECT_REF, DIALECT_CLAS, DIALECT_DET, DIALECT_SEG, DIALECT_OCR, DIALECT_TMPL, DIALECT_COUNT };

struct dialect {
    enum dialect_id id;
    const char *name;        /* --dialect NAME */
    const char *repo;        /* whose harness, at which commit */
    const char *marker;      /* a folder at the repo root that names the repo, NULL: none */
    const char *signature;   /* a string only this repo's harness file contains, NULL: none */
    bool short_configs;      /* runs configs that stop before line 51 (train-only configs) */
    bool read_all_lines;     /* reads the whole file (`cat`), not only lines 1..51 */
};

const struct dialect *dialect_get(enum dialect_id id);
/* NULL when `name` is no dialect (prints nothing). "auto" is not a name: see dialect_choose. */
const struct dialect *dialect_by_name(const char *name);
/* Comma-separated names, for messages. */
const char *dialect_names(void);

/* Pick the dialect for `config_path`: `override` (a name, or NULL/"auto" for detection). The
 * search looks at the current directory and each folder above the config for a repo marker
 * (ppcls/, ppdet/, paddleseg/, ppocr/, the models template folder) or a harness file
 * test_tipc/test_train_inference_python.sh whose text names the repo. `why` (size `whylen`) gets
 * one line saying what decided. Returns NULL, with an error printed, for an unknown override. */
const struct dialect *dialect_choose(const char *config_path, const char *override, char *why, size_t whylen);

#endif
