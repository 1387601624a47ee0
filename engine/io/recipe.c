/* recipe.c: see recipe.h. libyaml's event API flattens the document into dotted keys
 * ("Optimizer.lr.name") with their line; each is then set through one table of known keys. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#include "recipe.h"
#include "../../core/check.h"
#include "../../core/regfile.h"
#include "../../core/parse.h"
#include "../../core/banned.h"

enum key_type { K_INT, K_LONG, K_DOUBLE, K_STR, K_BOOL, K_SCHED, K_INTLIST };
/* min < max: the value's allowed range (K_INT, K_DOUBLE), checked on every path in (YAML, -o), so a
 * value no machine can hold (batch 1e9, image_size 1e5) is a usage error naming the key, not an
 * out-of-memory death later. The ranges are documented in docs/reliability.md. */
struct key { const char *name; enum key_type type; size_t off; size_t size; double min, max; };

#define F(field) offsetof(struct recipe, field), sizeof(((struct recipe *)0)->field)
static const struct key KEYS[] = {
    {"Global.epochs", K_INT, F(epochs), 0, 100000},
    {"Global.output_dir", K_STR, F(output_dir), 0, 0},
    {"Global.print_batch_step", K_INT, F(print_freq), 1, 1000000000},
    {"Global.seed", K_LONG, F(seed), 0, 0},
    {"Global.device", K_STR, F(device), 0, 0},
    {"Global.eval_during_train", K_BOOL, F(eval_during_train), 0, 0},
    {"Global.save_interval_steps", K_INT, F(save_interval_steps), 0, 1000000000},
    {"Arch.name", K_STR, F(arch), 0, 0},
    {"Arch.class_num", K_INT, F(num_classes), 1, 100000},
    {"Arch.width_mult", K_DOUBLE, F(width_mult), 0.1, 4},
    {"Arch.image_size", K_INT, F(image_size), 32, 1024},
    {"Arch.dropout", K_DOUBLE, F(dropout), 0, 0.99},
    {"Loss.label_smoothing", K_DOUBLE, F(label_smoothing), 0, 0.99},
    {"Optimizer.name", K_STR, 0, 0, 0, 0}, /* Momentum only; checked below */
    {"Optimizer.momentum", K_DOUBLE, F(momentum), 0, 1},
    {"Optimizer.weight_decay", K_DOUBLE, F(weight_decay), 0, 1},
    {"Optimizer.lr.name", K_SCHED, F(lr_name), 0, 0},
    {"Optimizer.lr.learning_rate", K_DOUBLE, F(lr), 0, 1e300},
    {"Optimizer.lr.warmup_epoch", K_DOUBLE, F(warmup_epochs), 0, 100000},
    {"Optimizer.lr.warmup_start_lr", K_DOUBLE, F(warmup_start_lr), 0, 1e300},
    {"Optimizer.lr.decay_epochs", K_INTLIST, F(decay_epochs), 0, 0},
    {"Optimizer.lr.gamma", K_DOUBLE, F(gamma), 0, 100},
    {"Optimizer.lr.eta_min", K_DOUBLE, F(eta_min), 0, 1e300},
    {"DataLoader.data_path", K_STR, F(data_path), 0, 0},
    {"DataLoader.batch_size", K_INT, F(batch_size), 1, 4096},
    {"DataLoader.eval_batch_size", K_INT, F(eval_batch_size), 1, 4096},
    {"DataLoader.num_workers", K_INT, F(num_workers), 0, 256},
    {"DataLoader.resize_size", K_INT, F(resize_size), 32, 4096},
    {"DataLoader.skip_bad", K_BOOL, F(skip_bad), 0, 0},
    {"DataLoader.synthetic", K_STR, F(synthetic), 0, 0},
    {"DataLoader.synthetic_size", K_INT, F(synthetic_size), 1, 1000000},
    {"Distributed.fuse_grad_size_in_MB", K_INT, F(fuse_grad_size_in_MB), 0, 4096},
    {"Distributed.fuse_all_reduce_ops", K_BOOL, F(fuse_all_reduce_ops), 0, 0},
    {"Distributed.overlap_allreduce", K_BOOL, F(overlap_allreduce), 0, 0},
    {"Distributed.use_hierarchical_allreduce", K_BOOL, F(use_hierarchical_allreduce), 0, 0},
    {"Distributed.use_local_sgd", K_BOOL, F(use_local_sgd), 0, 0},
    {"Distributed.local_sgd_steps", K_INT, F(local_sgd_steps), 1, 1000000},
    {"Distributed.local_sgd_is_warm_steps", K_INT, F(local_sgd_is_warm_steps), 0, 1000000000},
    {"Distributed.check_every", K_INT, F(check_every), 0, 1000000000},
    {"AMP.use_amp", K_BOOL, F(use_amp), 0, 0},
    {"AMP.level", K_STR, F(amp_level), 0, 0},
    {"AMP.dtype", K_STR, F(amp_dtype), 0, 0},
    {"AMP.scale_loss", K_DOUBLE, F(scale_loss), 0, 16777216},
    {"AMP.use_dynamic_loss_scaling", K_BOOL, F(use_dynamic_loss_scaling), 0, 0},
    {"Global.use_amp", K_BOOL, F(use_amp), 0, 0},
    {"Global.scale_loss", K_DOUBLE, F(scale_loss), 0, 16777216},
    {"Global.use_dynamic_loss_scaling", K_BOOL, F(use_dynamic_loss_scaling), 0, 0},
    {"Global.auto_cast", K_STR, F(auto_cast), 0, 0},
};
#undef F

