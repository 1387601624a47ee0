/* ops.h: every op of the engine, its shapes and its contract, documented once.
 *
 * Layout: activations are NHWC (N, H, W, C) float32, so a pointwise conv over a batch is ONE
 * GEMM (N*H*W, Cin) x (Cin, Cout) and the depthwise/elementwise kernels vectorise over C.
 * Weights keep PyTorch's layout ((Cout, Cin/groups, KH, KW) for convs, (O, I) for linear), so
 * checkpoints, fixtures and the ONNX export need no transposes of parameters.
 *
 * Conventions (llm.c): outputs first, then inputs, then a desc with the dims. Forward ops
 * OVERWRITE their outputs. Backward ops ACCUMULATE (+=) into parameter gradients (zeroed once
 * per step) and, for input gradients, do what `acc` says: acc = 1 adds (a tensor used twice,
 * residual or squeeze-excite input, gets the sum of its consumers' gradients), acc = 0
 * overwrites (the first consumer in backward order; saves zeroing and re-reading the buffer).
 * Names: <op>_<forward|backward>_<cpu|cuda>. These are the CPU reference (ops/cpu/<op>.c);
 * the CUDA twins (ops/cuda/<op>.cu) have the same types. `scratch` arguments are caller-owned buffers of the size the *_scratch()
 * helper returns (no malloc inside an op). Ops parallelise with OpenMP internally.
 * Not here: layer bookkeeping (model/net.h) and backend dispatch (backend/backend.h). */
#ifndef TIPC_OPS_H
#define TIPC_OPS_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "desc.h"
#include "precision.h"

/* Kernels run in parallel only above this many elements of work: below it, waking the
 * OpenMP team costs more than it saves (bs=1 inference), and on a loaded machine each
 * parallel region can wait for a descheduled thread. */
#define OMP_MIN_WORK 65536

/* The backend's context: opaque here. NULL on the CPU; the CUDA backend's stream, cuBLAS/cuDNN
 * handles and workspaces (ops/cuda/cuda_common.cuh). Every op takes it first, so the table of
 * a backend (backend/backend.h) points straight at its ops. */
struct backend_ctx;

/* Each op's signature is written once, as a function type `<op>_fn` below; the CPU ops are
 * declared from it here (`<op>_fn <op>_cpu;`), the CUDA twins in ops/cuda/ops_cuda.h, and
 * struct backend_ops holds `<op>_fn *<op>`: the compiler checks all three against one type. */

/* ---- conv2d: grouped conv, square kernel, symmetric padding, no bias --------------------------
 * in (N, H, W, Cin), w (Cout, Cin/groups, K, K), out (N, Ho, Wo, Cout),
 * Ho = (H + 2*pad - K) / stride + 1. Depthwise (groups == Cin == Cout) and pointwise (K == 1,
 * stride 1, pad 0, groups 1) take fast paths; the rest goes through im2col + sgemm. */
size_t conv2d_scratch_floats(const struct conv2d_desc *d); /* scratch the CPU conv needs (0 for 1x1) */
/* scratch: conv2d_scratch_floats() floats (the CPU's im2col; CUDA takes its workspace from cx) */
typedef void conv2d_forward_fn(struct backend_ctx *cx, float *out, const float *in, const float *w,
                               const struct conv2d_desc *d, float *scratch);
/* din may be NULL (first layer: no input gradient needed). */
typedef void conv2d_backward_fn(struct backend_ctx *cx, float *din, float *dw, const float *dout, const float *in,
                                const float *w, const struct conv2d_desc *d, float *scratch, int acc);
conv2d_forward_fn conv2d_forward_cpu;
conv2d_backward_fn conv2d_backward_cpu;

/* ---- batchnorm over the channel axis of (M, C) rows, M = N*H*W --------------------------------
 * train: batch statistics (biased variance for normalising), running stats updated as PyTorch
 * does: running = (1-momentum)*running + momentum*batch (unbiased variance); saves mean and
 * rstd (C) for backward. eval: running statistics, nothing saved or updated. */
typedef void batchnorm_forward_fn(struct backend_ctx *cx, float *out, float *save_mean, float *save_rstd,
                                  const float *in, const float *gamma, const float *beta, float *run_mean,
                                  float *run_var, const struct bn_desc *d);
/* train: uses save_mean/save_rstd; eval: pass the running mean as save_mean (save_rstd unused,
 * computed from run_var). */
typedef void batchnorm_backward_fn(struct backend_ctx *cx, float *din, float *dgamma, float *dbeta,
                                   const float *dout, const float *in, const float *save_mean,
                                   const float *save_rstd, const float *gamma, const float *run_var,
                                   const struct bn_desc *d, int acc);
