/* trainer.c: see trainer.h. Each step is net_train_step (train_step.h) with the data-parallel
 * strategy of dp.h; here: epochs, data, the LR schedule, logs, eval and checkpoints. Logs follow
 * Step6 train.py's lines so TIPC log scrapers still work. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "mobilenet_v3.h"
#include "resume.h"
#include "source.h"
#include "train_step.h"
#include "amp.h"
#include "trainer.h"
#include "train_log.h"
#include "train_ckpt.h"
#include "finite.h"
#include "../../core/check.h"
#include "../../core/time.h"
#include "../io/binfile.h"
#include "../io/checkpoint.h"
#include "../dist/comm.h"
#include "../../core/banned.h"

/* top-1 / top-5 hits of one batch from host logits (n, K) */
static void topk_hits(const float *logits, const int32_t *y, int n, int K, int *h1, int *h5)
{
    for (int i = 0; i < n; i++) {
        const float *z = logits + (size_t)i * K;
        int rank = 0;
        for (int k = 0; k < K; k++)
            if (z[k] > z[y[i]] || (z[k] == z[y[i]] && k < y[i])) rank++;
        *h1 += rank < 1;
        *h5 += rank < 5;
    }
}

static enum tipc_status check_labels(const struct source *s, const struct batch *b, int K)
{
    for (int i = 0; i < b->n; i++)
        if (b->labels[i] < 0 || b->labels[i] >= K) {
            error_msg(TIPC_EDATA, "'%s': label %d out of range [0, %d) (epoch %d, step %d)", source_describe(s),
                      b->labels[i], K, b->epoch, b->step_in_epoch);
            error_hint("set Arch.class_num (-o Arch.class_num=N) to the number of classes of the data");
            return TIPC_EDATA;
        }
    return TIPC_OK;
}

/* Logits that are NaN or infinite rank nothing: with them every comparison is false and each image
 * would count as a top-1 hit (finite.h). */
static enum tipc_status logits_finite(const float *logits, const struct batch *b, int K, const struct ckpt_meta *m)
{
    long k = first_nonfinite(logits, (size_t)b->n * K);
    if (k < 0) return TIPC_OK;
    error_msg(TIPC_ENUMERIC, "eval: the logits of image %ld of eval batch %d are not finite (class %ld: %g) with the "
              "weights of epoch %d, global step %lld", k / K, b->step_in_epoch, k % K, (double)logits[k], m->epoch,
              (long long)m->step);
    error_hint("the model is broken (a diverged training, or a checkpoint from one): its accuracy means nothing");
    return TIPC_ENUMERIC;
}

static enum tipc_status evaluate(const struct train_opts *o, struct net *net, struct source *val,
                                 const struct ckpt_meta *m, double *acc1, double *acc5)
{
    int K = net_num_classes(net), h1 = 0, h5 = 0, seen = 0;
    bool was = net->train;
    net->train = false;
    float *logits = xmalloc(sizeof(float) * (size_t)net->N * K);
    enum tipc_status st = TIPC_OK;
    for (int s = 0; s < val->steps_per_epoch && st == TIPC_OK; s++) {
        const struct batch *b;
        st = source_next(val, &b);
        if (st == TIPC_OK) st = check_labels(val, b, K);
        if (st != TIPC_OK) break;
        net_set_input_u8(net, b->images, b->n);
        net_forward(net, b->n);
        net_to_host(net, logits, net_logits(net), (size_t)b->n * K);
        if ((st = logits_finite(logits, b, K, m)) != TIPC_OK) break;
        topk_hits(logits, b->labels, b->n, K, &h1, &h5);
        seen += b->n;
    }
    free(logits);
    net->train = was;
    if (st == TIPC_OK && o->comm) { /* every rank evaluated its shard: sum the counts (exact in f32 < 2^24) */
        float c[3] = {(float)h1, (float)h5, (float)seen};
        st = comm_allreduce(o->comm, c, 3, COMM_F32, COMM_SUM);
        h1 = (int)c[0], h5 = (int)c[1], seen = (int)c[2];
    }
    *acc1 = seen ? 100.0 * h1 / seen : 0;
    *acc5 = seen ? 100.0 * h5 / seen : 0;
    return st;
}

