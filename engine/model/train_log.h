/* train_log.h: what training tells a person watching and the run's metrics file, beside the
 * Step6 log lines trainer.c prints for TIPC's scrapers:
 *  - progress on stderr (rank 0): a bar redrawn in place on a terminal, or a line every
 *    TRAIN_LOG_LINE_SECONDS and at each epoch end in a pipe, with epoch/step, loss, img/s, ETA;
 *  - metrics (every rank): train_start, train_step per print window, epoch, eval (metrics.h). */
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
/* After each print window: one train_step line for this rank (loss, top1 in percent: window means). */
enum tipc_status train_log_window(struct train_log *l, int epoch, int it, long global_step, double loss,
                                  double lr, double top1, double ips);
enum tipc_status train_log_epoch(struct train_log *l, int epoch, double seconds, long images);
enum tipc_status train_log_eval(struct train_log *l, int epoch, double top1, double top5);
/* Erase the bar before other output is printed (the next tick draws it again). */
void train_log_clear(struct train_log *l);
void train_log_close(struct train_log *l);

#endif
