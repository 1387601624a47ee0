/* seg.c: PaddleSeg's harness (test_tipc/test_train_inference_python.sh + common_func.sh at
 * d7975e7c). lines[i] is cfg entry i. What it does unlike the reference (full.c):
 *  - the results log starts with `------------------------ MODE ------------------------`
 *  - launch uses --devices=; pact/fpgm single-node trains start from norm_train's weights
 *  - train, eval and export output goes to their logs through `tee` (tipc: the log, then printed)
 *  - after a launched train, log/workerlog.0 is appended to the train log
 *  - when SAVE/TRAIN_MODEL_NAME is missing after a train, the weights become iter_EPOCHS/model.pdparams
 *    from then on (decided when the train has run: the commands carry PB_MODEL_TOKEN until then)
 *  - inference reads MODEL_DIR/deploy.yaml; CPU runs fp32 only unless quantised, every inference
 *    gets `KEY=LOG_PATH/python_infer_..._results` (line 51) and line 52's flag; logs name the devices
 *  - whole_infer exports into $(dirname MODEL), unredirected. */
#include <stdio.h>
#include <string.h>

#include "internal.h"
#include "../../core/check.h"
#include "../../core/banned.h"

static struct stage *last(struct builder *b) { return &b->p->st[b->p->n - 1]; }

static bool has(const char *x, const char *lit) { return strstr(x, lit) != NULL; }

/* run_command CMD LOG: `eval CMD 2>&1 | tee LOG`, the status of CMD. */
static enum tipc_status seg_run(struct builder *b, enum stage_kind kind, const char *cmd, const char *log, int line)
{
    return pb_add_stage_exec(b, kind, cmd, FMT("%s > %s 2>&1", cmd, log), line, log, true);
}

