/* manifest.h: configs/datasets.yaml: what `tipc prepare` gets for each model and mode.
 * The format is documented in docs/data.md; in short:
 *
 *   models:
 *     mobilenet_v3_small:
 *       items:
 *         lite_data:                       # an item: a dataset or a weights file
 *           kind: dataset                  # dataset | weights
 *           url: [https://..., file://...] # mirrors, tried in order (a string is fine too)
 *           sha256: 8742...                # required whenever url is given
 *           size: 3235551                  # bytes (optional): the download is cut past it
 *           archive: tar                   # none | tar | tar.gz | zip
 *           archive_root: lite_data        # folder inside the archive to publish (optional)
 *           dest: data/lite_data           # relative to the working directory
 *           fallback: synthetic            # synthetic | none | error
 *           synthetic: {classes: 10, train_per_class: 10, val_per_class: 4, seed: 1}
 *       modes:
 *         lite_train_lite_infer: [lite_data]
 *
 * Unknown keys are errors (file:line), so typos do not silently change what is fetched. */
#ifndef TIPC_MANIFEST_H
#define TIPC_MANIFEST_H
#include <stdbool.h>
#include "synth.h"
#include "../core/status.h"

enum manifest_fallback {
    FALLBACK_ERROR,      /* unavailable -> TIPC_EDATA (default) */
    FALLBACK_SYNTHETIC,  /* unavailable or offline -> the synthetic default dataset (datasets only) */
    FALLBACK_NONE,       /* optional: unavailable -> a warning, nothing made */
};

struct manifest_item {
    char *name;
    int line;                 /* line of the item in the manifest */
    bool weights;             /* kind: weights (a single file) instead of dataset (a folder) */
    char **urls;              /* (n_urls) */
    int n_urls;
    char *sha256;             /* NULL when no url */
    long size;                /* expected download size in bytes; 0: unknown (TIPC_MAX_DOWNLOAD caps it) */
    char *archive;            /* "none", "tar", "tar.gz", "zip" */
    char *archive_root;       /* NULL: the archive's top level */
    char *dest;
    enum manifest_fallback fallback;
    struct synth_config synth;
    char *note;               /* printed when the item is unavailable (e.g. how to get weights) */
};

struct manifest_mode {
    char *name;
    int line;
    int *items;               /* (n) indexes into manifest.items */
    int n;
};

struct manifest {
    char *path;
    char *model;
    struct manifest_item *items;
    int n_items;
    struct manifest_mode *modes;
    int n_modes;
};

/* Load the entries of `model` from the manifest at `path`. Errors name path:line:
 * TIPC_EUSAGE for a malformed manifest or a model it does not list, TIPC_EDATA for an item with
 * a url but no sha256. */
enum tipc_status manifest_load(struct manifest *m, const char *path, const char *model);
/* The mode's entry, or NULL. */
const struct manifest_mode *manifest_find_mode(const struct manifest *m, const char *mode);
void manifest_free(struct manifest *m);

#endif
