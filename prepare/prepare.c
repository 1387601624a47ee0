/* prepare.c: the per-item decision of `tipc prepare` (ready / fetch+verify+extract / fallback)
 * and the small front doors: prepare_mode (CLI), prepare_for_run (`tipc run`), prepare_url. */
#include "prepare.h"

#include <errno.h>
#include <stdarg.h>
#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "extract.h"
#include "../core/fs.h"
#include "manifest.h"
#include "synth.h"
#include "../core/check.h"
#include "../core/time.h"
#include "../core/regfile.h"
#include "../core/banned.h"

#define MARKER PREPARED_MARKER

void prepare_record_free(struct prepare_record *r)
{
    if (!r) return;
    for (int i = 0; i < r->n; i++) free(r->v[i].name), free(r->v[i].dest), free(r->v[i].origin);
    free(r->v);
    memset(r, 0, sizeof *r);
}

/* Append an item's outcome to o->record (when asked for). */
static void record(const struct prepare_opts *o, const struct manifest_item *it, bool synthetic, bool absent,
                   const char *fmt, ...) __attribute__((format(printf, 5, 6)));
static void record(const struct prepare_opts *o, const struct manifest_item *it, bool synthetic, bool absent,
                   const char *fmt, ...)
{
    struct prepare_record *r = o->record;
    if (!r) return;
    char origin[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(origin, sizeof origin, fmt, ap);
    va_end(ap);
    r->v = xgrow(r->v, sizeof *r->v, (size_t)r->n + 1, &r->cap);
    r->v[r->n++] = (struct prepare_item_record){xstrdup(it->name), xstrdup(it->dest), xstrdup(origin), synthetic,
                                                absent};
}

/* A marker's source that is the synthetic generator's parameters (synth_describe), not a URL. */
static bool synthetic_source(const char *src) { return !strncmp(src, "synthetic ", 10); }

void prepare_opts_default(struct prepare_opts *o)
{
    memset(o, 0, sizeof *o);
    fetch_opts_default(&o->fetch);
}

char *prepare_find_manifest(const char *config_path)
{
    char *dir = path_dirname(config_path);
    char *beside = xasprintf("%s/../datasets.yaml", dir);
    free(dir);
    if (is_file(beside)) return beside;
    free(beside);
    if (is_file("configs/datasets.yaml")) return xstrdup("configs/datasets.yaml");
    error_msg(TIPC_EUSAGE, "no dataset manifest for '%s' (looked for ../datasets.yaml beside it and "
              "configs/datasets.yaml)", config_path);
    error_hint("run from the repository root, or pass --manifest FILE");
    return NULL;
}

char *prepare_read_model_name(const char *config_path)
{
    char whyf[160];
    FILE *f = fopen_regular(config_path, REGFILE_MAX_TEXT, whyf, sizeof whyf);
    if (!f) {
        error_msg(TIPC_EUSAGE, "cannot read config '%s': %s", config_path, whyf);
        return NULL;
    }
    char line[1024] = "";
    for (int i = 0; i < 2; i++)
        if (!fgets(line, sizeof line, f)) line[0] = 0;
    fclose(f);
    line[strcspn(line, "\r\n")] = 0;
    const char *key = "model_name:";
    if (strncmp(line, key, strlen(key)) != 0 || !line[strlen(key)]) {
        error_at(TIPC_EUSAGE, config_path, 2, "expected 'model_name:NAME', found '%s'", line);
        return NULL;
    }
    return xstrdup(line + strlen(key));
}

/* The marker text of the synthetic fallback: its parameters, so a changed manifest redoes it. */
static void synth_source(const struct manifest_item *it, char *buf, size_t n) { synth_describe(&it->synth, buf, n); }

/* Does the marker name a source the manifest still lists (one of its URLs, or its synthetic
 * parameters)? A marker from an older manifest means the item is redone. */
static bool marker_current(const struct manifest_item *it, const char *src)
{
    char syn[256];
    synth_source(it, syn, sizeof syn);
    if (it->fallback == FALLBACK_SYNTHETIC && !strcmp(src, syn)) return true;
    for (int i = 0; i < it->n_urls; i++)
        if (!strcmp(src, it->urls[i])) return true;
    return false;
}

/* Ready: 1 prepared by us from a source the manifest lists (source in `why`), 2 provided by the
 * user, 0 not there or prepared from a source the manifest no longer lists. */
static int item_ready(const struct manifest_item *it, char *why, size_t n)
{
    if (it->weights) {
        snprintf(why, n, "present");
        return is_file(it->dest) ? (it->n_urls ? 0 : 2) : 0;   /* with a url: fetch_file verifies */
    }
    char *marker = xasprintf("%s/%s", it->dest, MARKER);
    char whyf[160];
    FILE *f = fopen_regular(marker, 4096, whyf, sizeof whyf);
    free(marker);
    if (f) {
        if (!fgets(why, (int)n, f)) why[0] = 0;
        why[strcspn(why, "\n")] = 0;
        fclose(f);
        if (marker_current(it, why)) return 1;
        printf("prepare: '%s' was made from '%s', which the manifest no longer lists; redoing it\n", it->dest, why);
        return 0;
    }
    char *list = xasprintf("%s/train_list.txt", it->dest), *train = xasprintf("%s/train", it->dest);
    int user = is_file(list) || is_dir(train);
    free(list);
    free(train);
    snprintf(why, n, "provided by the user");
    return user ? 2 : 0;
}

static const char *url_basename(const char *url, char *buf, size_t n)
{
    size_t end = strcspn(url, "?#");
    size_t start = end;
    while (start > 0 && url[start - 1] != '/') start--;
    snprintf(buf, n, "%.*s", (int)(end - start), url + start);
    if (!buf[0]) snprintf(buf, n, "download");
    return buf;
}

/* One source: fetch (+ extract) url. */
static enum tipc_status from_url(const struct manifest_item *it, const char *url, const struct prepare_opts *o,
                                 bool *downloaded, bool *fetched)
{
    struct fetch_opts fo = o->fetch;
    if (it->size > 0) fo.max_bytes = it->size;   /* the exact size: anything longer is not the file */
    if (it->weights && !strcmp(it->archive, "none"))
        return fetch_file(url, it->sha256, it->dest, &fo, downloaded);   /* dest may be the user's */
    fo.replace_mismatch = true;   /* .tipc-cache/ is ours */
    char name[256];
    char *dir = path_dirname(it->dest);
    char *cache = xasprintf("%s/.tipc-cache/%s", dir, url_basename(url, name, sizeof name));
    free(dir);
    fo.has_fallback = it->fallback == FALLBACK_SYNTHETIC;
    enum tipc_status st = fetch_file(url, it->sha256, cache, &fo, downloaded);
    *fetched = st == TIPC_OK;
    if (st == TIPC_OK) st = extract_archive(cache, it->dest, it->archive_root, url);
    free(cache);
    return st;
}

static enum tipc_status fallback(const struct manifest *m, const struct manifest_item *it, const char *reason,
                                 const struct prepare_opts *o)
{
    const struct synth_config *s = &it->synth;
    switch (it->fallback) {
    case FALLBACK_SYNTHETIC: {
        if (o->real_data) {   /* real data or fail */
            error_at(TIPC_EDATA, m->path, it->line, "item '%s' ('%s'): %s, and real data is required (--real-data or "
                     "TIPC_REAL_DATA): the synthetic fallback is not made", it->name, it->dest, reason);
            if (o->offline)
                error_hint("let tipc download it (TIPC_OFFLINE=0; `tipc prepare` is online by default), or put the "
                           "dataset at '%s'", it->dest);
            else error_hint("check the network and the manifest's URLs, or put the dataset at '%s'", it->dest);
            return TIPC_EDATA;
        }
        double t0 = now_seconds();
        TRY(synth_dataset(it->dest, s));
        char desc[256];
        synth_describe(s, desc, sizeof desc);
        record(o, it, true, false, "synthetic default (%s): %s", reason, desc);
        printf("prepare: '%s': %s, made the synthetic default (%d classes, %d train + %d val JPEGs) in %.2f s\n",
               it->dest, reason, s->classes, s->classes * s->train_per_class, s->classes * s->val_per_class,
               now_seconds() - t0);
        return TIPC_OK;
    }
    case FALLBACK_NONE:
        printf("prepare: '%s' (%s): %s; it is optional, nothing made\n", it->dest, it->name, reason);
        record(o, it, false, true, "absent (optional): %s", reason);
        if (it->note) printf("prepare: note: %s\n", it->note);
        return TIPC_OK;
    case FALLBACK_ERROR:
        break;
    }
    error_at(TIPC_EDATA, m->path, it->line, "item '%s' ('%s'): %s and it has no fallback", it->name, it->dest, reason);
    if (it->note) error_hint("%s", it->note);
    else error_hint("run online (without --offline / TIPC_OFFLINE), or put the files at '%s'", it->dest);
    return TIPC_EDATA;
}

/* Serialise prepares of one item (several ranks or nodes sharing a working directory run
 * `tipc run` at once): an flock on "<dest>.lock", held until the item is done. Under it, the temps
 * an interrupted prepare of this host left beside it are removed (core/staged.h temp_sweep: only
 * our own names, only when their process is gone). -1 when unlockable. */
static int lock_item(const char *dest)
{
    char *dir = path_dirname(dest);
    mkdir_p(dir);
    free(dir);
    char *path = xasprintf("%s.lock", dest);
    int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0666);
    if (fd < 0 || flock(fd, LOCK_EX) != 0) {
        warning_msg("cannot lock '%s' (%s); preparing without a lock", path, strerror(errno));
        if (fd >= 0) close(fd);
        fd = -1;
    }
    free(path);
    if (fd >= 0) {
        char *parent = path_dirname(dest);
        temp_sweep(parent);
        free(parent);
    }
    return fd;
}

