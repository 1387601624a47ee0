/* cmd_prepare.c: `tipc prepare`: the command line over prepare/ (manifest-driven preparation,
 * one-file fetch, the synthetic generator) plus a loader benchmark for scripts/bench. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <turbojpeg.h>

#include "cmds.h"
#include "../prepare/prepare.h"       /* defines: prepare_mode, prepare_url */
#include "../prepare/synth.h"         /* defines: synth_dataset, synth_jpeg */
#include "../core/fs.h"        /* defines: mkdir_p */
#include "../core/check.h"
#include "../core/parse.h"
#include "../core/banned.h"

const char usage_prepare[] =
    "usage: tipc prepare CONFIG MODE [--offline] [--force] [--manifest FILE] [--model NAME]\n"
    "   or: tipc prepare --url URL --sha256 HEX --dest DIR [--extract]\n"
    "   or: tipc prepare --synthetic DIR [--classes N] [--train-per-class N] [--val-per-class N] [--seed N]\n"
    "   or: tipc prepare --demo-jpeg FILE\n"
    "   or: tipc prepare --bench-loader DATA_DIR [--batch-size N] [--crop N] [--threads N] [--steps N] [--eval]\n"
    "\n"
    "Make MODE's dataset and weights ready, as the manifest (configs/datasets.yaml, see docs/data.md)\n"
    "says: an item already prepared is left alone; otherwise it is fetched (http, https, file URLs;\n"
    "retries, resume, sha256 verified before use), extracted safely into a temp dir and renamed into\n"
    "place; when that is impossible (offline, unreachable) the item's fallback is used: the embedded\n"
    "synthetic dataset (deterministic JPEGs, PaddleClas lists) for our model's lite data.\n"
    "\n"
    "    --offline            no network: only file:// URLs and fallbacks (also TIPC_OFFLINE=1).\n"
    "                         `tipc run` prepares offline unless TIPC_OFFLINE=0.\n"
    "    --force              redo items that are already prepared\n"
    "    --manifest FILE      default: $TIPC_MANIFEST, CONFIG's ../datasets.yaml, configs/datasets.yaml\n"
    "    --model NAME         default: line 2 of CONFIG (model_name:NAME)\n"
    "    --url URL --sha256 HEX --dest DIR [--extract]\n"
    "                         fetch one verified file into DIR (and unpack it there atomically)\n"
    "    --synthetic DIR      write the synthetic dataset to DIR (defaults: 10 classes, 10 train and\n"
    "                         4 val images per class, seed 1)\n"
    "    --demo-jpeg FILE     write the demo image (images/demo.jpg of the repository)\n"
    "    --bench-loader DIR   decode+augment DIR's train split with the engine's loader and print img/s\n"
    "\n"
    "download knobs (also env TIPC_CONNECT_TIMEOUT, TIPC_LOW_SPEED_TIME, TIPC_LOW_SPEED_LIMIT,\n"
    "TIPC_RETRIES, TIPC_BACKOFF_MS; size cap: the manifest's size:, else env TIPC_MAX_DOWNLOAD\n"
    "bytes, default 16 GiB):\n"
    "    --connect-timeout S (5)  --low-speed-time S (15)  --low-speed-limit BYTES/S (1024)\n"
    "    --retries N (2)  --backoff-ms MS (500, doubled per retry)  --quiet (no progress)\n";

struct args {
    const char *pos[2];
    int npos;
    const char *url, *sha256, *dest, *synthetic, *demo, *bench, *manifest, *model;
    bool extract, eval;
    int classes, train_pc, val_pc, seed, batch, crop, threads, steps;
};

/* Value of option argv[*i] (`--k v` or `--k=v`) when it is `name`; NULL otherwise. */
static const char *opt_value(int argc, char **argv, int *i, const char *name, bool *bad)
{
    size_t n = strlen(name);
    if (strncmp(argv[*i], name, n) != 0) return NULL;
    if (argv[*i][n] == '=') return argv[*i] + n + 1;
    if (argv[*i][n] != 0) return NULL;
    if (*i + 1 >= argc) {
        error_msg(TIPC_EUSAGE, "option '%s' needs a value", name);
        *bad = true;
        return NULL;
    }
    return argv[++*i];
}

static bool int_opt(int argc, char **argv, int *i, const char *name, int min, int max, int *out, bool *bad)
{
    const char *v = opt_value(argc, argv, i, name, bad);
    if (!v) return false;
    if (!parse_int(v, min, max, out)) {
        error_msg(TIPC_EUSAGE, "option '%s': '%s' is not an integer in [%d, %d]", name, v, min, max);
        *bad = true;
    }
    return true;
}

