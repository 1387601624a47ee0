/* scaling.h: `tipc bench scaling`, the DLPerf-style data-parallel scaling table of this host.
 * For each rank count N it starts the real launcher (`tipc launch`, ranks are processes) with
 * `bench train --result-dir` as the command, the same per-rank batch every time, and reads each
 * rank's figures back (cmd_bench.c writes them): global img/s = N x batch x steps / the slowest
 * rank's timed seconds, per-rank img/s, speed-up over the first count, scaling efficiency
 * (speed-up / (N / first N)) and the exposed communication share (the mean over the ranks of the
 * time the step waited in gradient collectives / the timed seconds). Loopback: one launcher,
 * --nproc_per_node N. --netns: N namespaces (netns.h), one launcher per namespace, --ips listing
 * their addresses. The table goes to stdout and, written atomically, to OUTPUT/scaling.json,
 * scaling.md and scaling.svg (scaling_out.c); each run's rank logs to OUTPUT/nN/log. */
#ifndef TIPC_BENCH_SCALING_H
#define TIPC_BENCH_SCALING_H
#include <stdbool.h>

#include "../../core/status.h"

#define SCALING_MAX_RUNS 16
#define SCALING_MAX_RANKS 64

struct scaling_opts {
    const char *ranks;              /* "1,2,4,8" */
    const char *output;             /* folder for the table and the runs' logs */
    int batch, res, steps, warmup, threads, classes, bucket_mb; /* passed to each rank's bench train */
    bool overlap;                   /* buckets' allreduce during backward (bench train --overlap) */
    int comm_shm;                   /* enum comm_shm_mode (bench train --comm-shm) */
    double timeout_s;               /* per run */
    bool netns;
    const char *link_delay, *link_rate; /* --netns: tc values as given (checked by netns.c) */
};

/* One row of the table (one rank count). */
struct scaling_row {
    int ranks;
    double global_ips, per_rank_ips, speedup, efficiency;
    double comm_share;              /* exposed communication / step time, mean over the ranks */
    double median_step_s;           /* rank 0's median step */
    char transport[24];             /* how rank 0's allreduces went: "shared memory", "tcp", "none" */
};

struct scaling_table {
    const struct scaling_opts *o;
    char when[32];                  /* UTC, ISO 8601 */
    double load[3];                 /* load average at the start */
    char network[160];              /* "loopback" or the namespaces' links */
    int cpus;                       /* CPUs this process may run on (the ranks inherit the set) */
    struct scaling_row row[SCALING_MAX_RUNS];
    int n;
};

enum tipc_status bench_scaling(const struct scaling_opts *o);

/* scaling_out.c: print the table, and write OUTPUT/scaling.{json,md,svg} (each staged). */
void scaling_print(const struct scaling_table *t);
enum tipc_status scaling_write(const struct scaling_table *t);

#endif
