/* tee.h: keep a copy of a stage's output in a log while it still reaches the terminal/CI console.
 * For stages whose command does not redirect its own output (training, in every harness): the
 * child's stdout and stderr are pipes; a thread copies each to tipc's own stdout/stderr and both,
 * line by line as they come, to the log. The log gets what a terminal finally shows: a line
 * redrawn with '\r' (a progress bar) keeps only its last state. On a terminal, a bar the child left
 * on stderr's current line is erased before its stdout (or tipc's next line) writes there: the two
 * pipes are read in either order, so the child's own erasing may come too late. */
#ifndef TIPC_TEE_H
#define TIPC_TEE_H
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include "../../core/status.h"

struct tee {
    int child_out, child_err;   /* write ends for the child's fd 1 and 2 (-1 after tee_started) */
    int rd[2];                  /* read ends */
    int log_fd;
    const char *log_path;
    pthread_t thread;
    atomic_int child_done;      /* set by tee_finish: stop once the pipes go quiet */
    int write_err;              /* errno of the first failed log write, 0 if none */
    char *line[2];              /* the log line being built, per stream (stdout, stderr) */
    size_t len[2], cap[2];
    bool cr[2];                 /* a '\r' was just seen */
    bool bar_open;              /* the terminal's current line is one stderr redraws with '\r' (a
                                 * progress bar): erased before stdout writes there, or the run goes on */
};

/* Create the log (truncated; no symlink followed) and the pipes, start the copying thread. */
enum tipc_status tee_start(struct tee *t, const char *log_path);
/* The same, appending to the log when `append` (benchmark_train: a harness run's later stages). */
enum tipc_status tee_start_append(struct tee *t, const char *log_path, bool append);
/* After fork: close the parent's copies of the child's ends. */
void tee_started(struct tee *t);
/* After the child exited: copy what is left (a grandchild still holding the pipes is given 1 s of
 * silence), stop the thread, close the log. TIPC_EIO if the log could not be written. */
enum tipc_status tee_finish(struct tee *t);

#endif
