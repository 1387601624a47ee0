/* engine_settings.h: the engine's tuning switches (struct backend_settings) as option-table rows,
 * so each engine command (train, bench, infer) reads them once, with its other options, and the
 * engine below never calls getenv. Environment-only rows: the usage lists them under
 * "environment:"; a bad value is a usage error naming the variable (exit 2). */
#ifndef TIPC_ENGINE_SETTINGS_H
#define TIPC_ENGINE_SETTINGS_H
#include "../../core/options.h"
#include "../../engine/backend/backend.h"

/* Rows for a command's `struct opt` table; `s` is a struct backend_settings lvalue. */
#define ENGINE_SETTINGS_OPTS(s)                                                                           \
    {"TIPC_NO_FUSE", NULL, OPT_BOOL, &(s).no_fuse, NULL, 0, 0, "0|1",                                     \
     "1: keep BN and its activation as two ops (A/B checks)", "TIPC_NO_FUSE", NULL},                      \
    {"TIPC_INFER_PER_OP", NULL, OPT_BOOL, &(s).infer_per_op, NULL, 0, 0, "0|1",                           \
     "1: inference walks the layers op by op, not the backend's pass schedule", "TIPC_INFER_PER_OP", NULL}, \
    {"TIPC_CUDA_TF32", NULL, OPT_BOOL, &(s).tf32, NULL, 0, 0, "0|1",                                      \
     "1: TF32 tensor cores in cuBLAS/cuDNN (GPU; default off: fp32 as the CPU)", "TIPC_CUDA_TF32", NULL}, \
    {"TIPC_CUDNN_FIND", NULL, OPT_BOOL, &(s).cudnn_find, NULL, 0, 0, "0|1",                               \
     "1: benchmark cuDNN's convolution algorithms (cudnnFind) instead of its heuristics", "TIPC_CUDNN_FIND", NULL}

#endif
