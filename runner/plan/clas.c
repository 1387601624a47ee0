/* clas.c: PaddleClas's harness (test_tipc/test_train_inference_python.sh + common_func.sh at
 * d178931f), the 51-line layout read its own way. lines[i] is cfg entry i. What it does unlike
 * the reference (full.c), all followed here:
 *  - epochs: func_parser_params is called without MODE, so it never matches: always 2;
 *    batch size is a plain value; the use-gpu flag gets the whole line-5 value
 *  - autocast goes through func_set_amp_params (-o AMP.use_amp=...), launch uses --devices=,
 *    every train gets `-o Global.print_mem_info=True` (+ log_ranks on several devices)
 *  - save dirs always end in _nodes_N; LOG_PATH is absolute ($(pwd)/test_tipc/output/...)
 *  - a train's status is whether SAVE/MODEL/train.log (RecModel for GeneralRecognition and
 *    MetaBIN_ResNet50) can be `cat`ed onto SAVE.log, not the trainer's exit code
 *  - single-device CUDA_VISIBLE_DEVICES is exported before training, inference runs in deploy/,
 *    CUDA_VISIBLE_DEVICES is unset after every trainer
 *  - whole_infer runs only line 34's kl_quant command, then infers from its quant_post_static_model
 *  - configs that stop before the eval/infer sections (train-only) train and stop. */
#include <stdio.h>
#include <string.h>

#include "internal.h"
#include "../../core/check.h"
#include "../../core/banned.h"

static struct stage *last(struct builder *b) { return &b->p->st[b->p->n - 1]; }

/* func_set_amp_params */
static const char *amp_params(const char *autocast)
{
    if (!strcmp(autocast, "fp16"))
        return "-o AMP.use_amp=True -o AMP.scale_loss=128 -o AMP.use_dynamic_loss_scaling=True -o AMP.level=O2";
    if (!strcmp(autocast, "amp"))
        return "-o AMP.use_amp=True -o AMP.scale_loss=128 -o AMP.use_dynamic_loss_scaling=True -o AMP.level=O1";
    return "-o AMP.use_amp=False";
}

/* `[[ $model_name == *X* ]]` for the models whose trainer writes into RecModel/. */
static bool rec_model(const char *model)
{
    return strstr(model, "GeneralRecognition") || strstr(model, "MetaBIN_ResNet50");
}

static enum tipc_status clas_inference(struct builder *b, const char *model_dir, const char *img_dir,
                                       const char *flag_quant, const char *gpu, const char *cwd0, const char *cwd1)
{
    (void)flag_quant; /* PaddleClas's func_inference takes it and never looks at it */
    char **use_gpu_list, **mkldnn, **threads, **batches, **precisions, **trts;
    int ng = pb_split(b, V(40), '|', &use_gpu_list), nm = pb_split(b, V(41), '|', &mkldnn);
    int nt = pb_split(b, V(42), '|', &threads), nb = pb_split(b, V(43), '|', &batches);
    int nr = pb_split(b, V(44), '|', &trts), np = pb_split(b, V(45), '|', &precisions);
    for (int i = 0; i < ng; i++) {
        const char *use_gpu = use_gpu_list[i];
        if (pb_sh_eq(use_gpu, "False") || pb_sh_eq(use_gpu, "cpu")) {
            for (int m = 0; m < nm; m++)
                for (int t = 0; t < nt; t++)
                    for (int bs = 0; bs < nb; bs++)
                        for (int q = 0; q < np; q++) {
                            const char *log = FMT("%s/python_infer_cpu_gpus_%s_usemkldnn_%s_threads_%s_precision_%s_batchsize_%s.log",
                                                  b->p->log_dir, gpu, mkldnn[m], threads[t], precisions[q], batches[bs]);
                            const char *cmd = FMT("%s %s %s=%s %s=%s %s %s %s %s %s %s > %s 2>&1 ", b->python, V(39), K(40),
                                                  use_gpu, K(41), mkldnn[m], SETP(K(42), threads[t]), SETP(K(46), model_dir),
                                                  SETP(K(43), batches[bs]), SETP(K(47), img_dir), SETP(K(49), V(49)),
                                                  SETP(K(50), V(50)), log);
                            TRY(pb_add_stage(b, STAGE_INFER, cmd, LN(39), log, true));
                            if (cwd0) last(b)->cwd[0] = xstrdup(cwd0);
                            if (cwd1) last(b)->cwd[1] = xstrdup(cwd1);
                        }
        } else if (pb_sh_eq(use_gpu, "True") || pb_sh_eq(use_gpu, "gpu")) {
            for (int r = 0; r < nr; r++)
                for (int q = 0; q < np; q++) {
                    if (pb_sh_eq(precisions[q], "True") && pb_sh_eq(trts[r], "False")) continue;
                    for (int bs = 0; bs < nb; bs++) {
                        const char *log = FMT("%s/python_infer_gpu_gpus_%s_usetrt_%s_precision_%s_batchsize_%s.log",
                                              b->p->log_dir, gpu, trts[r], precisions[q], batches[bs]);
                        const char *cmd = FMT("%s %s %s=%s %s %s %s %s %s %s > %s 2>&1 ", b->python, V(39), K(40), use_gpu,
                                              SETP(K(44), trts[r]), SETP(K(45), precisions[q]), SETP(K(46), model_dir),
                                              SETP(K(43), batches[bs]), SETP(K(47), img_dir), SETP(K(49), V(49)), log);
                        TRY(pb_add_stage(b, STAGE_INFER, cmd, LN(39), log, true));
                        if (cwd0) last(b)->cwd[0] = xstrdup(cwd0);
                        if (cwd1) last(b)->cwd[1] = xstrdup(cwd1);
                    }
                }
        } else {
            TRY(pb_note(b, "Does not support hardware other than CPU and GPU Currently!", LN(40)));
        }
    }
    return TIPC_OK;
}

