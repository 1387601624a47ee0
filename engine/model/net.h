/* net.h: a fixed feed-forward network as a flat list of tagged layers over activation slots,
 * with one contiguous parameter buffer (grads and momentum in the same layout), BN running
 * statistics in a second buffer, and activations sized once by the build (plan) pass.
 *
 * Lifecycle: net_init() -> net_add_*() calls (the plan: shapes and offsets only) ->
 * net_alloc() (every buffer, once) -> per step net_forward(), net_loss(), net_zero_grad(),
 * net_backward(), net_sgd_update() (train_step.h names that sequence once) -> net_free(). No allocation after net_alloc(). A batch of n <= N (the planned batch) may be
 * run; slots are packed from their start. All buffers live in the backend's memory.
 * Not here: the MobileNetV3 block table (mobilenet_v3.c), optimisers and I/O. */
#ifndef TIPC_NET_H
#define TIPC_NET_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../backend/backend.h"

enum layer_kind { LAYER_CONV, LAYER_BN, LAYER_ACT, LAYER_POOL, LAYER_LINEAR, LAYER_SCALE, LAYER_ADD,
                  LAYER_DROPOUT, LAYER_KIND_COUNT };

/* An activation tensor (NHWC) in the activation buffer; its gradient is at the same offset
 * in the activation-gradient buffer. Capacity is for the planned batch N. */
struct slot {
    int H, W, C;     /* per image */
    size_t off;      /* offset in acts / dacts */
};

struct layer {
    enum layer_kind kind;
    int in, in2, out;       /* slot ids (in2: second input of SCALE (gate) and ADD) */
    size_t param_off;       /* weight (conv/linear) or gamma (bn); bias/beta follow */
    size_t nparam;          /* floats of parameters of this layer */
    size_t aux_off;         /* BN: save_mean (C) + save_rstd (C); DROPOUT: mask; in acts */
    size_t stat_off;        /* BN: running mean (C) + running var (C), in stats */
    int K, stride, groups;  /* CONV */
    int Co;                 /* CONV/LINEAR output channels */
    bool bias;              /* LINEAR */
    bool kaiming;           /* LINEAR standing in for a 1x1 conv (squeeze-excite): conv init */
    enum act_kind act;      /* ACT */
    float p;                /* DROPOUT */
    float eps, momentum;    /* BN */
    bool acc_in, acc_in2;   /* backward adds into (vs overwrites) the input gradients: set by
                               net_alloc for every consumer but the first in backward order */
    bool fuse_act;          /* BN: also runs the ACT layer after it (set by net_alloc when the
                               backend has the fused op and the BN output feeds only that ACT) */
    bool fused;             /* ACT: run by the BN before it; skipped by the walker */
};

/* Mixed precision policy of a net (precision.h has the design). Zeroed: fp32, no AMP op runs. */
struct amp_policy {
    enum precision prec;     /* activations, activation gradients and conv/linear weights */
    int level;               /* 1 or 2 (--amp_level O1|O2; recorded, both run the same policy) */
    struct loss_scaler ls;   /* used when prec != PREC_FP32 */
};

/* The staged training step's per-step inputs, in the backend's memory (train_graph.c stages them,
 * so a captured step replays with each step's values). */
struct step_scalars {
    float lr;
    uint32_t pad;
    uint64_t dropout_seed;    /* layer i's dropout draws from dropout_seed + i, as the eager step */
};
struct step_inputs {
    const struct step_scalars *sc;
    const int32_t *labels;    /* (n) */
    const uint8_t *images;    /* (n, H, W, 3) */
    float *loss;              /* (1) out: the step's mean loss */
};

struct train_graph;           /* train_graph.c */

struct net {
    struct backend be;
    struct amp_policy amp;  /* set before net_alloc (mobilenet_v3_small_build: cfg->amp) */
    int N;                  /* planned (maximum) batch */
    struct layer *layers; int nlayers; size_t cap_layers;
    struct slot *slots; int nslots; size_t cap_slots;
    size_t nparams, nstats, nacts, nscratch;
    float *params, *grads, *mom; /* (nparams) each, same layout */
    float *stats;           /* (nstats) BN running mean/var */
    float *acts, *dacts;    /* (nacts) each */
    float *scratch;         /* (nscratch) conv im2col / depthwise transposes */
    float *params_lp;       /* AMP: (nparams) params rounded to amp.prec before each forward
                               (conv/linear read their weights here); NULL in fp32 */
    float *amp_state;       /* AMP: the loss scaler's AMP_STATE_FLOATS (precision.h); NULL in fp32 */
    float *probs;           /* (N, num_classes) softmax of the last forward */
    int32_t *labels_dev;    /* labels of the last loss (host on CPU) */
    bool train;             /* BN batch statistics + dropout on */
    uint64_t dropout_seed;  /* advanced by the trainer each step */
    const struct step_inputs *staged; /* set during a staged step (train_step.c): dropout and the
                                         loss's labels come from here, not from the fields above */
    struct train_graph *tg; /* the staged / captured step's slots and graphs, made by its first step */
    /* called by net_backward once layer i's backward is issued (its parameter gradients are final
     * on the host backend; on a GPU, final on the backend's stream): the overlapped allreduce
     * (dp_overlap.c) starts the buckets that became complete. NULL: none. */
    void (*grads_done)(void *ud, int layer);
    void *grads_done_ud;
};

