/* loader.c: a pool of decode threads filling a ring of batch slots ahead of the consumer.
 *
 * The ring holds prefetch + 1 slots: the one the consumer holds and `prefetch` being filled.
 * Work is handed out one sample at a time from a single cursor (fill_step, fill_i) over the
 * infinite stream of steps, so all threads help finish the oldest batch first. Each sample's
 * augmentation draws from an RNG keyed by (seed, epoch, global position), and its pixels go to
 * a fixed place in its slot, so the batches do not depend on the number of threads or on timing.
 * Not here: which items a rank sees (sampler.c), decoding and transforms (jpeg.c, augment.c). */
#include "loader.h"

#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "jpeg.h"
#include "sampler.h"
#include "../../core/check.h"
#include "../../core/banned.h"

struct slot {
    long step_id;            /* global step held here; -1 = none yet */
    int n, remaining;        /* samples scheduled / not finished */
    int *idx, *pos;          /* (batch_size) dataset index and global position of each sample */
    bool *bad;               /* (batch_size) skipped (skip_bad) */
    enum tipc_status st;     /* first error of this batch */
    struct batch b;          /* images (batch_size, crop, crop, 3), labels (batch_size) */
};

struct loader {
    const struct dataset *ds;
    struct loader_config c;
    struct sampler smp;
    int steps_per_epoch;
    int *ep_idx, *ep_pos, *perm;   /* (per_rank), (per_rank), (n): shard of epoch ep_loaded */
    int ep_loaded;
    int nslots;
    struct slot *slots;
    pthread_t *th;
    int nth;
    pthread_mutex_t mu;
    pthread_cond_t work, done;
    long fill_step;                /* producer cursor: step and sample being handed out */
    int fill_i;
    long consumed;                 /* step the consumer holds or waits for */
    bool handed;                   /* the consumer holds slot `consumed` */
    bool stop;
    long skipped;
    long decoded;                  /* samples decoded fine so far (any step) */
    long fail_step;                /* first step with a failed image (not skip_bad); workers stop after it */
    uint8_t *warned;               /* (n) an image's failure was reported */
    enum tipc_status sticky;
};

/* Under mu: schedule step s into its slot. */
static void open_slot(struct loader *L, long s)
{
    struct slot *sl = &L->slots[s % L->nslots];
    int epoch = (int)(s / L->steps_per_epoch), sie = (int)(s % L->steps_per_epoch);
    if (L->ep_loaded != epoch) {
        sampler_epoch(&L->smp, epoch, L->ep_idx, L->ep_pos, L->perm);
        L->ep_loaded = epoch;
    }
    int start = sie * L->c.batch_size, n = L->smp.per_rank - start;
    if (n > L->c.batch_size) n = L->c.batch_size;
    for (int i = 0; i < n; i++) {
        sl->idx[i] = L->ep_idx[start + i];
        sl->pos[i] = L->ep_pos[start + i];
        sl->bad[i] = false;
    }
    sl->step_id = s;
    sl->n = sl->remaining = n;
    sl->st = TIPC_OK;
    sl->b.epoch = epoch;
    sl->b.step_in_epoch = sie;
}

static enum tipc_status load_sample(struct loader *L, struct image_decoder *d, struct slot *sl, int i)
{
    const struct dataset *ds = L->ds;
    int k = sl->idx[i];
    size_t px = (size_t)L->c.crop * L->c.crop * 3;
    struct data_rng r = data_rng_key(L->c.seed, (uint64_t)sl->b.epoch, (uint64_t)sl->pos[i]);
    sl->b.labels[i] = ds->labels[k];
    enum tipc_status st = image_decoder_load(d, ds->paths[k], L->c.train, L->c.resize, L->c.crop, &r, sl->b.images + i * px);
    if (st == TIPC_OK) return TIPC_OK;
    pthread_mutex_lock(&L->mu);
    bool first = !L->warned[k];   /* one message per image, not one per epoch */
    L->warned[k] = 1;
    pthread_mutex_unlock(&L->mu);
    if (!first) return st;
    const char *what = L->c.skip_bad ? "skipping image" : "image";
    if (ds->list_file)
        error_at(st, ds->list_file, ds->list_lines[k], "%s '%s': %s", what, ds->paths[k], d->err);
    else
        error_at(st, ds->paths[k], 0, "%s%s", L->c.skip_bad ? "skipping: " : "", d->err);
    return st;
}

