/* checkpoint.c: see checkpoint.h. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "binfile.h"
#include "checkpoint.h"
#include "../model/finite.h"
#include "../../core/check.h"
#include "../../core/banned.h"

static const char CKPT_MAGIC[8] = {'T', 'I', 'P', 'C', 'C', 'K', 'P', '1'};

/* The header as stored: version 1's 120 bytes (the in-memory ckpt_meta grew, the file's layout
 * is fixed here), then version 2's mid-epoch position. */
struct disk_meta {
    char model[32];
    int32_t num_classes, resolution;
    float width_mult;
    int32_t epoch;
    int64_t step;
    struct rng rng;
    double best_acc1;
};
struct ckpt_header {
    uint32_t version, dtype; /* dtype 0 = f32 */
    struct disk_meta meta;
    uint64_t nparams, nstats;
};
struct ckpt_header_v2 {
    int32_t step_in_epoch, steps_per_epoch;
    uint64_t reserved;
};
struct ckpt_header_v3 {   /* the mixed-precision section: only an AMP net writes it */
    int32_t precision;    /* PREC_BF16 or PREC_FP16 */
    int32_t reserved;
    float scaler[AMP_STATE_FLOATS];
};
struct ckpt_header_v4 {   /* the run section, before the mixed-precision one */
    char run_id[CKPT_RUN_ID_MAX];
    uint32_t amp;         /* 1: the mixed-precision section follows */
    uint32_t reserved;
};

enum tipc_status ckpt_save(const char *path, const struct ckpt_meta *m, const struct net *net)
{
    struct ckpt_header h;
    struct ckpt_header_v2 h2;
    struct ckpt_header_v3 h3;
    struct ckpt_header_v4 h4;
    memset(&h, 0, sizeof h);
    memset(&h2, 0, sizeof h2);
    memset(&h3, 0, sizeof h3);
    memset(&h4, 0, sizeof h4);
    bool amp = net_amp_read(net, h3.scaler);   /* false for an fp32 net: no mixed-precision section */
    h3.precision = (int32_t)net->amp.prec;
    h.version = CKPT_VERSION;
    snprintf(h4.run_id, sizeof h4.run_id, "%s", m->run_id);
    h4.amp = amp;
    memcpy(h.meta.model, m->model, sizeof h.meta.model);
    h.meta.num_classes = m->num_classes, h.meta.resolution = m->resolution, h.meta.width_mult = m->width_mult;
    h.meta.epoch = m->epoch, h.meta.step = m->step, h.meta.rng = m->rng, h.meta.best_acc1 = m->best_acc1;
    h.nparams = net->nparams;
    h.nstats = net->nstats;
    h2.step_in_epoch = m->step_in_epoch, h2.steps_per_epoch = m->steps_per_epoch;
    /* the net's buffers may be device memory: copied out through its backend, and checked before
     * anything is written (finite.h): a diverged net is never saved, the previous file stays */
    const float *bufs[3] = {net->params, net->mom, net->stats};
    size_t ns[3] = {net->nparams, net->nparams, net->nstats};
    float *host[3];
    for (int i = 0; i < 3; i++) {
        host[i] = xmalloc(sizeof(float) * ns[i] + 4);
        net_to_host(net, host[i], bufs[i], ns[i]);
    }
    char what[160];
    enum tipc_status st = TIPC_OK;
    if (!net_tensors_finite(net, host[0], host[1], host[2], what, sizeof what)) {
        st = error_msg(TIPC_ENUMERIC, "not saving checkpoint '%s': %s after global step %lld (epoch %d, step %d of "
                       "the epoch)", path, what, (long long)m->step, m->epoch, m->step_in_epoch);
        error_hint("the training diverged: lower the learning rate (--lr); the previous checkpoint, if any, is "
                   "untouched");
    }
    struct bin_writer w;
    if (st == TIPC_OK) st = bin_create(&w, path, CKPT_MAGIC);
    if (st == TIPC_OK) {
        bin_write(&w, &h, sizeof h);
        bin_write(&w, &h2, sizeof h2);
        bin_write(&w, &h4, sizeof h4);
        if (amp) bin_write(&w, &h3, sizeof h3);
        for (int i = 0; i < 3; i++) bin_write(&w, host[i], ns[i] * sizeof(float));
        st = bin_commit(&w);
    }
    for (int i = 0; i < 3; i++) free(host[i]);
    return st;
}

