/* full.c: the 51-line harness (PaddleOCR test_tipc/test_train_inference_python.sh, the
 * template PaddleClas/Detection/Seg copied; tipc-spec.md 2.6 and 3.7). lines[i] is cfg entry i. */
#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "internal.h"
#include "../../core/check.h"
#include "../../core/banned.h"

/* What the models template harness (tmpl) does unlike PaddleOCR 038a9330 (ref): data, not code. */
struct full_style {
    size_t ips_limit;        /* `${#ips} -le N`: longer means several nodes (15; tmpl 26) */
    bool redirect;           /* eval/export commands end in `> LOG 2>&1 ` (tmpl: not redirected) */
    bool env_before_eval;    /* `eval ${env}` before eval (tmpl: only before inference) */
    bool env_before_single;  /* single device: `eval ${env}` at the top of the gpu loop (tmpl) */
    bool unset_before_train; /* `eval "unset CUDA_VISIBLE_DEVICES"` before every train (tmpl) */
    bool load_norm_pretrain; /* pact/fpgm single-node trains get norm_train's weights (tmpl) */
    bool mkldnn_direct;      /* CPU: `KEY=VALUE` for mkldnn, quant skips mkldnn=False (tmpl) */
    bool quant_skip_or;      /* GPU: skip `(trt False || int8) && quant` (tmpl) / `trt False && int8 && quant` */
    bool export_to_dirname;  /* whole_infer exports into $(dirname MODEL), unredirected (tmpl) */
    bool klquant_relayout;   /* klquant_whole_infer: re-read lines 1-17 as an inference-only layout (tmpl) */
    bool train_log_status;   /* a train's status is `cat SAVE/train.log >> SAVE.log` (ocr) */
    bool to_static_branch;   /* trainer = the key under to_static_train_benchmark_params runs norm + it,
                                and line 20's key1 has no branch (ocr) */
    bool ocr_train_order;    /* train flags `use_gpu save epoch pretrain  batch amp params1`, no autocast (ocr) */
    bool gpus_in_infer_logs; /* inference logs python_infer_{cpu,gpu}_gpus_G_... (ocr) */
    bool export_log_noslash; /* whole_infer export log LOG_PATH_export_N.log (ocr: no '/') */
};

static const struct full_style style_ref = {15, true, true, false, false, false, false, false, false, false,
                                            false, false, false, false, false};
static const struct full_style style_tmpl = {26, false, false, true, true, true, true, true, true, true,
                                             false, false, false, false, false};
static const struct full_style style_ocr = {15, true, true, false, false, false, false, false, false, false,
                                            true, true, true, true, true};

static const struct full_style *style(const struct builder *b)
{
    if (!b->p->dialect) return &style_ref;
    if (b->p->dialect->id == DIALECT_TMPL) return &style_tmpl;
    if (b->p->dialect->id == DIALECT_OCR) return &style_ocr;
    return &style_ref;
}

/* "cpu" -> "cpu" or "cpu_gpus_G" where the harness names the training's devices in its logs. */
static const char *dev_tag(struct builder *b, const char *dev)
{
    return b->infer_gpu ? FMT("%s_gpus_%s", dev, b->infer_gpu) : dev;
}

static const char amp_config[] = "Global.use_amp=True Global.scale_loss=1024.0 Global.use_dynamic_loss_scaling=True";

/* `[[ $x =~ "lit" ]]`: a quoted right side is a plain substring test. */
static bool has(const char *x, const char *lit) { return strstr(x, lit) != NULL; }

