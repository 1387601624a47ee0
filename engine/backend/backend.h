/* backend.h: struct backend_ops, the one place where CPU vs CUDA is chosen (ggml's backend
 * vtable, nccl-tests' struct testColl). The model (net.h) and the inference graph (infer.h) call
 * ops only through it; nothing above them sees a backend's table. Each op entry has the type of
 * the op of the same name in ops/ops.h (backend context first), so a backend's table points
 * straight at its kernels: `.conv2d_forward = conv2d_forward_cpu`. Buffers passed in live in the
 * backend's memory (alloc/upload/download move them). Besides the ops, a backend may bring its
 * own pass-level inference schedule (infer_* entries). Not here: which ops exist (ops.h). */
#ifndef TIPC_BACKEND_H
#define TIPC_BACKEND_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../ops/ops.h"
#include "../../core/status.h"

struct infer_model; /* engine/infer/infer.h */

/* One piece of a staged step's inputs: bytes from host src to offset off of the slot. */
struct stage_part {
    size_t off;
    const void *src;
    size_t bytes;
};

struct backend_ops {
    const char *name;  /* "cpu", "cuda" */
    bool host_memory;  /* buffers are host memory: the host may read and write them in place (no
                          copies through download/upload are needed) */
    bool graphs;       /* backend_graph_* capture and replay work */
    /* memory */
    float *(*alloc)(struct backend_ctx *cx, size_t nfloats);                 /* zeroed */
    void (*free)(struct backend_ctx *cx, float *p);
    void (*zero)(struct backend_ctx *cx, float *p, size_t nfloats);
    void (*upload)(struct backend_ctx *cx, float *dst, const float *host, size_t nfloats);
    void (*download)(struct backend_ctx *cx, float *host, const float *src, size_t nfloats);
    void (*sync)(struct backend_ctx *cx);
    /* ops (ops.h) */
    conv2d_forward_fn *conv2d_forward;
    conv2d_backward_fn *conv2d_backward;
    batchnorm_forward_fn *batchnorm_forward;
    batchnorm_backward_fn *batchnorm_backward;
    batchnorm_act_forward_fn *batchnorm_act_forward;   /* optional */
    batchnorm_act_backward_fn *batchnorm_act_backward; /* optional */
    act_forward_fn *act_forward;
    act_backward_fn *act_backward;
    bias_act_forward_fn *bias_act_forward;
    softmax_forward_fn *softmax_forward;
    normalize_u8_fn *normalize_u8;
    add_forward_fn *add_forward;
    add_backward_fn *add_backward;
    scale_forward_fn *scale_forward;
    scale_backward_fn *scale_backward;
    avgpool_forward_fn *avgpool_forward;
    avgpool_backward_fn *avgpool_backward;
    linear_forward_fn *linear_forward;
    linear_backward_fn *linear_backward;
    dropout_forward_fn *dropout_forward;
    dropout_backward_fn *dropout_backward;
    xent_forward_fn *xent_forward;
    xent_backward_fn *xent_backward;
    sgd_step_fn *sgd_step;
    /* mixed precision (optional as a set: all five, or none and the backend runs fp32 only) */
    amp_round_fn *amp_round;
    amp_scale_fn *amp_scale;
    amp_unscale_check_fn *amp_unscale_check;
    sgd_step_amp_fn *sgd_step_amp;
    amp_update_fn *amp_update;
    /* The staged training step (model/train_graph.c; the _dev variants of ops.h): per-step values
     * read from backend memory, so a captured step replays with new ones. */
    normalize_u8_fn *normalize_u8_dev;         /* pixels in backend memory */
    xent_forward_dev_fn *xent_forward_dev;
    xent_backward_fn *xent_backward_dev;       /* labels in backend memory */
    dropout_forward_dev_fn *dropout_forward_dev;
    sgd_step_dev_fn *sgd_step_dev;
    /* Staging slot k (0 or 1) of that step: copy the parts (host memory) into dst (backend memory,
     * the slot's block) at their offsets. CUDA: the host waits only until slot k's previous copy
     * has read its pinned twin, fills the twin, and copies it on a side stream once the work that
     * last read slot k is done (stage_release's event); the compute stream waits for the copy.
     * CPU: plain copies; stage_release does nothing. */
    void (*stage_put)(struct backend_ctx *cx, int k, void *dst, const struct stage_part *parts, int nparts);
    /* the work queued so far is all that reads slot k (its next stage_put may overwrite it after) */
    void (*stage_release)(struct backend_ctx *cx, int k);
    /* The backend's own inference schedule (optional; NULL: infer.c runs the graph layer by layer
     * through the ops above). infer_input_u8 normalises host images into the input slot,
     * infer_forward runs a pass, infer_release frees what the schedule made for the model. */
    void (*infer_input_u8)(struct backend_ctx *cx, struct infer_model *m, const uint8_t *images, int n);
    void (*infer_forward)(struct backend_ctx *cx, struct infer_model *m, int n);
    void (*infer_release)(struct backend_ctx *cx, struct infer_model *m);
    /* Prepare m's passes for precision p (16-bit weights made once...; NULL: fp32 only). Called by
     * infer_set_precision, which records p in m on success. */
    enum tipc_status (*infer_precision)(struct backend_ctx *cx, struct infer_model *m, enum precision p);
};