static enum tipc_status read_header(struct bin_reader *r, struct ckpt_header *h, struct ckpt_meta *m)
{
    if (!bin_read(r, h, sizeof *h))
        return error_msg(TIPC_EIO, "checkpoint '%s' is truncated (header)", r->path);
    if (h->version < 1 || h->version > CKPT_VERSION)
        return error_msg(TIPC_EIO, "checkpoint '%s' has version %u, this tipc reads 1 to %d", r->path, h->version,
                         CKPT_VERSION);
    if (h->dtype != 0) return error_msg(TIPC_EIO, "checkpoint '%s': unknown dtype %u", r->path, h->dtype);
    struct ckpt_header_v2 h2 = {0};
    if (h->version >= 2 && !bin_read(r, &h2, sizeof h2))
        return error_msg(TIPC_EIO, "checkpoint '%s' is truncated (header)", r->path);
    if (h2.step_in_epoch < 0 || (h2.step_in_epoch > 0 && h2.steps_per_epoch <= h2.step_in_epoch))
        return error_msg(TIPC_EIO, "checkpoint '%s': step %d of an epoch of %d steps is not a position", r->path,
                         h2.step_in_epoch, h2.steps_per_epoch);
    struct ckpt_header_v4 h4 = {.amp = h->version == 3};   /* version 3: the AMP section, no run section */
    if (h->version >= 4 && !bin_read(r, &h4, sizeof h4))
        return error_msg(TIPC_EIO, "checkpoint '%s' is truncated (header)", r->path);
    if (h4.amp > 1 || memchr(h4.run_id, 0, sizeof h4.run_id) == NULL)
        return error_msg(TIPC_EIO, "checkpoint '%s': the run section is damaged", r->path);
    struct ckpt_header_v3 h3 = {.precision = PREC_FP32};
    if (h4.amp && !bin_read(r, &h3, sizeof h3))
        return error_msg(TIPC_EIO, "checkpoint '%s' is truncated (header)", r->path);
    const float *ls = h3.scaler;
    if (h4.amp && ((h3.precision != PREC_BF16 && h3.precision != PREC_FP16) || !isfinite(ls[AMP_SCALE]) ||
                            !(ls[AMP_SCALE] > 0) || !(ls[AMP_GOOD] >= 0) || !(ls[AMP_SKIPPED] >= 0)))
        return error_msg(TIPC_EIO, "checkpoint '%s': the mixed-precision section (precision %d, loss scale %g, %g good "
                                   "steps, %g skipped) is not a loss scaler's state", r->path, h3.precision,
                         ls[AMP_SCALE], ls[AMP_GOOD], ls[AMP_SKIPPED]);
    memset(m, 0, sizeof *m);
    memcpy(m->model, h->meta.model, sizeof m->model);
    m->model[sizeof m->model - 1] = 0;
    m->num_classes = h->meta.num_classes, m->resolution = h->meta.resolution, m->width_mult = h->meta.width_mult;
    m->epoch = h->meta.epoch, m->step = h->meta.step, m->rng = h->meta.rng, m->best_acc1 = h->meta.best_acc1;
    m->step_in_epoch = h2.step_in_epoch, m->steps_per_epoch = h2.steps_per_epoch;
    m->precision = h3.precision;
    m->has_scaler = h4.amp;
    memcpy(m->scaler, h3.scaler, sizeof m->scaler);
    memcpy(m->run_id, h4.run_id, sizeof m->run_id);
    return TIPC_OK;
}

