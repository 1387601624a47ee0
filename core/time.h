/* time.h: the one monotonic clock (seconds as a double), for timeouts, step timings and
 * benchmarks, and absolute deadlines for condition variables that wait on CLOCK_MONOTONIC
 * (pthread_condattr_setclock). Wall-clock time (timestamps in reports) is not here. */
#ifndef TIPC_TIME_H
#define TIPC_TIME_H
#include <time.h>

static inline double now_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* CLOCK_MONOTONIC time `seconds` from now, for pthread_cond_timedwait. */
static inline struct timespec mono_deadline(double seconds)
{
    double t = now_seconds() + (seconds > 0 ? seconds : 0);
    struct timespec ts;
    ts.tv_sec = (time_t)t;
    ts.tv_nsec = (long)((t - (double)ts.tv_sec) * 1e9);
    if (ts.tv_nsec >= 1000000000L) ts.tv_sec++, ts.tv_nsec -= 1000000000L;
    if (ts.tv_nsec < 0) ts.tv_nsec = 0;
    return ts;
}

#endif
