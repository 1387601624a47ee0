/* det.c: PaddleDetection's harness (test_tipc/test_train_inference_python.sh + utils_func.sh at
 * 666f597f). lines[i] is cfg entry i. What it does unlike the reference (full.c):
 *  - a value is everything after the first ':' (tipc's rule too), but a line with no ':' is its
 *    own value; per-mode epochs and batch sizes use the script's MODE
 *  - training runs as `timeout 5m CMD > TRAIN.log 2>&1`, then the log is printed; the status line
 *    shows CMD; single-device trains get `LearningRate.base_lr=0.0001 log_iter=1`, launched ones
 *    `log_iter=1`; `filename=MODEL`, `--amp amp_level=O1|O2` from the autocast value
 *  - a trainer that matches no key is skipped; eval and export are redirected and printed the same way
 *  - the exported model is SAVE/MODEL; `cp SAVE/MODEL/(all) SAVE/` follows the export (onnx configs:
 *    an extra `export_onnx=True` export first)
 *  - inference: CPU mkldnn x threads x batch ("mode_paddle" in the log name), GPU precision x batch
 *    (trt_int8 only for quantised models); log names carry the training's devices
 *  - whole_infer / klquant_whole_infer export per `infer_mode` (line 38) into line 28's folder. */
#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "internal.h"
#include "../../core/check.h"
#include "../../core/banned.h"

/* `echo ${strs#*:}`: the whole line when it has no ':' */
static const char *dv(struct builder *b, int i)
{
    const struct cfg_entry *e = cfg_at(b->cfg, i);
    return e->has_colon ? e->value : e->raw;
}

static struct stage *last(struct builder *b) { return &b->p->st[b->p->n - 1]; }

/* `eval "CMD > LOG 2>&1"; cat LOG; status_check ... CMD`: the status line shows CMD alone. */
static enum tipc_status det_stage(struct builder *b, enum stage_kind kind, const char *cmd, const char *prefix,
                                  const char *log, int line)
{
    const char *exec = FMT("%s%s > %s 2>&1", prefix, cmd, log);
    return pb_add_stage_exec(b, kind, cmd, exec, line, log, true);
}

static enum tipc_status det_inference(struct builder *b, const char *model_dir, const char *img_dir,
                                      const char *flag_quant, const char *gpu)
{
    char **use_gpu_list, **mkldnn, **threads, **batches, **precisions;
    int ng = pb_split(b, V(40), '|', &use_gpu_list), nm = pb_split(b, V(41), '|', &mkldnn);
    int nt = pb_split(b, V(42), '|', &threads), nb = pb_split(b, V(43), '|', &batches);
    int np = pb_split(b, V(45), '|', &precisions);
    for (int i = 0; i < ng; i++) {
        const char *use_gpu = use_gpu_list[i];
        if (pb_sh_eq(use_gpu, "False") || pb_sh_eq(use_gpu, "cpu")) {
            for (int m = 0; m < nm; m++) {
                if (pb_sh_eq(mkldnn[m], "False") && pb_sh_eq(flag_quant, "True")) continue;
                for (int t = 0; t < nt; t++)
                    for (int bs = 0; bs < nb; bs++) {
                        const char *log = FMT("%s/python_infer_cpu_gpus_%s_usemkldnn_%s_threads_%s_mode_paddle_batchsize_%s.log",
                                              b->p->log_dir, gpu, mkldnn[m], threads[t], batches[bs]);
                        const char *cmd = FMT("%s %s %s=%s %s=%s %s %s %s %s %s %s > %s 2>&1 ", b->python, V(39), K(40),
                                              use_gpu, K(41), mkldnn[m], SETP(K(42), threads[t]), SETP(K(46), model_dir),
                                              SETP(K(43), batches[bs]), SETP(K(47), img_dir), SETP(K(49), dv(b, 49)),
                                              SETP(K(50), dv(b, 50)), log);
                        TRY(pb_add_stage(b, STAGE_INFER, cmd, LN(39), log, true));
                    }
            }
        } else if (pb_sh_eq(use_gpu, "True") || pb_sh_eq(use_gpu, "gpu")) {
            for (int q = 0; q < np; q++) {
                const char *precision = precisions[q];
                if (strcmp(precision, "paddle") != 0) {
                    if (!strcmp(flag_quant, "False") && !strcmp(precision, "trt_int8")) continue;
                    if (!strcmp(flag_quant, "True") && strcmp(precision, "trt_int8") != 0) continue;
                }
                for (int bs = 0; bs < nb; bs++) {
                    const char *log = FMT("%s/python_infer_gpu_gpus_%s_mode_%s_batchsize_%s.log", b->p->log_dir, gpu,
                                          precision, batches[bs]);
                    const char *cmd = FMT("%s %s %s=%s %s %s %s %s %s %s > %s 2>&1 ", b->python, V(39), K(40), use_gpu,
                                          SETP(K(45), precision), SETP(K(46), model_dir), SETP(K(43), batches[bs]),
                                          SETP(K(47), img_dir), SETP(K(49), dv(b, 49)), SETP(K(50), dv(b, 50)), log);
                    TRY(pb_add_stage(b, STAGE_INFER, cmd, LN(39), log, true));
                }
            }
        } else {
            TRY(pb_note(b, "Does not support hardware other than CPU and GPU Currently!", LN(40)));
        }
    }
    return TIPC_OK;
}