/* whole_infer: the kl_quant command of line 34, links, inference from ../DIR/quant_post_static_model. */
static enum tipc_status clas_whole_infer(struct builder *b)
{
    const char *kl = V(33);
    if (!pb_sh_ne(kl, "null") || !pb_sh_ne(kl, "False")) {
        if (b->cfg->short_layout)
            return pb_note(b, FMT("whole_infer: not configured (%s stops at line %d, before the kl_quant line)",
                                  b->cfg->path, b->cfg->nlines), LN(33));
        return TIPC_OK;
    }
    TRY(pb_note(b, "kl_quant", LN(33)));
    const char *log = FMT("%s/export.log", b->p->log_dir);
    const char *cmd = FMT("%s %s > %s 2>&1", b->python, kl, log);
    TRY(pb_note(b, cmd, LN(33)));
    TRY(pb_add_stage(b, STAGE_EXPORT, cmd, LN(33), log, false));
    const char *quant_dir = FMT("%s/quant_post_static_model", V(36));
    TRY(pb_add_stage(b, STAGE_LINKS, quant_dir, LN(36), NULL, false));
    return clas_inference(b, FMT("../%s", quant_dir), V(47), "True", "0", quant_dir, "../../deploy");
}

struct clas_run {
    const struct gpu_item *g;
    const char *autocast, *trainer, *epoch_num;
};

static enum tipc_status clas_trainer(struct builder *b, const struct clas_run *r)
{
    const struct gpu_item *g = r->g;
    const char *trainer = r->trainer, *model = b->p->model, *run_train, *run_export;
    const char *flag_quant = "False";
    if (pb_sh_eq(trainer, K(16))) { run_train = V(16); run_export = V(30); flag_quant = "True"; }
    else if (!strcmp(trainer, K(17))) { run_train = V(17); run_export = V(31); }
    else if (!strcmp(trainer, K(18))) { run_train = V(18); run_export = V(32); }
    else if (!strcmp(trainer, K(19))) { run_train = FMT("%s  %s", V(15), V(19)); run_export = V(29); }
    else if (!strcmp(trainer, K(20))) { run_train = V(20); run_export = V(34); }
    else { run_train = V(15); run_export = V(29); }
    if (pb_sh_eq(run_train, "null")) return TIPC_OK;

