/* source.c: see source.h. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "source.h"
#include "../../core/check.h"
#include "../../core/fs.h"   /* PREPARED_MARKER */
#include "../../core/regfile.h"
#include "../../core/rng.h"
#include "../../core/banned.h"

/* Class k: a colour and a stripe frequency from hash(k); each image adds its own noise. */
static void synth_image(uint8_t *img, int crop, int label, uint64_t seed)
{
    uint64_t h = rng_mix64((uint64_t)label * 7919u + 17u);
    int base[3] = {(int)(h & 255), (int)((h >> 8) & 255), (int)((h >> 16) & 255)};
    int freq = 2 + (int)((h >> 24) % 6), horiz = (int)((h >> 32) & 1);
    struct rng r;
    rng_seed(&r, seed);
    for (int y = 0; y < crop; y++)
        for (int x = 0; x < crop; x++) {
            int t = ((horiz ? y : x) * freq * 2 / crop) & 1;
            for (int c = 0; c < 3; c++) {
                int v = (t ? base[c] : 255 - base[c]) + (int)(rng_u64(&r) >> 59) * 4 - 64;
                img[((size_t)y * crop + x) * 3 + c] = (uint8_t)(v < 0 ? 0 : v > 255 ? 255 : v);
            }
        }
}

static void synth_shuffle(struct source *s)
{
    for (int i = 0; i < s->n_items; i++) s->order[i] = i;
    if (!s->train) return;
    struct rng r;
    rng_seed(&r, s->seed ^ rng_mix64((uint64_t)s->epoch + 1));
    for (int i = s->n_items - 1; i > 0; i--) {
        int j = (int)(rng_u64(&r) % (uint64_t)(i + 1));
        int32_t t = s->order[i];
        s->order[i] = s->order[j], s->order[j] = t;
    }
}

static enum tipc_status open_synthetic(struct source *s, const struct recipe *r, int rank, int world)
{
    s->synthetic = true;
    int total = r->synthetic_size;
    s->n_items = (total + world - 1 - rank) / world; /* this rank's share */
    if (s->n_items < 1) return error_msg(TIPC_EUSAGE, "synthetic data: %d images for %d ranks", total, world);
    size_t per = (size_t)s->crop * s->crop * 3;
    s->images = xmalloc(per * (size_t)s->n_items);
    s->labels = xmalloc(sizeof(int32_t) * (size_t)s->n_items);
    s->order = xmalloc(sizeof(int32_t) * (size_t)s->n_items);
    s->b.images = xmalloc(per * (size_t)s->batch);
    s->b.labels = xmalloc(sizeof(int32_t) * (size_t)s->batch);
    for (int i = 0; i < s->n_items; i++) {
        int g = i * world + rank; /* global index */
        s->labels[i] = g % s->num_classes;
        synth_image(s->images + per * i, s->crop, s->labels[i], (uint64_t)r->seed * 1000003u + (uint64_t)g * 2 + (s->train ? 0 : 1));
    }
    s->steps_per_epoch = s->train ? s->n_items / s->batch : (s->n_items + s->batch - 1) / s->batch;
    if (s->steps_per_epoch < 1)
        return error_msg(TIPC_EUSAGE, "synthetic data: %d images per rank is less than one batch of %d", s->n_items,
                         s->batch);
    synth_shuffle(s);
    return TIPC_OK;
}

static enum tipc_status open_loader(struct source *s, const struct recipe *r, int rank, int world, int start_step)
{
    TRY(dataset_open(&s->ds, r->data_path, s->train));
    /* labels against the model before any decoding: the message names the list line */
    for (int i = 0; i < s->ds.n; i++)
        if (s->ds.labels[i] < 0 || s->ds.labels[i] >= s->num_classes) {
            if (s->ds.list_file)
                error_at(TIPC_EDATA, s->ds.list_file, s->ds.list_lines ? s->ds.list_lines[i] : 0,
                         "label %d out of range [0, %d) of the model", s->ds.labels[i], s->num_classes);
            else
                error_msg(TIPC_EDATA, "'%s': %d class folders but the model has %d classes", r->data_path,
                          s->ds.num_classes, s->num_classes);
            error_hint("set Arch.class_num (-o Arch.class_num=N) to the number of classes of the data");
            return TIPC_EDATA;
        }
    struct loader_config c = {.batch_size = s->batch, .crop = s->crop, .resize = r->resize_size,
                              .train = s->train, .rank = rank, .world = world, .seed = (uint64_t)r->seed,
                              .threads = r->num_workers, .prefetch = 2, .drop_last = s->train,
                              .skip_bad = r->skip_bad, .start_epoch = s->epoch,
                              .start_step = start_step};
    TRY(loader_init(&s->L, &s->ds, &c));
    s->n_items = s->ds.n;
    s->steps_per_epoch = loader_steps_per_epoch(s->L);
    if (s->steps_per_epoch < 1)
        return error_msg(TIPC_EDATA, "'%s': %d %s images is less than one batch of %d per rank", r->data_path,
                         s->ds.n, s->what, s->batch);
    return TIPC_OK;
}

