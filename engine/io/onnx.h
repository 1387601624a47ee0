/* onnx.h: write an inference model as ONNX (opset 17, IR 8) with protobuf-c and Debian's
 * onnx.proto (build/gen/onnx.pb-c.h). The graph is NCHW as ONNX expects: input "input"
 * (N, 3, R, R) normalised RGB with a symbolic batch, outputs "probs" (softmax) and "logits"
 * (N, K). Conv+bias (BN folded), Relu/HardSwish/HardSigmoid, GlobalAveragePool, 1x1 Conv for
 * the linear layers, Mul (squeeze-excite), Add, Flatten, Softmax. Written atomically (staged).
 * The model's metadata_props say how to feed it (preprocess.mean/std/scale/resize_short/
 * center_crop/layout/color) and name the label list written beside it (docs/engine.md). */
#ifndef TIPC_ONNX_H
#define TIPC_ONNX_H
#include "../../core/status.h"
#include "../infer/infer.h"

#define ONNX_LABEL_FILE "label_list.txt"

/* Write it to a finished, unpublished staged file (core/staged.h) for staged_publish() (cmd_export.c
 * publishes it with the model and the label list). */
struct staged_file;
enum tipc_status onnx_write(const struct infer_model *m, const char *path, struct staged_file *out);
/* DIR/label_list.txt: one `id name` line per class (PaddleClas's label_list format), to a finished,
 * unpublished staged file. Checkpoints carry no class names, so the names are class_<id>:
 * replace them with the dataset's. */
enum tipc_status onnx_write_labels(const char *dir, int num_classes, struct staged_file *out);

#endif
