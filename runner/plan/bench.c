/* bench.c: benchmark_train's plan (bench.h): each repo's test_tipc/benchmark_train.sh as a row of
 * data (which lines it rewrites, its default layouts, timeouts, analysis arguments), the section it
 * reads, the cases it loops over, and the edited configs whose benchmark_train plans (the dialect's
 * own builder) it runs. Variable names follow the scripts'. bench_case.c turns one case into stages. */
#include "bench.h"
#include "bench_internal.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../core/check.h"
#include "../../core/strv.h"
#include "../../core/version.h"
#include "../../core/banned.h"

static const char *const clas_fields[] = {"batch_size", "fp_items", "epoch", "model_type", "num_workers",
                                          "profile", "flags", NULL};
static const char *const det_fields[] = {"batch_size", "fp_items", "epoch", "repeat", "profile", "flags", NULL};
static const char *const seg_fields[] = {"batch_size", "fp_items", "epoch", "profile", "flags", NULL};

/* Lines (physical, as sed counts) each script rewrites; 0: none. */
static const struct bench_style styles[] = {
    /* PaddleClas d178931f (benchmark_train.sh last changed e1a4c80a) */
    {"clas", false, clas_fields, 3, 4, 6, 7, 9, 15, 13, 24, 30, 17, 18, false, "N1C4", false, true,
     300, 300, 300, 600, 100, "samples/s", "images/s", "ips:", true, false},
    /* PaddleDetection 666f597f (7ec8ffaf) */
    {"det", true, det_fields, 3, 4, 6, 7, 9, 0, 13, 24, 30, 0, 0, true, "N1C4", false, true,
     300, 0, 0, 0, 4, "images/s", "images/s", "ips:", false, false},
    /* PaddleSeg d7975e7c (47006bd1) */
    {"seg", true, seg_fields, 3, 4, 6, 7, 9, 0, 13, 24, 30, 0, 0, true, "N1C1 N1C8", false, true,
     300, 0, 0, 0, 2, "samples/s", "images/s", "ips:", false, false},
    /* PaddleOCR 00fa71d8: not checked against the original here (its repo cannot be fetched) */
    {"ocr", false, seg_fields, 3, 4, 6, 7, 9, 0, 13, 24, 30, 0, 0, true, "N1C4", true, false,
     0, 0, 0, 0, 2, "samples/s", "images/s", "ips:", false, true},
    /* 32-line configs (Step6 layout, ours): no original script; our rows (README). The trainer line
     * 14 gets --print-freq=1 (a log line per step) and the case's precision and workers. */
    {"step6", false, clas_fields, 0, 4, 0, 6, 8, 13, 0, 17, 22, 0, 0, true, NULL, false, false,
     0, 0, 0, 0, 2, "images/s", "images/s", "avg_ips:", true, false},
};

static const struct bench_style *style_for(const struct plan_opts *o, bool step6)
{
    if (step6) return &styles[4];
    switch (o && o->dialect ? o->dialect->id : DIALECT_REF) {
    case DIALECT_CLAS: return &styles[0];
    case DIALECT_DET: return &styles[1];
    case DIALECT_SEG: return &styles[2];
    case DIALECT_OCR: return &styles[3];
    case DIALECT_REF: case DIALECT_TMPL: case DIALECT_COUNT: break;
    }
    return &styles[3]; /* the reference 51-line harness is PaddleOCR's */
}

/* func_parser_value on lines[i] of the whole file (the scripts `cat` it): entries are the
 * non-empty lines, and i is a PHYSICAL line number from grep, as the scripts mix the two. */
static const char *entry_value(const struct tipc_config *all, int i) { return cfg_at(all, i)->value; }

/* `grep -n [-w] train_benchmark_params FILE | cut -d: -f1`: the physical line, 0 when none. Several
 * matches would make the script's arithmetic fail: an error here. */
static enum tipc_status find_section(const struct btext *t, bool word, const char *path, int *line)
{
    static const char w[] = "train_benchmark_params";
    int found = 0, first = 0;
    for (int i = 1; i <= t->n; i++) {
        const char *s = btext_get(t, i);
        for (const char *h = strstr(s, w); h; h = strstr(h + 1, w)) {
            char a = h == s ? ' ' : h[-1], z = h[sizeof w - 1];
            if (word && (isalnum((unsigned char)a) || a == '_' || isalnum((unsigned char)z) || z == '_')) continue;
            if (!found++) first = i;
            break;
        }
    }
    if (!found)
        return error_at(TIPC_EUSAGE, path, 0, "no train_benchmark_params section: benchmark_train reads batch sizes, "
                        "precisions and epochs from it (README: benchmark_train)");
    if (found > 1)
        return error_at(TIPC_EUSAGE, path, first, "%d lines name train_benchmark_params; the script's `grep -n` "
                        "would return them all and its arithmetic fail", found);
    *line = first;
    return TIPC_OK;
}

