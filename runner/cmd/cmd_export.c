/* cmd_export.c: `tipc export`, Step6 tools/export_model.py's flags: a training checkpoint in,
 * DIR/inference.tipc (BN folded, no optimizer state, graph + weights, no YAML needed) and
 * DIR/inference.onnx out. The folding is engine/infer, the ONNX writer engine/io/onnx.c. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "../cmds.h"
#include "../../core/check.h"
#include "../../core/staged.h"
#include "../../core/fs.h"
#include "../../core/options.h"
#include "../../engine/infer/infer.h"
#include "../../engine/io/checkpoint.h"
#include "../../engine/io/onnx.h"
#include "../../engine/model/mobilenet_v3.h"
#include "../../core/banned.h"

static const char about[] =
    "Fold a training checkpoint into an inference model: BN folded into the convs, dropout\n"
    "removed, a trailing softmax, no optimizer state. Writes DIR/inference.tipc (read by\n"
    "`tipc infer --model-dir DIR`, no YAML needed) and DIR/inference.onnx (opset 17; input\n"
    "'input' (N,3,R,R) normalised RGB, outputs 'probs' and 'logits').\n";
static const char footer[] =
    "Exit codes: 0 ok, 2 usage, 5 checkpoint unreadable/corrupt/other model or output not writable,\n"
    "6 the model is not finite (a NaN or inf weight, or outputs that overflow on a plain image).\n";

int cmd_export(int argc, char **argv)
{
    const char *model = "mobilenet_v3_small", *ckpt = NULL, *dir = NULL, *device = "cpu";
    int img = 0, classes = 0;
    const struct opt opts[] = {
        {"--pretrained", NULL, OPT_STR, &ckpt, NULL, 0, 0, "CKPT", "the training checkpoint (required)", NULL, NULL},
        {"--save-inference-dir", NULL, OPT_STR, &dir, NULL, 0, 0, "DIR", "where to write the model (required)", NULL, NULL},
        {"--model", NULL, OPT_STR, &model, NULL, 0, 0, "NAME", "mobilenet_v3_small (the only one)", NULL, NULL},
        {"--img-size", NULL, OPT_INT, &img, NULL, 32, 2048, "R", "input resolution of the exported graph (default: the checkpoint's)", NULL, NULL},
        {"--num-classes", NULL, OPT_INT, &classes, NULL, 1, 100000, "K", "must match the checkpoint when given", NULL, NULL},
        {"--device", NULL, OPT_STR, &device, NULL, 0, 0, "cpu|gpu", "where to fold", NULL, NULL},
        {0},
    };
    const struct opt_cmd cmd = {.name = "export", .synopsis = "--pretrained CKPT --save-inference-dir DIR [options]",
                                .about = about, .opts = opts, .footer = footer};
    struct opt_result r;
    TRY(opt_parse(&cmd, argc, argv, NULL, &r));
    if (r.help) return TIPC_OK;
    if (strcmp(model, "mobilenet_v3_small"))
        return error_msg(TIPC_EUSAGE, "export: unknown model '%s' (only mobilenet_v3_small)", model);
    if (!ckpt || !dir) {
        error_msg(TIPC_EUSAGE, "export: --pretrained and --save-inference-dir are required");
        return opt_usage_error(&cmd);
    }
    struct ckpt_meta meta;
    TRY(ckpt_read_meta(ckpt, &meta));
    if (strcmp(meta.model, "mobilenet_v3_small"))
        return error_msg(TIPC_EIO, "checkpoint '%s' is of model '%s', not '%s'", ckpt, meta.model, model);
    if (classes && classes != meta.num_classes)
        return error_msg(TIPC_EUSAGE, "export: --num-classes %d but checkpoint '%s' has %d classes", classes, ckpt,
                         meta.num_classes);
    if (img && img < 32) return error_msg(TIPC_EUSAGE, "export: --img-size must be >= 32");
    struct mbv3_config cfg = {.num_classes = meta.num_classes, .width_mult = meta.width_mult,
                              .resolution = img ? img : meta.resolution, .dropout = 0.0f};
    struct net net;
    struct backend cpu;
    backend_open(&cpu, "cpu", 1, NULL); /* export folds and writes on the host */
    mobilenet_v3_small_build(&net, &cfg, 1, cpu);
    enum tipc_status st = ckpt_load(ckpt, &meta, &net, false);
    struct infer_model m = {0};
    if (st == TIPC_OK) {
        infer_from_net(&m, &net, 1);
        snprintf(m.model, sizeof m.model, "%s", "mobilenet_v3_small");
        m.width_mult = meta.width_mult;
        char what[200];   /* finite weights can still overflow on every input (a diverged training) */
        if (!infer_check_finite(&m, what, sizeof what)) {
            st = error_msg(TIPC_ENUMERIC, "export: not exporting '%s' (epoch %d, global step %lld): %s", ckpt,
                           meta.epoch, (long long)meta.step, what);
            error_hint("the training that wrote it diverged: train again with a lower learning rate");
        }
    }
    if (st == TIPC_OK) st = mkdir_p(dir);
    if (st == TIPC_OK) {
        /* the pair is published as a unit: both written and synced first, then renamed together,
         * so DIR never holds a new inference.tipc beside an old inference.onnx */
        char *p = xasprintf("%s/inference.tipc", dir), *q = xasprintf("%s/inference.onnx", dir);
        struct staged_file set[3]; /* and the label list the ONNX model names */
        st = infer_write(&m, p, &set[0]);
        if (st == TIPC_OK && (st = onnx_write(&m, q, &set[1])) != TIPC_OK) staged_abort(&set[0]);
        if (st == TIPC_OK && (st = onnx_write_labels(dir, m.num_classes, &set[2])) != TIPC_OK)
            staged_abort(&set[0]), staged_abort(&set[1]);
        if (st == TIPC_OK) st = staged_publish(set, 3);
        free(p);
        free(q);
    }
    if (st == TIPC_OK) printf("inference model has been saved into %s\n", dir);
    infer_free(&m);
    net_free(&net);
    if (fflush(stdout) && st == TIPC_OK) st = TIPC_EIO;
    return st;
}
