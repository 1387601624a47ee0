/* train_graph.c: see train_graph.h. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "train_graph.h"
#include "../../core/check.h"
#include "../../core/banned.h"

/* What a captured graph bakes in: a change means capturing again. */
struct graph_key {
    int n;
    float momentum, weight_decay, label_smoothing;
};

struct train_graph {
    float *block[2];          /* the slots, backend memory: scalars | labels | images */
    float *loss;              /* (2) backend memory: each slot's step's loss */
    size_t off_labels, off_images, bytes;
    int next;                 /* slot of the next step */
    long staged;              /* steps run op by op since the last (re)start: the warm-up */
    long replays;
    bool captured[2], failed;
    struct graph_key key;
};

static size_t up256(size_t n) { return (n + 255) & ~(size_t)255; }

static struct train_graph *graph_new(struct net *net)
{
    struct train_graph *g = xcalloc(1, sizeof *g);
    const struct slot *in = &net->slots[0];
    g->off_labels = up256(sizeof(struct step_scalars));
    g->off_images = g->off_labels + up256(sizeof(int32_t) * (size_t)net->N);
    g->bytes = g->off_images + (size_t)net->N * in->H * in->W * in->C;
    for (int k = 0; k < 2; k++) g->block[k] = net->be.ops->alloc(net->be.ctx, (g->bytes + 3) / 4);
    g->loss = net->be.ops->alloc(net->be.ctx, 2);
    return g;
}

void train_graph_free(struct net *net)
{
    struct train_graph *g = net->tg;
    if (!g) return;
    if (net->be.ops) {
        for (int k = 0; k < 2; k++) net->be.ops->free(net->be.ctx, g->block[k]);
        net->be.ops->free(net->be.ctx, g->loss);
    }
    free(g);
    net->tg = NULL;
}

long train_graph_replays(const struct net *net) { return net->tg ? net->tg->replays : 0; }

/* Run the staged step of slot k: replayed, captured now, or op by op. */
static enum tipc_status run_slot(struct net *net, struct dp *dp, struct train_graph *g, int k, enum step_mode mode,
                                 int n, const struct train_step *s)
{
    struct backend *be = &net->be;
    bool graph = mode == STEP_GRAPH && !g->failed && g->staged >= TRAIN_GRAPH_WARMUP && backend_has_graphs(be);
    if (graph && g->captured[k] && !backend_graph_valid(be, 1 + k)) g->captured[k] = false; /* a workspace moved */
    if (graph && !g->captured[k]) {
        char why[256];
        backend_graph_begin(be);
        enum tipc_status st = net_train_step_staged(net, dp, n, s);
        g->captured[k] = backend_graph_end_id(be, 1 + k, why, sizeof why) && st == TIPC_OK;
        if (st != TIPC_OK) return st; /* a collective failed while it was being recorded */
        if (!g->captured[k]) {
            warning_msg("capturing the training step as a CUDA Graph failed (%s); it runs op by op from now on", why);
            g->failed = true;
            graph = false;
        }
    }
    if (graph) {
        backend_graph_launch_id(be, 1 + k);
        g->replays++;
        return TIPC_OK;
    }
    g->staged++;
    return net_train_step_staged(net, dp, n, s);
}

enum tipc_status train_graph_step(struct net *net, struct dp *dp, struct train_step *s)
{
    const struct micro_batch *b = &s->mb[0];
    CHECK(b->images && b->n > 0 && b->n <= net->N, "staged step: batch of %d (planned %d)", b->n, net->N);
    if (!net->tg) net->tg = graph_new(net);
    struct train_graph *g = net->tg;
    struct graph_key key = {b->n, s->momentum, s->weight_decay, s->label_smoothing};
    if (memcmp(&key, &g->key, sizeof key)) { /* new constants: warm up and capture again */
        g->key = key;
        g->staged = 0;
        g->captured[0] = g->captured[1] = false;
    }
    int k = g->next;
    g->next ^= 1;
    const struct slot *in = &net->slots[0];
    struct step_scalars sc = {.lr = s->lr, .dropout_seed = b->dropout_seed};
    struct stage_part parts[3] = {
        {0, &sc, sizeof sc},
        {g->off_labels, b->labels, sizeof(int32_t) * (size_t)b->n},
        {g->off_images, b->images, (size_t)b->n * in->H * in->W * in->C},
    };
    char *block = (char *)g->block[k];
    net->be.ops->stage_put(net->be.ctx, k, block, parts, 3);
    struct step_inputs si = {(const struct step_scalars *)block, (const int32_t *)(block + g->off_labels),
                             (const uint8_t *)(block + g->off_images), g->loss + k};
    net->staged = &si;
    enum tipc_status st = run_slot(net, dp, g, k, s->mode, b->n, s);
    net->staged = NULL;
    net->be.ops->stage_release(net->be.ctx, k);
    if (st != TIPC_OK) return st;
    if (s->logits_host) net_to_host(net, s->logits_host, net_logits(net), (size_t)b->n * net_num_classes(net));
    if (s->loss_unread) {
        s->loss = NAN;
        return dp ? dp->s->updated(dp, net, s->step + 1) : TIPC_OK;
    }
    net_to_host(net, &s->loss, g->loss + k, 1);
    if (!isfinite(s->loss)) return TIPC_ENUMERIC;
    return dp ? dp->s->updated(dp, net, s->step + 1) : TIPC_OK;
}