batchnorm_forward_fn batchnorm_forward_cpu;
batchnorm_backward_fn batchnorm_backward_cpu;

/* ---- elementwise activations over n floats (in place allowed for forward: out == in) ---------- */
typedef void act_forward_fn(struct backend_ctx *cx, float *out, const float *in, size_t n, enum act_kind k);
/* `in` is the forward INPUT (pre-activation). */
typedef void act_backward_fn(struct backend_ctx *cx, float *din, const float *dout, const float *in, size_t n,
                             enum act_kind k, int acc);
act_forward_fn act_forward_cpu;
act_backward_fn act_backward_cpu;

/* BN then an activation in one op: out = act(BN(in)); the BN output is never stored (the
 * backward recomputes it from in), so the pair reads and writes the activations once less
 * each way. beta is needed backward (for the activation's kinks; NULL with ACT_NONE).
 * Optional in a backend (NULL: the net runs the BN and the activation as two ops). */
typedef void batchnorm_act_forward_fn(struct backend_ctx *cx, float *out, float *save_mean, float *save_rstd,
                                      const float *in, const float *gamma, const float *beta, float *run_mean,
                                      float *run_var, const struct bn_desc *d, enum act_kind act);
typedef void batchnorm_act_backward_fn(struct backend_ctx *cx, float *din, float *dgamma, float *dbeta,
                                       const float *dout, const float *in, const float *save_mean,
                                       const float *save_rstd, const float *gamma, const float *beta,
                                       const float *run_var, const struct bn_desc *d, int acc, enum act_kind act);
batchnorm_act_forward_fn batchnorm_act_forward_cpu;
batchnorm_act_backward_fn batchnorm_act_backward_cpu;

/* ---- inference epilogue: y[m, c] = act(y[m, c] + b[c]) over (M, C), in place (BN folded) ---- */
typedef void bias_act_forward_fn(struct backend_ctx *cx, float *y, const float *b, size_t M, int C, enum act_kind k);
bias_act_forward_fn bias_act_forward_cpu;
/* the same on a (rows, cols) block of a matrix with leading dimension ldy, b the block's bias */
void bias_act_block_cpu(float *y, size_t ldy, const float *b, int rows, int cols, enum act_kind k);

/* ---- softmax over rows: (N, K) -> (N, K) ---------------------------------------------------- */
typedef void softmax_forward_fn(struct backend_ctx *cx, float *out, const float *in, int N, int K);
softmax_forward_fn softmax_forward_cpu;

/* ---- input: uint8 RGB HWC pixels (npix, 3) -> float (x/255 - mean)/std, ImageNet mean/std ----
 * in: HOST memory on every backend (the op moves the pixels to the backend's memory) */
typedef void normalize_u8_fn(struct backend_ctx *cx, float *out, const uint8_t *in, size_t npix);
normalize_u8_fn normalize_u8_cpu;

/* ---- add: out = a + b (residual) ------------------------------------------------------------ */
typedef void add_forward_fn(struct backend_ctx *cx, float *out, const float *a, const float *b, size_t n);
typedef void add_backward_fn(struct backend_ctx *cx, float *da, float *db, const float *dout, size_t n, int acc_a,
                             int acc_b);
add_forward_fn add_forward_cpu;
add_backward_fn add_backward_cpu;

/* ---- channel scale (squeeze-excite gate): x (N, P, C), g (N, C), out[n,p,c] = x*g[n,c] -------- */
typedef void scale_forward_fn(struct backend_ctx *cx, float *out, const float *x, const float *g, int N, int P,
                              int C);
typedef void scale_backward_fn(struct backend_ctx *cx, float *dx, float *dg, const float *dout, const float *x,
                               const float *g, int N, int P, int C, int acc_x, int acc_g);
scale_forward_fn scale_forward_cpu;
scale_backward_fn scale_backward_cpu;

/* ---- global average pool: in (N, P, C) -> out (N, C) ------------------------------------------ */
typedef void avgpool_forward_fn(struct backend_ctx *cx, float *out, const float *in, int N, int P, int C);
typedef void avgpool_backward_fn(struct backend_ctx *cx, float *din, const float *dout, int N, int P, int C,
                                 int acc);
avgpool_forward_fn avgpool_forward_cpu;
avgpool_backward_fn avgpool_backward_cpu;

/* ---- linear: in (N, Ci), w (Co, Ci), b (Co) or NULL -> out (N, Co) --------------------------------- */
typedef void linear_forward_fn(struct backend_ctx *cx, float *out, const float *in, const float *w,
                               const float *b, int N, int Ci, int Co);
