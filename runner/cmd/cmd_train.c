/* cmd_train.c: `tipc train`, Step6 train.py's flags over a PaddleClas-style YAML recipe.
 * Order of precedence: built-in defaults < -c YAML < -o overrides < flags. The collectives'
 * knobs (TIPC_COMM_*, TIPC_WATCHDOG) are options read here and passed to comm_init_from_env. Rank and world
 * come from the launcher's environment (engine/dist/rank_env.h: tipc launch, torchrun, Paddle, srun, mpirun,
 * env://).
 * The loop itself is engine/model/trainer.c. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../cmds.h"
#include "../../core/check.h"
#include "../../core/options.h"
#include "../../core/strv.h"
#include "engine_settings.h"
#include "../../core/parse.h"
#include "../../engine/backend/backend.h"
#include "../../engine/io/checkpoint.h"
#include "../../engine/model/trainer.h"
#include "../../engine/model/amp.h"
#include "../../engine/model/train_log.h"
#include "../../engine/dist/comm.h"
#include "../../engine/dist/rank_env.h"
_Static_assert(COMM_SHM_AUTO == 0 && COMM_SHM_OFF == 1 && COMM_SHM_ON == 2, "opt_auto_on_off's values");
#include "../../core/banned.h"

static const char about[] =
    "Train mobilenet_v3_small (torchvision layout) with momentum SGD, evaluating top-1/top-5 after\n"
    "each epoch and writing OUTPUT/epoch_N.ckpt, OUTPUT/latest.ckpt and OUTPUT/best.ckpt\n"
    "(atomically; an earlier checkpoint is never destroyed). Order of precedence: built-in\n"
    "defaults < -c YAML < -o overrides < options.\n";
static const char footer[] =
    "Output: Step6's lines '[Epoch e, iter: i] top1: ..., loss: ..., avg_ips: ... images/sec.' and\n"
    "' * Acc@1 X Acc@5 Y'.\n"
    "Exit codes: 0 ok, 2 usage/recipe, 3 data (unreadable or damaged image, label out of range), 5\n"
    "checkpoint I/O (corrupt, truncated, other model), 6 not finite (a loss, a weight or BN statistic,\n"
    "an eval logit, a checkpoint's value), 7 feature not built (gpu) or no CUDA device, 70 a CUDA\n"
    "call failed.\n"
    "--device gpu trains on CUDA device TIPC_DEVICE (set by tipc launch), else the local rank, else 0.\n"
    "Rank and world come from the launcher that started this process: tipc launch, torchrun,\n"
    "Paddle's launch, srun (one task per rank), mpirun, or RANK/WORLD_SIZE/MASTER_ADDR/MASTER_PORT\n"
    "(docs/distributed.md \"Other launchers\"); a malformed variable is exit 2 naming it.\n";

struct train_flags {
    const char *config, *data_path, *output_dir, *pretrained, *resume, *device, *amp, *precision, *model;
    const char *metrics, *stage, *progress;   /* set by `tipc run` through the environment */
    const char *run_id;                        /* set by `tipc launch` (TIPC_RUN_ID) */
    struct strv over;
    int epochs, batch, seed, print_freq, workers, threads, sim_world, save_steps, restart;
    double lr;
    bool test_only, use_gpu, real_data;
    struct comm_opts comm;
    bool cuda_graph;
    struct backend_settings eng;
    bool s_epochs, s_batch, s_seed, s_pf, s_workers, s_lr, s_use_gpu, s_sim, s_save;
};