static enum tipc_status seg_inference(struct builder *b, const char *dir, const char *img_dir, const char *flag_quant,
                                      const char *gpu)
{
    const char *model_dir = FMT("%s/deploy.yaml", dir), *log_dir = b->p->log_dir;
    char **use_gpu_list, **mkldnn, **threads, **batches, **precisions, **trts;
    int ng = pb_split(b, V(40), '|', &use_gpu_list), nm = pb_split(b, V(41), '|', &mkldnn);
    int nt = pb_split(b, V(42), '|', &threads), nb = pb_split(b, V(43), '|', &batches);
    int nr = pb_split(b, V(44), '|', &trts), np = pb_split(b, V(45), '|', &precisions);
    const char *params2 = SETP(K(51), V(51));
    for (int i = 0; i < ng; i++) {
        const char *use_gpu = use_gpu_list[i];
        if (pb_sh_eq(use_gpu, "False") || pb_sh_eq(use_gpu, "cpu")) {
            for (int m = 0; m < nm; m++) {
                if (pb_sh_eq(mkldnn[m], "False") && pb_sh_eq(flag_quant, "True")) continue;
                for (int t = 0; t < nt; t++)
                    for (int bs = 0; bs < nb; bs++)
                        for (int q = 0; q < np; q++) {
                            const char *p = precisions[q];
                            if (pb_sh_eq(mkldnn[m], "False") && pb_sh_eq(p, "fp16")) continue;
                            if (pb_sh_eq(flag_quant, "True") && pb_sh_ne(p, "int8")) continue;
                            if (pb_sh_eq(flag_quant, "False") && pb_sh_ne(p, "fp32")) continue;
                            const char *tail = FMT("usemkldnn_%s_threads_%s_precision_%s_batchsize_%s", mkldnn[m],
                                                   threads[t], p, batches[bs]);
                            const char *log = FMT("%s/python_infer_cpu_gpu_%s_%s.log", log_dir, gpu, tail);
                            const char *results = FMT("%s/python_infer_cpu_%s_results", log_dir, tail);
                            const char *cmd = FMT("%s %s %s=%s %s=%s %s %s %s %s %s %s %s %s > %s 2>&1 ", b->python,
                                                  V(39), K(40), use_gpu, K(41), mkldnn[m], SETP(K(42), threads[t]),
                                                  SETP(K(46), model_dir), SETP(K(43), batches[bs]), SETP(K(47), img_dir),
                                                  SETP(K(49), V(49)), SETP(K(45), p), SETP(K(50), results), params2, log);
                            TRY(pb_note(b, pb_sh_echo(b, cmd), LN(39)));
                            TRY(pb_add_stage(b, STAGE_INFER, cmd, LN(39), log, true));
                        }
            }
        } else if (pb_sh_eq(use_gpu, "True") || pb_sh_eq(use_gpu, "gpu")) {
            for (int r = 0; r < nr; r++)
                for (int q = 0; q < np; q++) {
                    const char *trt = trts[r], *p = precisions[q];
                    if (!strcmp(flag_quant, "False") && has(p, "int8")) continue;
                    if ((has(p, "fp16") || has(p, "int8")) && pb_sh_eq(trt, "False")) continue;
                    if ((!strcmp(trt, "False") || has(p, "int8")) && pb_sh_eq(flag_quant, "True")) continue;
                    for (int bs = 0; bs < nb; bs++) {
                        const char *log = FMT("%s/python_infer_gpu_gpu_%s_usetrt_%s_precision_%s_batchsize_%s.log",
                                              log_dir, gpu, trt, p, batches[bs]);
                        const char *cmd = FMT("%s %s %s=%s %s %s %s %s %s %s %s > %s 2>&1 ", b->python, V(39), K(40),
                                              use_gpu, SETP(K(44), trt), SETP(K(45), p), SETP(K(46), model_dir),
                                              SETP(K(43), batches[bs]), SETP(K(47), img_dir), SETP(K(49), V(49)),
                                              params2, log);
                        TRY(pb_note(b, pb_sh_echo(b, cmd), LN(39)));
                        TRY(pb_add_stage(b, STAGE_INFER, cmd, LN(39), log, true));
                    }
                }
        } else {
            TRY(pb_note(b, "Does not support hardware other than CPU and GPU Currently!", LN(40)));
        }
    }
    return TIPC_OK;
}

static enum tipc_status seg_whole_infer(struct builder *b, const char *gpuid)
{
    pb_apply_env(b, gpuid);
    char **models, **exports, **quants;
    int nm = pb_split(b, V(36), '|', &models), ne = pb_split(b, V(37), '|', &exports);
    int nq = pb_split(b, V(38), '|', &quants);
    for (int count = 0; count < nm; count++) {
        const char *infer_model = models[count], *run_export = count < ne ? exports[count] : "";
        const char *dir = infer_model;
        if (pb_sh_ne(run_export, "null")) {
            dir = pb_dirname(b, infer_model);
            const char *cmd = FMT("%s %s %s %s", b->python, run_export, SETP(K(28), infer_model), SETP(K(27), dir));
            TRY(pb_note(b, pb_sh_echo(b, run_export), LN(37)));
            TRY(pb_add_stage(b, STAGE_EXPORT, cmd, LN(37), NULL, false));
        }
        /* `${is_quant} ${gpu}` unquoted: with no quant flag, gpu's "0" slides into its place */
        TRY(seg_inference(b, dir, V(47), count < nq && *quants[count] ? quants[count] : "0", "0"));
    }
    return TIPC_OK;
}

struct seg_run {
    const struct gpu_item *g;
    const char *autocast, *trainer, *train_use_gpu, *epoch_num;
    const char **load_norm;
};

/* benchmark_train: parse_extra_args reads the file's last line as KEY:VALUE;... ; log_iters and
 * repeats become ` --log_iters N` and ` --repeats N` after the train command. */