/* din may be NULL. */
typedef void linear_backward_fn(struct backend_ctx *cx, float *din, float *dw, float *db, const float *dout,
                                const float *in, const float *w, int N, int Ci, int Co, int acc);
linear_forward_fn linear_forward_cpu;
linear_backward_fn linear_backward_cpu;

/* ---- dropout (inverted): mask (n) holds 0 or 1/(1-p), drawn from the 64-bit seed ------------- */
typedef void dropout_forward_fn(struct backend_ctx *cx, float *out, float *mask, const float *in, size_t n,
                                float p, uint64_t seed);
typedef void dropout_backward_fn(struct backend_ctx *cx, float *din, const float *dout, const float *mask,
                                 size_t n, int acc);
dropout_forward_fn dropout_forward_cpu;
dropout_backward_fn dropout_backward_cpu;

/* ---- softmax cross-entropy with label smoothing eps (PyTorch's definition) --------------------
 * logits (N, K), labels (N) in [0, K) in HOST memory; probs (N, K) saved; returns the mean loss
 * on the host (a GPU backend waits for it). loss_i = -(1-eps)*log p[y_i] - eps/K * sum_k log p[k].
 * Labels are checked by the caller. */
typedef float xent_forward_fn(struct backend_ctx *cx, float *probs, const float *logits, const int32_t *labels,
                              int N, int K, float eps);
/* dlogits = (probs - target) / N (loss is the batch mean; overwrites: it starts backward). */
typedef void xent_backward_fn(struct backend_ctx *cx, float *dlogits, const float *probs, const int32_t *labels,
                              int N, int K, float eps);
xent_forward_fn xent_forward_cpu;
xent_backward_fn xent_backward_cpu;

/* ---- momentum SGD with L2 weight decay (PyTorch SGD, dampening 0, not Nesterov) ---------------
 * g' = g + wd*p; m = mu*m + g'; p -= lr*m. */
typedef void sgd_step_fn(struct backend_ctx *cx, float *p, float *m, const float *g, size_t n, float lr, float mu,
                         float wd);
sgd_step_fn sgd_step_cpu;

/* ---- mixed precision (precision.h has the design, the state layout and the scalar rounding) ---
 * `state` is the loss scaler's AMP_STATE_FLOATS floats in the backend's memory. None of these
 * waits for the host: the skip decision travels in state[AMP_FOUND_INF]. Optional in a backend
 * (NULL: only fp32 runs there; backend_has_amp()). */
/* out = in rounded to p (round to nearest even; fp16: inf past 65504); out == in allowed */
typedef void amp_round_fn(struct backend_ctx *cx, float *out, const float *in, size_t n, enum precision p);
/* x = round_p(x * state[AMP_SCALE]): the loss scale applied where backward starts (dlogits) */
typedef void amp_scale_fn(struct backend_ctx *cx, float *x, size_t n, const float *state, enum precision p);
/* g *= 1 / state[AMP_SCALE]; state[AMP_FOUND_INF] = 1 if any g is NaN or +-inf, else 0 (one
 * pass: the fused unscale + finite check) */
typedef void amp_unscale_check_fn(struct backend_ctx *cx, float *g, size_t n, float *state);
/* sgd_step, or nothing at all (p and m untouched) when state[AMP_FOUND_INF] != 0 */
typedef void sgd_step_amp_fn(struct backend_ctx *cx, float *p, float *m, const float *g, size_t n, float lr,
                             float mu, float wd, const float *state);
/* after the update: found_inf -> skipped += 1, good = 0, and (dynamic) scale *= backoff_factor;
 * else good += 1 and (dynamic) at good == growth_interval scale *= growth_factor, good = 0. The
 * scale never grows past 2^24 (nor falls under 2^-24). */
typedef void amp_update_fn(struct backend_ctx *cx, float *state, const struct loss_scaler *ls);
amp_round_fn amp_round_cpu;
amp_scale_fn amp_scale_cpu;
amp_unscale_check_fn amp_unscale_check_cpu;
sgd_step_amp_fn sgd_step_amp_cpu;
amp_update_fn amp_update_cpu;

/* ---- the staged step's variants (model/train_graph.c): what varies per step is READ FROM
 * BACKEND MEMORY, so a step captured once (a CUDA Graph) replays with each step's values, and no
 * value crosses to the host inside the step. Same arithmetic as the ops above, bit for bit.
 *   xent_forward_dev   writes the mean loss to *loss (backend memory) instead of returning it;
 *                      labels in backend memory (xent_backward with such labels: xent_backward_dev)
 *   dropout_forward_dev  the seed is *seed + offset (offset: the layer's index, as net_walk.c adds)
 *   sgd_step_dev       the learning rate is *lr; nothing is updated (p and m kept) when *loss is
 *                      not finite, as net_train_step returns before the update then */
