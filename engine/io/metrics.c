/* metrics.c: see metrics.h. */
#include "metrics.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <unistd.h>

#include "../../core/check.h"
#include "../../core/banned.h"

double metrics_now(void)
{
    struct timeval tv;
    gettimeofday(&tv, NULL);
    return (double)tv.tv_sec + tv.tv_usec * 1e-6;
}

static enum tipc_status open_flags(struct metrics *m, const char *path, const char *stage, int extra)
{
    memset(m, 0, sizeof *m);
    m->fd = -1;
    if (!path || !*path) return TIPC_OK;
    /* appended to in place, never renamed over (a FIFO or a device stays one); O_NONBLOCK: a FIFO
     * that no process reads is an error (ENXIO), not an open() that blocks forever */
    m->fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | extra, 0644);
    if (m->fd < 0)
        return error_at(TIPC_EIO, path, 0, "cannot open metrics file: %s",
                        errno == ENXIO ? "a FIFO that no process reads" : strerror(errno));
    fcntl(m->fd, F_SETFL, fcntl(m->fd, F_GETFL) & ~O_NONBLOCK);
    m->path = xstrdup(path);
    m->stage = stage && *stage ? xstrdup(stage) : NULL;
    return TIPC_OK;
}

enum tipc_status metrics_open(struct metrics *m, const char *path, const char *stage)
{
    return open_flags(m, path, stage, 0);
}

enum tipc_status metrics_create(struct metrics *m, const char *path)
{
    return open_flags(m, path, NULL, O_TRUNC);
}

enum tipc_status metrics_emit(struct metrics *m, const char *event, json_t *obj)
{
    if (!obj) return TIPC_OK;
    if (m->fd < 0) {
        json_decref(obj);
        return TIPC_OK;
    }
    json_object_set_new(obj, "event", json_string(event));
    json_object_set_new(obj, "t", json_real(metrics_now()));
    if (m->stage) json_object_set_new(obj, "stage", json_string(m->stage)); /* NULL (bad UTF-8) is ignored */
    /* JSON_ENSURE_ASCII: every line is ASCII, whatever a path or host name holds */
    char *line = json_dumps(obj, JSON_COMPACT | JSON_ENSURE_ASCII | JSON_PRESERVE_ORDER);
    json_decref(obj);
    if (!line) return error_at(TIPC_EIO, m->path, 0, "cannot format a metrics line (out of memory)");
    size_t n = strlen(line);
    line[n] = '\n'; /* json_dumps' buffer has room: its NUL is replaced, the length is passed */
    ssize_t w;
    do w = write(m->fd, line, n + 1);
    while (w < 0 && errno == EINTR);
    int err = w < 0 ? errno : (size_t)w != n + 1 ? ENOSPC : 0;
    free(line);
    if (err) return error_at(TIPC_EIO, m->path, 0, "cannot append to metrics file: %s", strerror(err));
    return TIPC_OK;
}

void metrics_close(struct metrics *m)
{
    if (m->fd >= 0) close(m->fd);
    free(m->path);
    free(m->stage);
    memset(m, 0, sizeof *m);
    m->fd = -1;
}
