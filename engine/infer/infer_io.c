/* infer_io.c: DIR/inference.tipc, the exported inference model: magic "TIPCINF1", version,
 * model name, classes, resolution, width, layer and slot counts, the layer records, the slot
 * shapes, the weights, an FNV-1a checksum (io/binfile.h). The loader re-derives every shape
 * from the input and checks each index, offset and size before anything runs, so a damaged
 * or hostile file is an error naming it, never an out-of-bounds access. */
#include <string.h>
#include <stdlib.h>

#include "infer.h"
#include "../../core/check.h"
#include "../io/binfile.h"
#include "../../core/banned.h"

static const char INF_MAGIC[8] = {'T', 'I', 'P', 'C', 'I', 'N', 'F', '1'};
#define INF_VERSION 1

struct inf_header {
    uint32_t version, dtype;
    char model[32];
    int32_t num_classes, resolution;
    float width_mult;
    int32_t nlayers, nslots, logits_slot, probs_slot, pad_;
    uint64_t nweights;
};

enum tipc_status infer_write(const struct infer_model *m, const char *path, struct staged_file *out)
{
    char what[160];
    if (!infer_weights_finite(m, what, sizeof what)) {
        error_msg(TIPC_ENUMERIC, "not writing inference model '%s': %s", path, what);
        error_hint("the checkpoint it comes from is of a diverged training: train again with a lower learning rate");
        return TIPC_ENUMERIC;
    }
    struct inf_header h;
    memset(&h, 0, sizeof h);
    h.version = INF_VERSION;
    memcpy(h.model, m->model, sizeof h.model);
    h.num_classes = m->num_classes, h.resolution = m->resolution, h.width_mult = m->width_mult;
    h.nlayers = m->nlayers, h.nslots = m->nslots, h.logits_slot = m->logits_slot, h.probs_slot = m->probs_slot;
    h.nweights = m->nweights;
    struct bin_writer w;
    TRY(bin_create(&w, path, INF_MAGIC));
    bin_write(&w, &h, sizeof h);
    bin_write(&w, m->layers, sizeof *m->layers * (size_t)m->nlayers);
    bin_write(&w, m->slots, sizeof *m->slots * (size_t)m->nslots);
    bin_write(&w, m->weights, sizeof(float) * m->nweights);
    TRY(bin_finish(&w));
    *out = w.sf;
    return TIPC_OK;
}

enum tipc_status infer_save(const struct infer_model *m, const char *path)
{
    struct staged_file f;
    TRY(infer_write(m, path, &f));
    return staged_publish(&f, 1);
}

static bool fits(uint64_t off, uint64_t n, uint64_t total) { return off <= total && n <= total - off; }

/* Shape rules of each layer kind against its slots; false names nothing, the caller does. */
static bool layer_ok(const struct infer_model *m, const struct infer_layer *l, int i, char *why, size_t wn)
{
    int S = m->nslots;
    if (l->kind < 0 || l->kind >= INF_KIND_COUNT) return snprintf(why, wn, "unknown kind %d", l->kind), false;
    if (l->in < 0 || l->in >= S || l->out <= 0 || l->out >= S || l->out == l->in)
        return snprintf(why, wn, "bad slot ids"), false;
    if (l->act < ACT_NONE || l->act > ACT_HARDSIGMOID) return snprintf(why, wn, "bad activation"), false;
    const struct infer_slot *si = &m->slots[l->in], *so = &m->slots[l->out];
    bool two = l->kind == INF_SCALE || l->kind == INF_ADD;
    if (two && (l->in2 < 0 || l->in2 >= S)) return snprintf(why, wn, "bad second input"), false;
    (void)i;
    switch ((enum infer_kind)l->kind) {
    case INF_CONV: {
        if (l->K < 1 || l->K > 15 || l->stride < 1 || l->stride > 4 || l->groups < 1 || si->C % l->groups ||
            l->Co < 1 || l->Co % l->groups)
            return snprintf(why, wn, "bad conv parameters"), false;
        int p = (l->K - 1) / 2, Ho = (si->H + 2 * p - l->K) / l->stride + 1, Wo = (si->W + 2 * p - l->K) / l->stride + 1;
        if (so->H != Ho || so->W != Wo || so->C != l->Co) return snprintf(why, wn, "conv output shape"), false;
        uint64_t wcount = (uint64_t)l->Co * (si->C / l->groups) * l->K * l->K;
        if (!fits(l->w_off, wcount, m->nweights) || !fits(l->b_off, (uint64_t)l->Co, m->nweights))
            return snprintf(why, wn, "weights out of range"), false;
        return true;
    }
    case INF_LINEAR:
        if (si->H != 1 || si->W != 1 || so->H != 1 || so->W != 1 || so->C != l->Co || l->Co < 1 ||
            !fits(l->w_off, (uint64_t)l->Co * si->C, m->nweights) || !fits(l->b_off, (uint64_t)l->Co, m->nweights))
            return snprintf(why, wn, "bad linear"), false;
        return true;
    case INF_ACT:
        return (so->H == si->H && so->W == si->W && so->C == si->C) || (snprintf(why, wn, "act shape"), false);
    case INF_POOL:
        return (so->H == 1 && so->W == 1 && so->C == si->C) || (snprintf(why, wn, "pool shape"), false);
    case INF_SCALE: {
        const struct infer_slot *g = &m->slots[l->in2];
        return (g->H == 1 && g->W == 1 && g->C == si->C && so->H == si->H && so->W == si->W && so->C == si->C) ||
               (snprintf(why, wn, "scale shape"), false);
    }
    case INF_ADD: {
        const struct infer_slot *b = &m->slots[l->in2];
        return (b->H == si->H && b->W == si->W && b->C == si->C && so->H == si->H && so->W == si->W && so->C == si->C) ||
               (snprintf(why, wn, "add shape"), false);
    }
    case INF_SOFTMAX:
        return (si->H == 1 && si->W == 1 && so->C == si->C) || (snprintf(why, wn, "softmax shape"), false);
    case INF_KIND_COUNT: break;
    }
    return false;
}