    const char *set_use_gpu = SETP(K(4), V(4));
    bool multi_node = strlen(g->ips) > 15;
    const char *tag = FMT("%s/%s_gpus_%s_autocast_%s_nodes_%d", b->p->log_dir, trainer, g->gpu, r->autocast,
                          multi_node ? g->nodes : 1);
    const char *save_log = tag;
    const char *set_save_model = SETP(K(7), save_log);
    const char *mid = FMT("%s %s %s", SETP(K(8), V(8)), SETP(K(12), V(12)), "-o Global.print_mem_info=True");
    const char *epoch = SETP(K(6), r->epoch_num), *pretrain = SETP(K(9), V(9)), *amp = amp_params(r->autocast);
    const char *log_rank = "-o Global.log_ranks=0,1,2,3,4,5,6,7";
    const char *cmd;
    if (strlen(g->gpu) <= 2)
        cmd = FMT("%s %s %s %s %s %s %s %s ", b->python, run_train, set_use_gpu, set_save_model, epoch, pretrain, amp, mid);
    else if (!multi_node)
        cmd = FMT("%s %s --devices=%s %s %s %s %s %s %s %s %s", b->python, pb_launcher(b), g->gpu, run_train, set_use_gpu,
                  set_save_model, epoch, pretrain, amp, mid, log_rank);
    else /* sic: pretrain before epoch on several nodes */
        cmd = FMT("%s %s --ips=%s --devices=%s %s %s %s %s %s %s %s %s", b->python, pb_launcher(b), g->ips, g->gpu, run_train,
                  set_use_gpu, set_save_model, pretrain, epoch, amp, mid, log_rank);
    if ((strstr(model, "CLIP_vit_base_patch16_224") || strstr(model, "SwinTransformer_base_patch4_window7_224_ampo2_ultra"))
        && (!strcmp(r->autocast, "amp") || !strcmp(r->autocast, "fp16")))
        cmd = FMT("%s -o Arch.use_fused_attn=True -o Arch.use_fused_linear=True", cmd);
    TRY(pb_add_stage(b, STAGE_TRAIN, cmd, LN(15), NULL, false));
    if (*g->ips) last(b)->ips = xstrdup(g->ips);
    const char *sub = rec_model(model) ? "RecModel" : model;
    last(b)->status_file = xasprintf("%s/%s/train.log", save_log, sub);
    last(b)->append_to = xasprintf("%s.log", save_log);

    const char *weights = FMT("%s/%s/%s", save_log, sub, V(10));
    if (pb_sh_ne(V(23), "null")) {
        const char *eval_log = FMT("%s_eval.log", tag);
        const char *eval_cmd = FMT("%s %s %s %s %s > %s 2>&1", b->python, V(23), SETP(K(9), weights), set_use_gpu,
                                   SETP(K(24), V(24)), eval_log);
        TRY(pb_add_stage(b, STAGE_EVAL, eval_cmd, LN(23), eval_log, false));
    }
    if (pb_sh_ne(run_export, "null")) {
        /* sic: for RecModel models the harness sets set_eval_pretrain here, so the weight flag is empty */
        const char *set_export_weight = rec_model(model) ? "" : SETP(K(28), weights);
        const char *export_log = FMT("%s_export.log", tag);
        const char *export_cmd = FMT("%s %s %s %s > %s 2>&1", b->python, run_export, set_export_weight,
                                     SETP(K(27), save_log), export_log);
        TRY(pb_add_stage(b, STAGE_EXPORT, export_cmd, LN(29), export_log, false));
        pb_apply_env(b, g->env);
        TRY(clas_inference(b, save_log, V(47), flag_quant, g->gpu, "deploy", NULL));
    }
    pb_unset_env(b);
    return TIPC_OK;
}

enum tipc_status build_clas(struct builder *b)
{
    if (!strcmp(b->p->mode, "whole_infer")) return clas_whole_infer(b);
    char **gpus, **autocasts, **trainers;
    int ng = pb_split(b, V(3), '|', &gpus);
    int na = pb_split(b, V(5), '|', &autocasts);
    int nt = pb_split(b, V(14), '|', &trainers);
    if (ng == 0) return error_at(TIPC_EUSAGE, b->cfg->path, LN(3), "empty gpu_list");
    if (nt == 0) return error_at(TIPC_EUSAGE, b->cfg->path, LN(14), "empty trainer list");
    const int keys[] = {15, 16, 17, 18, 19, 20};
    TRY(pb_check_trainers(b, trainers, nt, keys, 6));
    /* func_parser_params without MODE never matches; then `[ ! $epoch_num ] && epoch_num=2` */
    char *epoch_num = pb_keep(b, cfg_mode_value(V(6), ""));
    if (!*epoch_num) epoch_num = "2";
    if (!strcmp(b->p->mode, "benchmark_train") || !strcmp(V(4), "npu")) epoch_num = "1";
    struct gpu_item *items = pb_keep(b, xcalloc((size_t)ng, sizeof *items));
    for (int i = 0; i < ng; i++) TRY(pb_parse_gpu(b, gpus[i], &items[i]));
    for (int i = 0; i < ng; i++) {
        if (strlen(items[i].gpu) <= 1 && strcmp(items[i].gpu, "-1") != 0) pb_apply_env(b, items[i].env);
        for (int a = 0; a < na; a++)
            for (int t = 0; t < nt; t++) {
                struct clas_run r = {&items[i], autocasts[a], trainers[t], epoch_num};
                TRY(clas_trainer(b, &r));
            }
    }
    if (b->cfg->short_layout)
        TRY(pb_note(b, FMT("eval, export, inference: not configured (%s stops at line %d)", b->cfg->path,
                           b->cfg->nlines), LN(14)));
    return TIPC_OK;
}