enum tipc_status source_open(struct source *s, const struct recipe *r, bool train, int rank, int world, int start_epoch,
                             int start_step)
{
    memset(s, 0, sizeof *s);
    s->train = train;
    s->what = train ? "train" : "val";
    s->batch = train ? r->batch_size : r->eval_batch_size;
    s->crop = r->image_size;
    s->num_classes = r->num_classes;
    s->seed = (uint64_t)r->seed;
    s->epoch = start_epoch;
    struct stat st;
    bool want_synth = !strcmp(r->synthetic, "true") || (!strcmp(r->synthetic, "auto") && stat(r->data_path, &st));
    if (strcmp(r->synthetic, "true") && strcmp(r->synthetic, "false") && strcmp(r->synthetic, "auto"))
        return error_msg(TIPC_EUSAGE, "DataLoader.synthetic must be auto, true or false, not '%s'", r->synthetic);
    if (want_synth) TRY(open_synthetic(s, r, rank, world));
    else TRY(open_loader(s, r, rank, world, start_step));
    if (start_step < 0 || start_step >= s->steps_per_epoch)
        return error_msg(TIPC_EUSAGE, "%s data: cannot start at step %d of an epoch of %d steps", s->what, start_step,
                         s->steps_per_epoch);
    s->step = s->synthetic ? start_step : 0;
    return TIPC_OK;
}

enum tipc_status source_next(struct source *s, const struct batch **out)
{
    if (!s->synthetic) return loader_next(s->L, out);
    if (s->step == s->steps_per_epoch) {
        s->step = 0;
        s->epoch++;
        synth_shuffle(s);
    }
    size_t per = (size_t)s->crop * s->crop * 3;
    int start = s->step * s->batch, n = s->n_items - start < s->batch ? s->n_items - start : s->batch;
    for (int i = 0; i < n; i++) {
        int k = s->order[start + i];
        memcpy(s->b.images + per * i, s->images + per * k, per);
        s->b.labels[i] = s->labels[k];
    }
    s->b.n = n, s->b.epoch = s->epoch, s->b.step_in_epoch = s->step++;
    *out = &s->b;
    return TIPC_OK;
}

const char *source_describe(const struct source *s)
{
    if (s->synthetic) return s->train ? "synthetic train data" : "synthetic val data";
    return s->ds.list_file ? s->ds.list_file : s->ds.root;
}

void source_origin(const struct source *s, const struct recipe *r, char *buf, size_t n, bool *synthetic)
{
    *synthetic = s->synthetic;
    if (s->synthetic) {
        snprintf(buf, n, "synthetic images made in memory (DataLoader.synthetic: %s%s%s)", r->synthetic,
                 strcmp(r->synthetic, "auto") ? "" : ", no ", strcmp(r->synthetic, "auto") ? "" : r->data_path);
        return;
    }
    /* tipc prepare's marker: its first line names the source (a URL, or the generator's parameters) */
    char *marker = xasprintf("%s/%s", r->data_path, PREPARED_MARKER), line[400] = "";
    char why[160];
    FILE *f = fopen_regular(marker, 4096, why, sizeof why);   /* never blocks on a FIFO planted there */
    free(marker);
    if (f) {
        if (!fgets(line, sizeof line, f)) line[0] = 0;
        fclose(f);
    }
    line[strcspn(line, "\n")] = 0;
    if (!f) snprintf(buf, n, "%s (no tipc prepare marker: provided by the user)", r->data_path);
    else if (!strncmp(line, "synthetic ", 10)) snprintf(buf, n, "%s: tipc prepare's synthetic default (%s)", r->data_path, line), *synthetic = true;
    else snprintf(buf, n, "%s: made by tipc prepare from %s", r->data_path, line);
}

void source_free(struct source *s)
{
    if (!s) return;
    if (s->L) loader_free(s->L);
    dataset_free(&s->ds);
    free(s->images);
    free(s->labels);
    free(s->order);
    free(s->b.images);
    free(s->b.labels);
    memset(s, 0, sizeof *s);
}