static const char *seg_extra_args(struct builder *b, const char *cmd)
{
    const char *log_iters = "", *repeats = "";
    char **items;
    int n = b->cfg->n ? pb_split(b, b->cfg->e[b->cfg->n - 1].raw, ';', &items) : 0;
    for (int i = 0; i < n; i++) {
        char **kv;
        int m = pb_split(b, items[i], ':', &kv);
        if (m >= 1 && !strcmp(kv[0], "log_iters")) log_iters = m >= 2 ? kv[1] : "";
        else if (m >= 1 && !strcmp(kv[0], "repeats")) repeats = m >= 2 ? kv[1] : "";
    }
    if (*log_iters) cmd = FMT("%s --log_iters %s", cmd, log_iters);
    if (*repeats) cmd = FMT("%s --repeats %s", cmd, repeats);
    return cmd;
}

static enum tipc_status seg_trainer(struct builder *b, const struct seg_run *r)
{
    const struct gpu_item *g = r->g;
    const char *t = r->trainer, *run_train, *run_export, *flag_quant = "False";
    const struct cfg_entry *ts = pb_to_static_entry(b);
    if (pb_sh_eq(t, K(16))) { run_train = V(16); run_export = V(30); flag_quant = "True"; }
    else if (!strcmp(t, K(17))) { run_train = V(17); run_export = V(31); }
    else if (!strcmp(t, K(18))) { run_train = V(18); run_export = V(32); }
    else if (pb_sh_eq(t, K(19))) { run_train = V(19); run_export = V(33); }
    else if (!strcmp(t, K(20))) { run_train = V(20); run_export = V(34); }
    else if (!strcmp(t, ts->key)) { run_train = FMT("%s %s", V(15), ts->value); run_export = V(29); }
    else { run_train = V(15); run_export = V(29); }
    if (pb_sh_eq(run_train, "null")) return TIPC_OK;
    bool multi_node = strlen(g->ips) > 15;
    int nodes = multi_node ? g->nodes : 1;
    const char *tag = FMT("%s/%s_gpus_%s_autocast_%s", b->p->log_dir, t, g->gpu, r->autocast);
    const char *save_log = multi_node ? FMT("%s_nodes_%d", tag, nodes) : tag;
    const char *log_tag = FMT("%s_nodes_%d", tag, nodes);
    const char *set_pretrain = SETP(K(9), V(9));
    if ((pb_sh_eq(t, K(16)) || pb_sh_eq(t, K(17))) && !multi_node) set_pretrain = *r->load_norm;
    const char *set_use_gpu = SETP(K(4), r->train_use_gpu), *set_epoch = SETP(K(6), r->epoch_num);
    bool bench = !strcmp(b->p->mode, "benchmark_train");
    const char *amp = !strcmp(r->autocast, "amp")
        ? "Global.use_amp=True Global.scale_loss=1024.0 Global.use_dynamic_loss_scaling=True"
        : !strcmp(r->autocast, "fp16") && bench ? "--amp_level=O2" : " ";
    /* benchmark_train: `Global.auto_cast` becomes `--precision` */
    const char *autocast_key = bench && !strcmp(K(5), "Global.auto_cast") ? "--precision" : K(5);
    const char *rest = FMT("%s %s %s %s", SETP(autocast_key, r->autocast),
                           SETP(K(8), pb_keep(b, cfg_mode_value(V(8), b->p->mode))), SETP(K(12), V(12)), amp);
    const char *set_save = SETP(K(7), save_log), *cmd;
    if (strlen(g->gpu) <= 2) cmd = FMT("%s %s %s  %s %s %s %s", b->python, run_train, set_use_gpu, set_save, set_epoch, set_pretrain, rest);
    else if (!multi_node)
        cmd = FMT("%s %s --devices=%s %s %s %s %s %s %s", b->python, pb_launcher(b), g->gpu, run_train, set_use_gpu, set_save,
                  set_epoch, set_pretrain, rest);
    else
        cmd = FMT("%s %s --ips=%s --devices=%s %s %s %s %s %s %s", b->python, pb_launcher(b), g->ips, g->gpu, run_train,
                  set_use_gpu, set_save, set_pretrain, set_epoch, rest);
    if (bench) cmd = seg_extra_args(b, cmd);
    const char *log = FMT("%s.log", log_tag);
    TRY(pb_note(b, cmd, LN(15)));
    TRY(seg_run(b, STAGE_TRAIN, cmd, log, LN(15)));
    if (*g->ips) last(b)->ips = xstrdup(g->ips);
    last(b)->model_probe = xstrdup(save_log);
    last(b)->model_fallback = xasprintf("iter_%s/model.pdparams", r->epoch_num);
    if (strstr(cmd, "paddle.distributed.launch")) {
        TRY(pb_add_stage(b, STAGE_APPEND, "log/workerlog.0", LN(15), NULL, false));
        last(b)->append_to = xstrdup(log);
    }
    const char *weights = FMT("%s/%s", save_log, PB_MODEL_TOKEN);
    const char *set_eval_pretrain = SETP(K(9), weights);
    if (pb_sh_eq(t, K(15)) && !multi_node) *r->load_norm = set_eval_pretrain;
    if (pb_sh_ne(V(23), "null")) {
        const char *eval_cmd = FMT("%s %s %s %s %s", b->python, V(23), set_eval_pretrain, set_use_gpu, SETP(K(24), V(24)));
        TRY(seg_run(b, STAGE_EVAL, eval_cmd, FMT("%s_eval.log", log_tag), LN(23)));
    }
    if (pb_sh_ne(run_export, "null")) {
        const char *export_cmd = FMT("%s %s %s %s", b->python, run_export, SETP(K(28), weights), SETP(K(27), save_log));
        TRY(seg_run(b, STAGE_EXPORT, export_cmd, FMT("%s_export.log", log_tag), LN(29)));
        pb_apply_env(b, g->env);
        const char *dir = strcmp(V(35), "null") && strcmp(V(35), "##") ? FMT("%s/%s", save_log, V(35)) : save_log;
        TRY(seg_inference(b, dir, V(11), flag_quant, g->gpu));
        pb_unset_env(b);
    }
    return TIPC_OK;
}

