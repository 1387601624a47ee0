/* regfile.c: see regfile.h. */
#include "regfile.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "banned.h"

static const char *kind_of(mode_t m)
{
    if (S_ISDIR(m)) return "a folder";
    if (S_ISFIFO(m)) return "a FIFO (named pipe)";
    if (S_ISCHR(m)) return "a character device";
    if (S_ISBLK(m)) return "a block device";
    if (S_ISSOCK(m)) return "a socket";
    return "not a plain file";
}

static void human(double b, char *buf, size_t n)
{
    const char *u[] = {"bytes", "KiB", "MiB", "GiB", "TiB"};
    int i = 0;
    while (b >= 1024 && i < 4) b /= 1024, i++;
    snprintf(buf, n, i ? "%.1f %s" : "%.0f %s", b, u[i]);
}

int open_regular(const char *path, size_t max_bytes, char *why, size_t nwhy)
{
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
    if (fd < 0) {
        snprintf(why, nwhy, "%s", strerror(errno));
        return -1;
    }
    struct stat st;
    if (fstat(fd, &st) != 0) {
        snprintf(why, nwhy, "%s", strerror(errno));
        close(fd);
        return -1;
    }
    if (!S_ISREG(st.st_mode)) {
        snprintf(why, nwhy, "is %s, not a regular file", kind_of(st.st_mode));
        close(fd);
        return -1;
    }
    if (max_bytes && (uint64_t)st.st_size > max_bytes) {
        char a[32], b[32];
        human((double)st.st_size, a, sizeof a);
        human((double)max_bytes, b, sizeof b);
        snprintf(why, nwhy, "is %s, more than the %s tipc reads from such a file", a, b);
        close(fd);
        return -1;
    }
    int fl = fcntl(fd, F_GETFL);
    if (fl >= 0) fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
    return fd;
}

FILE *fopen_regular(const char *path, size_t max_bytes, char *why, size_t nwhy)
{
    int fd = open_regular(path, max_bytes, why, nwhy);
    if (fd < 0) return NULL;
    FILE *f = fdopen(fd, "rb");
    if (!f) {
        snprintf(why, nwhy, "%s", strerror(errno));
        close(fd);
    }
    return f;
}

int read_regular(const char *path, size_t max_bytes, uint8_t **buf, size_t *len, char *why, size_t nwhy)
{
    *buf = NULL;
    *len = 0;
    int fd = open_regular(path, max_bytes, why, nwhy);
    if (fd < 0) return -1;
    struct stat st;
    size_t cap = fstat(fd, &st) == 0 ? (size_t)st.st_size + 1 : 1;   /* +1: notice growth */
    uint8_t *b = xmalloc(cap + 1);
    size_t n = 0;
    while (n < cap) {
        ssize_t r = read(fd, b + n, cap - n);
        if (r < 0 && errno == EINTR) continue;
        if (r < 0) {
            snprintf(why, nwhy, "read error: %s", strerror(errno));
            free(b);
            close(fd);
            return -1;
        }
        if (r == 0) break;
        n += (size_t)r;
    }
    close(fd);
    if (n == cap) {   /* more bytes than fstat said: another process is writing it */
        snprintf(why, nwhy, "changed while being read");
        free(b);
        return -1;
    }
    b[n] = 0;
    *buf = b;
    *len = n;
    return 0;
}