/* The run's checkpoint metadata; run id: train_opts.run_id, else a fresh random one. */
static void fill_meta(struct ckpt_meta *m, const struct train_opts *o)
{
    const struct recipe *r = &o->r;
    memset(m, 0, sizeof *m);
    snprintf(m->model, sizeof m->model, "%.31s", r->arch);
    m->num_classes = r->num_classes;
    m->resolution = r->image_size;
    m->width_mult = (float)r->width_mult;
    if (o->run_id && *o->run_id) snprintf(m->run_id, sizeof m->run_id, "%s", o->run_id);
    else random_hex(m->run_id, 8);
}

struct step_stats { double loss, reader, batch; int h1, h5, seen, steps; };

/* The trainer RNG's seed of a rank (data order is the source's; this drives dropout). */
static uint64_t rank_seed(const struct recipe *r, int rank)
{
    return (uint64_t)r->seed * 2654435761u + (uint64_t)rank;
}

/* The data of one optimizer step's micro-batches. world 1: this rank's source (tr[0]) and RNG
 * (m->rng). With --simulate-world W: rank r's shard tr[r] and dropout RNG (rng[r]; rank 0's is
 * m->rng) for each r in rank order (dp.h's simulated strategy combines their gradients). */
struct micro {
    int world;
    struct source *tr;      /* (world) */
    struct rng *rng;        /* (world); [0] unused */
    struct micro_batch *mb; /* (world) this step's */
    int64_t kept[2];        /* the step checkpoints this run keeps (save_step), -1: none */
    struct { double first, lowest; int windows; } trend; /* this run's logged loss windows (learned_check) */
};

static enum tipc_status nan_error(const struct train_opts *o, const struct ckpt_meta *m, int it, double lr, float loss)
{
    error_msg(TIPC_ENUMERIC, "loss is %s at epoch %d, step %d (global step %lld, lr %g)", isnan(loss) ? "NaN" : "inf",
              m->epoch, it, (long long)m->step, lr);
    error_hint("lower the learning rate (--lr); checkpoints in '%s' are from before this epoch", o->r.output_dir);
    return TIPC_ENUMERIC;
}

static enum tipc_status train_epoch(const struct train_opts *o, struct net *net, struct dp *dp, struct micro *mb,
                                    struct ckpt_meta *m, enum step_mode mode)
{
    const struct recipe *r = &o->r;
    int K = net_num_classes(net), spe = mb->tr[0].steps_per_epoch;
    float *logits = xmalloc(sizeof(float) * (size_t)net->N * K);
    struct step_stats ss = {0};
    enum tipc_status st = TIPC_OK;
    double t_end = now_seconds();
    m->steps_per_epoch = spe;
    for (int it = m->step_in_epoch; it < spe && st == TIPC_OK; it++) {
        double lr = recipe_lr(r, m->epoch + (double)it / spe);
        for (int k = 0; k < mb->world && st == TIPC_OK; k++) {
            const struct batch *b;
            if ((st = source_next(&mb->tr[k], &b)) == TIPC_OK && (st = check_labels(&mb->tr[k], b, K)) == TIPC_OK)
                mb->mb[k] = (struct micro_batch){b->images, b->labels, b->n, rng_u64(k ? &mb->rng[k] : &m->rng)};
        }
        if (st != TIPC_OK) break;
        double t_read = now_seconds();
        struct train_step s = {.mode = mode, .mb = mb->mb, .lr = (float)lr, .momentum = (float)r->momentum,
                               .weight_decay = (float)r->weight_decay, .label_smoothing = (float)r->label_smoothing,
                               .step = (long)m->step, .logits_host = logits,
                               .amp_report = ss.steps + 1 == r->print_freq || it == spe - 1};
        if ((st = net_train_step(net, dp, &s)) != TIPC_OK) {
            if (st == TIPC_ENUMERIC) nan_error(o, m, it, lr, s.loss);
            break;
        }
        m->step++;
        if (s.skipped && o->log) train_log_clear(o->log);
        if (s.skipped && o->rank == 0)
            printf("AMP: step %lld: a gradient was not finite: update skipped, loss scale now %g (%ld skipped so far)\n",
                   (long long)m->step, s.loss_scale, s.skipped_total);
        m->step_in_epoch = it + 1;
        if (r->save_interval_steps > 0 && m->step % r->save_interval_steps == 0 && it + 1 < spe &&
            (st = train_save_step(o, m, net, mb->kept)) != TIPC_OK)
            break;
        double t_done = now_seconds();
        const struct micro_batch *b0 = &mb->mb[0];
        ss.reader += t_read - t_end, ss.batch += t_done - t_end, t_end = t_done;
        ss.loss += s.loss, ss.seen += b0->n, ss.steps++;
        topk_hits(logits, b0->labels, b0->n, K, &ss.h1, &ss.h5);
        if (o->log) train_log_tick(o->log, m->epoch, it, s.loss, lr, b0->n * (o->world > 1 ? o->world : mb->world));
        if (ss.steps == r->print_freq || it == spe - 1) {
            double wl = ss.loss / ss.steps;
            if (mb->trend.windows++ == 0) mb->trend.first = wl;
            else if (mb->trend.windows == 2 || wl < mb->trend.lowest) mb->trend.lowest = wl;
            if (o->log) /* every rank: its own loss and img/s */
                st = train_log_window(o->log, m->epoch, it, (long)m->step, ss.loss / ss.steps, lr,
                                      100.0 * ss.h1 / ss.seen, ss.seen / ss.batch);
            if (o->local_rank == 0) {   /* each node's first rank: every node's log has its speed (benchmark_train) */
                printf("[Epoch %d, iter: %d] top1: %.5f, top5: %.5f, lr: %.5f, loss: %.5f, avg_reader_cost: %.5f sec, "
                       "avg_batch_cost: %.5f sec, avg_samples: %.1f, avg_ips: %.5f images/sec.\n",
                       m->epoch, it, (double)ss.h1 / ss.seen, (double)ss.h5 / ss.seen, lr, ss.loss / ss.steps,
                       ss.reader / ss.steps, ss.batch / ss.steps, (double)ss.seen / ss.steps, ss.seen / ss.batch);
                fflush(stdout);
            }
            memset(&ss, 0, sizeof ss);
            if (st != TIPC_OK) break;
        }
    }
    free(logits);
    return st;
}

