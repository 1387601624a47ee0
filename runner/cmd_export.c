/* cmd_export.c: `tipc export`, Step6 tools/export_model.py's flags: a training checkpoint in,
 * DIR/inference.tipc (BN folded, no optimizer state, graph + weights, no YAML needed) and
 * DIR/inference.onnx out. The folding is engine/infer, the ONNX writer engine/io/onnx.c. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cmds.h"
#include "engine_flags.h"
#include "../core/check.h"
#include "../core/staged.h"
#include "../core/fs.h"
#include "../engine/infer/infer.h"
#include "../engine/io/checkpoint.h"
#include "../engine/io/onnx.h"
#include "../engine/model/mobilenet_v3.h"
#include "../core/banned.h"

const char usage_export[] =
    "usage: tipc export --pretrained CKPT --save-inference-dir DIR [--model mobilenet_v3_small]\n"
    "                   [--img-size R] [--num-classes K] [--device cpu|gpu]\n\n"
    "Fold a training checkpoint into an inference model: BN folded into the convs, dropout\n"
    "removed, a trailing softmax, no optimizer state. Writes DIR/inference.tipc (read by\n"
    "`tipc infer --model-dir DIR`, no YAML needed) and DIR/inference.onnx (opset 17; input\n"
    "'input' (N,3,R,R) normalised RGB, outputs 'probs' and 'logits').\n"
    "  --img-size R      input resolution of the exported graph (default: the checkpoint's)\n"
    "  --num-classes K   must match the checkpoint when given\n"
    "Exit codes: 0 ok, 2 usage, 5 checkpoint unreadable/corrupt/other model or output not writable.\n";

int cmd_export(int argc, char **argv)
{
    const char *model = "mobilenet_v3_small", *ckpt = NULL, *dir = NULL, *device = "cpu";
    int img = 0, classes = 0;
    const struct flag tbl[] = {
        {"--model", NULL, FLAG_STR, &model, NULL, 0, 0},
        {"--pretrained", NULL, FLAG_STR, &ckpt, NULL, 0, 0},
        {"--save-inference-dir", NULL, FLAG_STR, &dir, NULL, 0, 0},
        {"--img-size", NULL, FLAG_INT, &img, NULL, 32, 2048},
        {"--num-classes", NULL, FLAG_INT, &classes, NULL, 1, 100000},
        {"--device", NULL, FLAG_STR, &device, NULL, 0, 0},
        {0},
    };
    bool help;
    TRY(flags_parse("export", usage_export, argc, argv, tbl, &help));
    if (help) return TIPC_OK;
    if (strcmp(model, "mobilenet_v3_small"))
        return error_msg(TIPC_EUSAGE, "export: unknown model '%s' (only mobilenet_v3_small)", model);
    if (!ckpt || !dir) {
        error_msg(TIPC_EUSAGE, "export: --pretrained and --save-inference-dir are required");
        return cmd_usage_error("export");
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
    backend_open(&cpu, "cpu", 1); /* export folds and writes on the host */
    mobilenet_v3_small_build(&net, &cfg, 1, cpu);
    enum tipc_status st = ckpt_load(ckpt, &meta, &net, false);
    struct infer_model m = {0};
    if (st == TIPC_OK) {
        infer_from_net(&m, &net, 1);
        snprintf(m.model, sizeof m.model, "%s", "mobilenet_v3_small");
        m.width_mult = meta.width_mult;
        st = mkdir_p(dir);
    }
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
