/* fetch.c: one verified download with libcurl: DEST.part (resumed with Range), retries with
 * exponential backoff for transient failures, sha256 before rename to DEST. See fetch.h. */
#include "fetch.h"

#include <curl/curl.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "../core/fs.h"
#include "../core/regfile.h"
#include "../core/sha256.h"
#include "../core/check.h"
#include "../core/time.h"
#include "../core/banned.h"

void fetch_opts_default(struct fetch_opts *o)
{
    *o = (struct fetch_opts){.connect_timeout_s = 5, .low_speed_bytes = 1024, .low_speed_time_s = 15,
                             .max_time_s = 3600, .min_rate_bytes = 10240, .retries = 2, .backoff_ms = 500,
                             .max_redirects = 5, .quiet = false, .max_bytes = 16L << 30};
}

void fetch_global_init(void)
{
    static int done;
    if (!done) curl_global_init(CURL_GLOBAL_DEFAULT);
    done = 1;
}

/* ---- progress: a bar on a TTY, else one plain line every 5 s; the deadline and the rate ------- */
enum give_up { GIVE_UP_NO, GIVE_UP_DEADLINE, GIVE_UP_SLOW };

struct progress {
    const char *name;
    bool tty, quiet;
    curl_off_t base;        /* bytes already in .part before this attempt */
    double start, last;     /* monotonic seconds */
    double deadline;        /* the whole download's end (monotonic; 0: none) */
    long min_rate, grace_s; /* fetch_opts min_rate_bytes, low_speed_time_s */
    enum give_up why;       /* set when this callback aborted the transfer */
    double rate;            /* the average at that moment (bytes/s) */
};

static int on_progress(void *p_, curl_off_t dltotal, curl_off_t dlnow, curl_off_t ultotal, curl_off_t ulnow)
{
    (void)ultotal; (void)ulnow;
    struct progress *p = p_;
    double t = now_seconds();
    /* curl calls this at least once a second, bytes or not: a returned 1 aborts the transfer */
    p->rate = (double)dlnow / (t - p->start + 1e-9);
    if (p->deadline > 0 && t >= p->deadline) return p->why = GIVE_UP_DEADLINE, 1;
    if (p->min_rate > 0 && t - p->start >= (double)p->grace_s && p->rate < (double)p->min_rate)
        return p->why = GIVE_UP_SLOW, 1;
    if (p->quiet || t - p->last < (p->tty ? 0.2 : 5.0)) return 0;
    p->last = t;
    double got = (double)(p->base + dlnow) / 1e6, total = (double)(p->base + dltotal) / 1e6;
    double rate = (double)dlnow / 1e6 / (t - p->start + 1e-9);
    if (p->tty && dltotal > 0) {
        int w = (int)(30 * got / total);
        char bar[31];
        for (int i = 0; i < 30; i++) bar[i] = i < w ? '=' : ' ';
        bar[30] = 0;
        fprintf(stderr, "\r  [%s] %3.0f%% %.1f/%.1f MB %.2f MB/s", bar, 100 * got / total, got, total, rate);
    } else if (p->tty) {
        fprintf(stderr, "\r  %.1f MB %.2f MB/s", got, rate);
    } else if (dltotal > 0) {
        fprintf(stderr, "  %s: %.1f of %.1f MB, %.2f MB/s\n", p->name, got, total, rate);
    } else {
        fprintf(stderr, "  %s: %.1f MB, %.2f MB/s\n", p->name, got, rate);
    }
    return 0;
}

/* ---- one attempt ------------------------------------------------------------------------------ */
/* GIVE_UP: the deadline or the minimum rate: no retry, and the .part is kept for a later try */
enum attempt { ATTEMPT_OK, ATTEMPT_RETRY, ATTEMPT_RESTART, ATTEMPT_FATAL, ATTEMPT_GIVE_UP };

static long file_size(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 ? (long)st.st_size : 0;
}

/* Remove our .part: a regular file, or a link planted there (unlinking a link never touches what it
 * points to); a FIFO, a device, a socket or a folder there is not ours and stays. */
static void remove_part(const char *part)
{
    struct stat st;
    if (lstat(part, &st) == 0 && (S_ISREG(st.st_mode) || S_ISLNK(st.st_mode))) unlink(part);
}

