/* train_log.c: see train_log.h. */
#include "train_log.h"

#include <math.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "../../core/check.h"
#include "../dist/comm.h"
#include "../../core/time.h"
#include "../../core/banned.h"

#define BAR_WIDTH 24
#define BAR_PERIOD 0.2 /* seconds between redraws */

enum progress_style train_log_style(const char *env, int world)
{
    enum progress_style s;
    if (env && !strcmp(env, "none")) s = PROGRESS_NONE;
    else if (env && !strcmp(env, "bar")) s = PROGRESS_BAR;
    else if (env && !strcmp(env, "lines")) s = PROGRESS_LINES;
    else s = isatty(2) ? PROGRESS_BAR : PROGRESS_LINES;
    return s == PROGRESS_BAR && world > 1 ? PROGRESS_LINES : s;
}

/* The bar on screen, erased before any error or warning is printed (tipc_set_msg_hook). */
static struct train_log *bar_on_screen;

static void clear_bar_on_screen(void)
{
    if (bar_on_screen) train_log_clear(bar_on_screen);
}

enum tipc_status train_log_open(struct train_log *l, const char *metrics_path, const char *stage,
                                enum progress_style style, int rank, int world)
{
    memset(l, 0, sizeof *l);
    l->style = rank == 0 ? style : PROGRESS_NONE;
    l->rank = rank, l->world = world;
    if (l->style == PROGRESS_BAR) {
        bar_on_screen = l;
        tipc_set_msg_hook(clear_bar_on_screen);
    }
    return metrics_open(&l->m, metrics_path, stage);
}

static json_t *with_rank(const struct train_log *l, json_t *o)
{
    if (o) {
        json_object_set_new(o, "rank", json_integer(l->rank));
        json_object_set_new(o, "world", json_integer(l->world));
    }
    return o;
}

enum tipc_status train_log_start(struct train_log *l, int first, int epochs, int spe, json_t *info)
{
    l->epochs = epochs, l->spe = spe;
    l->steps_total = (long)(epochs - first) * spe;
    l->t_start = l->t_step = now_seconds();
    json_t *o = info ? info : json_object();
    if (o) {
        json_object_set_new(o, "first_epoch", json_integer(first));
        json_object_set_new(o, "epochs", json_integer(epochs));
        json_object_set_new(o, "steps_per_epoch", json_integer(spe));
    }
    return metrics_emit(&l->m, "train_start", with_rank(l, o));
}

static void fmt_eta(char *buf, size_t n, double s)
{
    if (!(s >= 0) || s > 359999) snprintf(buf, n, "--:--:--");
    else snprintf(buf, n, "%d:%02d:%02d", (int)s / 3600, (int)s / 60 % 60, (int)s % 60);
}

void train_log_clear(struct train_log *l)
{
    if (l->style != PROGRESS_BAR || !l->drawn) return;
    fprintf(stderr, "\r%*s\r", l->drawn, "");
    fflush(stderr);
    l->drawn = 0;
}

static void draw(struct train_log *l, int epoch, int it, double lr, double ips, bool final)
{
    double frac = l->steps_total > 0 ? (double)l->steps_done / (double)l->steps_total : 1;
    char eta[16];
    fmt_eta(eta, sizeof eta, l->step_ema * (double)(l->steps_total - l->steps_done));
    if (l->style == PROGRESS_LINES) {
        fprintf(stderr, "progress: epoch %d/%d step %d/%d (%3.0f%%) loss %.4f lr %.5f %.1f img/s ETA %s\n", epoch + 1,
                l->epochs, it + 1, l->spe, 100 * frac, l->loss_ema, lr, ips, eta);
        fflush(stderr);
        return;
    }
    char bar[BAR_WIDTH + 1];
    int fill = (int)(frac * BAR_WIDTH + 0.5);
    for (int i = 0; i < BAR_WIDTH; i++) bar[i] = i < fill ? '#' : '.';
    bar[BAR_WIDTH] = 0;
    int w = fprintf(stderr, "\rtrain [%s] %3.0f%% epoch %d/%d step %d/%d loss %.4f %.1f img/s ETA %s", bar, 100 * frac,
                    epoch + 1, l->epochs, it + 1, l->spe, l->loss_ema, ips, eta);
    if (w > 0 && l->drawn > w - 1) fprintf(stderr, "%*s", l->drawn - (w - 1), ""); /* cover a longer old line */
    l->drawn = w > 0 ? w - 1 : 0;
    if (final) {
        fputc('\n', stderr);
        l->drawn = 0;
    }
    fflush(stderr);
}