/* The weights after an epoch: a step can make them NaN while the loss before it was finite. */
static enum tipc_status weights_finite(const struct train_opts *o, const struct net *net, const struct ckpt_meta *m)
{
    char what[160];
    if (net_finite(net, what, sizeof what)) return TIPC_OK;
    error_msg(TIPC_ENUMERIC, "rank %d: the weights are not finite after global step %lld (epoch %d): %s", o->rank,
              (long long)m->step, m->epoch, what);
    error_hint("the training diverged although the loss before the step was finite: lower the learning rate (--lr); "
               "checkpoints in '%s' are from before this epoch", o->r.output_dir);
    return TIPC_ENUMERIC;
}

/* FNV-1a of the net's parameters (host copy): the same before and after means no step moved them. */
static uint64_t params_hash(const struct net *net)
{
    float *p = xmalloc(sizeof(float) * net->nparams + 4);
    net_to_host(net, p, net->params, net->nparams);
    uint64_t h = fnv1a64(FNV1A64_INIT, p, sizeof(float) * net->nparams);
    free(p);
    return h;
}

/* A training that learned nothing passes every stage yet proves nothing: say so (rank 0). The
 * weights unchanged after steps (learning rate 0), or no logged loss window below the first. */
static void learned_check(const struct train_opts *o, const struct net *net, const struct micro *mb,
                          uint64_t hash0, int64_t steps)
{
    if (o->rank != 0 || steps <= 0) return;
    if (params_hash(net) == hash0)
        warning_msg("the weights did not change in %lld training steps (learning rate %g at the start): this "
                    "training learned nothing", (long long)steps, recipe_lr(&o->r, 0));
    else if (mb->trend.windows >= 2 && !(mb->trend.lowest < mb->trend.first))
        warning_msg("the loss never fell: %.5f in the first logged window, no lower in the %d after it (lowest %.5f); "
                    "check the learning rate and the data", mb->trend.first, mb->trend.windows - 1, mb->trend.lowest);
}

/* The dropout RNGs as an uninterrupted run has them after m->step steps (one draw per step): every
 * rank's own, although the checkpoint (local rank 0's) holds only its writer's. */
static void replay_rngs(const struct train_opts *o, struct micro *mb, struct ckpt_meta *m)
{
    rng_seed(&m->rng, rank_seed(&o->r, o->rank));
    for (int64_t i = 0; i < m->step; i++) rng_u64(&m->rng);
    for (int k = 1; k < mb->world; k++) {
        rng_seed(&mb->rng[k], rank_seed(&o->r, k));
        for (int64_t i = 0; i < m->step; i++) rng_u64(&mb->rng[k]);
    }
}