void net_init(struct net *net, struct backend be, int N, int H, int W, int C);
/* Each returns the output slot id. */
int net_add_conv(struct net *net, int in, int Co, int K, int stride, int groups);
int net_add_bn(struct net *net, int in, float eps, float momentum);
int net_add_act(struct net *net, int in, enum act_kind k);
int net_add_pool(struct net *net, int in);                       /* global average -> (1, 1, C) */
int net_add_linear(struct net *net, int in, int Co, bool bias);  /* input (1, 1, C) */
int net_add_scale(struct net *net, int x, int gate);             /* x (H, W, C) * gate (1, 1, C) */
int net_add_add(struct net *net, int a, int b);
int net_add_dropout(struct net *net, int in, float p);
/* Allocates every buffer, with net->amp's policy: a bf16/fp16 net needs backend_has_amp(). */
void net_alloc(struct net *net);
void net_free(struct net *net);

/* Number of floats of slot s for n images. */
size_t net_slot_size(const struct net *net, int s, int n);
int net_num_classes(const struct net *net);
const float *net_logits(const struct net *net); /* (n, K) of the last forward */

/* Normalise host uint8 HWC images ((x/255 - mean)/std, ImageNet stats) into the input slot
 * (through the backend, which moves them to its memory). */
void net_set_input_u8(struct net *net, const uint8_t *images, int n);
void net_forward(struct net *net, int n);
/* Softmax cross-entropy of the last forward; labels must be in range (caller checks). */
float net_loss(struct net *net, const int32_t *labels, int n, float label_smoothing);
/* Parameter gradients = 0 (backward adds into them). */
void net_zero_grad(struct net *net);
/* Backpropagate the loss of the last net_loss(): parameter gradients ADD (net_zero_grad first). */
void net_backward(struct net *net, int n, float label_smoothing);
/* Momentum SGD with weight decay over all parameters (ops.h sgd_step). AMP: the gradients (of
 * the scaled loss) are unscaled first, and the step is skipped (parameters and momentum kept) when
 * one is not finite; the loss scale backs off or grows (net_amp_read tells which happened). */
void net_sgd_update(struct net *net, float lr, float momentum, float weight_decay);
/* The staged step's three ops that read net->staged (ops.h _dev variants): the input from its
 * uint8 images, the loss into its loss slot (nothing waits), the update with its learning rate
 * (skipped when its loss is not finite). net_forward/net_backward read it too while it is set. */
void net_set_input_staged(struct net *net, int n);
void net_loss_staged(struct net *net, int n, float label_smoothing);
void net_sgd_update_staged(struct net *net, float momentum, float weight_decay);
/* Host memory <-> the net's buffers (device memory on a GPU backend), through its backend; both
 * wait for the backend. src/dst are net buffers (params, grads, stats, a slot...). */
void net_to_host(const struct net *net, float *host, const float *src, size_t n);
void net_from_host(struct net *net, float *dst, const float *host, size_t n);
void net_zero(struct net *net, float *dst, size_t n);
/* The net's buffers are host memory (the host may use them in place, e.g. for collectives). */
bool net_host_memory(const struct net *net);
/* Wait until the backend has finished the work issued (a GPU runs asynchronously). */
void net_sync(const struct net *net);
/* AMP: the loss scaler's state on the host (out: AMP_STATE_FLOATS; waits for the backend);
 * false (out untouched) for an fp32 net. Set the scale (e.g. a resumed run's, or a test's
 * forced overflow) with net_amp_set_scale (also resets the good-step count). */
bool net_amp_read(const struct net *net, float *out);
void net_amp_set_scale(struct net *net, float scale);
/* AMP: the whole scaler state from the host (a resumed checkpoint's; AMP_STATE_FLOATS floats). */
void net_amp_write(struct net *net, const float *st);
/* Deterministic PyTorch-style initialisation from a seed (kaiming fan_out convs, N(0,0.01)
 * linear, BN gamma 1 beta 0, running var 1). */
void net_init_params(struct net *net, uint64_t seed);

#endif
