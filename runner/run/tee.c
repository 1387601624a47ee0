/* tee.c: see tee.h. */
#include "tee.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../core/check.h"
#include "../../core/banned.h"

#define TEE_LINE_MAX (64 << 10) /* a longer "line" is written out in pieces */
#define TEE_QUIET_MS 1000       /* after the child exited, stop after this long without output */

static int write_all(int fd, const char *p, size_t n)
{
    while (n > 0) {
        ssize_t w = write(fd, p, n);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) return w < 0 ? errno : EIO;
        p += w, n -= (size_t)w;
    }
    return 0;
}

static void log_flush_line(struct tee *t, int k)
{
    if (t->len[k] && !t->write_err) t->write_err = write_all(t->log_fd, t->line[k], t->len[k]);
    t->len[k] = 0;
}

/* Into the log: complete lines (the two streams' lines do not mix); a '\r' not followed by '\n'
 * starts the line over, as on a terminal. */
static void log_bytes(struct tee *t, int k, const char *p, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        char c = p[i];
        if (t->cr[k] && c != '\n') t->len[k] = 0; /* the terminal would overwrite the line */
        t->cr[k] = c == '\r';
        if (t->cr[k]) continue;
        t->line[k] = xgrow(t->line[k], 1, t->len[k] + 1, &t->cap[k]);
        t->line[k][t->len[k]++] = c;
        if (c == '\n' || t->len[k] >= TEE_LINE_MAX) log_flush_line(t, k);
    }
}

/* After n bytes went to the terminal's stderr: is its current line a redrawn one that still shows
 * something (a bar; "\r   \r", the bar erased, shows nothing)? */
static bool bar_after(bool open, const char *p, size_t n)
{
    const char *nl = memrchr(p, '\n', n), *seg = nl ? nl + 1 : p;
    size_t segn = n - (size_t)(seg - p);
    const char *cr = memrchr(seg, '\r', segn);
    if (cr) return (size_t)(cr + 1 - seg) < segn;
    return nl ? false : open;
}

/* Erase a bar stderr left on the terminal's current line (only where stderr is a terminal). */
static void erase_bar(struct tee *t)
{
    if (t->bar_open && isatty(2)) (void)write_all(2, "\r\033[K", 4);
    t->bar_open = false;
}

static void *tee_thread(void *arg)
{
    struct tee *t = arg;
    struct pollfd pf[2] = {{t->rd[0], POLLIN, 0}, {t->rd[1], POLLIN, 0}};
    int open_fds = 2, quiet_ms = 0;
    char buf[16384];
    while (open_fds > 0) {
        int r = poll(pf, 2, 100);
        if (r < 0 && errno != EINTR) break;
        if (r <= 0) {
            if (atomic_load(&t->child_done) && (quiet_ms += 100) >= TEE_QUIET_MS) break;
            continue;
        }
        quiet_ms = 0;
        for (int k = 0; k < 2; k++) {
            if (pf[k].fd < 0 || !(pf[k].revents & (POLLIN | POLLHUP | POLLERR))) continue;
            ssize_t n = read(pf[k].fd, buf, sizeof buf);
            if (n < 0 && errno == EINTR) continue;
            if (n <= 0) {
                close(pf[k].fd);
                pf[k].fd = -1, t->rd[k] = -1;
                open_fds--;
                continue;
            }
            if (k == 0) erase_bar(t);
            (void)write_all(k == 0 ? 1 : 2, buf, (size_t)n); /* the console is best effort; the log is not */
            if (k == 1) t->bar_open = bar_after(t->bar_open, buf, (size_t)n);
            log_bytes(t, k, buf, (size_t)n);
        }
    }
    for (int k = 0; k < 2; k++)
        if (t->rd[k] >= 0) close(t->rd[k]), t->rd[k] = -1;
    erase_bar(t);   /* a stage that ended with its bar on screen: tipc's next line starts clean */
    for (int k = 0; k < 2; k++) {
        if (t->cr[k]) t->len[k] = 0;
        log_flush_line(t, k); /* a last line without '\n' */
    }
    return NULL;
}

enum tipc_status tee_start(struct tee *t, const char *log_path)
{
    return tee_start_append(t, log_path, false);
}

enum tipc_status tee_start_append(struct tee *t, const char *log_path, bool append)
{
    memset(t, 0, sizeof *t);
    t->child_out = t->child_err = t->rd[0] = t->rd[1] = -1;
    t->log_path = log_path;
    /* O_NONBLOCK: a FIFO planted there without a reader fails (ENXIO) instead of hanging the run */
    t->log_fd = open(log_path, O_WRONLY | O_CREAT | (append ? O_APPEND : O_TRUNC) | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK,
                     0644);
    if (t->log_fd < 0) return error_at(TIPC_EIO, log_path, 0, "cannot create stage log: %s", strerror(errno));
    fcntl(t->log_fd, F_SETFL, fcntl(t->log_fd, F_GETFL) & ~O_NONBLOCK);
    int a[2], b[2];
    if (pipe2(a, O_CLOEXEC) != 0) {
        close(t->log_fd);
        return error_msg(TIPC_EIO, "cannot create a pipe for '%s': %s", log_path, strerror(errno));
    }
    if (pipe2(b, O_CLOEXEC) != 0) {
        close(a[0]), close(a[1]), close(t->log_fd);
        return error_msg(TIPC_EIO, "cannot create a pipe for '%s': %s", log_path, strerror(errno));
    }
    t->rd[0] = a[0], t->child_out = a[1], t->rd[1] = b[0], t->child_err = b[1];
    atomic_init(&t->child_done, 0);
    int e = pthread_create(&t->thread, NULL, tee_thread, t);
    if (e != 0) {
        close(a[0]), close(a[1]), close(b[0]), close(b[1]), close(t->log_fd);
        return error_msg(TIPC_EIO, "cannot start the log copier for '%s': %s", log_path, strerror(e));
    }
    return TIPC_OK;
}

void tee_started(struct tee *t)
{
    if (t->child_out >= 0) close(t->child_out);
    if (t->child_err >= 0) close(t->child_err);
    t->child_out = t->child_err = -1;
}

enum tipc_status tee_finish(struct tee *t)
{
    tee_started(t);
    atomic_store(&t->child_done, 1);
    pthread_join(t->thread, NULL);
    int err = t->write_err;
    if (fsync(t->log_fd) != 0 && !err && errno != EINVAL) err = errno;
    if (close(t->log_fd) != 0 && !err) err = errno;
    free(t->line[0]);
    free(t->line[1]);
    t->line[0] = t->line[1] = NULL;
    if (err) return error_at(TIPC_EIO, t->log_path, 0, "cannot write stage log: %s", strerror(err));
    return TIPC_OK;
}
