/* onnx.c: see onnx.h. Every allocation made while building the protobuf tree goes into one
 * pool freed after packing. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "onnx.pb-c.h"

#include "binfile.h"
#include "onnx.h"
#include "../../core/check.h"
#include "../../core/staged.h"
#include "../../core/banned.h"

struct pool { void **p; size_t n, cap; };
static void *palloc(struct pool *pl, size_t n)
{
    void *p = xcalloc(1, n ? n : 1);
    pl->p = xgrow(pl->p, sizeof *pl->p, pl->n + 1, &pl->cap);
    pl->p[pl->n++] = p;
    return p;
}
static char *pstr(struct pool *pl, const char *s)
{
    char *d = palloc(pl, strlen(s) + 1);
    memcpy(d, s, strlen(s));
    return d;
}

struct gb { struct pool *pl; Onnx__GraphProto *g; size_t capn, capi; };

static void add_node(struct gb *b, const char *op, const char *name, const char **in, int nin, const char *out,
                     Onnx__AttributeProto **attrs, int nattr)
{
    Onnx__NodeProto *n = palloc(b->pl, sizeof *n);
    onnx__node_proto__init(n);
    n->op_type = pstr(b->pl, op);
    n->name = pstr(b->pl, name);
    n->n_input = (size_t)nin;
    n->input = palloc(b->pl, sizeof(char *) * (size_t)nin);
    for (int i = 0; i < nin; i++) n->input[i] = pstr(b->pl, in[i]);
    n->n_output = 1;
    n->output = palloc(b->pl, sizeof(char *));
    n->output[0] = pstr(b->pl, out);
    n->n_attribute = (size_t)nattr;
    n->attribute = attrs;
    b->g->node = xgrow(b->g->node, sizeof *b->g->node, b->g->n_node + 1, &b->capn);
    b->g->node[b->g->n_node++] = n;
}

static Onnx__AttributeProto *new_attr(struct pool *pl, const char *name, Onnx__AttributeProto__AttributeType t)
{
    Onnx__AttributeProto *a = palloc(pl, sizeof *a);
    onnx__attribute_proto__init(a);
    a->name = pstr(pl, name);
    a->has_type = 1, a->type = t;
    return a;
}
static Onnx__AttributeProto *attr_ints(struct pool *pl, const char *name, const int64_t *v, int n)
{
    Onnx__AttributeProto *a = new_attr(pl, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS);
    a->n_ints = (size_t)n;
    a->ints = palloc(pl, sizeof(int64_t) * (size_t)n);
    memcpy(a->ints, v, sizeof(int64_t) * (size_t)n);
    return a;
}
static Onnx__AttributeProto *attr_int(struct pool *pl, const char *name, int64_t v)
{
    Onnx__AttributeProto *a = new_attr(pl, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT);
    a->has_i = 1, a->i = v;
    return a;
}
static Onnx__AttributeProto *attr_float(struct pool *pl, const char *name, float v)
{
    Onnx__AttributeProto *a = new_attr(pl, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT);
    a->has_f = 1, a->f = v;
    return a;
}

static void add_init(struct gb *b, const char *name, const float *data, const int64_t *dims, int nd)
{
    Onnx__TensorProto *t = palloc(b->pl, sizeof *t);
    onnx__tensor_proto__init(t);
    t->name = pstr(b->pl, name);
    t->n_dims = (size_t)nd;
    t->dims = palloc(b->pl, sizeof(int64_t) * (size_t)nd);
    size_t cnt = 1;
    for (int i = 0; i < nd; i++) t->dims[i] = dims[i], cnt *= (size_t)dims[i];
    t->has_data_type = 1, t->data_type = ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT;
    t->has_raw_data = 1;
    t->raw_data.len = cnt * sizeof(float);
    t->raw_data.data = palloc(b->pl, t->raw_data.len);
    memcpy(t->raw_data.data, data, t->raw_data.len); /* little-endian host, as ONNX wants */
    b->g->initializer = xgrow(b->g->initializer, sizeof *b->g->initializer, b->g->n_initializer + 1, &b->capi);
    b->g->initializer[b->g->n_initializer++] = t;
}

/* A float tensor value_info: dims < 0 mean the symbolic batch "N". */
static Onnx__ValueInfoProto *value_info(struct pool *pl, const char *name, const int64_t *dims, int nd)
{
    Onnx__ValueInfoProto *v = palloc(pl, sizeof *v);
    onnx__value_info_proto__init(v);
    v->name = pstr(pl, name);
    Onnx__TypeProto *tp = palloc(pl, sizeof *tp);
    onnx__type_proto__init(tp);
    Onnx__TypeProto__Tensor *tt = palloc(pl, sizeof *tt);
    onnx__type_proto__tensor__init(tt);
    tt->has_elem_type = 1, tt->elem_type = ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT;
    Onnx__TensorShapeProto *sh = palloc(pl, sizeof *sh);
    onnx__tensor_shape_proto__init(sh);
    sh->n_dim = (size_t)nd;
    sh->dim = palloc(pl, sizeof *sh->dim * (size_t)nd);
    for (int i = 0; i < nd; i++) {
        Onnx__TensorShapeProto__Dimension *d = palloc(pl, sizeof *d);
        onnx__tensor_shape_proto__dimension__init(d);
        if (dims[i] < 0) d->value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM, d->dim_param = pstr(pl, "N");
        else d->value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE, d->dim_value = dims[i];
        sh->dim[i] = d;
    }
    tt->shape = sh;
    tp->value_case = ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE;
    tp->tensor_type = tt;
    v->type = tp;
    return v;
}