typedef void xent_forward_dev_fn(struct backend_ctx *cx, float *probs, float *loss, const float *logits,
                                 const int32_t *labels, int N, int K, float eps);
typedef void dropout_forward_dev_fn(struct backend_ctx *cx, float *out, float *mask, const float *in, size_t n,
                                    float p, const uint64_t *seed, uint64_t offset);
typedef void sgd_step_dev_fn(struct backend_ctx *cx, float *p, float *m, const float *g, size_t n, const float *lr,
                             float mu, float wd, const float *loss);
xent_forward_dev_fn xent_forward_dev_cpu;
dropout_forward_dev_fn dropout_forward_dev_cpu;
sgd_step_dev_fn sgd_step_dev_cpu;

/* ---- inference in parts: each op's work cut into nparts pieces, part `part` computed by the
 * calling thread alone (no OpenMP inside), so a whole forward pass runs in ONE parallel region
 * with a barrier between layers (engine/infer/infer_cpu.c). Splits are deterministic. */

/* [lo, hi) of n items for part p of np, boundaries on multiples of align (the last part ends at n) */
static inline void part_range(size_t n, int p, int np, size_t align, size_t *lo, size_t *hi)
{
    size_t units = (n + align - 1) / align;
    size_t a = units * (size_t)p / (size_t)np * align, b = units * (size_t)(p + 1) / (size_t)np * align;
    *lo = a < n ? a : n;
    *hi = b < n ? b : n;
}
static inline void part_range_int(int n, int p, int np, int align, int *lo, int *hi)
{
    size_t l, h;
    part_range((size_t)n, p, np, (size_t)align, &l, &h);
    *lo = (int)l, *hi = (int)h;
}
/* How many parts the OpenMP (training) versions of the elementwise ops cut n elements into:
 * one below OMP_MIN_WORK, else about 16K elements each (taken dynamically). */
static inline int omp_parts(size_t n)
{
    if (n < OMP_MIN_WORK) return 1;
    size_t p = n / 16384;
    return p > 4096 ? 4096 : (int)p;
}
/* pointwise, depthwise and direct (few input channels) convs have parts; others do not */
bool conv2d_has_parts(const struct conv2d_desc *d);
/* weights re-laid out once for inference (0 floats: none needed) */
size_t conv2d_packed_floats(const struct conv2d_desc *d);
void conv2d_pack_cpu(float *packed, const float *w, const float *bias, const struct conv2d_desc *d);
/* out = act(conv(in, w) + bias) for one part, w as conv2d_pack_cpu packed it */
void conv2d_bias_act_part_cpu(float *out, const float *in, const float *packed, const float *bias, enum act_kind act,
                              const struct conv2d_desc *d, int part, int nparts);
/* pointwise and direct convs as a GEMM (conv2d_pw.c): weights (Co, Ci, K, K) packed in 16-column
 * panels with the bias (NULL: zero) after them; out rows [r0, r1) x columns [c0, c1) (c0 a multiple
 * of 16) = act(in . w^T + bias) (pointwise, K = 1); or npix pixels of one output row whose K x K
 * patches lie inside the input, the first at `in`, the next `step` floats on, into out (all
 * columns) (a direct conv on an input W pixels wide) */
size_t pwconv_packed_floats(int Kt, int Co);
void pwconv_pack_cpu(float *packed, const float *w, const float *bias, int K, int Ci, int Co);
void pwconv_bias_act_cpu(float *out, const float *in, const float *packed, enum act_kind act, int Ci, int Co,
                         int r0, int r1, int c0, int c1);
void pwconv_patches_cpu(float *out, const float *in, size_t step, int npix, const float *packed, enum act_kind act,
                        int K, int Ci, int W, int Co);
/* out = act(in w^T + b), output features split; b required */
void linear_act_part_cpu(float *out, const float *in, const float *w, const float *b, enum act_kind act, int N,
                         int Ci, int Co, int part, int nparts);
void avgpool_forward_part_cpu(float *out, const float *in, int N, int P, int C, int part, int nparts);
void scale_forward_part_cpu(float *out, const float *x, const float *g, int N, int P, int C, int part, int nparts);
void add_forward_part_cpu(float *out, const float *a, const float *b, size_t n, int part, int nparts);
void act_forward_part_cpu(float *out, const float *in, size_t n, enum act_kind k, int part, int nparts);
void softmax_forward_part_cpu(float *out, const float *in, int N, int K, int part, int nparts);
void normalize_u8_part_cpu(float *out, const uint8_t *in, size_t npix, int part, int nparts);

#endif
