/* metrics.h: the run's machine-readable record: one JSON object per line (JSON Lines), appended
 * to the file `tipc run` names in TIPC_METRICS (OUTPUT/tipc/metrics.jsonl) by tipc run itself
 * and by every rank of every stage it starts. Each line is written with one write() on an
 * O_APPEND descriptor, so lines from concurrent ranks never interleave.
 *
 * Every object has "event" and "t" (seconds since the epoch, UTC) and, inside a stage, "stage"
 * (its report name, TIPC_STAGE). Events (docs/engine.md lists their keys):
 *   run, stage, summary        from tipc run (environment, each stage's outcome and times, counts)
 *   train_start, train_step,   from the trainer: per print window and rank: loss, lr, top1, img/s;
 *   epoch, eval                per epoch: time, img/s; eval top-1/top-5 */
#ifndef TIPC_METRICS_H
#define TIPC_METRICS_H
#include <jansson.h>
#include "../../core/status.h"

struct metrics {
    int fd;            /* -1: disabled (no TIPC_METRICS) */
    char *path;
    char *stage;       /* TIPC_STAGE, or NULL */
};

/* Open `path` for appending (NULL or "": disabled). `stage` may be NULL. TIPC_EIO if it cannot be
 * opened. */
enum tipc_status metrics_open(struct metrics *m, const char *path, const char *stage);
/* Start the file afresh (tipc run, once per run): truncates. */
enum tipc_status metrics_create(struct metrics *m, const char *path);
/* Append `obj` (a JSON object; taken over and freed, NULL ignored) with "event", "t" and "stage"
 * added. A failed write is TIPC_EIO (the message names the file). */
enum tipc_status metrics_emit(struct metrics *m, const char *event, json_t *obj);
void metrics_close(struct metrics *m);

/* Seconds since the epoch, with microseconds. */
double metrics_now(void);

#endif