static enum tipc_status apply_flags(struct train_opts *o, const struct train_flags *f)
{
    struct recipe *r = &o->r;
    recipe_defaults(r);
    if (f->config) TRY(recipe_load(r, f->config));
    for (size_t i = 0; i < f->over.n; i++) TRY(recipe_override(r, f->over.v[i]));
    if (f->data_path) snprintf(r->data_path, sizeof r->data_path, "%s", f->data_path);
    if (f->output_dir) snprintf(r->output_dir, sizeof r->output_dir, "%s", f->output_dir);
    if (f->s_epochs) r->epochs = f->epochs;
    if (f->s_batch) r->batch_size = r->eval_batch_size = f->batch;
    if (f->s_lr) r->lr = f->lr;
    if (f->s_seed) r->seed = f->seed;
    if (f->s_pf) r->print_freq = f->print_freq;
    if (f->s_workers) r->num_workers = f->workers;
    if (f->s_save) r->save_interval_steps = f->save_steps;
    if (f->device) snprintf(r->device, sizeof r->device, "%s", f->device);
    if (f->s_use_gpu) snprintf(r->device, sizeof r->device, "%s", f->use_gpu ? "gpu" : "cpu");
    if (f->model && strcmp(f->model, r->arch))
        return error_msg(TIPC_EUSAGE, "train: unknown model '%s' (only mobilenet_v3_small)", f->model);
    if (strcmp(r->arch, "mobilenet_v3_small"))
        return error_msg(TIPC_EUSAGE, "train: unknown Arch.name '%s' (only mobilenet_v3_small)", r->arch);
    if (r->epochs < 0 || r->batch_size < 1 || r->eval_batch_size < 1 || r->num_classes < 1 || r->image_size < 32 ||
        r->width_mult <= 0 || r->print_freq < 1 || r->dropout < 0 || r->dropout >= 1 || r->label_smoothing < 0 ||
        r->label_smoothing >= 1)
        return error_msg(TIPC_EUSAGE, "train: epochs >= 0, batch >= 1, classes >= 1, image_size >= 32, "
                                      "0 <= dropout, label_smoothing < 1 required");
    bool gpu = !strcmp(r->device, "gpu") || !strcmp(r->device, "cuda");
    if (!gpu && strcmp(r->device, "cpu"))
        return error_msg(TIPC_EUSAGE, "train: unknown device '%s' (cpu or gpu)", r->device);
    return amp_policy_resolve(&o->amp, "train", f->precision, f->amp, r, gpu);
}

