/* internal.h: the builders' internals: struct builder and the shared vocabulary (builder.c)
 * that the harness builders use (step6.c for 32-line configs; full.c, clas.c,
 * det.c and seg.c for the 51-line dialects), and those builders, which plan.c calls.
 * Not a public interface. */
#ifndef TIPC_PLAN_IMPL_H
#define TIPC_PLAN_IMPL_H
#include <stdbool.h>
#include <stddef.h>
#include "plan.h"

struct builder {
    struct plan *p;
    const struct tipc_config *cfg;
    size_t cap;
    size_t bytes;               /* total command length so far (PLAN_MAX_BYTES) */
    void **tmp;                 /* allocations freed when the build ends */
    size_t ntmp, tmpcap;
    enum cvd_action cvd;        /* the shell's CUDA_VISIBLE_DEVICES as the original leaves it */
    const char *cvd_value;
    const char *python;         /* ${python} */
    const char *launch;         /* "-m paddle.distributed.launch", or "launch" for our configs */
    bool launched;              /* the train being built goes through b->launch (pb_launcher) */
    bool relayout;              /* the template's klquant_whole_infer view of the config is in use */
    const char *infer_gpu;      /* devices named in inference log names (PaddleOCR f773), NULL: none */
    const char *out_dir;        /* the real output directory; p->log_dir is PLAN_DIR_MARK while building */
    const char *pass_tag;       /* the training pass ("norm_train_gpus_0_autocast_False_nodes_1") or
                                   whole_infer model ("model_1") an inference belongs to: prefixed to an
                                   inference log name an earlier stage already wrote (no overwrite) */
    const char *ctx;            /* the training loop's values ("norm_train gpus=0 autocast=False"), or "" */
    const char *matrix;         /* the next stage's own loop values, appended to ctx in its name */
    int last_train, last_export; /* stage indexes for struct stage.dep, -1 for none */
};

/* Stands for the output directory in commands being built; no config or path holds it. */
#define PLAN_DIR_MARK "\x1dTIPC_OUTPUT_DIR\x1d"
/* A malloc'ed copy of s with every PLAN_DIR_MARK replaced by the real output directory. */
char *pb_real_dir(const struct builder *b, const char *s);
/* The same in place on a malloc'ed word (NULL or without the mark: unchanged). */
void pb_real_word(const struct builder *b, char **w);

#define K(i) (cfg_at(b->cfg, (i))->key)
#define V(i) (cfg_at(b->cfg, (i))->value)
#define LN(i) (cfg_at(b->cfg, (i))->line)

#define FMT(...) ((char *)pb_keep(b, xasprintf(__VA_ARGS__)))
#define SETP(k, v) ((char *)pb_keep(b, cfg_set_param((k), (v))))

/* ---- gpu_list items ------------------------------------------------------------------------ */

struct gpu_item {
    const char *gpu;  /* device part: "-1", "0", "0,1" */
    const char *ips;  /* "" when single node */
    const char *env;  /* CUDA_VISIBLE_DEVICES the original exports, NULL for none */
    int nodes;
};

/* The name parts of the next stages: ctx (a training iteration) and the stage's own values. */
void pb_set_ctx(struct builder *b, const char *ctx);
void pb_set_matrix(struct builder *b, const char *matrix);

/* Register a malloc'ed string to be freed when the build ends; returns it. */
void *pb_keep(struct builder *b, void *s);
/* `[ $x = lit ]` / `[ $x != lit ]` under IFS="|" (false when $x is not exactly one word). */
bool pb_sh_eq(const char *x, const char *lit);
bool pb_sh_ne(const char *x, const char *lit);
/* `echo $x` under IFS="|". */
char *pb_sh_echo(struct builder *b, const char *x);
/* `$(dirname X)` ("" when X is empty: dirname gets no argument and fails). */
const char *pb_dirname(struct builder *b, const char *x);
/* cfg_split whose pieces are freed with the build. */
int pb_split(struct builder *b, const char *s, char sep, char ***out);
enum tipc_status pb_add_stage(struct builder *b, enum stage_kind kind, const char *cmd, int line,
                              const char *log, bool cat);
/* A stage whose status line shows `cmd` but which runs `exec` (PaddleDetection's `timeout 5m CMD > LOG`). */
enum tipc_status pb_add_stage_exec(struct builder *b, enum stage_kind kind, const char *cmd, const char *exec,
                                   int line, const char *log, bool cat);
/* The config entry at the index of the physical line naming to_static_train_benchmark_params. */
const struct cfg_entry *pb_to_static_entry(struct builder *b);
enum tipc_status pb_note(struct builder *b, const char *text, int line);
void pb_apply_env(struct builder *b, const char *env);
void pb_unset_env(struct builder *b);
enum tipc_status pb_parse_gpu(struct builder *b, const char *item, struct gpu_item *g);
enum tipc_status pb_check_trainers(struct builder *b, char **list, int n, const int *key_idx, int nkeys);
/* b->launch, for the train command being built: the next train stage records that it is launched. */
const char *pb_launcher(struct builder *b);
/* "${python} -m paddle.distributed.launch --gpus=.." (or --ips=.. --gpus=..), NULL when single. */
const char *pb_launch_prefix(struct builder *b, const struct gpu_item *g, bool *single);
/* The launcher a training line names itself, as Paddle's configs name paddle.distributed.launch
 * (`torchrun ... tipc train ...`, `srun`, `mpirun`, `python -m paddle.distributed.launch`), or NULL. */
const char *pb_named_launcher(const char *run_train);

enum tipc_status build_step6(struct builder *b, const char *gpuid);
enum tipc_status build_full(struct builder *b, const char *gpuid);
enum tipc_status build_clas(struct builder *b);
enum tipc_status build_det(struct builder *b, const char *gpuid);
enum tipc_status build_seg(struct builder *b, const char *gpuid);

#endif