static enum tipc_status prepare_item_locked(const struct manifest *m, const struct manifest_item *it,
                                            const struct prepare_opts *o);

/* 0 when `dest` could be made: its nearest existing folder takes files; else the errno (EROFS on a
 * read-only mount, EACCES), with nothing created. */
static int unwritable(const char *dest)
{
    char *p = xstrdup(dest);
    int err = 0;
    for (;;) {
        char *up = path_dirname(p);
        free(p);
        p = up;
        if (is_dir(p)) {
            if (access(p, W_OK | X_OK) != 0) err = errno;
            break;
        }
        if (!strcmp(p, ".") || !strcmp(p, "/")) break;
    }
    free(p);
    return err;
}

static enum tipc_status prepare_item(const struct manifest *m, const struct manifest_item *it,
                                     const struct prepare_opts *o)
{
    char why[256];
    int err;
    if (o->skip_unwritable && it->fallback != FALLBACK_ERROR && !item_ready(it, why, sizeof why) &&
        (err = unwritable(it->dest)) != 0) {
        printf("prepare: '%s' cannot be made here (%s); not preparing it: a recipe with DataLoader.synthetic: auto "
               "makes synthetic data in memory when the folder is missing\n", it->dest, strerror(err));
        return TIPC_OK;
    }
    int fd = it->weights && it->n_urls == 0 ? -1 : lock_item(it->dest);   /* nothing to write: no lock */
    enum tipc_status st = prepare_item_locked(m, it, o);
    if (fd >= 0) close(fd);   /* releases the lock */
    return st;
}