static enum tipc_status load_weights(const struct train_opts *o, const char *resume, struct net *net, struct micro *mb,
                                     struct ckpt_meta *m)
{
    if (resume) {
        TRY(ckpt_load(resume, m, net, true));
        if (!o->test_only) replay_rngs(o, mb, m);
        if (o->rank == 0 && m->step_in_epoch > 0)
            printf("resumed from '%s' (epoch %d, step %lld: %d of %d steps of epoch %d done)\n", resume, m->epoch,
                   (long long)m->step, m->step_in_epoch, m->steps_per_epoch, m->epoch + 1);
        else if (o->rank == 0)
            printf("resumed from '%s' (epoch %d, step %lld)\n", resume, m->epoch, (long long)m->step);
        return TIPC_OK;
    }
    if (o->pretrained) {
        struct ckpt_meta keep = *m;
        TRY(ckpt_load(o->pretrained, m, net, false));
        m->epoch = 0, m->step = 0, m->rng = keep.rng, m->best_acc1 = 0, m->step_in_epoch = 0;
        return TIPC_OK;
    }
    net_init_params(net, (uint64_t)o->r.seed);
    return TIPC_OK;
}

static enum tipc_status setup_weights(const struct train_opts *o, const char *resume, struct net *net, struct micro *mb,
                                      struct ckpt_meta *m)
{
    char run_id[sizeof m->run_id];   /* a loaded file's id is its writer's; this run writes its own */
    memcpy(run_id, m->run_id, sizeof run_id);
    enum tipc_status st = load_weights(o, resume, net, mb, m);
    memcpy(m->run_id, run_id, sizeof run_id);
    return st;
}

/* This rank's training source, or with --simulate-world W each simulated rank's shard and RNG. */
static enum tipc_status micro_open(struct micro *mb, const struct train_opts *o, int epoch, int step)
{
    const struct recipe *r = &o->r;
    mb->world = o->simulate_world > 1 ? o->simulate_world : 1;
    mb->tr = xcalloc((size_t)mb->world, sizeof *mb->tr);
    mb->rng = xcalloc((size_t)mb->world, sizeof *mb->rng);
    mb->mb = xcalloc((size_t)mb->world, sizeof *mb->mb);
    mb->kept[0] = mb->kept[1] = -1;
    if (mb->world == 1) return source_open(&mb->tr[0], r, true, o->rank, o->world, epoch, step);
    for (int k = 0; k < mb->world; k++) {
        TRY(source_open(&mb->tr[k], r, true, k, mb->world, epoch, step));
        rng_seed(&mb->rng[k], rank_seed(r, k)); /* as rank k seeds its m.rng */
        if (mb->tr[k].steps_per_epoch != mb->tr[0].steps_per_epoch)
            return error_msg(TIPC_EUSAGE, "--simulate-world %d: rank %d has %d steps per epoch, rank 0 has %d",
                             mb->world, k, mb->tr[k].steps_per_epoch, mb->tr[0].steps_per_epoch);
    }
    return TIPC_OK;
}

static void micro_free(struct micro *mb)
{
    for (int k = 0; mb->tr && k < mb->world; k++) source_free(&mb->tr[k]);
    free(mb->tr);
    free(mb->rng);
    free(mb->mb);
}

