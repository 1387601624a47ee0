/* lock.h: one `tipc run` per output folder. Two runs on one folder would interleave their results
 * logs and stage logs, overwrite each other's models and both pass. A run holds an exclusive
 * flock(2) on OUTPUT/tipc/run.lock from before its first write there to its end; the kernel drops
 * it when the run ends in any way (kill -9 included), so there is nothing to clean up. The file
 * says who holds it (pid, host, start time, config and mode), and a second run is refused naming
 * that (exit 2, nothing run). */
#ifndef TIPC_RUN_LOCK_H
#define TIPC_RUN_LOCK_H

#include <stdbool.h>
#include "../../core/status.h"

/* Take the lock of output folder out_dir (own_dir = out_dir/tipc, which must exist); `what` is
 * what this run is ("CONFIG MODE"). TIPC_OK with *fd held; TIPC_EUSAGE naming the holder when
 * another run holds it; TIPC_EIO when the lock file cannot be opened or locked. */
enum tipc_status run_lock_take(const char *out_dir, const char *own_dir, const char *what, int *fd);
/* Take it only when it is free, silently (a refused run replacing its stale reports): true with
 * *fd held; false when busy, missing, or not lockable. */
bool run_lock_try(const char *own_dir, int *fd);
void run_lock_release(int fd);   /* accepts -1 */

#endif