static enum tipc_status full_infer_cpu(struct builder *b, const char *use_gpu, const char *model_dir,
                                       const char *img_dir, const char *flag_quant)
{
    char **mkldnn, **threads, **batches, **precisions;
    int nm = pb_split(b, V(41), '|', &mkldnn), nt = pb_split(b, V(42), '|', &threads);
    int nb = pb_split(b, V(43), '|', &batches), np = pb_split(b, V(45), '|', &precisions);
    const struct full_style *fs = style(b);
    for (int m = 0; m < nm; m++) {
        if (fs->mkldnn_direct && pb_sh_eq(mkldnn[m], "False") && pb_sh_eq(flag_quant, "True")) continue;
        for (int t = 0; t < nt; t++)
            for (int bs = 0; bs < nb; bs++)
                for (int q = 0; q < np; q++) {
                    const char *use_mkldnn = mkldnn[m], *precision = precisions[q];
                    if (pb_sh_eq(use_mkldnn, "False") && pb_sh_eq(precision, "fp16")) continue;
                    if (pb_sh_eq(flag_quant, "True") && pb_sh_ne(precision, "int8")) continue;
                    const char *log = FMT("%s/python_infer_%s_usemkldnn_%s_threads_%s_precision_%s_batchsize_%s.log",
                                          b->p->log_dir, dev_tag(b, "cpu"), use_mkldnn, threads[t], precision, batches[bs]);
                    const char *command = FMT("%s %s %s=%s %s %s %s %s %s %s %s %s %s > %s 2>&1 ", b->python, V(39),
                        K(40), use_gpu, fs->mkldnn_direct ? FMT("%s=%s", K(41), use_mkldnn) : SETP(K(41), use_mkldnn),
                        SETP(K(42), threads[t]), SETP(K(46), model_dir), SETP(K(43), batches[bs]),
                        SETP(K(48), fs->klquant_relayout && b->relayout ? V(48) : "") /* save_log_value */,
                        SETP(K(47), img_dir), SETP(K(49), V(49)), SETP(K(45), precision), SETP(K(50), V(50)), log);
                    pb_set_matrix(b, FMT("use_gpu=%s mkldnn=%s threads=%s precision=%s bs=%s", use_gpu, use_mkldnn,
                                         threads[t], precision, batches[bs]));
                    TRY(pb_add_stage(b, STAGE_INFER, command, LN(39), log, true));
                }
    }
    return TIPC_OK;
}

static enum tipc_status full_infer_gpu(struct builder *b, const char *use_gpu, const char *model_dir,
                                       const char *img_dir, const char *flag_quant)
{
    char **trts, **precisions, **batches;
    int nr = pb_split(b, V(44), '|', &trts), np = pb_split(b, V(45), '|', &precisions);
    int nb = pb_split(b, V(43), '|', &batches);
    for (int r = 0; r < nr; r++)
        for (int q = 0; q < np; q++) {
            const char *use_trt = trts[r], *precision = precisions[q];
            if (!strcmp(flag_quant, "False") && has(precision, "int8")) continue;
            if ((has(precision, "fp16") || has(precision, "int8")) && pb_sh_eq(use_trt, "False")) continue;
            if (style(b)->quant_skip_or
                    ? ((!strcmp(use_trt, "False") || has(precision, "int8")) && pb_sh_eq(flag_quant, "True"))
                    : (!strcmp(use_trt, "False") && has(precision, "int8") && pb_sh_eq(flag_quant, "True")))
                continue;
            for (int bs = 0; bs < nb; bs++) {
                const char *log = FMT("%s/python_infer_%s_usetrt_%s_precision_%s_batchsize_%s.log",
                                      b->p->log_dir, dev_tag(b, "gpu"), use_trt, precision, batches[bs]);
                const char *command = FMT("%s %s %s=%s %s %s %s %s %s %s %s %s > %s 2>&1 ", b->python, V(39),
                    K(40), use_gpu, SETP(K(44), use_trt), SETP(K(45), precision), SETP(K(46), model_dir),
                    SETP(K(43), batches[bs]), SETP(K(47), img_dir), SETP(K(49), V(49)), SETP(K(50), V(50)),
                    SETP(K(48), style(b)->klquant_relayout && b->relayout ? V(48) : ""), log);
                pb_set_matrix(b, FMT("use_gpu=%s trt=%s precision=%s bs=%s", use_gpu, use_trt, precision, batches[bs]));
                TRY(pb_add_stage(b, STAGE_INFER, command, LN(39), log, true));
            }
        }
    return TIPC_OK;
}

/* func_inference of the 51-line harness. */
static enum tipc_status full_inference(struct builder *b, const char *model_dir, const char *img_dir,
                                       const char *flag_quant)
{
    char **use_gpu_list;
    int ng = pb_split(b, V(40), '|', &use_gpu_list);
    for (int i = 0; i < ng; i++) {
        const char *use_gpu = use_gpu_list[i];
        if (pb_sh_eq(use_gpu, "False") || pb_sh_eq(use_gpu, "cpu"))
            TRY(full_infer_cpu(b, use_gpu, model_dir, img_dir, flag_quant));
        else if (pb_sh_eq(use_gpu, "True") || pb_sh_eq(use_gpu, "gpu"))
            TRY(full_infer_gpu(b, use_gpu, model_dir, img_dir, flag_quant));
        else
            TRY(pb_note(b, "Does not support hardware other than CPU and GPU Currently!", LN(40)));
    }
    return TIPC_OK;
}

