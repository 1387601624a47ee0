/* time.h: a monotonic clock in seconds, for step timings and benchmarks. */
#ifndef TIPC_TIME_H
#define TIPC_TIME_H
#include <time.h>

static inline double now_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

#endif