void train_log_tick(struct train_log *l, int epoch, int it, float loss, double lr, int images)
{
    double t = now_seconds(), dt = t - l->t_step;
    l->t_step = t;
    l->steps_done++;
    l->step_ema = l->steps_done == 1 ? dt : 0.9 * l->step_ema + 0.1 * dt;
    l->loss_ema = l->steps_done == 1 || !isfinite(l->loss_ema) ? loss : 0.9 * l->loss_ema + 0.1 * loss;
    if (l->style == PROGRESS_NONE) return;
    bool epoch_end = it == l->spe - 1, last = l->steps_done >= l->steps_total;
    double period = l->style == PROGRESS_BAR ? BAR_PERIOD : TRAIN_LOG_LINE_SECONDS;
    if (!epoch_end && t - l->t_last_draw < period) return;
    l->t_last_draw = t;
    draw(l, epoch, it, lr, l->step_ema > 0 ? images / l->step_ema : 0, last);
}

void train_log_set_comm(struct train_log *l, struct comm *c, int local_rank)
{
    l->comm = l->world > 1 ? c : NULL;
    l->local_rank = local_rank;
}

static enum tipc_status emit_step(struct train_log *l, int rank, int epoch, int it, long global_step, const double v[4])
{
    json_t *o = json_pack("{s:i, s:i, s:I, s:f, s:f, s:f, s:f, s:i, s:i}", "epoch", epoch, "iter", it, "step",
                          (json_int_t)global_step, "loss", v[0], "lr", v[1], "top1", v[2], "ips", v[3], "rank", rank,
                          "world", l->world);
    return metrics_emit(&l->m, "train_step", o);
}

enum tipc_status train_log_window(struct train_log *l, int epoch, int it, long global_step, double loss,
                                  double lr, double top1, double ips)
{
    train_log_clear(l);   /* the caller prints its line next */
    double mine[4] = {loss, lr, top1, ips};
    if (!l->comm) return l->m.fd < 0 ? TIPC_OK : emit_step(l, l->rank, epoch, it, global_step, mine);
    /* every rank takes part, metrics file or not: the collective needs them all */
    double *all = xmalloc(sizeof mine * (size_t)l->world);
    enum tipc_status st = comm_allgather(l->comm, mine, all, sizeof mine);
    for (int r = 0; st == TIPC_OK && l->local_rank == 0 && l->m.fd >= 0 && r < l->world; r++)
        st = emit_step(l, r, epoch, it, global_step, all + 4 * r);
    free(all);
    return st;
}

enum tipc_status train_log_epoch(struct train_log *l, int epoch, double seconds, long images, double comm_exposed_s,
                                 double comm_busy_s)
{
    train_log_clear(l);   /* the caller prints its line next */
    l->comm_exposed_s += comm_exposed_s;
    l->comm_busy_s += comm_busy_s;
    l->train_s += seconds;
    if (l->m.fd < 0) return TIPC_OK;
    return metrics_emit(&l->m, "epoch",
                        with_rank(l, json_pack("{s:i, s:f, s:I, s:f, s:f, s:f, s:f}", "epoch", epoch, "seconds", seconds,
                                               "images", (json_int_t)images, "ips", seconds > 0 ? images / seconds : 0.0,
                                               "comm_exposed_s", comm_exposed_s, "comm_exposed_share",
                                               seconds > 0 ? comm_exposed_s / seconds : 0.0, "comm_busy_s", comm_busy_s)));
}

enum tipc_status train_log_eval(struct train_log *l, int epoch, double top1, double top5)
{
    train_log_clear(l);   /* the caller prints its line next */
    if (l->m.fd < 0 || l->rank != 0) return TIPC_OK; /* the counts are summed over ranks: one line */
    return metrics_emit(&l->m, "eval", with_rank(l, json_pack("{s:i, s:f, s:f}", "epoch", epoch, "top1", top1,
                                                              "top5", top5)));
}

double train_log_comm_exposed_share(const struct train_log *l)
{
    return l->train_s > 0 ? l->comm_exposed_s / l->train_s : 0.0;
}

enum tipc_status train_log_end(struct train_log *l)
{
    train_log_clear(l);   /* the caller prints its line next */
    if (l->m.fd < 0) return TIPC_OK;
    return metrics_emit(&l->m, "train_end",
                        with_rank(l, json_pack("{s:f, s:f, s:f, s:f}", "train_s", l->train_s, "comm_exposed_s",
                                               l->comm_exposed_s, "comm_exposed_share", train_log_comm_exposed_share(l),
                                               "comm_busy_s", l->comm_busy_s)));
}

void train_log_close(struct train_log *l)
{
    train_log_clear(l);
    if (bar_on_screen == l) {
        bar_on_screen = NULL;
        tipc_set_msg_hook(NULL);
    }
    metrics_close(&l->m);
}