static enum tipc_status full_whole_infer(struct builder *b, const char *gpuid)
{
    pb_apply_env(b, gpuid);
    b->infer_gpu = style(b)->gpus_in_infer_logs ? "0" : NULL;
    char **models, **exports, **quants;
    int nm = pb_split(b, V(36), '|', &models);
    int ne = pb_split(b, V(37), '|', &exports);
    int nq = pb_split(b, V(38), '|', &quants);
    for (int count = 0; count < nm; count++) {
        const char *infer_model = models[count];
        const char *run_export = count < ne ? exports[count] : "";
        const char *base = strrchr(infer_model, '/');
        pb_set_ctx(b, FMT("model=%s", base && base[1] ? base + 1 : infer_model)); /* a path from the config */
        b->pass_tag = FMT("model_%d", count);
        const char *quant = !strcmp(b->p->mode, "klquant_whole_infer") && style(b)->klquant_relayout ? "True"
                            : count < nq ? quants[count] : "";
        if (pb_sh_ne(run_export, "null") && style(b)->export_to_dirname) {
            const char *dir = pb_dirname(b, infer_model);
            const char *export_cmd = FMT("%s %s %s %s", b->python, run_export, SETP(K(28), infer_model), SETP(K(27), dir));
            TRY(pb_note(b, pb_sh_echo(b, run_export), LN(37)));
            TRY(pb_note(b, pb_sh_echo(b, export_cmd), LN(37)));
            TRY(pb_add_stage(b, STAGE_EXPORT, export_cmd, LN(37), NULL, false));
            TRY(full_inference(b, dir, V(47), quant));
            continue;
        }
        if (pb_sh_ne(run_export, "null")) {
            const char *export_log_path = FMT(style(b)->export_log_noslash ? "%s_export_%d.log" : "%s/_export_%d.log",
                                              b->p->log_dir, count);
            const char *export_cmd = FMT("%s %s %s %s > %s 2>&1 ", b->python, run_export, SETP(K(28), infer_model),
                                         SETP(K(27), infer_model), export_log_path);
            TRY(pb_note(b, pb_sh_echo(b, run_export), LN(37)));
            TRY(pb_note(b, pb_sh_echo(b, export_cmd), LN(37)));
            TRY(pb_add_stage(b, STAGE_EXPORT, export_cmd, LN(37), export_log_path, false));
        }
        TRY(full_inference(b, infer_model, V(47), quant));
    }
    return TIPC_OK;
}

struct full_run {
    const struct gpu_item *g;
    const char *autocast, *trainer, *train_use_gpu;
    const char **load_norm; /* ${load_norm_train_model}: norm_train's weights flag, "" until set */
};

/* Trainer dispatch by key (pact / fpgm / distill / key1 / key2 / norm). */
static void full_dispatch(struct builder *b, const char *trainer, const char **run_train,
                          const char **run_export, const char **flag_quant)
{
    *flag_quant = "False";
    if (pb_sh_eq(K(16), trainer)) { *run_train = V(16); *run_export = V(30); *flag_quant = "True"; }
    else if (!strcmp(trainer, K(17))) { *run_train = V(17); *run_export = V(31); }
    else if (!strcmp(trainer, K(18))) { *run_train = V(18); *run_export = V(32); }
    else if (style(b)->to_static_branch) {
        const struct cfg_entry *ts = pb_to_static_entry(b);
        if (!strcmp(trainer, ts->key)) { *run_train = FMT("%s  %s", V(15), ts->value); *run_export = V(29); }
        else if (!strcmp(trainer, K(20))) { *run_train = V(20); *run_export = V(34); }
        else { *run_train = V(15); *run_export = V(29); }
    }
    else if (pb_sh_eq(K(19), trainer)) { *run_train = V(19); *run_export = V(33); }
    else if (!strcmp(trainer, K(20))) { *run_train = V(20); *run_export = V(34); }
    else { *run_train = V(15); *run_export = V(29); }
}

