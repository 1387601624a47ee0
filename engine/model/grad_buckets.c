/* grad_buckets.c: see grad_buckets.h. */
#include <stdlib.h>
#include <string.h>

#include "grad_buckets.h"
#include "net.h"
#include "../../core/check.h"
#include "../../core/banned.h"

void grad_plan_build(struct grad_plan *p, const struct grad_tensor *t, int nt, size_t bucket_bytes, bool per_tensor)
{
    memset(p, 0, sizeof *p);
    p->b = xcalloc((size_t)(nt > 0 ? nt : 1), sizeof *p->b);
    struct grad_bucket *cur = NULL;
    size_t next_off = 0;   /* the tensor after this one (in layer order) starts here */
    bool have_next = false;
    for (int i = nt - 1; i >= 0; i--) {
        if (!t[i].n) continue;
        if (have_next && t[i].off + t[i].n != next_off)
            BUG("gradient tensor %d (layer %d) [%zu, +%zu) is not adjacent to the next one at %zu", i, t[i].layer,
                t[i].off, t[i].n, next_off);
        next_off = t[i].off, have_next = true;
        if (!cur) {
            cur = &p->b[p->nb++];
            cur->off = t[i].off + t[i].n;   /* grows downwards */
        }
        cur->off = t[i].off;
        cur->n += t[i].n;
        cur->ready_layer = t[i].layer;
        cur->ntensors++;
        p->total += t[i].n;
        if (per_tensor || (bucket_bytes && cur->n * sizeof(float) >= bucket_bytes)) cur = NULL;
    }
}

int grad_tensors_of_net(const struct net *net, struct grad_tensor **out)
{
    struct grad_tensor *t = xcalloc((size_t)net->nlayers * 2 + 1, sizeof *t);
    int nt = 0;
    for (int i = 0; i < net->nlayers; i++) {
        const struct layer *l = &net->layers[i];
        if (!l->nparam) continue;
        size_t first = l->nparam;   /* conv: the weight alone */
        if (l->kind == LAYER_BN) first = l->nparam / 2;                                   /* gamma | beta */
        if (l->kind == LAYER_LINEAR && l->bias) first = l->nparam - (size_t)l->Co;        /* weight | bias */
        t[nt++] = (struct grad_tensor){l->param_off, first, i};
        if (first < l->nparam) t[nt++] = (struct grad_tensor){l->param_off + first, l->nparam - first, i};
    }
    *out = t;
    return nt;
}

void grad_plan_of_net(struct grad_plan *p, const struct net *net, size_t bucket_bytes, bool per_tensor)
{
    struct grad_tensor *t;
    int nt = grad_tensors_of_net(net, &t);
    grad_plan_build(p, t, nt, bucket_bytes, per_tensor);
    free(t);
    if (p->total != net->nparams)
        BUG("gradient buckets cover %zu of %zu parameters", p->total, net->nparams);
}

void grad_plan_free(struct grad_plan *p)
{
    free(p->b);
    memset(p, 0, sizeof *p);
}
