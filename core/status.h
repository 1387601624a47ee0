/* status.h: the one status enum every user-input path returns, and the exit codes it maps to.
 *
 * A status IS the process exit code: main() returns it unchanged, so `tipc help` and README's
 * table of exit codes are the single contract. Internal invariants do not use this; they die
 * through check.h (exit TIPC_EINTERNAL). */
#ifndef TIPC_STATUS_H
#define TIPC_STATUS_H

enum tipc_status {
    TIPC_OK        = 0,   /* everything passed */
    TIPC_EFAIL     = 1,   /* a stage of `tipc run` failed (the others still ran) */
    TIPC_EUSAGE    = 2,   /* bad command line or config file: nothing was run */
    TIPC_EDATA     = 3,   /* data preparation failed (download, checksum, extraction, bad image/list) */
    TIPC_EDIST     = 4,   /* distributed set-up failed (rendezvous timeout, missing node, peer died) */
    TIPC_EIO       = 5,   /* a file could not be read or written (checkpoint, model, log) */
    TIPC_ENUMERIC  = 6,   /* not finite: a NaN/inf loss, weight, statistic, logit or output (finite.h) */
    TIPC_ENOTBUILT = 7,   /* unavailable: not compiled in (e.g. CUDA), or not on this host (no CUDA device) */
    TIPC_EINTERNAL = 70,  /* a bug: an internal invariant failed (file:line printed) */
    TIPC_EINTR     = 130  /* interrupted by SIGINT/SIGTERM */
};

/* Short name of a status for messages and JUnit ("usage", "data", ...). */
const char *tipc_status_name(enum tipc_status st);

#endif