int cmd_train(int argc, char **argv)
{
    struct train_flags f = {.comm = {.timeout_s = 300}, .cuda_graph = true};
    const struct opt opts[] = {
        {"--config", "-c", OPT_STR, &f.config, NULL, 0, 0, "YAML", "recipe (Global, Arch, Loss, Optimizer, DataLoader; see\n"
         "configs/mobilenet_v3_small/mobilenet_v3_small.yaml); unknown keys are errors", NULL, NULL},
        {"--override", "-o", OPT_LIST, &f.over, NULL, 0, 0, "Section.key=V",
         "override one recipe key (e.g. -o Optimizer.lr.name=Piecewise); repeatable", NULL, NULL},
        {"--data-path", NULL, OPT_STR, &f.data_path, NULL, 0, 0, "DIR", "dataset root: DIR/train_list.txt + val_list.txt, or\n"
         "DIR/train/<class>/... (missing DIR with DataLoader.synthetic=auto: built-in\nsynthetic images)", NULL, NULL},
        {"--epochs", NULL, OPT_INT, &f.epochs, &f.s_epochs, 0, 100000, "N", "epochs to train", NULL, NULL},
        {"--batch-size", "-b", OPT_INT, &f.batch, &f.s_batch, 1, 4096, "N", "images per step (and per eval batch)", NULL, NULL},
        {"--lr", NULL, OPT_DOUBLE, &f.lr, &f.s_lr, 0, 1e300, "F", "learning rate (finite, >= 0: a huge one is a divergence test)", NULL, NULL},
        {"--output-dir", NULL, OPT_STR, &f.output_dir, NULL, 0, 0, "DIR", "where checkpoints go", NULL, NULL},
        {"--pretrained", NULL, OPT_STR, &f.pretrained, NULL, 0, 0, "CKPT", "start from (or, with --test-only, evaluate) these weights", NULL, NULL},
        {"--test-only", NULL, OPT_SWITCH, &f.test_only, NULL, 0, 0, NULL, "evaluate --pretrained (or --resume) on the val split and exit", NULL, NULL},
        {"--resume", NULL, OPT_STR, &f.resume, NULL, 0, 0, "CKPT|auto", "continue from a checkpoint (weights, momentum, position in the\n"
         "epoch, RNG); auto: the newest complete one in the output folder\n(none: from the start)", NULL, NULL},
        {"--save-steps", "--save_interval", OPT_INT, &f.save_steps, &f.s_save, 0, 1000000000, "N",
         "also checkpoint every N steps (step_S.ckpt, latest.ckpt; the last two\nstep files are kept); "
         "Global.save_interval_steps; 0: epoch ends only", NULL, NULL},
        {"--device", NULL, OPT_STR, &f.device, NULL, 0, 0, "cpu|gpu", "where to train (default: the recipe's Global.device)", NULL, NULL},
        {"--use-gpu", NULL, OPT_BOOL, &f.use_gpu, &f.s_use_gpu, 0, 0, "BOOL", "the same as --device gpu / cpu", NULL, NULL},
        {"--amp_level", NULL, OPT_STR, &f.amp, NULL, 0, 0, "O1|O2", "mixed precision (O0/None: off): bf16 on the CPU, fp16 on a GPU\n"
         "unless --precision says; also the recipe's AMP.* / Global.auto_cast keys", NULL, NULL},
        {"--precision", NULL, OPT_STR, &f.precision, NULL, 0, 0, "fp32|bf16|fp16", "activations, their gradients and conv/linear weights in\n"
         "this dtype, fp32 master weights (bf16/fp16 imply --amp_level O1);\nfp16 uses dynamic loss scaling (AMP.scale_loss)", NULL, NULL},
        {"--seed", NULL, OPT_INT, &f.seed, &f.s_seed, 0, 2147483647, "N", "random seed (weights, data order, augmentation, dropout)", NULL, NULL},
        {"--print-freq", NULL, OPT_INT, &f.print_freq, &f.s_pf, 1, 1000000000, "N", "a progress line every N steps", NULL, NULL},
        {"--workers", "-j", OPT_INT, &f.workers, &f.s_workers, 0, 256, "N", "data loader threads", NULL, NULL},
        {"--threads", NULL, OPT_INT, &f.threads, NULL, 0, 1024, "N", "CPU threads (default: all cores)", NULL, NULL},
        {"--model", NULL, OPT_STR, &f.model, NULL, 0, 0, "NAME", "mobilenet_v3_small (the only one)", NULL, NULL},
        {"--simulate-world", NULL, OPT_INT, &f.sim_world, &f.s_sim, 1, 4096, "W",
         "one process does what W data-parallel ranks (no SyncBN) do: each step runs\n"
         "rank 0..W-1's micro-batches (their data shards and dropout RNGs), averages\n"
         "the gradients, takes one SGD step and keeps rank 0's BN running statistics;\n"
         "a reference for `tipc launch` runs (not with --resume or WORLD_SIZE > 1)", NULL, NULL},
        {"--cuda-graph", NULL, OPT_FN, &f.cuda_graph, NULL, 0, 0, "on|off",
         "gpu: stage each step's inputs on a side stream and replay the whole step\n"
         "(forward, loss, backward, SGD) from a CUDA Graph captured after a warm-up\n"
         "step (default on; the log's 'training step:' line says which ran and why)",
         "TIPC_CUDA_GRAPH", opt_on_off},
        {"--comm-hierarchical", NULL, OPT_SWITCH, &f.comm.hierarchical, NULL, 0, 0, NULL,
         "two-level allreduce (sum inside each node, then across nodes); also the\n"
         "recipe's Distributed.use_hierarchical_allreduce", "TIPC_COMM_HIERARCHICAL", NULL},
        {"--comm-shm", NULL, OPT_FN, &f.comm.shm, NULL, 0, 0, "auto|on|off",
         "gloo: f32 allreduces of ranks that all run on this host go through shared\n"
         "memory, not TCP (auto: when /dev/shm has room, else TCP with a note)", "TIPC_COMM_SHM", opt_auto_on_off},
        {"--comm-backend", NULL, OPT_STR, &f.comm.backend, NULL, 0, 0, "gloo|nccl",
         "collectives on CPU tensors (gloo, default) or on device buffers (nccl)", "TIPC_COMM_BACKEND", NULL},
        {"--comm-timeout", NULL, OPT_INT, &f.comm.timeout_s, NULL, 1, 86400, "S",
         "a collective that takes longer fails naming the rank (default 300)", "TIPC_COMM_TIMEOUT", NULL},
        {"--watchdog", NULL, OPT_INT, &f.comm.watchdog_s, NULL, 0, 86400, "S",
         "abort the job when a collective is stuck this long (0: the timeout + 5 s)", "TIPC_WATCHDOG", NULL},
        {"--real-data", NULL, OPT_SWITCH, &f.real_data, NULL, 0, 0, NULL,
         "refuse synthetic data (made in memory, or tipc prepare's synthetic default\n"
         "in the data folder): exit 3 (tipc run --real-data sets TIPC_REAL_DATA)", "TIPC_REAL_DATA", NULL},
        {"TIPC_METRICS", NULL, OPT_STR, &f.metrics, NULL, 0, 0, "FILE", "append the training metrics (JSON lines) to FILE (set by tipc run)", "TIPC_METRICS", NULL},
        {"TIPC_STAGE", NULL, OPT_STR, &f.stage, NULL, 0, 0, "NAME", "this stage's name in the run's report (set by tipc run)", "TIPC_STAGE", NULL},
        {"TIPC_RESTART_COUNT", NULL, OPT_INT, &f.restart, NULL, 0, 1000, "N",
         "the attempt's number under `tipc launch --max_restarts` (set by it): above 0,\n"
         "resume from the newest complete checkpoint in the output folder", "TIPC_RESTART_COUNT", NULL},
        {"TIPC_RUN_ID", NULL, OPT_STR, &f.run_id, NULL, 0, 0, "ID",
         "this run's id, written into every checkpoint (set by `tipc launch`, the same for\n"
         "all its restarts, which resume only from checkpoints of this id; default: a new one)",
         "TIPC_RUN_ID", NULL},
        ENGINE_SETTINGS_OPTS(f.eng),
        {"TIPC_PROGRESS", NULL, OPT_STR, &f.progress, NULL, 0, 0, "bar|lines|none",
         "progress display (default: a bar when stderr is a terminal, else lines)", "TIPC_PROGRESS", NULL},
        {0},
    };
    const struct opt_cmd cmd = {.name = "train", .synopsis = "[-c YAML] [-o Section.key=value]... [options]",
                                .about = about, .opts = opts, .footer = footer};
    struct opt_result res;
    enum tipc_status st = opt_parse(&cmd, argc, argv, NULL, &res);
    bool help = res.help;
    struct train_opts o = {.pretrained = NULL};
    if (st == TIPC_OK && !help) st = apply_flags(&o, &f);
    if (st == TIPC_OK && !help) {
        o.pretrained = f.pretrained, o.resume = f.resume, o.test_only = f.test_only, o.threads = f.threads;
        /* rank and world from whichever launcher started this process (rank_env.h): a malformed
         * variable is a usage error naming it, never a silent one-rank job */
        struct rank_env re;
        st = rank_env_read(&re);
        o.rank = re.rank, o.world = re.world, o.local_rank = re.local_rank;
        if (!f.restart && re.restart > 0) f.restart = re.restart;   /* torchrun --max-restarts: resume too */
        o.real_data = f.real_data;
        o.restart = f.restart;
        o.run_id = f.run_id;
        if (f.run_id && (strlen(f.run_id) >= CKPT_RUN_ID_MAX || strspn(f.run_id, "0123456789abcdefghijklmnopqrstuvwxyz"
                                                                       "ABCDEFGHIJKLMNOPQRSTUVWXYZ._-") != strlen(f.run_id)))
            st = error_msg(TIPC_EUSAGE, "train: TIPC_RUN_ID '%s' must be 1..%d letters, digits, '.', '_' or '-'",
                           f.run_id, CKPT_RUN_ID_MAX - 1);
        o.resume_auto = f.restart > 0 || (f.resume && !strcmp(f.resume, "auto"));
        if (f.resume && !strcmp(f.resume, "auto")) o.resume = NULL;
        o.cuda_graph = f.cuda_graph;
        if (st == TIPC_OK && f.test_only && !f.pretrained && !f.resume)
            st = error_msg(TIPC_EUSAGE, "train: --test-only needs --pretrained=CKPT");
        else if (st == TIPC_OK && f.s_sim && (f.sim_world < 1 || f.sim_world > 4096))
            st = error_msg(TIPC_EUSAGE, "train: --simulate-world %d: want 1..4096 ranks", f.sim_world);
        else if (st == TIPC_OK && f.s_sim && (o.world > 1 || f.resume))
            st = o.world > 1 ? error_msg(TIPC_EUSAGE, "train: --simulate-world runs in one process: not with %s=%d (%s)",
                                         re.world_var, o.world, re.launcher)
                             : error_msg(TIPC_EUSAGE, "train: --simulate-world runs in one process: not with --resume");
        o.simulate_world = f.s_sim ? f.sim_world : 0;
    }
    if (st == TIPC_OK && !help) {
        const struct recipe *r = &o.r;
        if (r->fuse_grad_size_in_MB < 0 || r->local_sgd_steps < 1 || r->local_sgd_is_warm_steps < 0 || r->check_every < 0)
            st = error_msg(TIPC_EUSAGE, "train: Distributed.fuse_grad_size_in_MB, local_sgd_is_warm_steps and "
                                        "check_every must be >= 0, local_sgd_steps >= 1");
        o.bucket_bytes = (size_t)r->fuse_grad_size_in_MB << 20;
        o.overlap = r->overlap_allreduce;
        o.per_tensor = !r->fuse_all_reduce_ops;
        o.check_every = r->check_every;
        o.local_sgd_steps = r->use_local_sgd ? r->local_sgd_steps : 0;
        o.local_sgd_warm = r->local_sgd_is_warm_steps;
        if (r->use_hierarchical_allreduce) f.comm.hierarchical = true;
    }
    if (st == TIPC_OK && !help) {
        backend_cpu_fix_blas(); /* may re-exec this process: join the collectives after it */
        st = backend_open(&o.be, o.r.device, o.rank != 0, &f.eng);
        if (st == TIPC_OK) st = amp_policy_check(&o.amp, &o.be, "train");
        if (st == TIPC_OK && o.world > 1) st = comm_init_from_env(&o.comm, &f.comm);
        if (st == TIPC_OK && o.world > 1 && o.rank == 0 && o.local_sgd_steps > 0)
            printf("data parallel: LocalSGD, parameters averaged every %d steps after %d warm-up steps\n",
                   o.local_sgd_steps, o.local_sgd_warm);
    }
    if (st == TIPC_OK && !help) {
        backend_cpu_set_threads(o.threads);
        if (o.pretrained && o.resume) warning_msg("--resume given: --pretrained '%s' is ignored", o.pretrained);
        if (o.resume) o.pretrained = NULL;   /* with resume_auto, a fallback when no checkpoint is found */
        /* `tipc run` says where the run's metrics go, this stage's report name and how to show progress */
        struct train_log tl;
        st = train_log_open(&tl, f.metrics, f.stage, train_log_style(f.progress, o.world), o.rank, o.world);
        train_log_set_comm(&tl, o.comm, o.local_rank);   /* each node's report draws every rank */
        o.log = &tl;
        if (st == TIPC_OK) st = train_run(&o);
        train_log_close(&tl);
    }
    comm_free(o.comm);
    backend_close(&o.be);
    strv_clear(&f.over);
    if (fflush(stdout) && st == TIPC_OK) st = TIPC_EIO;
    return st;
}