static enum tipc_status prepare_item_locked(const struct manifest *m, const struct manifest_item *it,
                                            const struct prepare_opts *o)
{
    char why[256];
    int ready = item_ready(it, why, sizeof why);
    bool synthetic = ready == 1 && synthetic_source(why);
    if (ready && !o->force && !(synthetic && o->real_data)) {
        printf("prepare: '%s' is ready (%s); nothing to do\n", it->dest, why);
        if (ready == 1) record(o, it, synthetic, false, "%s (made earlier)", why);
        else record(o, it, false, false, "%s", it->weights ? "present" : "provided by the user");
        return TIPC_OK;
    }
    if (synthetic && o->real_data)
        printf("prepare: '%s' holds the synthetic default; real data is required: fetching it\n", it->dest);
    if (ready == 2 && !it->weights)
        return error_msg(TIPC_EDATA, "'%s' was provided by the user; --force will not replace it (move it away first)", it->dest);
    if (!it->weights) TRY(check_replaceable(it->dest));   /* a folder we did not make: stop, delete nothing */
    int skipped = 0, failed = 0;
    for (int i = 0; i < it->n_urls; i++) {
        const char *url = it->urls[i];
        if (o->offline && strncmp(url, "file://", 7) != 0) { skipped++; continue; }
        double t0 = now_seconds();
        bool dl = false, fetched = false;
        enum tipc_status st = from_url(it, url, o, &dl, &fetched);
        if (st != TIPC_OK && fetched) return st;   /* a verified archive that cannot be unpacked here (a full
                                                     * disk, a write error): an error, never hidden by a fallback */
        if (st == TIPC_OK) {
            printf("prepare: '%s': %s %s (sha256 verified) in %.2f s\n", it->dest,
                   dl ? "fetched" : "used the cached copy of", url, now_seconds() - t0);
            record(o, it, false, false, "%s %s (sha256 verified)", dl ? "fetched" : "the cached copy of", url);
            return TIPC_OK;
        }
        failed++;
    }
    const char *reason = failed ? "no source could be fetched (see above)" : skipped ? "offline" : "no download is published";
    return fallback(m, it, reason, o);
}

