/* recipe.h: the training recipe, PaddleClas-style YAML (Global, Arch, Loss, Optimizer with a
 * nested lr, DataLoader), read with libyaml. Every key is known: an unknown key, a bad value
 * or a wrong type is an error naming file:line; `-o Section.key=value` overrides use the
 * same table (errors name the override). Command-line flags of `tipc train` are applied
 * after both. Defaults (no -c) are the values documented in configs/.../mobilenet_v3_small.yaml. */
#ifndef TIPC_RECIPE_H
#define TIPC_RECIPE_H
#include <stdbool.h>

#include "../../core/status.h"

enum lr_schedule { LR_COSINE, LR_PIECEWISE, LR_CONSTANT };

struct recipe {
    /* Global */
    int epochs;
    char output_dir[512];
    int print_freq;          /* log every N steps */
    long seed;
    char device[16];         /* cpu | gpu */
    bool eval_during_train;
    int save_interval_steps; /* also checkpoint every N optimizer steps (0: at epoch ends only) */
    /* Arch */
    char arch[64];
    int num_classes;
    double width_mult;
    int image_size;
    double dropout;
    /* Loss */
    double label_smoothing;
    /* Optimizer */
    double momentum, weight_decay;
    enum lr_schedule lr_name;
    double lr;               /* base (peak) learning rate */
    double warmup_epochs;    /* linear warmup from warmup_start_lr */
    double warmup_start_lr;
    int decay_epochs[8]; int n_decay; /* piecewise boundaries */
    double gamma;            /* piecewise factor */
    double eta_min;          /* cosine floor */
    /* DataLoader */
    char data_path[512];
    int batch_size, eval_batch_size, num_workers, resize_size;
    bool skip_bad;
    char synthetic[8];       /* "auto" (synthetic when no dataset), "true", "false" */
    int synthetic_size;      /* images per split of the synthetic source */
    /* Distributed (Paddle's DistributedStrategy names; used when world > 1) */
    int fuse_grad_size_in_MB;        /* gradient allreduce bucket; 0 = one call for all */
    bool fuse_all_reduce_ops;        /* false: one bucket per parameter tensor (for comparison) */
    bool overlap_allreduce;          /* start the buckets during backward (false: after it, blocking) */
    bool use_hierarchical_allreduce; /* sum inside each node, then across nodes */
    bool use_local_sgd;              /* LocalSGD: average parameters every local_sgd_steps */
    int local_sgd_steps;             /* steps between parameter averages (>= 1) */
    int local_sgd_is_warm_steps;     /* plain gradient allreduce for the first N steps */
    int check_every;                 /* cross-rank parameter identity check period (0: epoch ends) */
    /* AMP (PaddleClas's AMP section; PaddleOCR/Seg spell three of them Global.use_amp, ...) */
    bool use_amp;                    /* mixed precision on (also --amp_level O1|O2, Global.auto_cast) */
    char amp_level[8];               /* O0 | O1 | O2 ("": O1) */
    char amp_dtype[16];              /* float16 | bfloat16 (fp16, bf16) ("": bf16 on cpu, fp16 on gpu) */
    double scale_loss;               /* fp16's first loss scale (0: 32768) */
    bool use_dynamic_loss_scaling;   /* fp16: back off on overflow, grow after good steps (true) */
    char auto_cast[16];              /* Global.auto_cast: amp (O1) | fp16 (O2) | bf16 | fp32 | null */
};

void recipe_defaults(struct recipe *r);
enum tipc_status recipe_load(struct recipe *r, const char *path);
/* "Section.key=value" */
enum tipc_status recipe_override(struct recipe *r, const char *kv);
/* Learning rate at fractional epoch e (warmup, then the schedule). */
double recipe_lr(const struct recipe *r, double e);
const char *lr_schedule_name(enum lr_schedule s);

#endif