const char *lr_schedule_name(enum lr_schedule s)
{
    switch (s) {
    case LR_COSINE: return "Cosine";
    case LR_PIECEWISE: return "Piecewise";
    case LR_CONSTANT: return "Constant";
    }
    return "?";
}

void recipe_defaults(struct recipe *r)
{
    memset(r, 0, sizeof *r);
    r->epochs = 5;
    snprintf(r->output_dir, sizeof r->output_dir, "./output");
    r->print_freq = 10;
    r->seed = 42;
    snprintf(r->device, sizeof r->device, "cpu");
    r->eval_during_train = true;
    snprintf(r->arch, sizeof r->arch, "mobilenet_v3_small");
    r->num_classes = 1000;
    r->width_mult = 1.0;
    r->image_size = 224;
    r->dropout = 0.2;
    r->momentum = 0.9;
    r->weight_decay = 1e-5;
    r->lr_name = LR_COSINE;
    r->lr = 0.1;
    r->gamma = 0.1;
    snprintf(r->data_path, sizeof r->data_path, "./data");
    r->batch_size = 32;
    r->eval_batch_size = 32;
    r->num_workers = 2;
    r->resize_size = 256;
    snprintf(r->synthetic, sizeof r->synthetic, "auto");
    r->synthetic_size = 64;
    r->fuse_grad_size_in_MB = 25; /* FLAGS_fuse_parameter_memory_size's default */
    r->fuse_all_reduce_ops = true;
    r->overlap_allreduce = true;
    r->local_sgd_steps = 1;
    r->check_every = 50;
    r->use_dynamic_loss_scaling = true;
}

/* Set one key; `where`/`line` locate the value for messages. */
static enum tipc_status set_key(struct recipe *r, const char *name, const char *v, const char *where, int line)
{
    const struct key *k = NULL;
    for (size_t i = 0; i < sizeof KEYS / sizeof KEYS[0]; i++)
        if (!strcmp(KEYS[i].name, name)) k = &KEYS[i];
    if (!k) return error_at(TIPC_EUSAGE, where, line, "unknown key '%s'", name);
    void *dst = (char *)r + k->off;
    bool ok = true;
    switch (k->type) {
    case K_INT: ok = parse_int(v, -1000000000, 1000000000, dst); break;
    case K_LONG: ok = parse_long(v, 0, 0x7fffffffffffffffL, dst); break;
    case K_DOUBLE: ok = parse_double(v, dst); break;
    case K_BOOL: ok = parse_bool(v, dst); break;
    case K_STR:
        if (!k->size) { /* Optimizer.name */
            ok = !strcmp(v, "Momentum");
            if (!ok) return error_at(TIPC_EUSAGE, where, line, "optimizer '%s' is not supported (Momentum)", v);
            break;
        }
        if (strlen(v) >= k->size) return error_at(TIPC_EUSAGE, where, line, "value of '%s' is too long", name);
        snprintf(dst, k->size, "%s", v);
        break;
    case K_SCHED:
        if (!strcmp(v, "Cosine")) r->lr_name = LR_COSINE;
        else if (!strcmp(v, "Piecewise")) r->lr_name = LR_PIECEWISE;
        else if (!strcmp(v, "Constant")) r->lr_name = LR_CONSTANT;
        else return error_at(TIPC_EUSAGE, where, line, "unknown lr schedule '%s' (Cosine, Piecewise, Constant)", v);
        break;
    case K_INTLIST: {
        char *s = xstrdup(v), *save = NULL;
        r->n_decay = 0;
        for (char *t = strtok_r(s, ", []", &save); t && ok; t = strtok_r(NULL, ", []", &save)) {
            ok = r->n_decay < 8 && parse_int(t, 0, 1000000, &r->decay_epochs[r->n_decay]);
            r->n_decay++;
        }
        free(s);
        break;
    }
    }
    if (!ok) return error_at(TIPC_EUSAGE, where, line, "bad value '%s' for '%s'", v, name);
    if (k->min < k->max) {
        double x = k->type == K_INT ? *(int *)dst : *(double *)dst;
        if (!(x >= k->min && x <= k->max))
            return error_at(TIPC_EUSAGE, where, line, "'%s' must be in %.15g..%.15g, got %s", name, k->min, k->max, v);
    }
    return TIPC_OK;
}

