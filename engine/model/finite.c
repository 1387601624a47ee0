/* finite.c: see finite.h. */
#include "finite.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "../../core/check.h"
#include "../../core/banned.h"

long first_nonfinite(const float *x, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!isfinite(x[i])) return (long)i;
    return -1;
}

static const char *kind_name(const struct layer *l)
{
    switch (l->kind) {
    case LAYER_CONV: return l->groups > 1 ? "depthwise conv" : "conv";
    case LAYER_BN: return "bn";
    case LAYER_LINEAR: return "linear";
    case LAYER_ACT: case LAYER_POOL: case LAYER_SCALE: case LAYER_ADD: case LAYER_DROPOUT: case LAYER_KIND_COUNT:
        break;
    }
    return "layer";
}

/* Which tensor of a layer offset k falls in: (name, index inside it). */
static const char *param_part(const struct layer *l, size_t k, size_t *at)
{
    size_t half = l->nparam / 2;
    *at = k;
    if (l->kind == LAYER_BN) return k < half ? "gamma" : (*at = k - half, "beta");
    if (l->kind == LAYER_LINEAR && l->bias) {
        size_t nw = l->nparam - (size_t)l->Co;
        return k < nw ? "weight" : (*at = k - nw, "bias");
    }
    return "weight";
}

static void name_value(const struct net *net, bool stat, const char *buf_name, size_t idx, float v, char *what,
                       size_t n)
{
    for (int i = 0; i < net->nlayers; i++) {
        const struct layer *l = &net->layers[i];
        size_t off = stat ? l->stat_off : l->param_off, cnt = stat ? (l->kind == LAYER_BN ? l->nparam : 0) : l->nparam;
        if (!cnt || idx < off || idx >= off + cnt) continue;
        size_t at = idx - off;
        const char *part = stat ? (at < cnt / 2 ? "running mean" : (at -= cnt / 2, "running var"))
                                : param_part(l, at, &at);
        snprintf(what, n, "layer %d (%s) %s%s%s [%zu] = %g", i, kind_name(l), buf_name, *buf_name ? " " : "", part, at,
                 (double)v);
        return;
    }
    snprintf(what, n, "%s value %zu = %g", buf_name, idx, (double)v);
}

bool net_tensors_finite(const struct net *net, const float *params, const float *mom, const float *stats,
                        char *what, size_t n)
{
    long k;
    if ((k = first_nonfinite(params, net->nparams)) >= 0) {
        name_value(net, false, "", (size_t)k, params[k], what, n);
        return false;
    }
    if ((k = first_nonfinite(stats, net->nstats)) >= 0) {
        name_value(net, true, "", (size_t)k, stats[k], what, n);
        return false;
    }
    if (mom && (k = first_nonfinite(mom, net->nparams)) >= 0) {
        name_value(net, false, "momentum of", (size_t)k, mom[k], what, n);
        return false;
    }
    return true;
}

bool net_finite(const struct net *net, char *what, size_t n)
{
    float *p = xmalloc(sizeof(float) * (net->nparams + 1)), *s = xmalloc(sizeof(float) * (net->nstats + 1));
    net_to_host(net, p, net->params, net->nparams);
    net_to_host(net, s, net->stats, net->nstats);
    bool ok = net_tensors_finite(net, p, NULL, s, what, n);
    free(p);
    free(s);
    return ok;
}
