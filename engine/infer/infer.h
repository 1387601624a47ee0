/* infer.h: the inference model: a forward-only graph with BN folded into the convs (conv +
 * bias + activation fused), dropout removed, a trailing softmax, and activation memory reused
 * by liveness. Built from a trained net (export) or loaded from DIR/inference.tipc without
 * any YAML; ops run through struct backend_ops. Not here: ONNX (io/onnx.c), the CLI. */
#ifndef TIPC_INFER_H
#define TIPC_INFER_H
#include <stddef.h>
#include <stdint.h>

#include "../backend/backend.h"
#include "../model/net.h"

enum infer_kind { INF_CONV, INF_LINEAR, INF_ACT, INF_POOL, INF_SCALE, INF_ADD, INF_SOFTMAX, INF_KIND_COUNT };

/* Stored as is in inference.tipc (fixed-size fields). */
struct infer_layer {
    int32_t kind, in, in2, out;      /* slot ids */
    int32_t K, stride, groups, Co;   /* CONV; LINEAR uses Co */
    int32_t act, pad_;               /* fused activation (enum act_kind) */
    uint64_t w_off, b_off;           /* into weights; every conv/linear has a bias */
};
struct infer_slot { int32_t H, W, C; };

struct infer_model {
    struct backend be;
    char model[32];                  /* "mobilenet_v3_small" */
    int32_t num_classes, resolution;
    float width_mult;
    struct infer_layer *layers; int nlayers;
    struct infer_slot *slots; int nslots;
    int logits_slot, probs_slot;
    float *weights; size_t nweights;
    /* runtime, after infer_plan(): */
    int N;                           /* planned batch */
    size_t *slot_off;                /* (nslots) offsets in acts, shared by liveness */
    float *acts, *scratch; size_t nacts, nscratch;
    float *wdev;                     /* weights in the backend's memory (== weights on the CPU) */
    enum precision prec;             /* infer_set_precision (not stored: a run-time choice) */
    /* the CPU backend's schedule (infer_cpu.c; released through the backend's infer_release): */
    float *packed; size_t *pack_off; /* per-layer re-laid-out conv weights */
    struct infer_team *team;         /* helper threads of the pass schedule */
    /* the backend's own 16-bit pass (backend_ops.infer_precision; CUDA: infer_cuda.c), made by
     * infer_set_precision; NULL: none, bf16/fp16 passes go op by op on rounded fp32 */
    void *lp_weights, *lp_acts;      /* 16-bit weights (converted once) and activations */
};

/* Fold a (trained) net into an inference model planned for batches up to N. */
void infer_from_net(struct infer_model *m, const struct net *net, int N);
/* Size and allocate activations for batches up to N (called by the constructors). */
void infer_plan(struct infer_model *m, int N);
void infer_free(struct infer_model *m);
/* Run the model on another backend from now on (its buffers are re-made there; same batch;
 * nothing to do when it is the same backend). */
void infer_move(struct infer_model *m, struct backend be);


/* Both check the weights first (infer_weights_finite): a non-finite one is TIPC_ENUMERIC, nothing
 * written. */
enum tipc_status infer_save(const struct infer_model *m, const char *path);
/* Write it to a finished, unpublished staged file (core/staged.h) for staged_publish(). */
struct staged_file;
enum tipc_status infer_write(const struct infer_model *m, const char *path, struct staged_file *out);
/* Load and validate every index and offset; errors name the file. */
enum tipc_status infer_load(struct infer_model *m, const char *path, int N, struct backend be);

/* Run in p from now on (tipc infer --precision): conv/linear weights are rounded to p (biases,
 * the folded BN shifts, stay fp32), the input and every layer's output are rounded to p, products
 * accumulate in fp32 and the softmax is fp32: the values a bf16/fp16 model computes
 * (engine/ops/precision.h). Passes then go op by op through the backend (no CPU pass schedule),
 * or, on a backend with its own 16-bit pass (CUDA), run on 16-bit activations and weights with
 * fp32 accumulation and fp32 logits (a warning and op by op when it cannot make one).
 * Call before the first pass; fp32 is the default. Needs backend_has_amp() for bf16/fp16. */
void infer_set_precision(struct infer_model *m, enum precision p);
/* Host uint8 HWC images, normalised into the input slot (the backend's schedule may do it its own way). */
void infer_set_input_u8(struct infer_model *m, const uint8_t *images, int n);
/* Host float NHWC, already normalised, copied into the input slot. */
void infer_set_input_f32(struct infer_model *m, const float *nhwc, int n);
/* Run a pass: the backend's own schedule when it has one, else layer by layer through its ops. */
void infer_forward(struct infer_model *m, int n);
/* Wait until the backend has finished the work issued (a GPU runs asynchronously). */
void infer_sync(const struct infer_model *m);
/* the conv of layer l at batch n */
struct conv2d_desc infer_conv_desc(const struct infer_model *m, const struct infer_layer *l, int n);
/* layer i alone, op by op through the backend */
void infer_layer_forward(struct infer_model *m, int i, int n);
/* part p of np of layer i on the calling thread: the unit of the CPU backend's pass schedule
 * (infer_cpu.c, infer_forward_cpu in backend/backend.h) */
void infer_layer_part_cpu(struct infer_model *m, int i, int n, int p, int np);
/* In the backend's memory (device pointers on the GPU): */
const float *infer_output(const struct infer_model *m); /* (n, K) probabilities */
const float *infer_logits(const struct infer_model *m); /* (n, K) */
/* "Finite or fail" (engine/model/finite.h). infer_weights_finite: every weight and bias; false with
 * `what` naming the first bad one ("layer 3 (conv) bias [7] = nan"). infer_check_finite: that, then
 * a pass on a plain mid-gray image whose logits and probabilities must be finite too (weights
 * finite but so large that every input overflows, as a diverged training leaves them): call
 * before the first pass you time (it is a pass). infer_outputs_finite: the first non-finite value
 * of n images' K outputs, -1 when all are finite. */
bool infer_weights_finite(const struct infer_model *m, char *what, size_t n);
bool infer_check_finite(struct infer_model *m, char *what, size_t n);
long infer_outputs_finite(const float *out, int n, int K);
/* (n, K) probabilities / logits copied to host memory (waits for the backend). */
void infer_output_host(const struct infer_model *m, float *probs, int n);
void infer_logits_host(const struct infer_model *m, float *logits, int n);

#endif