static bool long_opt(int argc, char **argv, int *i, const char *name, long min, long max, long *out, bool *bad)
{
    int v = 0;
    if (!int_opt(argc, argv, i, name, (int)min, (int)max, &v, bad)) return false;
    *out = v;
    return true;
}

static enum tipc_status parse_args(int argc, char **argv, struct args *a, struct prepare_opts *o)
{
    bool bad = false;
    const char **strs[] = {&a->url, &a->sha256, &a->dest, &a->synthetic, &a->demo, &a->bench, &a->manifest, &a->model};
    static const char *const names[] = {"--url", "--sha256", "--dest", "--synthetic", "--demo-jpeg",
                                        "--bench-loader", "--manifest", "--model"};
    for (int i = 1; i < argc && !bad; i++) {
        const char *s = argv[i];
        int r = 0;
        if (!strcmp(s, "--offline")) { o->offline = true; continue; }
        if (!strcmp(s, "--force")) { o->force = true; continue; }
        if (!strcmp(s, "--extract")) { a->extract = true; continue; }
        if (!strcmp(s, "--eval")) { a->eval = true; continue; }
        if (!strcmp(s, "--quiet")) { o->fetch.quiet = true; continue; }
        for (int k = 0; k < 8 && !r; k++) {
            const char *v = opt_value(argc, argv, &i, names[k], &bad);
            if (v) { *strs[k] = v; r = 1; }
        }
        long retries = o->fetch.retries;
        r = r || int_opt(argc, argv, &i, "--classes", 1, 1000, &a->classes, &bad) ||
            int_opt(argc, argv, &i, "--train-per-class", 1, 100000, &a->train_pc, &bad) ||
            int_opt(argc, argv, &i, "--val-per-class", 1, 100000, &a->val_pc, &bad) ||
            int_opt(argc, argv, &i, "--seed", 0, 1 << 30, &a->seed, &bad) ||
            int_opt(argc, argv, &i, "--batch-size", 1, 4096, &a->batch, &bad) ||
            int_opt(argc, argv, &i, "--crop", 8, 1024, &a->crop, &bad) ||
            int_opt(argc, argv, &i, "--threads", 0, 256, &a->threads, &bad) ||
            int_opt(argc, argv, &i, "--steps", 1, 1000000, &a->steps, &bad) ||
            long_opt(argc, argv, &i, "--connect-timeout", 1, 600, &o->fetch.connect_timeout_s, &bad) ||
            long_opt(argc, argv, &i, "--low-speed-time", 1, 3600, &o->fetch.low_speed_time_s, &bad) ||
            long_opt(argc, argv, &i, "--low-speed-limit", 1, 1 << 30, &o->fetch.low_speed_bytes, &bad) ||
            long_opt(argc, argv, &i, "--backoff-ms", 0, 600000, &o->fetch.backoff_ms, &bad);
        if (!r && long_opt(argc, argv, &i, "--retries", 0, 100, &retries, &bad)) { o->fetch.retries = (int)retries; r = 1; }
        if (bad) break;
        if (r) continue;
        if (s[0] == '-' && s[1]) return error_msg(TIPC_EUSAGE, "unknown option '%s'; see 'tipc help prepare'", s);
        if (a->npos >= 2) return error_msg(TIPC_EUSAGE, "too many arguments ('%s'); see 'tipc help prepare'", s);
        a->pos[a->npos++] = s;
    }
    return bad ? TIPC_EUSAGE : TIPC_OK;
}

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
    if (st == TIPC_OK)
        printf("prepare: wrote '%s' (%lu bytes, 320x240)\n", path, n);
    tjFree(jpg);
    return st;
}

int cmd_prepare(int argc, char **argv)
{
    struct prepare_opts o;
    prepare_opts_default(&o);
    struct args a = {.classes = 10, .train_pc = 10, .val_pc = 4, .seed = 1, .batch = 64, .crop = 224,
                     .threads = 0, .steps = 20};
    if (argc >= 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
        fputs(usage_prepare, stdout);
        return TIPC_OK;
    }
    TRY(parse_args(argc, argv, &a, &o));
    o.manifest = a.manifest;
    if (a.url) {
        if (!a.sha256 || !a.dest || a.npos)
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
    if (a.npos != 2) return cmd_usage_error("prepare");
    return prepare_mode(a.pos[0], a.model, a.pos[1], &o);
}