static enum attempt classify(CURLcode rc, long http, char *why, size_t n, const char *errbuf)
{
    if (rc == CURLE_OK) return ATTEMPT_OK;
    if (rc == CURLE_HTTP_RETURNED_ERROR) {
        snprintf(why, n, "server answered HTTP %ld", http);
        if (http == 416) return ATTEMPT_RESTART;   /* our .part is not a prefix any more */
        return (http == 408 || http == 429 || http >= 500) ? ATTEMPT_RETRY : ATTEMPT_FATAL;
    }
    snprintf(why, n, "%s", errbuf[0] ? errbuf : curl_easy_strerror(rc));
    switch ((int)rc) {   /* int: curl has ~100 codes; the rest retry */
    case CURLE_RANGE_ERROR: return ATTEMPT_RESTART;  /* server ignored Range: start over */
    case CURLE_UNSUPPORTED_PROTOCOL: case CURLE_URL_MALFORMAT: case CURLE_COULDNT_RESOLVE_HOST:
    case CURLE_COULDNT_RESOLVE_PROXY: case CURLE_FILE_COULDNT_READ_FILE: case CURLE_WRITE_ERROR:
    case CURLE_TOO_MANY_REDIRECTS: case CURLE_REMOTE_FILE_NOT_FOUND: case CURLE_LOGIN_DENIED:
    case CURLE_PEER_FAILED_VERIFICATION: case CURLE_SSL_CACERT_BADFILE: case CURLE_FILESIZE_EXCEEDED:
        return ATTEMPT_FATAL;
    default: return ATTEMPT_RETRY;   /* timeouts, resets, partial files, TLS hiccups */
    }
}

/* write that remembers why a write failed (disk full, quota) and stops at the size cap. */
struct sink { int fd; int err; long long have, cap; bool over; };

static size_t on_write(char *data, size_t size, size_t n, void *sink_)
{
    struct sink *k = sink_;
    size_t len = size * n;
    if (k->cap > 0 && k->have + (long long)len > k->cap) {
        k->over = true;
        return 0;   /* curl aborts the transfer: CURLE_WRITE_ERROR */
    }
    int err = write_all(k->fd, data, len);
    if (err) {
        if (!k->err) k->err = err;
        return 0;
    }
    k->have += (long long)len;
    return len;
}

/* A file:// URL names a regular file: curl would block forever in open() on a FIFO, and copy
 * /dev/zero until the size cap (core/regfile.h says why for the others). */
static bool file_url_ok(const char *url, char *why, size_t nwhy)
{
    if (strncasecmp(url, "file:", 5) != 0) return true;
    CURLU *u = curl_url();
    char *path = NULL, rwhy[160];
    bool ok = u && curl_url_set(u, CURLUPART_URL, url, 0) == CURLUE_OK &&
              curl_url_get(u, CURLUPART_PATH, &path, CURLU_URLDECODE) == CURLUE_OK;
    int fd = ok ? open_regular(path, 0, rwhy, sizeof rwhy) : -1;
    if (!ok) snprintf(why, nwhy, "not a file URL tipc can read");
    else if (fd < 0) snprintf(why, nwhy, "'%s' %s", path, rwhy);
    if (fd >= 0) close(fd);
    curl_free(path);
    curl_url_cleanup(u);
    return fd >= 0;
}