static enum tipc_status read_section(struct bench_run *br, const struct btext *t, const char *path)
{
    int line = 0;
    TRY(find_section(t, br->style->grep_word, path, &line));
    size_t len;
    char *text = btext_join(t, &len);
    struct tipc_config all;
    enum tipc_status st = cfg_parse_opts(&all, path, text, len, CFG_ALL_LINES | CFG_ALLOW_SHORT);
    free(text);
    TRY(st);
    int i = line;
    for (int f = 0; br->style->fields[f]; f++, i++) {
        const char *name = br->style->fields[f], *v = entry_value(&all, i);
        if (!strcmp(name, "profile")) {   /* "${key}:${value}" */
            free(br->profile_option);
            br->profile_option = xasprintf("%s:%s", cfg_at(&all, i)->key, v);
            continue;
        }
        char **dst = !strcmp(name, "batch_size") ? &br->batch_size : !strcmp(name, "fp_items") ? &br->fp_items
                   : !strcmp(name, "epoch") ? &br->epoch : !strcmp(name, "model_type") ? &br->model_type
                   : !strcmp(name, "num_workers") ? &br->num_workers : !strcmp(name, "repeat") ? &br->repeat_ds
                   : &br->flags;
        free(*dst);
        *dst = xstrdup(v);
    }
    br->section_line = line;
    br->num_workers_line = cfg_at(&all, line + 4)->line;
    cfg_free(&all);
    if (!*br->batch_size || !*br->fp_items)
        return error_at(TIPC_EUSAGE, path, line + 1, "train_benchmark_params: empty batch_size or fp_items");
    return TIPC_OK;
}

/* The flags line: `IFS=";"; for f in $flags; do export $f; done`. Only NAME=value items set anything. */
static void read_flags(struct plan *p, const char *flags)
{
    char **items;
    int n = cfg_split(flags, ';', &items);
    for (int i = 0; i < n; i++) {
        const char *eq = strchr(items[i], '=');
        bool name_ok = eq && eq > items[i];
        for (const char *c = items[i]; name_ok && c < eq; c++)
            name_ok = isalnum((unsigned char)*c) || *c == '_';
        if (!name_ok) continue;
        strv_setenv(&p->env, xstrdup(items[i]));   /* a later export of a name wins, as in the shell */
    }
    strv_free(items);
}

static void add_env_default(struct plan *p, const char *name, const char *value)
{
    if (getenv(name)) return;
    for (size_t i = 0; i < p->env.n; i++)
        if (!strncmp(p->env.v[i], name, strlen(name)) && p->env.v[i][strlen(name)] == '=') return;
    strv_pushf(&p->env, "%s=%s", name, value);
}

/* PARAMS `modeltype_bs8_fp32_DP_N1C1`: IFS="_" words; the batch size keeps its digits only. */
static void read_params(struct bench_run *br, const char *params)
{
    char **w;
    int n = cfg_split(params, '_', &w);
    const char *get[5];
    for (int i = 0; i < 5; i++) get[i] = i < n ? w[i] : "";
    br->param_model_type = xstrdup(get[0]);
    char *bs = xstrdup(get[1]), *o = bs;
    for (const char *c = get[1]; *c; c++)
        if (isdigit((unsigned char)*c)) *o++ = *c;
    *o = 0;
    free(br->batch_size);
    br->batch_size = bs;
    const char *prec = get[2];
    if (br->style->amp_names && !strcmp(prec, "fp16")) prec = "amp";
    else if (!br->style->amp_names && !strcmp(prec, "null")) prec = "fp32";
    free(br->fp_items);
    br->fp_items = xstrdup(prec);
    free(br->run_mode);
    br->run_mode = xstrdup(get[3]);
    br->devices = xstrdup(get[4]);
    strv_free(w);
}

/* Our layout rows have no default layout list: the config's own (first gpu_list item). */
static char *own_layout(const struct tipc_config *cfg)
{
    const char *gl = cfg_at(cfg, 3)->value, *bar = strchr(gl, '|');
    char *item = xstrndup(gl, bar ? (size_t)(bar - gl) : strlen(gl));
    const char *semi = strchr(item, ';'), *dev = semi ? semi + 1 : item;
    int nodes = 1, cards = 1;
    if (semi)
        for (const char *c = item; c < semi; c++) nodes += *c == ',';
    for (const char *c = dev; *c; c++) cards += *c == ',';
    free(item);
    return xasprintf("N%dC%d", nodes, nodes * cards);
}

static void run_free(struct bench_run *br)
{
    char **f[] = {&br->batch_size, &br->fp_items, &br->epoch, &br->model_type, &br->num_workers, &br->repeat_ds,
                  &br->flags, &br->profile_option, &br->param_model_type, &br->run_mode, &br->devices,
                  &br->model_name, &br->trainer_line};
    for (size_t i = 0; i < sizeof f / sizeof f[0]; i++) free(*f[i]);
    btext_free(&br->text);
}