static enum tipc_status full_trainer(struct builder *b, const struct full_run *r)
{
    const struct gpu_item *g = r->g;
    const char *run_train, *run_export, *flag_quant;
    full_dispatch(b, r->trainer, &run_train, &run_export, &flag_quant);
    if (pb_sh_eq(run_train, "null")) return TIPC_OK;
    const char *set_autocast = SETP(K(5), r->autocast);
    const char *set_epoch = SETP(K(6), pb_keep(b, cfg_mode_value(V(6), b->p->mode)));
    const char *set_pretrain = SETP(K(9), V(9));
    const char *set_batchsize = SETP(K(8), pb_keep(b, cfg_mode_value(V(8), b->p->mode)));
    const char *set_train_params1 = SETP(K(12), V(12));
    const char *set_use_gpu = SETP(K(4), r->train_use_gpu);
    const char *set_amp_config = !strcmp(r->autocast, "amp") ? amp_config : " ";
    const struct full_style *fs = style(b);
    const char *tag = FMT("%s/%s_gpus_%s_autocast_%s", b->p->log_dir, r->trainer, g->gpu, r->autocast);
    bool multi_node = b->p->ours ? *g->ips != 0 : strlen(g->ips) > fs->ips_limit;
    const char *save_log = multi_node ? FMT("%s_nodes_%d", tag, g->nodes) : tag;
    const char *set_save_model = SETP(K(7), save_log);
    bool single;
    const char *launch = pb_launch_prefix(b, g, &single);
    if (!b->p->ours && !single && !multi_node) launch = FMT("%s %s --gpus=%s", b->python, pb_launcher(b), g->gpu);
    if (fs->load_norm_pretrain && (pb_sh_eq(r->trainer, K(16)) || pb_sh_eq(r->trainer, K(17))) && !multi_node)
        set_pretrain = *r->load_norm;
    const char *cmd;
    if (fs->ocr_train_order) {
        const char *tail = FMT("%s  %s %s %s", multi_node ? set_epoch : set_pretrain, set_batchsize, set_amp_config,
                               set_train_params1);
        const char *head = multi_node ? set_pretrain : set_epoch;
        if (single) cmd = FMT("%s %s %s  %s %s %s", b->python, run_train, set_use_gpu, set_save_model, head, tail);
        else cmd = FMT("%s %s %s %s %s %s", launch, run_train, set_use_gpu, set_save_model, head, tail);
    } else if (single)
        cmd = FMT("%s %s %s  %s %s %s %s %s %s %s ", b->python, run_train, set_use_gpu, set_save_model, set_epoch,
                  set_pretrain, set_autocast, set_batchsize, set_train_params1, set_amp_config);
    else if (!multi_node)
        cmd = FMT("%s %s %s %s %s %s %s %s %s %s", launch, run_train, set_use_gpu, set_save_model, set_epoch,
                  set_pretrain, set_autocast, set_batchsize, set_train_params1, set_amp_config);
    else /* sic: pretrain before epoch on several nodes */
        cmd = FMT("%s %s %s %s %s %s %s %s %s %s", launch, run_train, set_use_gpu, set_save_model, set_pretrain,
                  set_epoch, set_autocast, set_batchsize, set_train_params1, set_amp_config);
    pb_set_ctx(b, multi_node ? FMT("%s gpus=%s autocast=%s nodes=%d", r->trainer, g->gpu, r->autocast, g->nodes)
                             : FMT("%s gpus=%s autocast=%s", r->trainer, g->gpu, r->autocast));
    if (fs->unset_before_train) pb_unset_env(b);
    TRY(pb_add_stage(b, STAGE_TRAIN, cmd, LN(15), NULL, false));
    if (*g->ips) b->p->st[b->p->n - 1].ips = xstrdup(g->ips);
    if (fs->train_log_status) {
        b->p->st[b->p->n - 1].status_file = xasprintf("%s/train.log", save_log);
        b->p->st[b->p->n - 1].append_to = xasprintf("%s.log", save_log);
    }
    b->infer_gpu = fs->gpus_in_infer_logs ? g->gpu : NULL;
    b->p->st[b->p->n - 1].rank_log_dir = pb_real_dir(b, FMT("%s/log", save_log));   /* TIPC_LOG_DIR */