/* The engine's tuning switches. A command reads them once, from its option table (environment-only
 * rows: TIPC_NO_FUSE, TIPC_INFER_PER_OP, TIPC_CUDA_TF32, TIPC_CUDNN_FIND, TIPC_CPU_ISA; see
 * runner/cmd/engine_settings.h), and hands them to backend_open; nothing in engine/ reads them itself.
 * All zero is the default behaviour. */
struct backend_settings {
    bool no_fuse;       /* the model keeps BN and its activation as two ops (A/B checks) */
    bool infer_per_op;  /* inference walks the layers op by op, not the backend's own schedule */
    bool tf32;          /* CUDA: TF32 tensor cores in cuBLAS/cuDNN */
    bool cudnn_find;    /* CUDA: cudnnFind (benchmark the algorithms) instead of the heuristics */
    int cpu_isa;        /* enum cpu_isa (ops/cpu_isa.h): the CPU kernels' level; 0 = auto (the best
                           this CPU runs). backend_open selects it, for either device (the data
                           pipeline's resampler runs on the CPU too) */
};

/* An OPT_FN parser (core/options.h) for TIPC_CPU_ISA: auto|v2|v3|v4 (x86-64-vN, neon) into an
 * int * (enum cpu_isa). Whether this CPU runs it is checked by backend_open. */
struct opt;
enum tipc_status backend_cpu_isa_opt(const struct opt *o, const char *value, void *dst);

/* A backend in use: its ops, its context (cuDNN handles, streams...; NULL on the CPU) and the
 * settings it was opened with. */
struct backend {
    const struct backend_ops *ops;
    struct backend_ctx *ctx;
    struct backend_settings set;
};

extern const struct backend_ops backend_cpu_ops;
/* The CPU backend's inference schedule (engine/infer/infer_cpu.c: layers in parts claimed by a
 * thread team). */
void infer_input_u8_cpu(struct backend_ctx *cx, struct infer_model *m, const uint8_t *images, int n);
void infer_forward_cpu(struct backend_ctx *cx, struct infer_model *m, int n);
void infer_release_cpu(struct backend_ctx *cx, struct infer_model *m);

#ifdef TIPC_HAVE_CUDA
/* The CUDA backend's inference schedule (engine/infer/infer_cuda.c): fp32 layer by layer through
 * the ops; fp16 / bf16 on 16-bit activations and weights with fp32 accumulation. */
void infer_forward_cuda(struct backend_ctx *cx, struct infer_model *m, int n);
void infer_release_cuda(struct backend_ctx *cx, struct infer_model *m);
enum tipc_status infer_precision_cuda(struct backend_ctx *cx, struct infer_model *m, enum precision p);
#endif

/* Set the CPU thread count (OpenMP and OpenBLAS); threads <= 0 keeps the default. */
void backend_cpu_set_threads(int threads);

/* OpenBLAS picks its kernels once, when it loads, from OPENBLAS_CORETYPE or CPU detection;
 * in some VMs detection falls back to the SSE3 "Prescott" kernels (3x slower sgemm here).
 * When that happened on a CPU with AVX2+FMA and the variable is unset, set
 * OPENBLAS_CORETYPE=Haswell; likewise GOMP_SPINCOUNT=10000 when neither it nor
 * OMP_WAIT_POLICY is set (libgomp's long default spin is pathological on a loaded machine).
 * Both are read only at start-up, so this re-executes the process once (/proc/self/exe, same
 * argv, TIPC_BLAS_REEXEC=1 marks it). Call it first thing in an engine command; it returns
 * normally when nothing needs doing or exec fails. */