static void *worker(void *arg)
{
    struct loader *L = arg;
    struct image_decoder d;
    image_decoder_init(&d);
    pthread_mutex_lock(&L->mu);
    while (!L->stop) {
        if (L->fill_step > L->fail_step || L->fill_step >= L->consumed + L->nslots) {
            pthread_cond_wait(&L->work, &L->mu);
            continue;
        }
        if (L->fill_i == 0) open_slot(L, L->fill_step);
        struct slot *sl = &L->slots[L->fill_step % L->nslots];
        int i = L->fill_i++;
        if (L->fill_i == sl->n) { L->fill_step++; L->fill_i = 0; }
        pthread_mutex_unlock(&L->mu);
        enum tipc_status st = load_sample(L, &d, sl, i);
        pthread_mutex_lock(&L->mu);
        if (st == TIPC_OK) L->decoded++;
        if (st != TIPC_OK && L->c.skip_bad) { sl->bad[i] = true; L->skipped++; }
        else if (st != TIPC_OK && sl->st == TIPC_OK) {
            sl->st = st;
            if (sl->step_id < L->fail_step) L->fail_step = sl->step_id;
        }
        if (--sl->remaining == 0) pthread_cond_broadcast(&L->done);
    }
    pthread_mutex_unlock(&L->mu);
    image_decoder_free(&d);
    return NULL;
}

static int auto_threads(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n < 1 ? 1 : n > 8 ? 8 : (int)n;
}

static enum tipc_status check_config(const struct dataset *ds, const struct loader_config *c)
{
    if (c->batch_size < 1 || c->crop < 1 || c->world < 1 || c->rank < 0 || c->rank >= c->world || c->start_step < 0 ||
        c->threads < 0 || c->prefetch < 0 || (!c->train && c->resize < c->crop))
        return error_msg(TIPC_EUSAGE, "bad loader settings (batch %d, crop %d, resize %d, rank %d of %d, threads %d)",
                         c->batch_size, c->crop, c->resize, c->rank, c->world, c->threads);
    int per_rank = (ds->n + c->world - 1) / c->world;
    if (c->drop_last && per_rank < c->batch_size) {
        error_msg(TIPC_EDATA, "dataset '%s' gives each of %d ranks %d images, fewer than one batch of %d (drop_last)",
                  ds->root, c->world, per_rank, c->batch_size);
        error_hint("use a smaller --batch-size or fewer ranks");
        return TIPC_EDATA;
    }
    return TIPC_OK;
}

enum tipc_status loader_init(struct loader **out, const struct dataset *ds, const struct loader_config *c)
{
    *out = NULL;
    TRY(check_config(ds, c));
    struct loader *L = xcalloc(1, sizeof *L);
    L->ds = ds;
    L->c = *c;
    L->c.threads = c->threads ? c->threads : auto_threads();
    L->c.prefetch = c->prefetch ? c->prefetch : 2;
    sampler_init(&L->smp, ds->n, c->rank, c->world, c->train, c->seed);
    int B = c->batch_size;
    L->steps_per_epoch = c->drop_last ? L->smp.per_rank / B : (L->smp.per_rank + B - 1) / B;
    L->ep_idx = xmalloc(sizeof(int) * (size_t)L->smp.per_rank);
    L->ep_pos = xmalloc(sizeof(int) * (size_t)L->smp.per_rank);
    L->perm = xmalloc(sizeof(int) * (size_t)ds->n);
    L->ep_loaded = -1;
    L->warned = xcalloc((size_t)ds->n, 1);
    L->fail_step = LONG_MAX;
    /* steps are counted from epoch 0, so epoch e's shuffle is the same whether reached by
     * running or by resuming */
    L->fill_step = L->consumed = (long)c->start_epoch * L->steps_per_epoch + c->start_step;
    L->nslots = L->c.prefetch + 1;
    L->slots = xcalloc((size_t)L->nslots, sizeof *L->slots);
    for (int s = 0; s < L->nslots; s++) {
        struct slot *sl = &L->slots[s];
        sl->step_id = -1;
        sl->idx = xmalloc(sizeof(int) * (size_t)B);
        sl->pos = xmalloc(sizeof(int) * (size_t)B);
        sl->bad = xmalloc(sizeof(bool) * (size_t)B);
        sl->b.images = xmalloc((size_t)B * c->crop * c->crop * 3);
        sl->b.labels = xmalloc(sizeof(int32_t) * (size_t)B);
    }
    pthread_mutex_init(&L->mu, NULL);
    pthread_cond_init(&L->work, NULL);
    pthread_cond_init(&L->done, NULL);
    L->th = xcalloc((size_t)L->c.threads, sizeof *L->th);
    for (; L->nth < L->c.threads; L->nth++)
        CHECK(pthread_create(&L->th[L->nth], NULL, worker, L) == 0, "cannot start loader thread");
    *out = L;
    return TIPC_OK;
}