/* Activation node from `in` to `out` (Identity for none). */
static void add_act(struct gb *b, enum act_kind k, const char *in, const char *out, int i)
{
    char name[64];
    snprintf(name, sizeof name, "act%d", i);
    const char *ins[1] = {in};
    if (k == ACT_RELU) add_node(b, "Relu", name, ins, 1, out, NULL, 0);
    else if (k == ACT_HARDSWISH) add_node(b, "HardSwish", name, ins, 1, out, NULL, 0);
    else if (k == ACT_HARDSIGMOID) {
        Onnx__AttributeProto **a = palloc(b->pl, 2 * sizeof *a);
        a[0] = attr_float(b->pl, "alpha", 1.0f / 6.0f);
        a[1] = attr_float(b->pl, "beta", 0.5f);
        add_node(b, "HardSigmoid", name, ins, 1, out, a, 2);
    } else add_node(b, "Identity", name, ins, 1, out, NULL, 0);
}

static void slot_name(char *buf, size_t n, const struct infer_model *m, int s)
{
    if (s == 0) snprintf(buf, n, "input");
    else if (s == m->probs_slot) snprintf(buf, n, "probs");
    else snprintf(buf, n, "t%d", s);
}

static void add_layer(struct gb *b, const struct infer_model *m, int i)
{
    const struct infer_layer *l = &m->layers[i];
    const struct infer_slot *si = &m->slots[l->in];
    char x[32], y[32], x2[32], pre[48], w[32], bb[32], name[32];
    slot_name(x, sizeof x, m, l->in);
    slot_name(y, sizeof y, m, l->out);
    snprintf(pre, sizeof pre, "%s_pre", y);
    snprintf(w, sizeof w, "w%d", i);
    snprintf(bb, sizeof bb, "b%d", i);
    snprintf(name, sizeof name, "n%d", i);
    bool act = l->act != ACT_NONE;
    switch ((enum infer_kind)l->kind) {
    case INF_CONV:
    case INF_LINEAR: {
        bool conv = l->kind == INF_CONV;
        int K = conv ? l->K : 1, g = conv ? l->groups : 1, s = conv ? l->stride : 1, p = (K - 1) / 2;
        int64_t wd[4] = {l->Co, si->C / g, K, K}, bd[1] = {l->Co};
        add_init(b, w, m->weights + l->w_off, wd, 4);
        add_init(b, bb, m->weights + l->b_off, bd, 1);
        int64_t ks[2] = {K, K}, st[2] = {s, s}, pads[4] = {p, p, p, p};
        Onnx__AttributeProto **a = palloc(b->pl, 4 * sizeof *a);
        a[0] = attr_ints(b->pl, "kernel_shape", ks, 2);
        a[1] = attr_ints(b->pl, "strides", st, 2);
        a[2] = attr_ints(b->pl, "pads", pads, 4);
        a[3] = attr_int(b->pl, "group", g);
        const char *ins[3] = {x, w, bb};
        add_node(b, "Conv", name, ins, 3, act ? pre : y, a, 4);
        if (act) add_act(b, (enum act_kind)l->act, pre, y, i);
        break;
    }
    case INF_ACT: add_act(b, (enum act_kind)l->act, x, y, i); break;
    case INF_POOL: {
        const char *ins[1] = {x};
        add_node(b, "GlobalAveragePool", name, ins, 1, y, NULL, 0);
        break;
    }
    case INF_SCALE:
    case INF_ADD: {
        slot_name(x2, sizeof x2, m, l->in2);
        const char *ins[2] = {x, x2};
        add_node(b, l->kind == INF_SCALE ? "Mul" : "Add", name, ins, 2, y, NULL, 0);
        break;
    }
    case INF_SOFTMAX: {
        const char *ins[1] = {x};
        Onnx__AttributeProto **a = palloc(b->pl, sizeof *a);
        a[0] = attr_int(b->pl, "axis", 1);
        add_node(b, "Flatten", "flatten", ins, 1, "logits", a, 1);
        const char *ins2[1] = {"logits"};
        Onnx__AttributeProto **a2 = palloc(b->pl, sizeof *a2);
        a2[0] = attr_int(b->pl, "axis", 1);
        add_node(b, "Softmax", name, ins2, 1, y, a2, 1);
        break;
    }
    case INF_KIND_COUNT: BUG("kind");
    }
}