enum tipc_status recipe_override(struct recipe *r, const char *kv)
{
    const char *eq = strchr(kv, '=');
    if (!eq || eq == kv) return error_msg(TIPC_EUSAGE, "-o '%s': expected Section.key=value", kv);
    char *name = xstrndup(kv, (size_t)(eq - kv));
    enum tipc_status st = set_key(r, name, eq + 1, "-o", 0);
    free(name);
    return st;
}

/* Flattening state: the key path of nested mappings, and a sequence being collected. */
struct flat { char path[8][64]; int depth; bool want_key[8]; char seq[512]; bool in_seq; int seq_line; };

static enum tipc_status on_scalar(struct recipe *r, struct flat *f, const char *v, const char *file, int line)
{
    if (f->in_seq) {
        size_t n = strlen(f->seq);
        snprintf(f->seq + n, sizeof f->seq - n, "%s%s", n ? "," : "", v);
        return TIPC_OK;
    }
    if (f->depth == 0) return error_at(TIPC_EUSAGE, file, line, "expected a mapping of sections");
    if (f->want_key[f->depth - 1]) {
        snprintf(f->path[f->depth - 1], sizeof f->path[0], "%s", v);
        f->want_key[f->depth - 1] = false;
        return TIPC_OK;
    }
    char name[512] = "";
    for (int i = 0; i < f->depth; i++) {
        size_t n = strlen(name);
        snprintf(name + n, sizeof name - n, "%s%s", i ? "." : "", f->path[i]);
    }
    f->want_key[f->depth - 1] = true;
    return set_key(r, name, v, file, line);
}

static enum tipc_status walk(struct recipe *r, yaml_parser_t *p, const char *file)
{
    struct flat f = {0};
    for (;;) {
        yaml_event_t ev;
        if (!yaml_parser_parse(p, &ev))
            return error_at(TIPC_EUSAGE, file, (int)p->problem_mark.line + 1, "YAML: %s",
                            p->problem ? p->problem : "parse error");
        int line = (int)ev.start_mark.line + 1;
        enum tipc_status st = TIPC_OK;
        switch (ev.type) {
        case YAML_MAPPING_START_EVENT:
            if (f.in_seq || f.depth >= 8) st = error_at(TIPC_EUSAGE, file, line, "mapping nested too deep");
            else if (f.depth > 0 && f.want_key[f.depth - 1]) st = error_at(TIPC_EUSAGE, file, line, "mapping as a key");
            else f.want_key[f.depth++] = true;
            break;
        case YAML_MAPPING_END_EVENT:
            f.depth--;
            if (f.depth > 0) f.want_key[f.depth - 1] = true;
            break;
        case YAML_SEQUENCE_START_EVENT:
            if (f.in_seq || f.depth == 0) st = error_at(TIPC_EUSAGE, file, line, "unexpected list");
            f.in_seq = true, f.seq[0] = 0, f.seq_line = line;
            break;
        case YAML_SEQUENCE_END_EVENT:
            f.in_seq = false;
            st = on_scalar(r, &f, f.seq, file, f.seq_line);
            break;
        case YAML_SCALAR_EVENT: st = on_scalar(r, &f, (const char *)ev.data.scalar.value, file, line); break;
        case YAML_ALIAS_EVENT: st = error_at(TIPC_EUSAGE, file, line, "YAML aliases are not supported"); break;
        case YAML_STREAM_END_EVENT: yaml_event_delete(&ev); return TIPC_OK;
        case YAML_NO_EVENT: case YAML_STREAM_START_EVENT: case YAML_DOCUMENT_START_EVENT:
        case YAML_DOCUMENT_END_EVENT: break;
        }
        yaml_event_delete(&ev);
        if (st != TIPC_OK) return st;
    }
}

enum tipc_status recipe_load(struct recipe *r, const char *path)
{
    char why[160];
    FILE *fp = fopen_regular(path, REGFILE_MAX_TEXT, why, sizeof why);
    if (!fp) return error_msg(TIPC_EUSAGE, "cannot read recipe '%s': %s", path, why);
    yaml_parser_t p;
    yaml_parser_initialize(&p);
    yaml_parser_set_input_file(&p, fp);
    enum tipc_status st = walk(r, &p, path);
    yaml_parser_delete(&p);
    fclose(fp);
    return st;
}

double recipe_lr(const struct recipe *r, double e)
{
    if (e < r->warmup_epochs)
        return r->warmup_start_lr + (r->lr - r->warmup_start_lr) * e / r->warmup_epochs;
    switch (r->lr_name) {
    case LR_CONSTANT: return r->lr;
    case LR_PIECEWISE: {
        double lr = r->lr;
        for (int i = 0; i < r->n_decay; i++)
            if (e >= r->decay_epochs[i]) lr *= r->gamma;
        return lr;
    }
    case LR_COSINE: {
        double span = r->epochs - r->warmup_epochs, t = span > 0 ? (e - r->warmup_epochs) / span : 1.0;
        if (t > 1) t = 1;
        return r->eta_min + (r->lr - r->eta_min) * 0.5 * (1.0 + cos(M_PI * t));
    }
    }
    return r->lr;
}
