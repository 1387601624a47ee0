/* prepare_settings.h: prepare's environment (offline switch, manifest, download knobs) as
 * option-table rows, so `tipc prepare` and `tipc run` read it once with their other options and
 * prepare/ never calls getenv. A bad value is a usage error naming the variable (exit 2). */
#ifndef TIPC_PREPARE_SETTINGS_H
#define TIPC_PREPARE_SETTINGS_H
#include "../../core/options.h"
#include "../../prepare/prepare.h"

/* Environment-only rows for a command that prepares without download flags of its own (run);
 * `p` is a struct prepare_opts lvalue. */
#define PREPARE_ENV_OPTS(p)                                                                               \
    {"TIPC_OFFLINE", NULL, OPT_BOOL, &(p).offline, NULL, 0, 0, "0|1",                                     \
     "0: prepare may download (default 1 for run: file:// and fallbacks only)", "TIPC_OFFLINE", NULL},   \
    {"TIPC_MANIFEST", NULL, OPT_STR, &(p).manifest, NULL, 0, 0, "FILE",                                   \
     "the dataset manifest (default: CONFIG's ../datasets.yaml, configs/datasets.yaml)", "TIPC_MANIFEST", NULL}, \
    FETCH_ENV_OPTS((p).fetch)

/* The download knobs (struct fetch_opts lvalue `f`), each with its environment variable. The
 * names: `tipc prepare`'s flags, or for a command without download flags (run) the variables
 * themselves (FETCH_ENV_OPTS). */
#define FETCH_OPTS(f, CONNECT_TIMEOUT, LOW_SPEED_TIME, LOW_SPEED_LIMIT, DOWNLOAD_TIMEOUT, MIN_RATE, RETRIES,   \
                   BACKOFF_MS)                                                                            \
    {CONNECT_TIMEOUT, NULL, OPT_LONG, &(f).connect_timeout_s, NULL, 1, 600, "S",                          \
     "download: connect limit (default 5)", "TIPC_CONNECT_TIMEOUT", NULL},                                \
    {LOW_SPEED_TIME, NULL, OPT_LONG, &(f).low_speed_time_s, NULL, 1, 3600, "S",                           \
     "download: abort when slower than the low-speed limit this long\n(default 15)", "TIPC_LOW_SPEED_TIME", NULL}, \
    {LOW_SPEED_LIMIT, NULL, OPT_LONG, &(f).low_speed_bytes, NULL, 1, 1 << 30, "BYTES/S",                  \
     "download: the low-speed limit (default 1024)", "TIPC_LOW_SPEED_LIMIT", NULL},                       \
    {DOWNLOAD_TIMEOUT, NULL, OPT_LONG, &(f).max_time_s, NULL, 0, 1000000, "S",                            \
     "download: the whole download, retries included, ends within S seconds\n(default 3600; 0: no limit)", \
     "TIPC_DOWNLOAD_TIMEOUT", NULL},                                                                      \
    {MIN_RATE, NULL, OPT_LONG, &(f).min_rate_bytes, NULL, 0, 1 << 30, "BYTES/S",                          \
     "download: give up when the average rate is below this after the\nlow-speed time (default 10240; 0: off)", \
     "TIPC_MIN_RATE", NULL},                                                                              \
    {RETRIES, NULL, OPT_INT, &(f).retries, NULL, 0, 100, "N",                                             \
     "download: extra attempts (default 2)", "TIPC_RETRIES", NULL},                                       \
    {BACKOFF_MS, NULL, OPT_LONG, &(f).backoff_ms, NULL, 0, 600000, "MS",                                  \
     "download: first retry delay, doubled per retry\n(default 500)", "TIPC_BACKOFF_MS", NULL}

#define FETCH_ENV_OPTS(f)                                                                                 \
    FETCH_OPTS(f, "TIPC_CONNECT_TIMEOUT", "TIPC_LOW_SPEED_TIME", "TIPC_LOW_SPEED_LIMIT",                  \
               "TIPC_DOWNLOAD_TIMEOUT", "TIPC_MIN_RATE", "TIPC_RETRIES", "TIPC_BACKOFF_MS"),                \
    FETCH_CAP_OPT(f)

/* The download size cap alone (prepare has flags for the other knobs). */
#define FETCH_CAP_OPT(f)                                                                                  \
    {"TIPC_MAX_DOWNLOAD", NULL, OPT_LONG, &(f).max_bytes, NULL, 1, 1e15, "BYTES",           \
     "download size cap when the manifest gives no size (default 16 GiB)", "TIPC_MAX_DOWNLOAD", NULL}

#endif
