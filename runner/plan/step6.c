/* step6.c: the 32-line Step6 harness (PaddlePaddle/models tutorials/mobilenetv3_prod/Step6
 * test_tipc/test_train_inference_python.sh, tipc-spec.md 2.3-3.5). lines[i] is cfg entry i. */
#include <stdio.h>
#include <string.h>

#include "internal.h"
#include "../../core/check.h"
#include "../../core/banned.h"

/* func_inference: one run per use_gpu x batch_size; logs python_infer_{cpu,gpu}_batchsize_N.log. */
static enum tipc_status step6_inference(struct builder *b, const char *model_dir, const char *img_dir)
{
    const char *python = b->python, *script = V(26), *log_path = b->p->log_dir;
    const char *use_gpu_key = K(27), *batch_size_key = K(28), *infer_model_key = K(29);
    const char *image_dir_key = K(30), *benchmark_key = K(31), *benchmark_value = V(31);
    char **use_gpu_list, **batch_size_list;
    int ng = pb_split(b, V(27), '|', &use_gpu_list);
    int nb = pb_split(b, V(28), '|', &batch_size_list);
    for (int i = 0; i < ng; i++) {
        const char *use_gpu = use_gpu_list[i], *dev;
        if (pb_sh_eq(use_gpu, "False") || pb_sh_eq(use_gpu, "cpu")) dev = "cpu";
        else if (pb_sh_eq(use_gpu, "True") || pb_sh_eq(use_gpu, "gpu")) dev = "gpu";
        else {
            TRY(pb_note(b, "Does not support hardware other than CPU and GPU Currently!", LN(27)));
            continue;
        }
        for (int j = 0; j < nb; j++) {
            const char *batch_size = batch_size_list[j];
            const char *save_log_path = FMT("%s/python_infer_%s_batchsize_%s.log", log_path, dev, batch_size);
            const char *set_infer_data = SETP(image_dir_key, img_dir);
            const char *set_benchmark = SETP(benchmark_key, benchmark_value);
            const char *set_batchsize = SETP(batch_size_key, batch_size);
            const char *set_model_dir = SETP(infer_model_key, model_dir);
            const char *command = FMT("%s %s %s=%s %s %s %s %s > %s 2>&1 ", python, script, use_gpu_key, use_gpu,
                                      set_model_dir, set_batchsize, set_infer_data, set_benchmark, save_log_path);
            pb_set_matrix(b, FMT("use_gpu=%s bs=%s", use_gpu, batch_size));
            TRY(pb_add_stage(b, STAGE_INFER, command, LN(26), save_log_path, true));
        }
    }
    return TIPC_OK;
}

static enum tipc_status step6_whole_infer(struct builder *b, const char *gpuid)
{
    pb_apply_env(b, gpuid);
    pb_set_ctx(b, "");
    const char *infer_export = V(24);
    const char *save_infer_dir = V(19);
    if (pb_sh_ne(infer_export, "null")) {
        const char *set_export_weight = SETP(K(20), V(23));
        const char *set_save_infer_key = SETP(K(19), save_infer_dir);
        const char *export_log_path = FMT("%s/export_0.log", b->p->log_dir);
        const char *export_cmd = FMT("%s %s %s %s > %s 2>&1 ", b->python, infer_export, set_export_weight,
                                     set_save_infer_key, export_log_path);
        TRY(pb_note(b, pb_sh_echo(b, infer_export), LN(24)));
        TRY(pb_note(b, pb_sh_echo(b, export_cmd), LN(24)));
        TRY(pb_add_stage(b, STAGE_EXPORT, export_cmd, LN(24), export_log_path, false));
    }
    return step6_inference(b, save_infer_dir, V(30));
}