static enum attempt attempt_once(const char *url, const char *part, const struct fetch_opts *o, double deadline,
                                 char *why, size_t nwhy)
{
    if (!file_url_ok(url, why, nwhy)) return ATTEMPT_FATAL;
    long have = file_size(part);
    /* O_NONBLOCK, then fstat: a FIFO or a device planted as the .part is refused, never blocked on */
    int fd = open(part, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK, 0666);
    struct stat st;
    if (fd >= 0 && (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))) {
        close(fd);
        fd = -1;
        errno = EEXIST;
    }
    if (fd < 0) {
        snprintf(why, nwhy, "cannot write '%s': %s", part, errno == EEXIST || errno == ENXIO ? "it exists and is not a "
                 "regular file" : strerror(errno));
        return ATTEMPT_FATAL;
    }
    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
    CURL *c = curl_easy_init();
    CHECK(c != NULL, "curl_easy_init");
    char errbuf[CURL_ERROR_SIZE] = "";
    struct progress pr = {.name = url, .tty = isatty(2), .quiet = o->quiet, .base = have,
                          .start = now_seconds(), .last = now_seconds(), .deadline = deadline,
                          .min_rate = o->min_rate_bytes, .grace_s = o->low_speed_time_s};
    curl_easy_setopt(c, CURLOPT_URL, url);
    curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https,file");
    curl_easy_setopt(c, CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(c, CURLOPT_FOLLOWLOCATION, 1L);
    curl_easy_setopt(c, CURLOPT_MAXREDIRS, o->max_redirects);
    curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT, o->connect_timeout_s);
    curl_easy_setopt(c, CURLOPT_LOW_SPEED_LIMIT, o->low_speed_bytes);
    curl_easy_setopt(c, CURLOPT_LOW_SPEED_TIME, o->low_speed_time_s);
    if (deadline > 0)   /* curl's own limit too (a second later: the callback names the deadline first) */
        curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, (long)((deadline - pr.start) * 1000) + 1000);
    curl_easy_setopt(c, CURLOPT_FAILONERROR, 1L);
    curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(c, CURLOPT_ERRORBUFFER, errbuf);
    struct sink sink = {.fd = fd, .have = have, .cap = o->max_bytes};
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_write);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, &sink);
    curl_easy_setopt(c, CURLOPT_RESUME_FROM_LARGE, (curl_off_t)have);
    if (o->max_bytes > 0)   /* a declared Content-Length over the cap fails before any byte is written */
        curl_easy_setopt(c, CURLOPT_MAXFILESIZE_LARGE, (curl_off_t)(o->max_bytes > have ? o->max_bytes - have : 1));
    curl_easy_setopt(c, CURLOPT_NOPROGRESS, 0L);
    curl_easy_setopt(c, CURLOPT_XFERINFOFUNCTION, on_progress);
    curl_easy_setopt(c, CURLOPT_XFERINFODATA, &pr);
    curl_easy_setopt(c, CURLOPT_USERAGENT, "tipc-prepare/1");
    CURLcode rc = curl_easy_perform(c);
    long http = 0;
    curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &http);
    curl_easy_cleanup(c);
    if (pr.tty && !o->quiet) fputc('\n', stderr);
    if (rc == CURLE_FILESIZE_EXCEEDED) sink.over = true;
    if (!sink.err && !sink.over && fsync(fd) != 0) sink.err = errno;
    if (close(fd) != 0 && !sink.err) sink.err = errno;
    if (sink.over) {
        snprintf(why, nwhy, "the download is larger than %ld bytes, the most expected (the manifest's size, or "
                 "TIPC_MAX_DOWNLOAD); it was cut", o->max_bytes);
        return ATTEMPT_FATAL;
    }
    if (sink.err) {
        snprintf(why, nwhy, "cannot write '%s': %s", part, strerror(sink.err));
        return ATTEMPT_FATAL;
    }
    if (pr.why == GIVE_UP_SLOW) {
        snprintf(why, nwhy, "too slow: %.0f bytes/s on average after %.0f s, below the minimum of %ld "
                 "(TIPC_MIN_RATE / --min-rate)", pr.rate, now_seconds() - pr.start, o->min_rate_bytes);
        return ATTEMPT_GIVE_UP;
    }
    if (pr.why == GIVE_UP_DEADLINE || (deadline > 0 && rc == CURLE_OPERATION_TIMEDOUT && now_seconds() >= deadline)) {
        snprintf(why, nwhy, "the download did not finish within %ld s (TIPC_DOWNLOAD_TIMEOUT / "
                 "--download-timeout)", o->max_time_s);
        return ATTEMPT_GIVE_UP;
    }
    return classify(rc, http, why, nwhy, errbuf);
}

static enum tipc_status verify_into_place(const char *url, const char *part, const char *dest,
                                          const char *want)
{
    char got[65];
    TRY(sha256_file(part, got));
    if (strcasecmp(got, want) != 0) {
        unlink(part);   /* never reused: a resumed corrupt prefix would stay corrupt */
        error_msg(TIPC_EDATA, "'%s': sha256 mismatch: got %s, expected %s; the download was deleted", url, got, want);
        error_hint("check the sha256 in the manifest, or the URL (a proxy or captive portal may have answered)");
        return TIPC_EDATA;
    }
    if (rename(part, dest) != 0)
        return error_msg(TIPC_EDATA, "cannot rename '%s' to '%s': %s", part, dest, strerror(errno));
    return TIPC_OK;
}