enum tipc_status ckpt_read_meta(const char *path, struct ckpt_meta *m)
{
    struct bin_reader r;
    struct ckpt_header h;
    TRY(bin_open(&r, path, CKPT_MAGIC, "checkpoint"));
    enum tipc_status st = read_header(&r, &h, m);
    bin_close(&r);
    return st;
}

enum tipc_status ckpt_load(const char *path, struct ckpt_meta *m, struct net *net, bool with_optimizer)
{
    struct bin_reader r;
    struct ckpt_header h;
    struct ckpt_meta hm_meta;
    TRY(bin_open(&r, path, CKPT_MAGIC, "checkpoint"));
    enum tipc_status st = read_header(&r, &h, &hm_meta);
    if (st == TIPC_OK && (h.nparams != net->nparams || h.nstats != net->nstats || strcmp(hm_meta.model, m->model) ||
                          hm_meta.num_classes != m->num_classes)) {
        st = error_msg(TIPC_EIO,
                       "checkpoint '%s' is of another model: %s, %d classes, %llu parameters; expected %s, "
                       "%d classes, %zu parameters",
                       path, hm_meta.model, hm_meta.num_classes, (unsigned long long)h.nparams, m->model,
                       m->num_classes, net->nparams);
    }
    const float *p = NULL, *mo = NULL, *s = NULL;
    if (st == TIPC_OK) {
        p = bin_peek(&r, net->nparams * sizeof(float));
        mo = bin_peek(&r, net->nparams * sizeof(float));
        s = bin_peek(&r, net->nstats * sizeof(float));
        if (!p || !mo || !s || r.pos != r.n) st = error_msg(TIPC_EIO, "checkpoint '%s' has a bad size", path);
    }
    /* the mapped bytes may be unaligned: copied into aligned host buffers, and checked there: a
     * checksum proves the file is what was written, not that the model in it is usable (finite.h) */
    float *hp = NULL, *hs = NULL, *hm = NULL;
    if (st == TIPC_OK) {
        hp = xmalloc(net->nparams * sizeof(float) + 4), hs = xmalloc(net->nstats * sizeof(float) + 4);
        hm = with_optimizer ? xmalloc(net->nparams * sizeof(float) + 4) : NULL;
        memcpy(hp, p, net->nparams * sizeof(float));
        memcpy(hs, s, net->nstats * sizeof(float));
        if (hm) memcpy(hm, mo, net->nparams * sizeof(float));
        char what[160];
        if (!net_tensors_finite(net, hp, hm, hs, what, sizeof what)) {
            st = error_msg(TIPC_ENUMERIC, "checkpoint '%s' (epoch %d, global step %lld) holds a non-finite value: %s; "
                           "not using it", path, hm_meta.epoch, (long long)hm_meta.step, what);
            error_hint("the run that wrote it diverged: use a checkpoint from before (epoch_N.ckpt), or train again "
                       "with a lower learning rate");
        }
    }
    if (st == TIPC_OK) {
        net_from_host(net, net->params, hp, net->nparams);
        net_from_host(net, net->stats, hs, net->nstats);
        if (with_optimizer) {
            net_from_host(net, net->mom, hm, net->nparams);
            if (hm_meta.has_scaler && net->amp_state && hm_meta.precision == (int32_t)net->amp.prec) {
                float ls[AMP_STATE_FLOATS];
                memcpy(ls, hm_meta.scaler, sizeof ls);
                if (!net->amp.ls.dynamic) ls[AMP_SCALE] = net->amp.ls.init_scale; /* a setting, not state */
                net_amp_write(net, ls);
            }
        } else {
            net_zero(net, net->mom, net->nparams);
        }
        *m = hm_meta;
    }
    free(hp);
    free(hs);
    free(hm);
    bin_close(&r);
    return st;
}
