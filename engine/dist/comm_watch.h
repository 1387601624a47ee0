/* comm_watch.h: the ranks watch each other through the job's store when no `tipc launch` watches
 * them (torchrun, srun, Paddle's launch, mpirun, env://), so a failure ends the job as it does under
 * tipc launch (docs/distributed.md "Failures"):
 *   - every rank publishes beat/RANK every COMM_WATCH_TICK_S ("COUNT PID SEQ OP STEP SECS NODE HOST": what
 *     it does, as the launcher's heartbeats say) and reads `fail`, the job's failure notice: once it
 *     is there, the rank prints it and exits 4 within a second;
 *   - a rank whose collective failed (a peer's connection reset) looks at the beats for 1.2 s and posts
 *     the notice naming the ranks that went silent (gone, or stopped);
 *   - rank 0 judges every beat with the watchdog's rule (comm_verdict.h; W = rank_env's watchdog_s,
 *     TIPC_LAUNCH_WATCHDOG, default 120 s, 0 off) and posts the verdict; rank 1 judges rank 0;
 *   - the store vanishing (rank 0, which serves it, or torchrun's agent gone) ends the rank too. */
#ifndef TIPC_COMM_WATCH_H
#define TIPC_COMM_WATCH_H

#include "comm_store.h"

#define COMM_WATCH_TICK_S 0.5   /* how often a rank beats and reads the notice */

struct comm_watch;

/* A watch over store s (it opens its own connection). NULL (said) if that fails. */
struct comm_watch *comm_watch_open(const struct comm_store *s, const struct rank_env *e, const char *where);
/* Once a second, from the comm watchdog thread: this rank's state for its beat. May end the process. */
void comm_watch_tick(struct comm_watch *w, unsigned long seq, const char *op, long step, double secs);
/* After a collective failed (main thread, through the rank's own store connection): name the ranks
 * that stopped beating and post the notice; prints the notice that stands. */
void comm_watch_blame(struct comm_watch *w, struct comm_store *s, const char *what);
/* Post msg as the job's failure notice unless one stands (through w's connection). */
void comm_watch_post(struct comm_watch *w, const char *msg);
void comm_watch_close(struct comm_watch *w);

#endif