/* 1: dest is there and verified; 0: absent, or ours and removed to be fetched again; -1: a file
 * of the user's that does not match (message printed, left untouched). */
static int cached(const char *dest, const char *want, bool ours)
{
    char got[65];
    struct stat sb;
    if (lstat(dest, &sb) != 0) return 0;
    if (S_ISREG(sb.st_mode) && sha256_file(dest, got) == TIPC_OK && strcasecmp(got, want) == 0) return 1;
    if (!ours || !S_ISREG(sb.st_mode)) {
        error_msg(TIPC_EDATA, "'%s' exists and is not the expected file (sha256 differs); tipc does not replace it", dest);
        error_hint("move it away or delete it yourself, then run again");
        return -1;
    }
    warning_msg("'%s' exists but its sha256 does not match; fetching it again", dest);
    unlink(dest);
    return 0;
}

enum tipc_status fetch_file(const char *url, const char *sha256, const char *dest,
                            const struct fetch_opts *o, bool *downloaded)
{
    if (downloaded) *downloaded = false;
    if (!sha256 || !sha256_is_hex(sha256))
        return error_msg(TIPC_EDATA, "'%s': no valid sha256 given (64 hex digits); refusing to use an unverified file", url);
    int c = cached(dest, sha256, o->replace_mismatch);
    if (c != 0) return c > 0 ? TIPC_OK : TIPC_EDATA;
    char *dir = path_dirname(dest);
    enum tipc_status st = mkdir_p(dir);
    free(dir);
    if (st != TIPC_OK) return TIPC_EDATA;
    fetch_global_init();
    char *part = xasprintf("%s.part", dest);
    char have[65];
    if (is_file(part) && sha256_file(part, have) == TIPC_OK && strcasecmp(have, sha256) == 0) {
        st = verify_into_place(url, part, dest, sha256);   /* complete, only the rename was missed */
        free(part);
        return st;
    }
    char why[CURL_ERROR_SIZE + 64] = "";
    long delay = o->backoff_ms;
    int restarts = 0;
    enum attempt a_last = ATTEMPT_RETRY;
    double deadline = o->max_time_s > 0 ? now_seconds() + (double)o->max_time_s : 0;
    for (int attempt = 0;; attempt++) {
        enum attempt a = a_last = attempt_once(url, part, o, deadline, why, sizeof why);
        if (a == ATTEMPT_OK) {
            if (downloaded) *downloaded = true;
            st = verify_into_place(url, part, dest, sha256);
            free(part);
            return st;
        }
        if (a == ATTEMPT_RESTART && restarts++ < 2) {   /* does not count as a retry */
            remove_part(part);
            attempt--;
            continue;
        }
        if (a == ATTEMPT_FATAL || a == ATTEMPT_GIVE_UP || attempt >= o->retries) break;
        if (deadline > 0 && now_seconds() + (double)delay / 1000 >= deadline) {   /* no time left for a retry */
            a_last = ATTEMPT_GIVE_UP;
            snprintf(why + strlen(why), sizeof why - strlen(why), "; no retry: the download's %ld s "
                     "(TIPC_DOWNLOAD_TIMEOUT) would be over", o->max_time_s);
            break;
        }
        if (!o->quiet)
            fprintf(stderr, "tipc: '%s': %s; retry %d of %d in %.1f s (keeping %ld bytes)\n", url, why,
                    attempt + 1, o->retries, (double)delay / 1000, file_size(part));
        usleep((useconds_t)delay * 1000);
        delay *= 2;
    }
    long kept = file_size(part);
    if (kept == 0 || a_last == ATTEMPT_FATAL) {   /* nothing to resume from: no debris */
        remove_part(part);
        kept = 0;
    }
    if (o->has_fallback)   /* used by design when offline or upstream is down: no `error:` */
        printf("prepare: note: cannot fetch '%s': %s\n", url, why);
    else
        error_msg(TIPC_EDATA, "cannot fetch '%s': %s", url, why);
    if (kept > 0) error_hint("%ld bytes kept in '%s'; the next try resumes from there", kept, part);
    free(part);
    return TIPC_EDATA;
}
