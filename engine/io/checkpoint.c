/* checkpoint.c: see checkpoint.h. */
#include <stdlib.h>
#include <string.h>

#include "binfile.h"
#include "checkpoint.h"
#include "../../core/check.h"
#include "../../core/banned.h"

static const char CKPT_MAGIC[8] = {'T', 'I', 'P', 'C', 'C', 'K', 'P', '1'};

/* Fixed-size header after the magic. */
struct ckpt_header {
    uint32_t version, dtype; /* dtype 0 = f32 */
    struct ckpt_meta meta;
    uint64_t nparams, nstats;
};

enum tipc_status ckpt_save(const char *path, const struct ckpt_meta *m, const struct net *net)
{
    struct ckpt_header h;
    memset(&h, 0, sizeof h);
    h.version = CKPT_VERSION;
    h.meta = *m;
    h.nparams = net->nparams;
    h.nstats = net->nstats;
    struct bin_writer w;
    TRY(bin_create(&w, path, CKPT_MAGIC));
    bin_write(&w, &h, sizeof h);
    /* the net's buffers may be device memory: copied out through its backend */
    float *host = xmalloc(sizeof(float) * (net->nparams > net->nstats ? net->nparams : net->nstats) + 4);
    const float *bufs[3] = {net->params, net->mom, net->stats};
    size_t ns[3] = {net->nparams, net->nparams, net->nstats};
    for (int i = 0; i < 3; i++) {
        net_to_host(net, host, bufs[i], ns[i]);
        bin_write(&w, host, ns[i] * sizeof(float));
    }
    free(host);
    return bin_commit(&w);
}

static enum tipc_status read_header(struct bin_reader *r, struct ckpt_header *h)
{
    if (!bin_read(r, h, sizeof *h))
        return error_msg(TIPC_EIO, "checkpoint '%s' is truncated (header)", r->path);
    if (h->version != CKPT_VERSION)
        return error_msg(TIPC_EIO, "checkpoint '%s' has version %u, this tipc reads %d", r->path, h->version,
                         CKPT_VERSION);
    if (h->dtype != 0) return error_msg(TIPC_EIO, "checkpoint '%s': unknown dtype %u", r->path, h->dtype);
    h->meta.model[sizeof h->meta.model - 1] = 0;
    return TIPC_OK;
}

enum tipc_status ckpt_read_meta(const char *path, struct ckpt_meta *m)
{
    struct bin_reader r;
    struct ckpt_header h;
    TRY(bin_open(&r, path, CKPT_MAGIC, "checkpoint"));
    enum tipc_status st = read_header(&r, &h);
    if (st == TIPC_OK) *m = h.meta;
    bin_close(&r);
    return st;
}

enum tipc_status ckpt_load(const char *path, struct ckpt_meta *m, struct net *net, bool with_optimizer)
{
    struct bin_reader r;
    struct ckpt_header h;
    TRY(bin_open(&r, path, CKPT_MAGIC, "checkpoint"));
    enum tipc_status st = read_header(&r, &h);
    if (st == TIPC_OK && (h.nparams != net->nparams || h.nstats != net->nstats || strcmp(h.meta.model, m->model) ||
                          h.meta.num_classes != m->num_classes)) {
        st = error_msg(TIPC_EIO,
                       "checkpoint '%s' is of another model: %s, %d classes, %llu parameters; expected %s, "
                       "%d classes, %zu parameters",
                       path, h.meta.model, h.meta.num_classes, (unsigned long long)h.nparams, m->model,
                       m->num_classes, net->nparams);
    }
    const float *p = NULL, *mo = NULL, *s = NULL;
    if (st == TIPC_OK) {
        p = bin_peek(&r, net->nparams * sizeof(float));
        mo = bin_peek(&r, net->nparams * sizeof(float));
        s = bin_peek(&r, net->nstats * sizeof(float));
        if (!p || !mo || !s || r.pos != r.n) st = error_msg(TIPC_EIO, "checkpoint '%s' has a bad size", path);
    }
    if (st == TIPC_OK) {
        /* the mapped bytes may be unaligned: copy through an aligned host buffer */
        float *host = xmalloc(sizeof(float) * (net->nparams > net->nstats ? net->nparams : net->nstats) + 4);
        memcpy(host, p, net->nparams * sizeof(float));
        net_from_host(net, net->params, host, net->nparams);
        memcpy(host, s, net->nstats * sizeof(float));
        net_from_host(net, net->stats, host, net->nstats);
        if (with_optimizer) {
            memcpy(host, mo, net->nparams * sizeof(float));
            net_from_host(net, net->mom, host, net->nparams);
        } else {
            net_zero(net, net->mom, net->nparams);
        }
        free(host);
        *m = h.meta;
    }
    bin_close(&r);
    return st;
}