static enum tipc_status det_whole_infer(struct builder *b, const char *gpuid)
{
    pb_apply_env(b, gpuid);
    bool kl = !strcmp(b->p->mode, "klquant_whole_infer");
    char **modes, **quants;
    int nm = pb_split(b, dv(b, 37), '|', &modes), nq = pb_split(b, dv(b, 38), '|', &quants);
    const char *set_filename = SETP("filename", b->p->model);
    int count = 0;
    for (int i = 0; i < nm; i++) {
        const char *m = modes[i], *run_export;
        if (pb_sh_eq(m, "null")) continue;
        if (kl && !pb_sh_eq(m, "kl_quant")) continue;
        if (!kl && pb_sh_eq(m, "kl_quant")) continue;
        if (!strcmp(m, "norm")) run_export = dv(b, 29);
        else if (!strcmp(m, "pact")) run_export = dv(b, 30);
        else if (!strcmp(m, "fpgm")) run_export = dv(b, 31);
        else if (!strcmp(m, "distill")) run_export = dv(b, 32);
        else if (!strcmp(m, "kl_quant")) run_export = dv(b, 35);
        else return pb_note(b, "Undefined infer_mode!", LN(37)); /* the original exits here */
        const char *export_cmd = FMT("%s %s %s %s %s ", b->python, run_export, SETP(K(28), dv(b, 28)), set_filename,
                                     SETP(K(27), dv(b, 27)));
        TRY(pb_note(b, pb_sh_echo(b, export_cmd), LN(37)));
        TRY(pb_add_stage(b, STAGE_EXPORT, export_cmd, LN(37), NULL, false));
        /* ${is_quant} unquoted: when missing, "{gpu}" slides into the quant flag's place */
        const char *quant = count < nq && *quants[count] ? quants[count] : "{gpu}";
        TRY(det_inference(b, FMT("%s/%s", dv(b, 27), b->p->model), dv(b, 47), quant, "0"));
        count++;
    }
    return TIPC_OK;
}

struct det_run {
    const struct gpu_item *g;
    const char *autocast, *trainer, *use_gpu, *to_static_key, *to_static_value;
};

static enum tipc_status det_trainer(struct builder *b, const struct det_run *r)
{
    const struct gpu_item *g = r->g;
    const char *t = r->trainer, *run_train, *run_export, *flag_quant = "False", *set_to_static = "";
    if (!strcmp(t, K(15))) { run_train = dv(b, 15); run_export = dv(b, 29); }
    else if (!strcmp(t, K(16))) { run_train = dv(b, 16); run_export = dv(b, 30); flag_quant = "True"; }
    else if (!strcmp(t, K(17))) { run_train = dv(b, 17); run_export = dv(b, 31); }
    else if (!strcmp(t, K(18))) { run_train = dv(b, 18); run_export = dv(b, 32); }
    else if (!strcmp(t, K(19))) { run_train = dv(b, 19); run_export = dv(b, 33); }
    else if (!strcmp(t, K(20))) { run_train = dv(b, 20); run_export = dv(b, 34); }
    else if (!strcmp(t, r->to_static_key)) { run_train = dv(b, 15); run_export = dv(b, 29); set_to_static = r->to_static_value; }
    else return TIPC_OK;
    if (pb_sh_eq(run_train, "null")) return TIPC_OK;
    const char *model = b->p->model;
    const char *set_epoch = SETP(K(6), pb_keep(b, cfg_mode_value(dv(b, 6), b->p->mode)));
    const char *set_batchsize = SETP(K(8), pb_keep(b, cfg_mode_value(dv(b, 8), b->p->mode)));
    const char *set_filename = SETP("filename", model), *set_use_gpu = SETP(K(4), r->use_gpu);
    const char *set_autocast = " ", *set_amp_level = " ";
    if (!strcmp(r->autocast, "amp")) { set_autocast = "--amp"; set_amp_level = "amp_level=O1"; }
    else if (!strcmp(r->autocast, "fp16")) { set_autocast = "--amp"; set_amp_level = "amp_level=O2"; }
    bool multi_node = strlen(g->ips) > 15;
    int nodes = multi_node ? g->nodes : 1;
    const char *save_log = FMT("%s/%s_gpus_%s_autocast_%s", b->p->log_dir, t, g->gpu, r->autocast);
    if (multi_node) save_log = FMT("%s_nodes_%d", save_log, nodes);
    bool bench = !strcmp(b->p->mode, "benchmark_train");   /* set_shuffle, set_enable_ce */
    const char *rest = FMT("%s %s %s %s %s %s %s %s %s %s %s %s", set_use_gpu, SETP(K(7), save_log), set_epoch,
                           SETP(K(9), dv(b, 9)), set_batchsize, set_filename, bench ? "TrainReader.shuffle=False" : " ",
                           set_amp_level, bench ? "--enable_ce=True" : " ", set_autocast,
                           set_to_static, SETP(K(12), dv(b, 12)));
    const char *cmd;
    if (strlen(g->gpu) <= 2) cmd = FMT("%s %s LearningRate.base_lr=0.0001 log_iter=1 %s", b->python, run_train, rest);
    else if (!multi_node) cmd = FMT("%s %s --gpus=%s %s log_iter=1 %s", b->python, pb_launcher(b), g->gpu, run_train, rest);
    else cmd = FMT("%s %s --ips=%s --gpus=%s %s log_iter=1 %s", b->python, pb_launcher(b), g->ips, g->gpu, run_train, rest);
    const char *tag = FMT("%s/%s_gpus_%s_autocast_%s_nodes_%d", b->p->log_dir, t, g->gpu, r->autocast, nodes);
    TRY(det_stage(b, STAGE_TRAIN, cmd, "timeout 5m ", FMT("%s.log", tag), LN(15)));
    if (*g->ips) last(b)->ips = xstrdup(g->ips);

