/* prepare.h: `tipc prepare`: make a mode's dataset and weights ready, from the manifest.
 *
 * For each item the mode lists: already ready (DEST/.tipc-prepared, or a user-provided DEST) ->
 * nothing; else fetch (mirrors in order) + verify + extract + publish; when that is impossible
 * (offline, unreachable) -> the item's fallback (synthetic dataset, optional-skip, or error).
 * Offline skips every non-file:// URL. Not here: the downloading (fetch.h), unpacking
 * (extract.h), the generator (synth.h). */
#ifndef TIPC_PREPARE_H
#define TIPC_PREPARE_H
#include <stdbool.h>
#include <stddef.h>
#include "fetch.h"
#include "../core/status.h"

/* Which data a prepare made ready, item by item: the run's record of it (JUnit, metrics, report). */
struct prepare_item_record {
    char *name, *dest;
    char *origin;        /* "fetched URL (sha256 verified)", "synthetic default (offline): synthetic classes=10 ...",
                          * "ready: URL", "provided by the user", "absent (optional): offline" */
    bool synthetic;      /* generated images, not the dataset the manifest names */
    bool absent;         /* an optional item that is not there */
};
struct prepare_record {
    struct prepare_item_record *v;
    int n;
    size_t cap;
};
void prepare_record_free(struct prepare_record *r);

struct prepare_opts {
    bool offline;               /* no network: file:// URLs and fallbacks only */
    bool force;                 /* redo items even when ready */
    bool real_data;             /* real data or fail: a dataset that would be (or was) the synthetic
                                   fallback is fetched, or the prepare fails (TIPC_EDATA) */
    const char *manifest;       /* NULL: find it (see prepare_find_manifest) */
    bool skip_unwritable;       /* an item that is not ready and whose folder cannot be written here
                                   (a read-only checkout), but that has a fallback, is skipped with a
                                   note: the synthetic fallback is what a recipe's `synthetic: auto`
                                   makes in memory anyway (prepare_for_run sets it) */
    struct fetch_opts fetch;
    struct prepare_record *record;   /* not NULL: each item's outcome is appended there */
};

/* Defaults: online, the manifest found by prepare_find_manifest, fetch_opts_default(). The
 * environment (TIPC_OFFLINE, TIPC_MANIFEST, the download knobs) is read by the commands' option
 * tables (runner/cmd/prepare_settings.h), not here. */
void prepare_opts_default(struct prepare_opts *o);

/* The manifest to use for a config without --manifest / TIPC_MANIFEST: <config dir>/../datasets.yaml, else
 * ./configs/datasets.yaml. malloc'ed; NULL (message printed) when none exists. */
char *prepare_find_manifest(const char *config_path);

/* model_name from line 2 of a TIPC config (`model_name:NAME`), malloc'ed; NULL + message. */
char *prepare_read_model_name(const char *config_path);

/* Prepare `mode` of `model` (NULL: read it from the config). Prints one line per item. */
enum tipc_status prepare_mode(const char *config_path, const char *model, const char *mode,
                              const struct prepare_opts *o);

/* What `tipc run` calls before training for our own configs (python:tipc): `o` as run's options
 * made it (offline unless TIPC_OFFLINE=0), quiet progress; prints one or two lines. TIPC_EDATA /
 * TIPC_EUSAGE on failure. */
enum tipc_status prepare_for_run(const char *config_path, const char *model_name, const char *mode,
                                 const struct prepare_opts *o);

/* `tipc prepare --url`: fetch one verified file into DIR (named after the URL's last segment);
 * with extract, unpack it into DIR/<name without extension> atomically. */
enum tipc_status prepare_url(const char *url, const char *sha256, const char *dir, bool extract,
                             const struct fetch_opts *o);

/* `tipc prepare --bench-loader DIR`: run the engine's loader over DIR's train split (eval split
 * with eval) for `steps` batches after one warm-up batch and print img/s and img/s per thread. */
enum tipc_status prepare_bench_loader(const char *dir, int batch, int crop, int threads, int steps, bool eval);

#endif
