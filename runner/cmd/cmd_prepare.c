/* cmd_prepare.c: `tipc prepare`: the command line over prepare/ (manifest-driven preparation,
 * one-file fetch, the synthetic generator) plus a loader benchmark for scripts/bench. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <turbojpeg.h>

#include "../cmds.h"
#include "../../prepare/prepare.h"       /* defines: prepare_mode, prepare_url */
#include "../../prepare/synth.h"         /* defines: synth_dataset, synth_jpeg */
#include "../../core/fs.h"        /* defines: mkdir_p */
#include "../../core/check.h"
#include "../../core/options.h"
#include "prepare_settings.h"
#include "../../core/banned.h"

static const char synopsis[] =
    "CONFIG MODE [--offline] [--force] [--manifest FILE] [--model NAME]\n"
    "--url URL --sha256 HEX --dest DIR [--extract]\n"
    "--synthetic DIR [--classes N] [--train-per-class N] [--val-per-class N] [--seed N]\n"
    "--demo-jpeg FILE\n"
    "--bench-loader DATA_DIR [--batch-size N] [--crop N] [--threads N] [--steps N] [--eval]";
static const char about[] =
    "Make MODE's dataset and weights ready, as the manifest (configs/datasets.yaml, see docs/data.md)\n"
    "says: an item already prepared is left alone; otherwise it is fetched (http, https, file URLs;\n"
    "retries, resume, sha256 verified before use), extracted safely into a temp dir and renamed into\n"
    "place; when that is impossible (offline, unreachable) the item's fallback is used: the embedded\n"
    "synthetic dataset (deterministic JPEGs, PaddleClas lists) for our model's lite data.\n";
static const char footer[] =
    "`tipc run` prepares offline unless TIPC_OFFLINE=0. Download size cap: the manifest's size:, else\n"
    "TIPC_MAX_DOWNLOAD bytes, default 16 GiB. An option not given takes its environment variable\n"
    "(named in brackets); a bad value there is a usage error (exit 2), as on the command line.\n";

struct args {
    const char *pos[2];
    const char *url, *sha256, *dest, *synthetic, *demo, *bench, *manifest, *model;
    bool extract, eval;
    int classes, train_pc, val_pc, seed, batch, crop, threads, steps;
};

static enum tipc_status write_demo(const char *path)
{
    struct synth_config c;
    synth_config_default(&c);
    unsigned char *jpg = NULL;
    unsigned long n = 0;
    TRY(synth_jpeg(&c, 4, 424242, 320, 240, &jpg, &n));
    char *dir = path_dirname(path);
    enum tipc_status st = mkdir_p(dir) == TIPC_OK ? TIPC_OK : TIPC_EIO;
    free(dir);
    if (st == TIPC_OK) st = write_file_atomic(path, jpg, n);
    if (st == TIPC_OK)   /* the JPEG itself may be on stdout (--demo-jpeg /dev/stdout): the note goes aside */
        fprintf(staged_stdio_fd(path) == 1 ? stderr : stdout, "prepare: wrote '%s' (%lu bytes, 320x240)\n", path, n);
    tjFree(jpg);
    return st;
}