    const char *export_dir = FMT("%s/%s", save_log, model);
    const char *weights = SETP(K(28), FMT("%s/%s", export_dir, dv(b, 10)));
    if (pb_sh_ne(dv(b, 23), "null")) {
        const char *eval_cmd = FMT("%s %s %s %s %s", b->python, dv(b, 23), weights, set_use_gpu, SETP(K(24), dv(b, 24)));
        TRY(det_stage(b, STAGE_EVAL, eval_cmd, "", FMT("%s_eval.log", tag), LN(23)));
    }
    if (pb_sh_ne(run_export, "null")) {
        const char *set_save = SETP(K(27), save_log);
        bool onnx = !strcmp(K(34), "export_onnx");
        if (onnx) {
            const char *log = FMT("%s_onnx_export.log", tag);
            const char *onnx_cmd = FMT("%s %s %s %s export_onnx=True %s >%s 2>&1", b->python, run_export, weights,
                                       set_filename, set_save, log);
            TRY(pb_add_stage(b, STAGE_EXPORT, onnx_cmd, LN(29), log, false));
            TRY(pb_add_stage(b, STAGE_COPY, export_dir, LN(29), NULL, false));
            last(b)->append_to = xstrdup(save_log);
        }
        const char *export_cmd = FMT("%s %s %s %s %s ", b->python, run_export, weights, set_filename, set_save);
        TRY(det_stage(b, STAGE_EXPORT, export_cmd, "", FMT("%s_export.log", tag), LN(29)));
        if (!onnx) {
            TRY(pb_add_stage(b, STAGE_COPY, export_dir, LN(29), NULL, false));
            last(b)->append_to = xstrdup(save_log);
        }
        pb_apply_env(b, g->env);
        TRY(det_inference(b, export_dir, dv(b, 11), flag_quant, g->gpu));
        pb_unset_env(b);
    }
    return TIPC_OK;
}

enum tipc_status build_det(struct builder *b, const char *gpuid)
{
    TRY(pb_note(b, FMT("ppdet python_infer: %s", b->p->model), LN(1)));
    if (!strcmp(b->p->mode, "whole_infer") || !strcmp(b->p->mode, "klquant_whole_infer")) return det_whole_infer(b, gpuid);
    char **gpus, **autocasts, **trainers;
    int ng = pb_split(b, dv(b, 3), '|', &gpus);
    int na = pb_split(b, dv(b, 5), '|', &autocasts);
    int nt = pb_split(b, dv(b, 14), '|', &trainers);
    if (ng == 0) return error_at(TIPC_EUSAGE, b->cfg->path, LN(3), "empty gpu_list");
    const struct cfg_entry *ts = pb_to_static_entry(b);
    struct gpu_item *items = pb_keep(b, xcalloc((size_t)ng, sizeof *items));
    for (int i = 0; i < ng; i++) TRY(pb_parse_gpu(b, gpus[i], &items[i]));
    for (int i = 0; i < ng; i++) {
        const char *use_gpu = dv(b, 4);
        if (!strcmp(items[i].gpu, "-1")) use_gpu = "False";
        else if (strlen(items[i].gpu) <= 1) pb_apply_env(b, items[i].env);
        for (int a = 0; a < na; a++)
            for (int t = 0; t < nt; t++) {
                struct det_run r = {&items[i], autocasts[a], trainers[t], use_gpu, ts->key,
                                    ts->has_colon ? ts->value : ts->raw};
                TRY(det_trainer(b, &r));
            }
    }
    return TIPC_OK;
}
