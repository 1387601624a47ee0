/* plan_full.c: the 51-line harness (PaddleOCR test_tipc/test_train_inference_python.sh, the
 * template PaddleClas/Detection/Seg copied; tipc-spec.md 2.6 and 3.7). lines[i] is cfg entry i. */
#include <stdio.h>
#include <string.h>

#include "plan_impl.h"
#include "../core/check.h"
#include "../core/banned.h"

static const char amp_config[] = "Global.use_amp=True Global.scale_loss=1024.0 Global.use_dynamic_loss_scaling=True";

/* `[[ $x =~ "lit" ]]`: a quoted right side is a plain substring test. */
static bool has(const char *x, const char *lit) { return strstr(x, lit) != NULL; }

static enum tipc_status full_infer_cpu(struct builder *b, const char *use_gpu, const char *model_dir,
                                       const char *img_dir, const char *flag_quant)
{
    char **mkldnn, **threads, **batches, **precisions;
    int nm = pb_split(b, V(41), '|', &mkldnn), nt = pb_split(b, V(42), '|', &threads);
    int nb = pb_split(b, V(43), '|', &batches), np = pb_split(b, V(45), '|', &precisions);
    for (int m = 0; m < nm; m++)
        for (int t = 0; t < nt; t++)
            for (int bs = 0; bs < nb; bs++)
                for (int q = 0; q < np; q++) {
                    const char *use_mkldnn = mkldnn[m], *precision = precisions[q];
                    if (pb_sh_eq(use_mkldnn, "False") && pb_sh_eq(precision, "fp16")) continue;
                    if (pb_sh_eq(flag_quant, "True") && pb_sh_ne(precision, "int8")) continue;
                    const char *log = FMT("%s/python_infer_cpu_usemkldnn_%s_threads_%s_precision_%s_batchsize_%s.log",
                                          b->p->log_dir, use_mkldnn, threads[t], precision, batches[bs]);
                    const char *command = FMT("%s %s %s=%s %s %s %s %s %s %s %s %s %s > %s 2>&1 ", b->python, V(39),
                        K(40), use_gpu, SETP(K(41), use_mkldnn), SETP(K(42), threads[t]), SETP(K(46), model_dir),
                        SETP(K(43), batches[bs]), SETP(K(48), "") /* save_log_value: never set */,
                        SETP(K(47), img_dir), SETP(K(49), V(49)), SETP(K(45), precision), SETP(K(50), V(50)), log);
                    pb_set_matrix(b, FMT("use_gpu=%s mkldnn=%s threads=%s precision=%s bs=%s", use_gpu, use_mkldnn,
                                         threads[t], precision, batches[bs]));
                    TRY(pb_add_stage(b, STAGE_INFER, command, LN(39), log, true));
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
            if (!strcmp(use_trt, "False") && has(precision, "int8") && pb_sh_eq(flag_quant, "True")) continue;
            for (int bs = 0; bs < nb; bs++) {
                const char *log = FMT("%s/python_infer_gpu_usetrt_%s_precision_%s_batchsize_%s.log",
                                      b->p->log_dir, use_trt, precision, batches[bs]);
                const char *command = FMT("%s %s %s=%s %s %s %s %s %s %s %s %s > %s 2>&1 ", b->python, V(39),
                    K(40), use_gpu, SETP(K(44), use_trt), SETP(K(45), precision), SETP(K(46), model_dir),
                    SETP(K(43), batches[bs]), SETP(K(47), img_dir), SETP(K(49), V(49)), SETP(K(50), V(50)),
                    SETP(K(48), ""), log);
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
        if (pb_sh_ne(run_export, "null")) {
            const char *export_log_path = FMT("%s/_export_%d.log", b->p->log_dir, count);
            const char *export_cmd = FMT("%s %s %s %s > %s 2>&1 ", b->python, run_export, SETP(K(28), infer_model),
                                         SETP(K(27), infer_model), export_log_path);
            TRY(pb_note(b, pb_sh_echo(b, run_export), LN(37)));
            TRY(pb_note(b, pb_sh_echo(b, export_cmd), LN(37)));
            TRY(pb_add_stage(b, STAGE_EXPORT, export_cmd, LN(37), export_log_path, false));
        }
        TRY(full_inference(b, infer_model, V(47), count < nq ? quants[count] : ""));
    }
    return TIPC_OK;
}

struct full_run {
    const struct gpu_item *g;
    const char *autocast, *trainer, *train_use_gpu;
};

/* Trainer dispatch by key (pact / fpgm / distill / key1 / key2 / norm). */
static void full_dispatch(struct builder *b, const char *trainer, const char **run_train,
                          const char **run_export, const char **flag_quant)
{
    *flag_quant = "False";
    if (pb_sh_eq(K(16), trainer)) { *run_train = V(16); *run_export = V(30); *flag_quant = "True"; }
    else if (!strcmp(trainer, K(17))) { *run_train = V(17); *run_export = V(31); }
    else if (!strcmp(trainer, K(18))) { *run_train = V(18); *run_export = V(32); }
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
    const char *tag = FMT("%s/%s_gpus_%s_autocast_%s", b->p->log_dir, r->trainer, g->gpu, r->autocast);
    bool multi_node = b->p->ours ? *g->ips != 0 : strlen(g->ips) > 15;
    const char *save_log = multi_node ? FMT("%s_nodes_%d", tag, g->nodes) : tag;
    const char *set_save_model = SETP(K(7), save_log);
    bool single;
    const char *launch = pb_launch_prefix(b, g, &single);
    const char *cmd;
    if (single)
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
    TRY(pb_add_stage(b, STAGE_TRAIN, cmd, LN(15), NULL, false));
    if (*g->ips) b->p->st[b->p->n - 1].ips = xstrdup(g->ips);
    b->p->st[b->p->n - 1].rank_log_dir = pb_real_dir(b, FMT("%s/log", save_log));   /* TIPC_LOG_DIR */

    const char *nodes_tag = FMT("%s_nodes_%d", tag, multi_node ? g->nodes : 1);
    b->pass_tag = strrchr(nodes_tag, '/') ? strrchr(nodes_tag, '/') + 1 : nodes_tag;
    const char *weights = FMT("%s/%s", save_log, V(10));
    if (pb_sh_ne(V(23), "null")) {
        pb_apply_env(b, g->env);
        const char *eval_log_path = FMT("%s_eval.log", nodes_tag);
        const char *eval_cmd = FMT("%s %s %s %s %s > %s 2>&1 ", b->python, V(23), SETP(K(9), weights), set_use_gpu,
                                   SETP(K(24), V(24)), eval_log_path);
        TRY(pb_add_stage(b, STAGE_EVAL, eval_cmd, LN(23), eval_log_path, false));
    }
    if (pb_sh_ne(run_export, "null")) {
        const char *export_log_path = FMT("%s_export.log", nodes_tag);
        const char *export_cmd = FMT("%s %s %s %s > %s 2>&1 ", b->python, run_export, SETP(K(28), weights),
                                     SETP(K(27), save_log), export_log_path);
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

enum tipc_status build_full(struct builder *b, const char *gpuid)
{
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
    for (int i = 0; i < ng; i++)
        for (int a = 0; a < na; a++)
            for (int t = 0; t < nt; t++) {
                struct full_run r = {&items[i], autocasts[a], trainers[t], i < nu ? use_gpu[i] : ""};
                TRY(full_trainer(b, &r));
            }
    return TIPC_OK;
}