/* PaddleDetection: keypoint models train EPOCH x cards epochs on the full data; the others one epoch,
 * their datasets repeated `repeat` x cards times (the script edits the repo's dataset files for that:
 * tipc edits nothing outside its output, README). */
static void det_epoch(struct bench_run *br)
{
    static const char *const full[] = {"higherhrnet", "hrnet", "tinypose", "ppyoloe_r_crn_s_3x_spine_coco", NULL};
    bool keep = false;
    for (int i = 0; full[i]; i++) keep |= strstr(br->model_name, full[i]) != NULL;
    const char *dev = strchr(br->devices, 'C');
    long cards = dev ? strtol(dev + 1, NULL, 10) : 0, ep;
    char *end;
    ep = br->epoch ? strtol(br->epoch, &end, 10) : 0;
    char *v = keep ? (br->epoch && *br->epoch && !*end ? xasprintf("%ld", ep * cards) : xstrdup(""))
                   : xstrdup("1");
    free(br->epoch);
    br->epoch = v;
}

/* The edits made once, before the loops (each script's order). */
static enum tipc_status edit_once(struct bench_run *br)
{
    const struct bench_style *s = br->style;
    struct btext *t = &br->text;
    if (s->l_eval) btext_set_value(t, s->l_eval, "null");
    if (s->l_export) btext_set_value(t, s->l_export, "null");
    if (s->l_python) btext_set_value(t, s->l_python, "python");
    if (s->l_pact) btext_set_value(t, s->l_pact, "null");
    if (s->l_fpgm) btext_set_value(t, s->l_fpgm, "null");
    if (!strcmp(s->name, "clas")) {
        /* a num_workers value with a ';' is the next line's, when the section has no num_workers line:
         * the original's eval then splits the training command there and the training fails */
        const char *nw = br->num_workers;
        if (nw && strchr(nw, ';') && btext_has(t, " -o DataLoader.Train.loader.num_workers=0"))
            return error_at(TIPC_EUSAGE, br->path, br->num_workers_line, "train_benchmark_params: num_workers reads "
                            "'%s': PaddleClas's benchmark_train.sh takes the section's lines by position (batch_size, "
                            "fp_items, epoch, model_type, num_workers, --profiler_options, flags) and writes num_workers "
                            "into the training command; this section has no num_workers line, so the command gets "
                            "this line's value (the original's eval splits it at ';' and the training fails). Add "
                            "'num_workers:N' after model_type", nw);
        char *to = xasprintf(" -o DataLoader.Train.loader.num_workers=%s", br->num_workers ? br->num_workers : "");
        btext_replace_all(t, " -o DataLoader.Train.loader.num_workers=0", to);
        free(to);
    }
    return TIPC_OK;
}

enum tipc_status plan_build_benchmark(struct plan *p, const char *path, const char *text, size_t len,
                                      const struct plan_opts *o, const struct bench_opts *bo)
{
    memset(p, 0, sizeof *p);
    struct tipc_config first;
    TRY(cfg_parse_opts(&first, path, text, len, CFG_ALL_LINES | CFG_ALLOW_SHORT));
    struct bench_run br = {0};
    br.style = style_for(o, first.family == CFG_STEP6);
    br.ours = !strcmp(cfg_at(&first, 2)->value, "tipc");
    br.path = path;
    br.opts = bo;
    br.popts = o;
    btext_init(&br.text, text, len);
    enum tipc_status st = TIPC_OK;
    if (!strcmp(br.style->name, "clas")) { /* before anything is read */
        btext_replace_all(&br.text, " -o DataLoader.Train.sampler.shuffle=False", " -o Global.print_batch_step=1");
        btext_replace_all(&br.text, "-o DataLoader.Train.loader.use_shared_memory=False", " -o Global.eval_during_train=False");
    }
    br.model_name = xstrdup(cfg_at(&first, 1)->value);
    st = read_section(&br, &br.text, path);
    if (st == TIPC_OK) {
        read_flags(p, br.flags ? br.flags : "");
        if (br.ours) add_env_default(p, "frame_version", TIPC_VERSION);
        else add_env_default(p, "frame_version", ""), add_env_default(p, "frame_commit", "");
        br.run_mode = xstrdup("DP");
        if (bo->params && *bo->params && strcmp(bo->params, "dynamicTostatic")) read_params(&br, bo->params);
        else if (bo->params && !strcmp(bo->params, "dynamicTostatic")) br.param_model_type = xstrdup("dynamicTostatic");
        if (!br.devices) br.devices = br.style->devices ? xstrdup(br.style->devices) : own_layout(&first);
        if (!strcmp(br.style->name, "det")) det_epoch(&br);
        const char *tl = btext_get(&br.text, 14);
        br.trainer_line = xstrdup(tl ? tl : "");
        st = edit_once(&br);
        if (st == TIPC_OK) st = bench_cases(p, &br);
    }
    cfg_free(&first);
    run_free(&br);
    if (st != TIPC_OK) plan_free(p);
    return st;
}