/* Move the good samples of a finished slot to the front (skip_bad). */
static void compact(struct loader *L, struct slot *sl)
{
    size_t px = (size_t)L->c.crop * L->c.crop * 3;
    int n = 0;
    for (int i = 0; i < sl->n; i++) {
        if (sl->bad[i]) continue;
        if (n != i) {
            memmove(sl->b.images + n * px, sl->b.images + i * px, px);
            sl->b.labels[n] = sl->b.labels[i];
        }
        n++;
    }
    sl->b.n = n;
}

static enum tipc_status next_slot(struct loader *L, const struct batch **out);

static long loader_decoded(struct loader *L)
{
    pthread_mutex_lock(&L->mu);
    long n = L->decoded;
    pthread_mutex_unlock(&L->mu);
    return n;
}

enum tipc_status loader_next(struct loader *L, const struct batch **out)
{
    *out = NULL;
    if (L->sticky != TIPC_OK) return L->sticky;
    /* a batch whose images were all skipped is not handed out; a whole epoch of such batches
     * while no image has ever decoded means the source yields nothing: fail rather than spin
     * (with one good image somewhere, the loop is slow but moves on) */
    for (int empty = 0;; empty++) {
        if (empty >= L->steps_per_epoch && loader_decoded(L) == 0) {
            *out = NULL;
            error_msg(TIPC_EDATA, "dataset '%s': no readable image in a whole epoch (%d batches, %ld images skipped)",
                      L->ds->root, empty, loader_skipped(L));
            error_hint("every image listed was unreadable (skip_bad skipped them all); check the paths and files above");
            return L->sticky = TIPC_EDATA;
        }
        TRY(next_slot(L, out));
        if ((*out)->n > 0) return TIPC_OK;
    }
}

static enum tipc_status next_slot(struct loader *L, const struct batch **out)
{
    pthread_mutex_lock(&L->mu);
    if (L->handed) {
        L->consumed++;
        L->handed = false;
        pthread_cond_broadcast(&L->work);
    }
    struct slot *sl = &L->slots[L->consumed % L->nslots];
    while (sl->step_id != L->consumed || sl->remaining > 0) pthread_cond_wait(&L->done, &L->mu);
    L->handed = true;
    pthread_mutex_unlock(&L->mu);
    if (sl->st != TIPC_OK) return L->sticky = sl->st;
    compact(L, sl);
    *out = &sl->b;
    return TIPC_OK;
}

int loader_steps_per_epoch(const struct loader *L) { return L->steps_per_epoch; }

int loader_threads(const struct loader *L) { return L->nth; }

long loader_skipped(const struct loader *L)
{
    struct loader *m = (struct loader *)L;
    pthread_mutex_lock(&m->mu);
    long n = m->skipped;
    pthread_mutex_unlock(&m->mu);
    return n;
}

void loader_free(struct loader *L)
{
    if (!L) return;
    pthread_mutex_lock(&L->mu);
    L->stop = true;
    pthread_cond_broadcast(&L->work);
    pthread_mutex_unlock(&L->mu);
    for (int i = 0; i < L->nth; i++) pthread_join(L->th[i], NULL);
    for (int s = 0; s < L->nslots; s++) {
        struct slot *sl = &L->slots[s];
        free(sl->idx); free(sl->pos); free(sl->bad); free(sl->b.images); free(sl->b.labels);
    }
    pthread_mutex_destroy(&L->mu);
    pthread_cond_destroy(&L->work);
    pthread_cond_destroy(&L->done);
    free(L->slots); free(L->th); free(L->ep_idx); free(L->ep_pos); free(L->perm); free(L->warned);
    free(L);
}