int cmd_prepare(int argc, char **argv)
{
    struct prepare_opts o;
    prepare_opts_default(&o);
    struct args a = {.classes = 10, .train_pc = 10, .val_pc = 4, .seed = 1, .batch = 64, .crop = 224,
                     .threads = 0, .steps = 20};
    const struct opt opts[] = {
        {"--offline", NULL, OPT_SWITCH, &o.offline, NULL, 0, 0, NULL, "no network: only file:// URLs and fallbacks", "TIPC_OFFLINE", NULL},
        {"--force", NULL, OPT_SWITCH, &o.force, NULL, 0, 0, NULL, "redo items that are already prepared", NULL, NULL},
        {"--real-data", NULL, OPT_SWITCH, &o.real_data, NULL, 0, 0, NULL,
         "real data or fail: a dataset is never the synthetic fallback (one made\n"
         "earlier is fetched again); exit 3 when it cannot be fetched", "TIPC_REAL_DATA", NULL},
        {"--manifest", NULL, OPT_STR, &a.manifest, NULL, 0, 0, "FILE",
         "default: CONFIG's ../datasets.yaml, configs/datasets.yaml", "TIPC_MANIFEST", NULL},
        {"--model", NULL, OPT_STR, &a.model, NULL, 0, 0, "NAME", "default: line 2 of CONFIG (model_name:NAME)", NULL, NULL},
        {"--url", NULL, OPT_STR, &a.url, NULL, 0, 0, "URL", "fetch one verified file into --dest DIR (and with --extract\n"
         "unpack it there atomically)", NULL, NULL},
        {"--sha256", NULL, OPT_STR, &a.sha256, NULL, 0, 0, "HEX", "the --url file's sha256 (required with --url)", NULL, NULL},
        {"--dest", NULL, OPT_STR, &a.dest, NULL, 0, 0, "DIR", "where --url goes", NULL, NULL},
        {"--extract", NULL, OPT_SWITCH, &a.extract, NULL, 0, 0, NULL, "unpack the --url archive", NULL, NULL},
        {"--synthetic", NULL, OPT_STR, &a.synthetic, NULL, 0, 0, "DIR", "write the synthetic dataset to DIR", NULL, NULL},
        {"--classes", NULL, OPT_INT, &a.classes, NULL, 1, 1000, "N", "synthetic classes (default 10)", NULL, NULL},
        {"--train-per-class", NULL, OPT_INT, &a.train_pc, NULL, 1, 100000, "N", "synthetic train images per class (default 10)", NULL, NULL},
        {"--val-per-class", NULL, OPT_INT, &a.val_pc, NULL, 1, 100000, "N", "synthetic val images per class (default 4)", NULL, NULL},
        {"--seed", NULL, OPT_INT, &a.seed, NULL, 0, 1 << 30, "N", "synthetic seed (default 1)", NULL, NULL},
        {"--demo-jpeg", NULL, OPT_STR, &a.demo, NULL, 0, 0, "FILE", "write the demo image (images/demo.jpg of the repository)", NULL, NULL},
        {"--bench-loader", NULL, OPT_STR, &a.bench, NULL, 0, 0, "DIR",
         "decode+augment DIR's train split with the engine's loader and print img/s", NULL, NULL},
        {"--batch-size", NULL, OPT_INT, &a.batch, NULL, 1, 4096, "N", "--bench-loader batch (default 64)", NULL, NULL},
        {"--crop", NULL, OPT_INT, &a.crop, NULL, 8, 1024, "N", "--bench-loader crop (default 224)", NULL, NULL},
        {"--threads", NULL, OPT_INT, &a.threads, NULL, 0, 256, "N", "--bench-loader threads (default: all cores)", NULL, NULL},
        {"--steps", NULL, OPT_INT, &a.steps, NULL, 1, 1000000, "N", "--bench-loader batches (default 20)", NULL, NULL},
        {"--eval", NULL, OPT_SWITCH, &a.eval, NULL, 0, 0, NULL, "--bench-loader: the eval transform", NULL, NULL},
        FETCH_OPTS(o.fetch, "--connect-timeout", "--low-speed-time", "--low-speed-limit", "--download-timeout",
                   "--min-rate", "--retries", "--backoff-ms"),
        {"--quiet", NULL, OPT_SWITCH, &o.fetch.quiet, NULL, 0, 0, NULL, "no download progress", NULL, NULL},
        FETCH_CAP_OPT(o.fetch),
        {0},
    };
    const struct opt_cmd cmd = {.name = "prepare", .synopsis = synopsis, .about = about, .opts = opts,
                                .footer = footer, .max_pos = 2};
    struct opt_result r;
    TRY(opt_parse(&cmd, argc, argv, a.pos, &r));
    if (r.help) return TIPC_OK;
    o.manifest = a.manifest;
    if (a.url) {
        if (!a.sha256 || !a.dest || r.npos)
            return error_msg(TIPC_EUSAGE, "--url needs --sha256 HEX and --dest DIR, and no CONFIG MODE");
        if (o.offline && strncmp(a.url, "file://", 7) != 0)
            return error_msg(TIPC_EDATA, "'%s': offline (--offline or TIPC_OFFLINE=1), not fetching", a.url);
        return prepare_url(a.url, a.sha256, a.dest, a.extract, &o.fetch);
    }
    if (a.synthetic) {
        struct synth_config c = {.classes = a.classes, .train_per_class = a.train_pc, .val_per_class = a.val_pc,
                                 .quality = 90, .seed = (uint64_t)a.seed};
        TRY(synth_dataset(a.synthetic, &c));
        printf("prepare: wrote the synthetic dataset to '%s' (%d classes, %d train + %d val)\n", a.synthetic,
               c.classes, c.classes * c.train_per_class, c.classes * c.val_per_class);
        return TIPC_OK;
    }
    if (a.demo) return write_demo(a.demo);
    if (a.bench) return prepare_bench_loader(a.bench, a.batch, a.crop, a.threads, a.steps, a.eval);
    if (r.npos != 2) {
        error_msg(TIPC_EUSAGE, "prepare: missing %s", r.npos ? "MODE" : "CONFIG and MODE");
        return opt_usage_error(&cmd);
    }
    return prepare_mode(a.pos[0], a.model, a.pos[1], &o);
}