/* The preprocessing the graph expects, for whoever deploys it elsewhere (docs/engine.md): the
 * normalisation of net_set_input_u8 (engine/ops/cpu/act.c) and tipc infer's resize + crop. */
static void add_meta(struct pool *pl, Onnx__ModelProto *mp, const char *key, const char *value)
{
    Onnx__StringStringEntryProto *e = palloc(pl, sizeof *e);
    onnx__string_string_entry_proto__init(e);
    e->key = pstr(pl, key);
    e->value = pstr(pl, value);
    mp->metadata_props[mp->n_metadata_props++] = e;
}

static void add_preprocessing(struct pool *pl, Onnx__ModelProto *mp, const struct infer_model *m)
{
    char buf[64];
    int R = m->slots[0].H;
    mp->metadata_props = palloc(pl, sizeof *mp->metadata_props * 16);
    add_meta(pl, mp, "model", m->model[0] ? m->model : "mobilenet_v3_small");
    add_meta(pl, mp, "preprocess.color", "RGB");
    add_meta(pl, mp, "preprocess.layout", "NCHW");
    add_meta(pl, mp, "preprocess.scale", "0.00392156862745098"); /* 1/255: pixels to [0, 1] first */
    add_meta(pl, mp, "preprocess.mean", "0.485,0.456,0.406");
    add_meta(pl, mp, "preprocess.std", "0.229,0.224,0.225");
    snprintf(buf, sizeof buf, "%d", (R * 256 + 112) / 224);
    add_meta(pl, mp, "preprocess.resize_short", buf);
    snprintf(buf, sizeof buf, "%d", R);
    add_meta(pl, mp, "preprocess.center_crop", buf);
    add_meta(pl, mp, "preprocess.interpolation", "bilinear, no antialiasing");
    snprintf(buf, sizeof buf, "%d", m->num_classes);
    add_meta(pl, mp, "num_classes", buf);
    add_meta(pl, mp, "outputs", "probs: softmax (N, num_classes); logits: (N, num_classes)");
    add_meta(pl, mp, "labels", ONNX_LABEL_FILE);
}

enum tipc_status onnx_write_labels(const char *dir, int num_classes, struct staged_file *out)
{
    char *path = xasprintf("%s/%s", dir, ONNX_LABEL_FILE);
    enum tipc_status st = staged_open(out, path);
    free(path);
    if (st != TIPC_OK) return st;
    for (int k = 0; k < num_classes; k++) {
        char line[48];
        int n = snprintf(line, sizeof line, "%d class_%d\n", k, k);
        staged_write(out, line, (size_t)n);
    }
    return staged_finish(out);
}

enum tipc_status onnx_write(const struct infer_model *m, const char *path, struct staged_file *out)
{
    struct pool pl = {0};
    Onnx__GraphProto g;
    onnx__graph_proto__init(&g);
    g.name = pstr(&pl, m->model[0] ? m->model : "tipc");
    struct gb b = {.pl = &pl, .g = &g};
    for (int i = 0; i < m->nlayers; i++) add_layer(&b, m, i);
    int64_t in_dims[4] = {-1, 3, m->slots[0].H, m->slots[0].W}, out_dims[2] = {-1, m->num_classes};
    Onnx__ValueInfoProto *ins[1] = {value_info(&pl, "input", in_dims, 4)};
    Onnx__ValueInfoProto *outs[2] = {value_info(&pl, "probs", out_dims, 2), value_info(&pl, "logits", out_dims, 2)};
    g.n_input = 1, g.input = ins, g.n_output = 2, g.output = outs;
    Onnx__OperatorSetIdProto ops;
    onnx__operator_set_id_proto__init(&ops);
    ops.domain = pstr(&pl, "");
    ops.has_version = 1, ops.version = 17;
    Onnx__OperatorSetIdProto *opsp[1] = {&ops};
    Onnx__ModelProto mp;
    onnx__model_proto__init(&mp);
    mp.has_ir_version = 1, mp.ir_version = 8;
    mp.n_opset_import = 1, mp.opset_import = opsp;
    mp.producer_name = pstr(&pl, "tipc");
    mp.producer_version = pstr(&pl, "1");
    mp.graph = &g;
    add_preprocessing(&pl, &mp, m);
    size_t n = onnx__model_proto__get_packed_size(&mp);
    uint8_t *buf = xmalloc(n);
    onnx__model_proto__pack(&mp, buf);
    enum tipc_status st = staged_open(out, path);
    if (st == TIPC_OK) {
        staged_write(out, buf, n);
        st = staged_finish(out);
    }
    free(buf);
    free(g.node);
    free(g.initializer);
    for (size_t i = 0; i < pl.n; i++) free(pl.p[i]);
    free(pl.p);
    return st;
}