/* One trainer on one gpu_list item: train, eval, export, inference. */
static enum tipc_status step6_trainer(struct builder *b, const struct gpu_item *g, const char *trainer)
{
    const char *autocast = !strcmp(trainer, "amp_train") ? "True" : "False";
    const char *run_train = V(13), *run_export = V(21), *train_model_name = V(9), *pretrain_key = K(8);
    if (pb_sh_eq(run_train, "null")) return TIPC_OK;
    const char *set_epoch = SETP(K(5), pb_keep(b, cfg_mode_value(V(5), b->p->mode)));
    const char *set_pretrain = SETP(pretrain_key, V(8));
    const char *set_batchsize = SETP(K(7), pb_keep(b, cfg_mode_value(V(7), b->p->mode)));
    const char *base = FMT("%s/%s_gpus_%s_autocast_%s_nodes_%d", b->p->log_dir, trainer, g->gpu, autocast, g->nodes);
    const char *save_log = FMT("%s.log", base); /* sic: the original names the output DIRECTORY *.log */
    b->pass_tag = FMT("%s_gpus_%s_autocast_%s_nodes_%d", trainer, g->gpu, autocast, g->nodes);
    const char *set_save_model = SETP(K(6), save_log);
    bool single;
    const char *launch = pb_launch_prefix(b, g, &single);
    const char *named = b->p->ours ? pb_named_launcher(run_train) : NULL;
    if (named && !single)
        return error_at(TIPC_EUSAGE, b->cfg->path, LN(13), "the training line starts its ranks with %s itself, but "
                        "gpu_list item '%s%s%s' asks tipc launch for several devices or nodes: give that item one "
                        "device (e.g. 0 or -1) and the ranks to %s", named, g->ips, *g->ips ? ";" : "", g->gpu, named);
    /* a line that names its launcher is the whole command, as Paddle's configs name paddle.distributed.launch */
    const char *cmd = named ? FMT("%s %s %s %s %s", run_train, set_save_model, set_epoch, set_pretrain, set_batchsize)
        : single ? FMT("%s %s %s %s %s %s", b->python, run_train, set_save_model, set_epoch, set_pretrain, set_batchsize)
        : FMT("%s %s %s %s %s %s", launch, run_train, set_save_model, set_epoch, set_pretrain, set_batchsize);
    pb_set_ctx(b, g->nodes > 1 ? FMT("%s gpus=%s autocast=%s nodes=%d", trainer, g->gpu, autocast, g->nodes)
                                : FMT("%s gpus=%s autocast=%s", trainer, g->gpu, autocast));
    TRY(pb_add_stage(b, STAGE_TRAIN, cmd, LN(13), NULL, false));
    if (*g->ips) b->p->st[b->p->n - 1].ips = xstrdup(g->ips);
    b->p->st[b->p->n - 1].rank_log_dir = pb_real_dir(b, FMT("%s/log", save_log));   /* TIPC_LOG_DIR */

    const char *weights = FMT("%s/%s", save_log, train_model_name);
    const char *set_eval_pretrain = SETP(pretrain_key, weights);
    const char *eval_py = V(16);
    if (pb_sh_ne(eval_py, "null")) {
        pb_apply_env(b, g->env);
        const char *eval_log_path = FMT("%s_eval.log", base);
        const char *eval_cmd = FMT("%s %s %s > %s 2>&1 ", b->python, eval_py, set_eval_pretrain, eval_log_path);
        TRY(pb_add_stage(b, STAGE_EVAL, eval_cmd, LN(16), eval_log_path, false));
    }
    if (pb_sh_ne(run_export, "null")) {
        const char *export_log_path = FMT("%s_export.log", base);
        const char *set_export_weight = SETP(K(20), weights);
        const char *set_save_infer_key = SETP(K(19), save_log);
        const char *export_cmd = FMT("%s %s %s %s > %s 2>&1 ", b->python, run_export, set_export_weight,
                                     set_save_infer_key, export_log_path);
        TRY(pb_add_stage(b, STAGE_EXPORT, export_cmd, LN(21), export_log_path, false));
        pb_apply_env(b, g->env);
        TRY(step6_inference(b, save_log, "")); /* ${train_infer_img_dir} is never set in Step6 */
        pb_unset_env(b);
    }
    return TIPC_OK;
}

enum tipc_status build_step6(struct builder *b, const char *gpuid)
{
    if (!strcmp(b->p->mode, "whole_infer")) return step6_whole_infer(b, gpuid);
    char **gpus, **trainers;
    int ng = pb_split(b, V(3), '|', &gpus);
    int nt = pb_split(b, V(12), '|', &trainers);
    if (ng == 0) return error_at(TIPC_EUSAGE, b->cfg->path, LN(3), "empty gpu_list");
    if (nt == 0) return error_at(TIPC_EUSAGE, b->cfg->path, LN(12), "empty trainer list");
    const int keys[] = {13};
    TRY(pb_check_trainers(b, trainers, nt, keys, 1));
    struct gpu_item *items = pb_keep(b, xcalloc((size_t)ng, sizeof *items));
    for (int i = 0; i < ng; i++) TRY(pb_parse_gpu(b, gpus[i], &items[i])); /* all errors before any stage */
    for (int i = 0; i < ng; i++)
        for (int t = 0; t < nt; t++) TRY(step6_trainer(b, &items[i], trainers[t]));
    return TIPC_OK;
}
