/* lock.c: one `tipc run` per output folder (lock.h). */
#include "lock.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <time.h>
#include <unistd.h>

#include "../../core/check.h"
#include "../../core/banned.h"

static int open_lock(const char *own_dir)
{
    char *path = xasprintf("%s/run.lock", own_dir);
    /* O_NOFOLLOW: a planted link cannot make us truncate another file; CLOEXEC: no stage holds it */
    int fd = open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK, 0644);
    free(path);
    return fd;
}

/* Who holds it: the lock file's first line (written by the holder), or "?". */
static char *holder(int fd)
{
    char buf[1024];
    ssize_t n = pread(fd, buf, sizeof buf - 1, 0);
    if (n <= 0) return xstrdup("a run that has not said who it is yet");
    buf[n] = 0;
    buf[strcspn(buf, "\n")] = 0;
    return xstrdup(buf);
}

enum tipc_status run_lock_take(const char *out_dir, const char *own_dir, const char *what, int *out)
{
    *out = -1;
    int fd = open_lock(own_dir);
    if (fd < 0) return error_msg(TIPC_EIO, "cannot open the lock of output folder '%s' (%s/run.lock): %s", out_dir,
                                 own_dir, strerror(errno));
    if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
        int e = errno;
        char *who = e == EWOULDBLOCK ? holder(fd) : NULL;
        close(fd);
        if (!who) return error_msg(TIPC_EIO, "cannot lock output folder '%s' (%s/run.lock): %s", out_dir, own_dir, strerror(e));
        error_msg(TIPC_EUSAGE, "output folder '%s' is in use by another tipc run: %s", out_dir, who);
        error_hint("wait for that run to end, or give this one its own folder (--output DIR); two runs in one folder "
                   "would mix their logs and models");
        free(who);
        return TIPC_EUSAGE;
    }
    char host[256] = "?", when[40] = "?";
    gethostname(host, sizeof host - 1);
    time_t now = time(NULL);
    struct tm tm;
    strftime(when, sizeof when, "%Y-%m-%d %H:%M:%S UTC", gmtime_r(&now, &tm));
    char *line = xasprintf("pid %d on %s since %s (tipc run %s)\n", (int)getpid(), host, when, what);
    size_t n = strlen(line);
    bool ok = ftruncate(fd, 0) == 0 && pwrite(fd, line, n, 0) == (ssize_t)n;
    free(line);
    if (!ok) {
        int e = errno;
        close(fd);
        return error_msg(TIPC_EIO, "cannot write the lock of output folder '%s' (%s/run.lock): %s", out_dir, own_dir,
                         strerror(e));
    }
    *out = fd;
    return TIPC_OK;
}

bool run_lock_try(const char *own_dir, int *out)
{
    *out = -1;
    int fd = open_lock(own_dir);
    if (fd < 0) return false;
    if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
        close(fd);
        return false;
    }
    *out = fd;
    return true;
}

void run_lock_release(int fd)
{
    if (fd >= 0) close(fd);   /* closing the last descriptor drops the flock */
}
