/* cmd_train.c: `tipc train`, Step6 train.py's flags over a PaddleClas-style YAML recipe.
 * Order of precedence: built-in defaults < -c YAML < -o overrides < flags. Rank and world
 * come from the environment (RANK/WORLD_SIZE or PADDLE_TRAINER_ID/PADDLE_TRAINERS_NUM).
 * The loop itself is engine/model/trainer.c. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmds.h"
#include "engine_flags.h"
#include "../core/check.h"
#include "../core/parse.h"
#include "../engine/backend/backend.h"
#include "../engine/model/trainer.h"
#include "../engine/model/train_log.h"
#include "../engine/dist/comm.h"
#include "../core/banned.h"

const char usage_train[] =
    "usage: tipc train [-c YAML] [-o Section.key=value]... [--data-path DIR] [--epochs N]\n"
    "                  [--batch-size N] [--lr F] [--output-dir DIR] [--pretrained CKPT] [--test-only]\n"
    "                  [--resume CKPT] [--device cpu|gpu] [--use-gpu BOOL] [--amp_level O1|O2]\n"
    "                  [--seed N] [--print-freq N] [--workers N] [--threads N] [--model NAME]\n"
    "                  [--simulate-world W]\n\n"
    "Train mobilenet_v3_small (torchvision layout) with momentum SGD, evaluating top-1/top-5 after\n"
    "each epoch and writing OUTPUT/epoch_N.ckpt, OUTPUT/latest.ckpt and OUTPUT/best.ckpt\n"
    "(atomically; an earlier checkpoint is never destroyed).\n\n"
    "  -c YAML             recipe (Global, Arch, Loss, Optimizer, DataLoader; see\n"
    "                      configs/mobilenet_v3_small/mobilenet_v3_small.yaml); unknown keys are errors\n"
    "  -o Section.key=V    override one recipe key (e.g. -o Optimizer.lr.name=Piecewise)\n"
    "  --data-path DIR     dataset root: DIR/train_list.txt + val_list.txt, or DIR/train/<class>/...\n"
    "                      (missing DIR with DataLoader.synthetic=auto: built-in synthetic images)\n"
    "  --test-only         evaluate --pretrained (or --resume) on the val split and exit\n"
    "  --resume CKPT       continue from a checkpoint (weights, momentum, epoch, step, RNG)\n"
    "  --pretrained CKPT   start from (or, with --test-only, evaluate) these weights\n"
    "  --amp_level O1|O2   accepted; the engine trains in fp32 (AMP not implemented yet) and says so\n"
    "  --threads N         CPU threads (default: all cores)\n"
    "  --simulate-world W  one process does what W data-parallel ranks (no SyncBN) do: each step runs\n"
    "                      rank 0..W-1's micro-batches (their data shards and dropout RNGs), averages\n"
    "                      the gradients, takes one SGD step and keeps rank 0's BN running statistics;\n"
    "                      a reference for `tipc launch` runs (not with --resume or WORLD_SIZE > 1)\n\n"
    "Output: Step6's lines '[Epoch e, iter: i] top1: ..., loss: ..., avg_ips: ... images/sec.' and\n"
    "' * Acc@1 X Acc@5 Y'.\n"
    "Exit codes: 0 ok, 2 usage/recipe, 3 data (unreadable image, label out of range), 5 checkpoint\n"
    "I/O (corrupt, truncated, other model), 6 loss became NaN/inf, 7 feature not built (gpu) or no\n"
    "CUDA device, 70 a CUDA call failed.\n"
    "--device gpu trains on CUDA device TIPC_DEVICE (set by tipc launch), else LOCAL_RANK, else 0;\n"
    "TIPC_CUDA_TF32=1 allows TF32 tensor cores (off: fp32 as the CPU).\n";

static int env_int(const char *a, const char *b, int dflt)
{
    const char *v = getenv(a);
    if (!v || !*v) v = getenv(b);
    int out;
    return v && *v && parse_int(v, 0, 1 << 20, &out) ? out : dflt;
}

struct train_flags {
    const char *config, *data_path, *output_dir, *pretrained, *resume, *device, *amp, *model;
    struct flag_list over;
    int epochs, batch, seed, print_freq, workers, threads, sim_world;
    double lr;
    bool test_only, use_gpu;
    bool s_epochs, s_batch, s_seed, s_pf, s_workers, s_lr, s_use_gpu, s_sim;
};

static enum tipc_status apply_flags(struct train_opts *o, const struct train_flags *f)
{
    struct recipe *r = &o->r;
    recipe_defaults(r);
    if (f->config) TRY(recipe_load(r, f->config));
    for (int i = 0; i < f->over.n; i++) TRY(recipe_override(r, f->over.v[i]));
    if (f->data_path) snprintf(r->data_path, sizeof r->data_path, "%s", f->data_path);
    if (f->output_dir) snprintf(r->output_dir, sizeof r->output_dir, "%s", f->output_dir);
    if (f->s_epochs) r->epochs = f->epochs;
    if (f->s_batch) r->batch_size = r->eval_batch_size = f->batch;
    if (f->s_lr) r->lr = f->lr;
    if (f->s_seed) r->seed = f->seed;
    if (f->s_pf) r->print_freq = f->print_freq;
    if (f->s_workers) r->num_workers = f->workers;
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
    if (f->amp && strcmp(f->amp, "None") && strcmp(f->amp, "O0")) {
        if (strcmp(f->amp, "O1") && strcmp(f->amp, "O2"))
            return error_msg(TIPC_EUSAGE, "train: --amp_level must be O1 or O2, not '%s'", f->amp);
        warning_msg("--amp_level %s: mixed precision is not implemented yet; the %s engine trains in fp32", f->amp,
                    gpu ? "CUDA" : "CPU");
    }
    return TIPC_OK;
}

int cmd_train(int argc, char **argv)
{
    struct train_flags f = {0};
    const struct flag tbl[] = {
        {"--config", "-c", FLAG_STR, &f.config, NULL, 0, 0},
        {"--override", "-o", FLAG_LIST, &f.over, NULL, 0, 0},
        {"--data-path", NULL, FLAG_STR, &f.data_path, NULL, 0, 0},
        {"--epochs", NULL, FLAG_INT, &f.epochs, &f.s_epochs, 0, 100000},
        {"--batch-size", "-b", FLAG_INT, &f.batch, &f.s_batch, 1, 4096},
        {"--lr", NULL, FLAG_DOUBLE, &f.lr, &f.s_lr, 0, 1e300}, /* finite, >= 0: a huge one is a divergence test */
        {"--output-dir", NULL, FLAG_STR, &f.output_dir, NULL, 0, 0},
        {"--pretrained", NULL, FLAG_STR, &f.pretrained, NULL, 0, 0},
        {"--test-only", NULL, FLAG_SWITCH, &f.test_only, NULL, 0, 0},
        {"--resume", NULL, FLAG_STR, &f.resume, NULL, 0, 0},
        {"--device", NULL, FLAG_STR, &f.device, NULL, 0, 0},
        {"--use-gpu", NULL, FLAG_BOOL, &f.use_gpu, &f.s_use_gpu, 0, 0},
        {"--amp_level", NULL, FLAG_STR, &f.amp, NULL, 0, 0},
        {"--seed", NULL, FLAG_INT, &f.seed, &f.s_seed, 0, 2147483647},
        {"--print-freq", NULL, FLAG_INT, &f.print_freq, &f.s_pf, 1, 1000000000},
        {"--workers", "-j", FLAG_INT, &f.workers, &f.s_workers, 0, 256},
        {"--threads", NULL, FLAG_INT, &f.threads, NULL, 0, 1024},
        {"--model", NULL, FLAG_STR, &f.model, NULL, 0, 0},
        {"--simulate-world", NULL, FLAG_INT, &f.sim_world, &f.s_sim, 1, 4096},
        {0},
    };
    bool help;
    enum tipc_status st = flags_parse("train", usage_train, argc, argv, tbl, &help);
    struct train_opts o = {.pretrained = NULL};
    if (st == TIPC_OK && !help) st = apply_flags(&o, &f);
    if (st == TIPC_OK && !help) {
        o.pretrained = f.pretrained, o.resume = f.resume, o.test_only = f.test_only, o.threads = f.threads;
        o.rank = env_int("RANK", "PADDLE_TRAINER_ID", 0);
        o.world = env_int("WORLD_SIZE", "PADDLE_TRAINERS_NUM", 1);
        if (o.world < 1 || o.rank >= o.world) st = error_msg(TIPC_EDIST, "train: rank %d of world %d", o.rank, o.world);
        else if (f.test_only && !f.pretrained && !f.resume)
            st = error_msg(TIPC_EUSAGE, "train: --test-only needs --pretrained=CKPT");
        else if (f.s_sim && (f.sim_world < 1 || f.sim_world > 4096))
            st = error_msg(TIPC_EUSAGE, "train: --simulate-world %d: want 1..4096 ranks", f.sim_world);
        else if (f.s_sim && (o.world > 1 || f.resume))
            st = error_msg(TIPC_EUSAGE, "train: --simulate-world runs in one process: not with %s",
                           o.world > 1 ? "WORLD_SIZE > 1 (tipc launch)" : "--resume");
        o.simulate_world = f.s_sim ? f.sim_world : 0;
    }
    if (st == TIPC_OK && !help) {
        o.local_rank = env_int("LOCAL_RANK", "PADDLE_LOCAL_RANK", o.rank);
        const struct recipe *r = &o.r;
        if (r->fuse_grad_size_in_MB < 0 || r->local_sgd_steps < 1 || r->local_sgd_is_warm_steps < 0 || r->check_every < 0)
            st = error_msg(TIPC_EUSAGE, "train: Distributed.fuse_grad_size_in_MB, local_sgd_is_warm_steps and "
                                        "check_every must be >= 0, local_sgd_steps >= 1");
        o.bucket_bytes = (size_t)r->fuse_grad_size_in_MB << 20;
        o.check_every = r->check_every;
        o.local_sgd_steps = r->use_local_sgd ? r->local_sgd_steps : 0;
        o.local_sgd_warm = r->local_sgd_is_warm_steps;
        if (r->use_hierarchical_allreduce) setenv("TIPC_COMM_HIERARCHICAL", "1", 1); /* read by comm_init */
    }
    if (st == TIPC_OK && !help) {
        backend_cpu_fix_blas(); /* may re-exec this process: join the collectives after it */
        st = backend_open(&o.be, o.r.device, o.rank != 0);
        if (st == TIPC_OK && o.world > 1) st = comm_init_from_env(&o.comm);
        if (st == TIPC_OK && o.world > 1 && o.rank == 0 && o.local_sgd_steps > 0)
            printf("data parallel: LocalSGD, parameters averaged every %d steps after %d warm-up steps\n",
                   o.local_sgd_steps, o.local_sgd_warm);
    }
    if (st == TIPC_OK && !help) {
        backend_cpu_set_threads(o.threads);
        if (o.pretrained && o.resume) warning_msg("--resume given: --pretrained '%s' is ignored", o.pretrained);
        if (o.resume) o.pretrained = NULL;
        /* `tipc run` says where the run's metrics go, this stage's report name and how to show progress */
        struct train_log tl;
        st = train_log_open(&tl, getenv("TIPC_METRICS"), getenv("TIPC_STAGE"),
                            train_log_style(getenv("TIPC_PROGRESS"), o.world), o.rank, o.world);
        o.log = &tl;
        if (st == TIPC_OK) st = train_run(&o);
        train_log_close(&tl);
    }
    comm_free(o.comm);
    backend_close(&o.be);
    flag_list_free(&f.over);
    if (fflush(stdout) && st == TIPC_OK) st = TIPC_EIO;
    return st;
}