void backend_cpu_fix_blas(void);
/* A forced CPU kernel level (settings cpu_isa, TIPC_CPU_ISA) also runs OpenBLAS's kernels of that
 * level (cpu_isa_blas_core: v3 runs Haswell's, as an AVX2 machine would) when OPENBLAS_CORETYPE is
 * unset: like backend_cpu_fix_blas, this re-executes the process once to set it. backend_open
 * calls it (commands call backend_open right after backend_cpu_fix_blas, before any collective). */
void backend_cpu_blas_for_level(int cpu_isa);
/* "x86-64-v3 (avx2, fma), OpenBLAS Haswell": the CPU kernels running and OpenBLAS's */
void backend_cpu_describe(char *buf, size_t n);

/* The backend has the mixed precision ops (struct backend_ops amp_*): bf16/fp16 nets run there. */
bool backend_has_amp(const struct backend *b);

/* Open the backend for a device name: "cpu", or "gpu" / "cuda" (the CUDA backend on
 * backend_device_from_env()'s device, described on stdout unless quiet), with settings `set`
 * (NULL: all off), the CPU kernels' level selected (TIPC_EUSAGE when this CPU cannot run a forced
 * one; backend_cpu_blas_for_level may re-execute the process first) and, on the CPU unless quiet,
 * named on stdout (`cpu kernels: x86-64-v3 (avx2, fma), OpenBLAS Haswell`).
 * GPU: TIPC_ENOTBUILT (exit 7) with a message saying why when this tipc was built without CUDA
 * ("rebuild with USE_CUDA=1") or the machine has no usable device; TIPC_EUSAGE for another name.
 * backend_close() releases what backend_open() made (a zeroed backend is fine). */
enum tipc_status backend_open(struct backend *b, const char *device, int quiet, const struct backend_settings *set);
void backend_close(struct backend *b);
/* The CUDA device of this process: TIPC_DEVICE (set by `tipc launch` from --gpus), else
 * FLAGS_selected_gpus, else the local rank another launcher gives (LOCAL_RANK, SLURM_LOCALID,
 * OMPI_COMM_WORLD_LOCAL_RANK, MPI_LOCALRANKID), else 0; indexes the devices CUDA_VISIBLE_DEVICES shows. */
int backend_device_from_env(void);
/* CUDA devices this process can use (0 in a build without CUDA or without a device): `tipc launch
 * --nproc_per_node=auto` starts one rank per device. */
int backend_gpu_count(void);

/* The CUDA backend (backend_cuda.c): ctx is its struct backend_ctx (stream, cuBLAS / cuDNN handles,
 * workspaces; engine/ops/cuda). Every CUDA, cuDNN and cuBLAS call inside an op is checked: a
 * failure prints `file:line: CALL failed: MESSAGE (library)` and exits 70 (TIPC_EINTERNAL)
 * through the die routine. In builds without CUDA, backend_cuda_init() returns TIPC_ENOTBUILT. */
enum tipc_status backend_cuda_init(struct backend *b, int device, const struct backend_settings *set);
void backend_cuda_free(struct backend *b);
/* CUDA Graphs (cuda_graph_* in ops/cuda/ops_cuda.h): capture the ops issued between begin and
 * end once (after a warm-up pass of the same shapes), replay them with one launch. begin returns
 * false (and end/launch do nothing) on a backend without graphs (ops->graphs false: the CPU). */
bool backend_has_graphs(const struct backend *b);
bool backend_graph_begin(struct backend *b);
void backend_graph_end(struct backend *b);
void backend_graph_launch(struct backend *b);
/* The CUDA stream the backend's ops run on (a cudaStream_t), for work that must order itself
 * after them (comm_async's NCCL buckets); NULL on the CPU. */
void *backend_stream(const struct backend *b);
/* The same with a graph id 0..BACKEND_GRAPHS-1 (backend_graph_end/launch are id 0, inference's;
 * the staged training step uses 1 and 2). end_id does not die when the capture or instantiation
 * fails: it returns false with the reason in why (the caller runs the work op by op instead). */
#define BACKEND_GRAPHS 3
bool backend_graph_end_id(struct backend *b, int id, char *why, size_t n);
void backend_graph_launch_id(struct backend *b, int id);
/* Graph id was captured and may be launched: no workspace it uses has moved since (a later, bigger
 * op grew one). False on a backend without graphs. */
bool backend_graph_valid(const struct backend *b, int id);
/* "cuda:0 (NVIDIA H100 80GB HBM3, sm_90, 132 SMs, 79.1 GiB, TF32 off)" */
void backend_cuda_describe(const struct backend *b, char *buf, size_t n);
#ifdef TIPC_HAVE_CUDA
extern const struct backend_ops backend_cuda_ops;
#endif

#endif