enum tipc_status build_seg(struct builder *b, const char *gpuid)
{
    b->p->results_header = xasprintf("------------------------ %s ------------------------", b->p->mode);
    b->p->seg_model = xstrdup(V(10));
    if (!strcmp(b->p->mode, "whole_infer") || !strcmp(b->p->mode, "klquant_whole_infer")) return seg_whole_infer(b, gpuid);
    char **gpus, **autocasts, **trainers, **use_gpu;
    int ng = pb_split(b, V(3), '|', &gpus), na = pb_split(b, V(5), '|', &autocasts);
    int nt = pb_split(b, V(14), '|', &trainers), nu = pb_split(b, V(4), '|', &use_gpu);
    if (ng == 0) return error_at(TIPC_EUSAGE, b->cfg->path, LN(3), "empty gpu_list");
    struct gpu_item *items = pb_keep(b, xcalloc((size_t)ng, sizeof *items));
    for (int i = 0; i < ng; i++) TRY(pb_parse_gpu(b, gpus[i], &items[i]));
    const char *load_norm = "", *epoch_num = pb_keep(b, cfg_mode_value(V(6), b->p->mode));
    for (int i = 0; i < ng; i++) {
        if (strlen(items[i].gpu) <= 1 && strcmp(items[i].gpu, "-1") != 0) pb_apply_env(b, items[i].env);
        for (int a = 0; a < na; a++)
            for (int t = 0; t < nt; t++) {
                struct seg_run r = {&items[i], autocasts[a], trainers[t], i < nu ? use_gpu[i] : "", epoch_num, &load_norm};
                TRY(seg_trainer(b, &r));
            }
    }
    return TIPC_OK;
}