enum tipc_status prepare_mode(const char *config_path, const char *model, const char *mode,
                              const struct prepare_opts *o)
{
    char *own_model = model ? NULL : prepare_read_model_name(config_path);
    if (!model && !own_model) return TIPC_EUSAGE;
    char *man_path = o->manifest ? xstrdup(o->manifest) : prepare_find_manifest(config_path);
    enum tipc_status st = TIPC_EUSAGE;
    struct manifest m = {0};
    if (man_path) st = manifest_load(&m, man_path, model ? model : own_model);
    const struct manifest_mode *md = st == TIPC_OK ? manifest_find_mode(&m, mode) : NULL;
    if (st == TIPC_OK && !md) {
        st = error_at(TIPC_EUSAGE, man_path, 0, "model '%s' has no mode '%s'", m.model, mode);
        error_hint("modes listed there: see 'modes:' under '%s'", m.model);
    }
    for (int i = 0; md && st == TIPC_OK && i < md->n; i++) st = prepare_item(&m, &m.items[md->items[i]], o);
    fflush(stdout);
    manifest_free(&m);
    free(man_path);
    free(own_model);
    return st;
}

enum tipc_status prepare_for_run(const char *config_path, const char *model_name, const char *mode,
                                 const struct prepare_opts *opts)
{
    struct prepare_opts o = *opts;
    o.fetch.quiet = true;
    o.skip_unwritable = true;
    return prepare_mode(config_path, model_name, mode, &o);
}

enum tipc_status prepare_url(const char *url, const char *sha256, const char *dir, bool extract,
                             const struct fetch_opts *o)
{
    char name[256];
    char *dest = xasprintf("%s/%s", dir, url_basename(url, name, sizeof name));
    double t0 = now_seconds();
    bool dl = false;
    enum tipc_status st = fetch_file(url, sha256, dest, o, &dl);
    if (st == TIPC_OK)
        printf("prepare: '%s': %s (sha256 verified) in %.2f s\n", dest, dl ? "fetched" : "already there", now_seconds() - t0);
    char *out = NULL;
    if (st == TIPC_OK && extract && (st = extract_archive_into(dest, dir, url, &out)) == TIPC_OK)
        printf("prepare: extracted into '%s'\n", out);
    fflush(stdout);
    free(out);
    free(dest);
    return st;
}
