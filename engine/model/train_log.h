/* train_log.h: what training tells a person watching and the run's metrics file, beside the
 * Step6 log lines trainer.c prints for TIPC's scrapers:
 *  - progress on stderr (rank 0): a bar redrawn in place on a terminal, or a line every
 *    TRAIN_LOG_LINE_SECONDS and at each epoch end in a pipe, with epoch/step, loss, img/s, ETA;
 *  - metrics (every rank): train_start, train_step per print window, epoch, eval, train_end
 *    (metrics.h). The exposed communication (the time the steps waited on collectives, not the time
 *    the allreduces ran) is in each epoch line and, for the whole run, in train_end's
 *    comm_exposed_share (train_log_comm_exposed_share). */
#ifndef TIPC_TRAIN_LOG_H
#define TIPC_TRAIN_LOG_H
#include <stdbool.h>
#include "../../core/status.h"
#include "../io/metrics.h"

#define TRAIN_LOG_LINE_SECONDS 10.0

enum progress_style { PROGRESS_NONE, PROGRESS_BAR, PROGRESS_LINES };

struct train_log {
    struct metrics m;
    enum progress_style style;
    int rank, world, epochs, spe;   /* spe: steps per epoch */
    long steps_total, steps_done;   /* this run's, for the ETA */
    double t_start, t_last_draw, step_ema; /* seconds; step_ema: smoothed seconds per step */
    double t_step;                  /* when the previous step ended */
    double loss_ema;
    int drawn;                      /* width of the bar on screen (to clear it), 0 if none */
    /* this run's epochs so far (train_log_epoch): training seconds, seconds waited on
     * communication (exposed), seconds the gradient allreduces ran */
    double train_s, comm_exposed_s, comm_busy_s;
    struct comm *comm;              /* train_log_set_comm: every rank's window lines written by each node */
    int local_rank;
};

/* style from TIPC_PROGRESS ("bar", "lines", "none"; unset: a bar when stderr is a terminal, else
 * lines); with several ranks (`launch` prefixes their lines) a bar becomes lines. */
enum progress_style train_log_style(const char *env, int world);

enum tipc_status train_log_open(struct train_log *l, const char *metrics_path, const char *stage,
                                enum progress_style style, int rank, int world);
/* Training is about to run epochs [first, epochs) of `spe` steps each; `info` (taken over) holds
 * the set-up to record (batch size, backend, ...). */
enum tipc_status train_log_start(struct train_log *l, int first, int epochs, int spe, json_t *info);
/* After each optimizer step: updates the ETA and redraws the progress (rate-limited). */
void train_log_tick(struct train_log *l, int epoch, int it, float loss, double lr, int images);
/* Data-parallel training: each print window's figures are gathered from every rank (one small
 * allgather, which every rank's train_log_window then takes part in), and each node's first rank
 * (local_rank 0) writes every rank's train_step line to its node's metrics file, so each node's
 * report draws every rank, not only its own. */
struct comm;
void train_log_set_comm(struct train_log *l, struct comm *c, int local_rank);
/* After each print window: a train_step line per rank (loss, top1 in percent: window means): this
 * rank's, or with a comm every rank's (see train_log_set_comm). */
enum tipc_status train_log_window(struct train_log *l, int epoch, int it, long global_step, double loss,
                                  double lr, double top1, double ips);
/* comm_exposed_s: seconds the steps waited on communication (dp.h comm_exposed_seconds);
 * comm_busy_s: seconds the gradient allreduces ran (dp.h comm_seconds). Both 0 for one process. */
enum tipc_status train_log_epoch(struct train_log *l, int epoch, double seconds, long images, double comm_exposed_s,
                                 double comm_busy_s);
/* After the last epoch: one train_end line for this rank (train_s, comm_exposed_s,
 * comm_exposed_share, comm_busy_s over this run's epochs). */
enum tipc_status train_log_end(struct train_log *l);
/* Share of this run's training time spent waiting on communication (0 before any epoch). */
double train_log_comm_exposed_share(const struct train_log *l);
enum tipc_status train_log_eval(struct train_log *l, int epoch, double top1, double top5);
/* Erase the bar before other output is printed (the next tick draws it again). train_log_window,
 * _epoch, _eval and _end do it themselves (their callers print a line next), and so does every
 * error and warning message (core/check.h's message hook) while a bar is open. */
void train_log_clear(struct train_log *l);
void train_log_close(struct train_log *l);

#endif
