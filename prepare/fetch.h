/* fetch.h: download one file with libcurl (http, https, file URLs), safely.
 *
 * The file is written to DEST.part and renamed to DEST only after its sha256 matched, so DEST
 * either does not exist or is verified. A DEST that already exists and verifies is not fetched
 * again (the cache). An interrupted download leaves DEST.part; the next attempt (a retry in the
 * same call, or a later call) resumes it with an HTTP Range request. Not here: extraction
 * (extract.h) and deciding what to fetch (manifest.h). */
#ifndef TIPC_FETCH_H
#define TIPC_FETCH_H
#include <stdbool.h>
#include "../core/status.h"

struct fetch_opts {
    long connect_timeout_s;  /* TCP/TLS connect limit (default 5) */
    long low_speed_bytes;    /* abort when slower than this many bytes/s ... (default 1024) */
    long low_speed_time_s;   /* ... for this many seconds (default 15) */
    long max_time_s;         /* the whole download, every attempt and retry together, ends within
                              * this many seconds (default 3600; 0: no limit) */
    long min_rate_bytes;     /* an attempt whose average since its start is below this many bytes/s
                              * after low_speed_time_s seconds is given up (default 10240; 0: off).
                              * Unlike the low-speed limit, a steady trickle above 1024 B/s cannot
                              * keep it going for hours. Both end the download (no retry) and keep
                              * the .part, so a later try resumes it */
    int retries;             /* extra attempts after a transient failure (default 2) */
    long backoff_ms;         /* delay before the first retry, doubled each time (default 500) */
    long max_redirects;      /* (default 5) */
    bool quiet;              /* no progress output */
    bool has_fallback;       /* the caller falls back (synthetic data): an unreachable URL is a note */
    long max_bytes;          /* size cap: a body growing past it is cut and its .part removed
                              * (default TIPC_MAX_DOWNLOAD or 16 GiB; a manifest item's `size:`
                              * sets it to the exact expected size) */
    bool replace_mismatch;   /* DEST is ours (the download cache): a DEST that fails the sha256
                              * is fetched again; otherwise it is the user's and is refused */
};

/* The defaults above. The environment (TIPC_CONNECT_TIMEOUT, TIPC_LOW_SPEED_TIME,
 * TIPC_LOW_SPEED_LIMIT, TIPC_DOWNLOAD_TIMEOUT, TIPC_MIN_RATE, TIPC_RETRIES, TIPC_BACKOFF_MS,
 * TIPC_MAX_DOWNLOAD) is read by the commands' option tables (runner/cmd/prepare_settings.h): a bad
 * value is a usage error there. */
void fetch_opts_default(struct fetch_opts *o);

/* Fetch url into dest, verified against sha256 (64 hex chars, required). *downloaded (may be
 * NULL) tells whether the network was used (false: a verified dest was already there).
 * A failure that cannot be resumed (size cap, HTTP 4xx, a write error, a bad sha256) removes the
 * .part; a transient one (timeout, cut connection, 5xx) keeps it for the next try.
 * Errors (printed, naming the URL or path and what to do): TIPC_EDATA. */
enum tipc_status fetch_file(const char *url, const char *sha256, const char *dest,
                            const struct fetch_opts *o, bool *downloaded);

/* Global libcurl init (idempotent, not thread-safe: call from main thread first). */
void fetch_global_init(void);

#endif