    const char *nodes_tag = FMT("%s_nodes_%d", tag, multi_node ? g->nodes : 1);
    b->pass_tag = strrchr(nodes_tag, '/') ? strrchr(nodes_tag, '/') + 1 : nodes_tag;
    const char *weights = FMT("%s/%s", save_log, V(10));
    if (fs->load_norm_pretrain && pb_sh_eq(r->trainer, K(15)) && !multi_node) *r->load_norm = SETP(K(9), weights);
    if (pb_sh_ne(V(23), "null")) {
        if (fs->env_before_eval) pb_apply_env(b, g->env);
        const char *eval_log_path = fs->redirect ? FMT("%s_eval.log", nodes_tag) : NULL;
        const char *eval_cmd = FMT("%s %s %s %s %s", b->python, V(23), SETP(K(9), weights), set_use_gpu, SETP(K(24), V(24)));
        if (eval_log_path) eval_cmd = FMT("%s > %s 2>&1 ", eval_cmd, eval_log_path);
        TRY(pb_add_stage(b, STAGE_EVAL, eval_cmd, LN(23), eval_log_path, false));
    }
    if (pb_sh_ne(run_export, "null")) {
        const char *export_log_path = fs->redirect ? FMT("%s_export.log", nodes_tag) : NULL;
        const char *export_cmd = FMT("%s %s %s %s", b->python, run_export, SETP(K(28), weights), SETP(K(27), save_log));
        if (export_log_path) export_cmd = FMT("%s > %s 2>&1 ", export_cmd, export_log_path);
        TRY(pb_add_stage(b, STAGE_EXPORT, export_cmd, LN(29), export_log_path, false));
        pb_apply_env(b, g->env);
        const char *inference_dir = V(35);
        const char *infer_model_dir = strcmp(inference_dir, "null") && strcmp(inference_dir, "##")
                                          ? FMT("%s/%s", save_log, inference_dir) : save_log;
        TRY(full_inference(b, infer_model_dir, V(11), flag_quant));
        pb_unset_env(b);
    }
    return TIPC_OK;
}

/* The template's klquant_whole_infer reads physical lines 1..17 again as an inference-only layout:
 * 3 export weight key, 4 save-inference key, 5-7 model/export/quant lists, 8 inference script,
 * 9-19 the inference matrix (18, 19 and anything past line 17 read as empty). */
static enum tipc_status tmpl_klquant(struct builder *b, const char *gpuid)
{
    static const struct cfg_entry none = {"", "", "", false, 0};
    static const int from[][2] = {{28, 3}, {27, 4}, {36, 5}, {37, 6}, {38, 7}, {39, 8}, {40, 9}, {41, 10}, {42, 11},
                                  {43, 12}, {44, 13}, {45, 14}, {46, 15}, {47, 16}, {48, 17}, {49, 18}, {50, 19}};
    struct cfg_entry *e = pb_keep(b, xcalloc(51, sizeof *e));
    for (int i = 0; i < 51; i++) e[i] = none;
    for (size_t k = 0; k < sizeof from / sizeof from[0]; k++) {
        const struct cfg_entry *src = cfg_at(b->cfg, from[k][1]);
        if (src->line > 0 && src->line <= 17) e[from[k][0]] = *src;
    }
    struct tipc_config view = *b->cfg;
    view.e = e;
    view.n = 51;
    const struct tipc_config *orig = b->cfg;
    b->cfg = &view;
    b->relayout = true;
    enum tipc_status st = full_whole_infer(b, gpuid);
    b->cfg = orig;
    b->relayout = false;
    return st;
}

enum tipc_status build_full(struct builder *b, const char *gpuid)
{
    if (!strcmp(b->p->mode, "klquant_whole_infer") && style(b)->klquant_relayout) return tmpl_klquant(b, gpuid);
    if (!strcmp(b->p->mode, "whole_infer")) return full_whole_infer(b, gpuid);
    char **gpus, **autocasts, **trainers, **use_gpu;
    int ng = pb_split(b, V(3), '|', &gpus);
    int na = pb_split(b, V(5), '|', &autocasts);
    int nt = pb_split(b, V(14), '|', &trainers);
    int nu = pb_split(b, V(4), '|', &use_gpu);
    if (ng == 0) return error_at(TIPC_EUSAGE, b->cfg->path, LN(3), "empty gpu_list");
    if (nt == 0) return error_at(TIPC_EUSAGE, b->cfg->path, LN(14), "empty trainer list");
    const int keys[] = {15, 16, 17, 18, 19, 20};
    TRY(pb_check_trainers(b, trainers, nt, keys, 6));
    struct gpu_item *items = pb_keep(b, xcalloc((size_t)ng, sizeof *items));
    for (int i = 0; i < ng; i++) TRY(pb_parse_gpu(b, gpus[i], &items[i]));
    const char *load_norm = "";
    for (int i = 0; i < ng; i++) {
        if (style(b)->env_before_single && strlen(items[i].gpu) <= 1) pb_apply_env(b, items[i].env);
        for (int a = 0; a < na; a++)
            for (int t = 0; t < nt; t++) {
                struct full_run r = {&items[i], autocasts[a], trainers[t], i < nu ? use_gpu[i] : "", &load_norm};
                TRY(full_trainer(b, &r));
            }
    }
    return TIPC_OK;
}