static enum tipc_status validate(const struct infer_model *m, const char *path)
{
    for (int s = 0; s < m->nslots; s++) {
        const struct infer_slot *sl = &m->slots[s];
        if (sl->H < 1 || sl->W < 1 || sl->C < 1 || sl->H > 4096 || sl->W > 4096 || sl->C > 65536)
            return error_msg(TIPC_EIO, "inference model '%s': slot %d has a bad shape", path, s);
    }
    if (m->slots[0].C != 3 || m->slots[0].H != m->slots[0].W)
        return error_msg(TIPC_EIO, "inference model '%s': input is not square RGB", path);
    char *defined = xcalloc((size_t)m->nslots, 1);
    defined[0] = 1;
    enum tipc_status st = TIPC_OK;
    for (int i = 0; i < m->nlayers && st == TIPC_OK; i++) {
        const struct infer_layer *l = &m->layers[i];
        char why[64];
        if (!layer_ok(m, l, i, why, sizeof why))
            st = error_msg(TIPC_EIO, "inference model '%s': layer %d: %s", path, i, why);
        else if (!defined[l->in] || (l->in2 >= 0 && !defined[l->in2]) || defined[l->out])
            st = error_msg(TIPC_EIO, "inference model '%s': layer %d uses a slot out of order", path, i);
        else
            defined[l->out] = 1;
    }
    if (st == TIPC_OK && (m->logits_slot < 0 || m->logits_slot >= m->nslots || m->probs_slot < 0 ||
                          m->probs_slot >= m->nslots || !defined[m->probs_slot] || !defined[m->logits_slot] ||
                          m->slots[m->probs_slot].C != m->num_classes))
        st = error_msg(TIPC_EIO, "inference model '%s': bad output slots", path);
    free(defined);
    return st;
}

enum tipc_status infer_load(struct infer_model *m, const char *path, int N, struct backend be)
{
    memset(m, 0, sizeof *m);
    struct bin_reader r;
    TRY(bin_open(&r, path, INF_MAGIC, "inference model"));
    struct inf_header h;
    enum tipc_status st = TIPC_OK;
    if (!bin_read(&r, &h, sizeof h)) st = error_msg(TIPC_EIO, "inference model '%s' is truncated", path);
    else if (h.version != INF_VERSION || h.dtype != 0)
        st = error_msg(TIPC_EIO, "inference model '%s' has version %u, this tipc reads %d", path, h.version, INF_VERSION);
    else if (h.nlayers < 1 || h.nlayers > 100000 || h.nslots < 2 || h.nslots > 100000 || h.nweights > (1ull << 32))
        st = error_msg(TIPC_EIO, "inference model '%s' has a bad header", path);
    if (st == TIPC_OK) {
        m->be = be;
        memcpy(m->model, h.model, sizeof m->model);
        m->model[sizeof m->model - 1] = 0;
        m->num_classes = h.num_classes, m->resolution = h.resolution, m->width_mult = h.width_mult;
        m->nlayers = h.nlayers, m->nslots = h.nslots, m->logits_slot = h.logits_slot, m->probs_slot = h.probs_slot;
        m->nweights = h.nweights;
        m->layers = xmalloc(sizeof *m->layers * (size_t)h.nlayers);
        m->slots = xmalloc(sizeof *m->slots * (size_t)h.nslots);
        m->weights = xmalloc(sizeof(float) * (h.nweights ? h.nweights : 1));
        if (!bin_read(&r, m->layers, sizeof *m->layers * (size_t)h.nlayers) ||
            !bin_read(&r, m->slots, sizeof *m->slots * (size_t)h.nslots) ||
            !bin_read(&r, m->weights, sizeof(float) * h.nweights) || r.pos != r.n)
            st = error_msg(TIPC_EIO, "inference model '%s' has a bad size", path);
    }
    if (st == TIPC_OK) st = validate(m, path);
    char what[160];
    if (st == TIPC_OK && !infer_weights_finite(m, what, sizeof what)) {
        st = error_msg(TIPC_ENUMERIC, "inference model '%s' holds a non-finite value: %s; not serving it", path, what);
        error_hint("it was exported from a diverged training: export a checkpoint from before, or train again");
    }
    bin_close(&r);
    if (st != TIPC_OK) {
        infer_free(m);
        return st;
    }
    infer_plan(m, N);
    return TIPC_OK;
}