enum tipc_status train_run(const struct train_opts *o)
{
    const struct recipe *r = &o->r;
    struct mbv3_config cfg = {.num_classes = r->num_classes, .width_mult = (float)r->width_mult,
                              .resolution = r->image_size, .dropout = (float)r->dropout, .amp = o->amp};
    struct ckpt_meta m;
    fill_meta(&m, o);
    rng_seed(&m.rng, rank_seed(r, o->rank));
    struct source val = {0};
    struct micro mb = {0};
    struct net net = {0};
    struct dp dp = {0};
    char *found = NULL;
    const char *resume = o->resume;
    enum tipc_status st = TIPC_OK;
    /* a launcher's restart resumes only from this run's own checkpoints; --resume auto from any */
    const char *only_run = o->restart > 0 ? m.run_id : NULL;
    if (o->resume_auto && (st = resume_find(r->output_dir, o->comm, o->rank, only_run, &found)) != TIPC_OK) goto out;
    if (o->resume_auto && found) resume = found;
    if (o->resume_auto && o->rank == 0) {
        char who[48];
        snprintf(who, sizeof who, o->restart > 0 ? "restart %d (tipc launch)" : "--resume auto", o->restart);
        if (found) printf("%s: resuming from the newest complete checkpoint '%s'\n", who, found);
        else printf("%s: no checkpoint%s%s in '%s': starting from %s\n", who, only_run ? " of this run, " : "",
                    only_run ? only_run : "", r->output_dir, resume ? resume : o->pretrained ? o->pretrained : "the beginning");
    }
    struct ckpt_meta rm = {0};
    if (resume) { /* position first: the data source starts where the checkpoint stopped */
        if ((st = ckpt_read_meta(resume, &rm)) != TIPC_OK) goto out;
        if (!o->test_only && (st = resume_check_precision(resume, &rm, &o->amp, found != NULL, o->rank)) != TIPC_OK)
            goto out;
        m.epoch = rm.epoch;
    }
    if (!o->test_only) st = train_output_ready(o);   /* a read-only output is an error now, not after an epoch */
    if (!o->test_only && st == TIPC_OK) st = micro_open(&mb, o, m.epoch, rm.step_in_epoch);
    if (st == TIPC_OK && !o->test_only && rm.step_in_epoch > 0 && mb.tr[0].steps_per_epoch != rm.steps_per_epoch) {
        st = error_msg(TIPC_EUSAGE, "checkpoint '%s' stopped at step %d of an epoch of %d steps, but this run's epochs "
                       "have %d steps", resume, rm.step_in_epoch, rm.steps_per_epoch, mb.tr[0].steps_per_epoch);
        error_hint("resume mid-epoch with the batch size, data and ranks it was saved with");
    }
    if (st == TIPC_OK) st = source_open(&val, r, false, o->rank, o->world, 0, 0);
    char origin[512];   /* which data this is, for the run's record (train_start) */
    bool synthetic = false;
    if (st == TIPC_OK) source_origin(&val, r, origin, sizeof origin, &synthetic);
    if (st == TIPC_OK && synthetic && o->real_data) {
        st = error_msg(TIPC_EDATA, "the data is synthetic (%s), and real data is required (--real-data or "
                       "TIPC_REAL_DATA)", origin);
        error_hint("put the dataset at DataLoader.data_path '%s' (`TIPC_OFFLINE=0 tipc prepare CONFIG MODE` "
                   "fetches the configs' data)", r->data_path);
    }
    if (st != TIPC_OK) goto out;
    int N = r->batch_size > r->eval_batch_size ? r->batch_size : r->eval_batch_size;
    mobilenet_v3_small_build(&net, &cfg, N, o->be);
    struct dp_opts dpo = {.comm = o->comm, .bucket_bytes = o->bucket_bytes, .overlap = o->overlap,
                          .per_tensor = o->per_tensor, .check_every = o->check_every,
                          .local_sgd_steps = o->local_sgd_steps, .local_sgd_warm = o->local_sgd_warm,
                          .simulate_world = o->test_only ? 0 : o->simulate_world};
    dp_init(&dp, &dpo, &net);
    if (dp.micro > 1)
        printf("simulating %d data-parallel ranks in one process: per step, each rank's micro-batch in rank order, "
               "gradients averaged, rank 0's BN statistics kept\n", dp.micro);
    if (o->rank == 0)
        printf("model %s: %zu parameters, %d classes, width %.2f, %d px; data: %s (%d train steps/epoch), %s\n", r->arch,
               net.nparams, r->num_classes, r->width_mult, r->image_size, o->test_only ? "-" : source_describe(&mb.tr[0]),
               o->test_only ? 0 : mb.tr[0].steps_per_epoch, source_describe(&val));
    if (o->rank == 0) amp_describe(&o->amp, &o->be);
    char why[256];
    enum step_mode mode = train_step_mode(&net, &dp, o->cuda_graph, why, sizeof why);
    if (o->rank == 0 && !o->test_only) printf("training step: %s\n", why);
    if ((st = setup_weights(o, resume, &net, &mb, &m)) != TIPC_OK) goto out;
    if ((st = dp_sync_from_rank0(&dp, &net, true)) != TIPC_OK) goto out;
    /* from the beginning: other runs' checkpoints go aside (every rank has its weights by now) */
    if (!o->test_only && !resume) train_set_aside_others(o, m.run_id, o->pretrained);
    double a1, a5;
    if (o->test_only) {
        if ((st = evaluate(o, &net, &val, &m, &a1, &a5)) == TIPC_OK && o->log) st = train_log_eval(o->log, m.epoch, a1, a5);
        if (st == TIPC_OK && o->rank == 0) printf(" * Acc@1 %.3f Acc@5 %.3f\n", a1, a5);
        goto out;
    }
    json_t *info = json_pack("{s:s, s:s, s:i, s:i, s:I, s:s, s:i, s:I, s:s}", "model", r->arch, "device", r->device,
                             "batch_size", r->batch_size, "image_size", r->image_size, "params", (json_int_t)net.nparams,
                             "output_dir", r->output_dir, "restart", o->restart, "start_step", (json_int_t)m.step,
                             "precision", precision_name(o->amp.prec));
    if (info && resume) json_object_set_new(info, "resumed_from", json_string(resume));
    char kernels[160];
    backend_cpu_describe(kernels, sizeof kernels); /* the data pipeline's, on a GPU run */
    if (info) json_object_set_new(info, "cpu_kernels", json_string(kernels));
    if (info) json_object_set_new(info, "data_origin", json_string(origin));
    if (info) json_object_set_new(info, "data_synthetic", json_boolean(synthetic));
    if (o->log && (st = train_log_start(o->log, m.epoch, r->epochs, mb.tr[0].steps_per_epoch, info)) != TIPC_OK)
        goto out;
    if (!o->log) json_decref(info);
    uint64_t hash0 = params_hash(&net);
    int64_t step0 = m.step;
    while (m.epoch < r->epochs) {
        double t0 = now_seconds();
        dp.comm_seconds = dp.comm_exposed_seconds = 0;
        if ((st = train_epoch(o, &net, &dp, &mb, &m, mode)) != TIPC_OK) goto out;
        double secs = now_seconds() - t0;
        if (o->log && (st = train_log_epoch(o->log, m.epoch, secs, (long)mb.tr[0].steps_per_epoch * r->batch_size * o->world,
                                            dp.comm_exposed_seconds, dp.comm_seconds)) != TIPC_OK)
            goto out;
        if (o->comm && o->rank == 0) {
            char how[160];
            dp_describe(&dp, how, sizeof how);
            printf("data parallel: %d ranks (%s over %s), epoch %d: %.1f%% of the training time waiting on "
                   "communication (exposed), %.1f%% in %s; %s\n", o->world, comm_backend_name(o->comm),
                   comm_transport(o->comm), m.epoch,
                   100.0 * dp.comm_exposed_seconds / secs, 100.0 * dp.comm_seconds / secs,
                   o->local_sgd_steps > 0 ? "allreduce (LocalSGD: parameter averages)" : "gradient allreduce", how);
        }
        if ((st = weights_finite(o, &net, &m)) != TIPC_OK) goto out;
        m.epoch++;
        m.step_in_epoch = 0;
        if ((st = dp_epoch_end(&dp, &net, (long)m.step)) != TIPC_OK) goto out;
        bool best = false;
        if (r->eval_during_train) {
            if ((st = evaluate(o, &net, &val, &m, &a1, &a5)) != TIPC_OK) goto out;
            if (o->log && (st = train_log_eval(o->log, m.epoch, a1, a5)) != TIPC_OK) goto out;
            if (o->rank == 0) printf(" * Acc@1 %.3f Acc@5 %.3f\n", a1, a5);
            best = a1 >= m.best_acc1;
            if (best) m.best_acc1 = a1;
        }
        if ((st = train_save_epoch(o, &m, &net, best)) != TIPC_OK) goto out;
        if (o->rank == 0) printf("saved '%s/epoch_%d.ckpt' and latest.ckpt\n", r->output_dir, m.epoch);
        fflush(stdout);
    }
    learned_check(o, &net, &mb, hash0, m.step - step0);
    float as[AMP_STATE_FLOATS];
    if (o->rank == 0 && net_amp_read(&net, as))
        printf("AMP: %.0f steps skipped (a gradient was not finite), loss scale %g at the end\n", as[AMP_SKIPPED],
               as[AMP_SCALE]);
    if (o->log) st = train_log_end(o->log);
out:
    free(found);
    dp_free(&dp);
    net_free(&net);
    micro_free(&mb);
    source_free(&val);
    return st;
}
