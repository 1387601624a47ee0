/* staged.c: see staged.h. */
#include "staged.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "banned.h"

int write_all(int fd, const void *p, size_t n)
{
    const char *b = p;
    while (n > 0) {
        ssize_t w = write(fd, b, n);
        if (w < 0 && errno == EINTR) continue;
        if (w < 0) return errno ? errno : EIO;
        if (w == 0) return ENOSPC;
        b += w;
        n -= (size_t)w;
    }
    return 0;
}

/* ---- temp names ------------------------------------------------------------------------------ */

/* This host's name as it appears in temp names: [A-Za-z0-9-] only, at most 32 characters. */
static const char *host_tag(void)
{
    static char tag[40];
    if (tag[0]) return tag;
    char h[256] = "";
    if (gethostname(h, sizeof h - 1) != 0 || !h[0]) snprintf(h, sizeof h, "localhost");
    size_t n = 0;
    for (const char *p = h; *p && n < 32; p++) tag[n++] = isalnum((unsigned char)*p) || *p == '-' ? *p : '_';
    tag[n] = 0;
    return tag;
}

char *temp_name(const char *target)
{
    static const char al[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
    static unsigned long counter;
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    unsigned long long x = (unsigned long long)ts.tv_nsec ^ ((unsigned long long)getpid() << 32) ^
                           (__atomic_add_fetch(&counter, 1, __ATOMIC_RELAXED) * 0x9E3779B97F4A7C15ULL);
    char r[7];
    for (int i = 0; i < 6; i++) {
        x = x * 6364136223846793005ULL + 1442695040888963407ULL;
        r[i] = al[(x >> 33) % (sizeof al - 1)];
    }
    r[6] = 0;
    return xasprintf("%s.tmp.%ld.%s.%s", target, (long)getpid(), host_tag(), r);
}

static int pid_gone(long pid)
{
    return pid > 0 && pid != (long)getpid() && kill((pid_t)pid, 0) != 0 && errno == ESRCH;
}

/* Parse ".tmp.<pid>" at s; *end after the digits. */
static long tmp_pid(const char *s, const char **end)
{
    if (strncmp(s, ".tmp.", 5) != 0 || !isdigit((unsigned char)s[5])) return -1;
    long pid = 0;
    const char *p = s + 5;
    while (isdigit((unsigned char)*p) && pid < 1L << 30) pid = pid * 10 + (*p++ - '0');
    *end = p;
    return pid;
}

int temp_is_stale(const char *name)
{
    /* ours: "<target>.tmp.<pid>.<host>.<6 chars>"; the target part may itself contain ".tmp." */
    size_t n = strlen(name);
    const char *host = host_tag();
    size_t hn = strlen(host);
    for (const char *s = strstr(name, ".tmp."); s; s = strstr(s + 1, ".tmp.")) {
        if (s == name) continue;
        const char *e;
        long pid = tmp_pid(s, &e);
        if (pid < 0) continue;
        if (*e == 0) {   /* legacy checkpoint / model temp: "<x>.ckpt.tmp.<pid>", "<x>.tipc.tmp.<pid>" */
            size_t k = (size_t)(s - name);
            bool legacy = (k > 5 && !memcmp(s - 5, ".ckpt", 5)) || (k > 5 && !memcmp(s - 5, ".tipc", 5));
            return legacy && pid_gone(pid);
        }
        if (*e == '.' && (size_t)(name + n - (e + 1)) == hn + 7 && !memcmp(e + 1, host, hn) && e[1 + hn] == '.')
            return pid_gone(pid);
    }
    return 0;
}

static int rm_one(const char *p, const struct stat *sb, int flag, struct FTW *ftw)
{
    (void)sb; (void)ftw;
    return (flag == FTW_DP ? rmdir(p) : unlink(p)) ? -1 : 0;
}

int temp_sweep(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d) return 0;
    int removed = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (!temp_is_stale(e->d_name)) continue;
        char *full = xasprintf("%s/%s", dir, e->d_name);
        struct stat st;
        int rc = lstat(full, &st) != 0 ? -1
                 : S_ISDIR(st.st_mode) ? nftw(full, rm_one, 16, FTW_DEPTH | FTW_PHYS)
                                       : unlink(full);
        if (rc == 0) {
            removed++;
            fprintf(stderr, "tipc: removed '%s', left by an interrupted write of a process that is gone\n", full);
        } else {
            warning_msg("cannot remove stale temp '%s': %s", full, strerror(errno));
        }
        free(full);
    }
    closedir(d);
    return removed;
}

/* ---- staged files ---------------------------------------------------------------------------- */

static char *dir_of(const char *path)
{
    const char *slash = strrchr(path, '/');
    if (!slash) return xstrdup(".");
    if (slash == path) return xstrdup("/");
    return xstrndup(path, (size_t)(slash - path));
}

static const char *kind_of(mode_t m)
{
    return S_ISDIR(m) ? "a folder" : S_ISBLK(m) ? "a block device" : S_ISSOCK(m) ? "a socket"
           : S_ISFIFO(m) ? "a FIFO" : S_ISCHR(m) ? "a character device" : "not a regular file";
}

/* 1 or 2 when st is the file this process's stdout or stderr is (a terminal, a pipe, a log file). */
static int stdio_fd_of(const struct stat *st)
{
    for (int fd = 1; fd <= 2; fd++) {
        struct stat o;
        if (fstat(fd, &o) == 0 && o.st_dev == st->st_dev && o.st_ino == st->st_ino) return fd;
    }
    return 0;
}

int staged_stdio_fd(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 ? stdio_fd_of(&st) : 0;
}

/* Open the existing non-regular `path` for writing in place (staged_open's second list). */
static enum tipc_status open_direct(struct staged_file *s, const char *path, const struct stat *st)
{
    int fd = stdio_fd_of(st);
    if (fd) {   /* into our own stream, in order with what stdio holds */
        fflush(stdout);
        fflush(stderr);
        s->fd = fcntl(fd, F_DUPFD_CLOEXEC, 3);
    } else {    /* O_NONBLOCK: a FIFO without a reader fails (ENXIO) instead of blocking forever */
        s->fd = open(path, O_WRONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
        struct stat now;
        if (s->fd >= 0 && (fstat(s->fd, &now) != 0 || S_ISREG(now.st_mode) || S_ISDIR(now.st_mode))) {
            close(s->fd);   /* swapped for a regular file since the lstat: never written untruncated */
            s->fd = -1;
            errno = EAGAIN;
        }
        if (s->fd >= 0) fcntl(s->fd, F_SETFL, fcntl(s->fd, F_GETFL) & ~O_NONBLOCK);
    }
    if (s->fd < 0) {
        int e = errno;
        enum tipc_status rc = error_msg(TIPC_EIO, "cannot write '%s' (%s): %s", path, kind_of(st->st_mode),
                                        e == ENXIO && S_ISFIFO(st->st_mode) ? "no process reads that FIFO" : strerror(e));
        memset(s, 0, sizeof *s);
        s->fd = -1;
        return rc;
    }
    s->path = xstrdup(path);
    s->direct = true;
    return TIPC_OK;
}

/* What staged_open does with an existing `path`: 0 stage it (*real: the file to replace, malloc'ed),
 * 1 write it directly (*st filled), or a refusal (message printed). */
static int target_plan(const char *path, struct stat *st, char **real, enum tipc_status *refused)
{
    *real = NULL;
    struct stat l;
    if (lstat(path, &l) != 0) return 0;                     /* new (or unreachable: the create says why) */
    bool followed = stat(path, st) == 0;
    if (followed && stdio_fd_of(st)) return 1;              /* our stdout/stderr, whatever its kind */
    if (S_ISREG(l.st_mode)) return 0;
    if (S_ISLNK(l.st_mode) && followed && S_ISREG(st->st_mode)) {
        *real = realpath(path, NULL);
        return 0;
    }
    if (followed && (S_ISFIFO(st->st_mode) || S_ISCHR(st->st_mode))) return 1;
    if (!followed)
        *refused = error_msg(TIPC_EUSAGE, "'%s' is a symbolic link to a file that does not exist; tipc neither writes "
                             "through it nor replaces it", path);
    else
        *refused = error_msg(TIPC_EUSAGE, "cannot write '%s': it is %s%s", path, kind_of(st->st_mode),
                             S_ISLNK(l.st_mode) ? " (through a symbolic link)" : "");
    error_hint("give the path of a regular file (it is replaced whole), a FIFO or a character device");
    return -1;
}

enum tipc_status staged_open(struct staged_file *s, const char *path)
{
    memset(s, 0, sizeof *s);
    s->fd = -1;
    struct stat st;
    char *real;
    enum tipc_status refused = TIPC_EUSAGE;
    int plan = target_plan(path, &st, &real, &refused);
    if (plan < 0) return refused;
    if (plan == 1) return open_direct(s, path, &st);
    if (real) path = real;   /* a link to a regular file: replace the file it points to */
    char *dir = dir_of(path);
    temp_sweep(dir);
    free(dir);
    s->path = xstrdup(path);
    s->tmp = temp_name(path);
    s->fd = open(s->tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0666);
    if (s->fd < 0) {
        enum tipc_status rc = error_msg(TIPC_EIO, "cannot create '%s': %s", path, strerror(errno));
        free(s->path);
        free(s->tmp);
        memset(s, 0, sizeof *s);
        s->fd = -1;
        free(real);
        return rc;
    }
    free(real);
    return TIPC_OK;
}

void staged_write(struct staged_file *s, const void *p, size_t n)
{
    if (s->err || !n || s->fd < 0) return;
    s->err = write_all(s->fd, p, n);
}

void staged_abort(struct staged_file *s)
{
    if (s->fd >= 0) close(s->fd);
    if (s->tmp) unlink(s->tmp);   /* a direct target has none: it is never removed */
    free(s->path);
    free(s->tmp);
    memset(s, 0, sizeof *s);
    s->fd = -1;
}

enum tipc_status staged_finish(struct staged_file *s)
{
    int err = s->err;
    /* a pipe, a terminal or /dev/null has nothing to sync (EINVAL, ENOTSUP): not a failure there */
    if (!err && fsync(s->fd) != 0 && !(s->direct && (errno == EINVAL || errno == ENOTSUP || errno == EROFS)))
        err = errno;
    if (close(s->fd) != 0 && !err) err = errno;
    s->fd = -1;
    if (err) {
        enum tipc_status st = error_msg(TIPC_EIO, "cannot write '%s': %s", s->path, strerror(err));
        if ((err == ENOSPC || err == EDQUOT) && !s->direct)
            error_hint("free some space on that file system; the previous file, if any, is untouched");
        staged_abort(s);
        return st;
    }
    s->done = true;
    return TIPC_OK;
}

static void fsync_dir_of(const char *path)
{
    char *dir = dir_of(path);
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd >= 0) {
        fsync(fd);
        close(fd);
    }
    free(dir);
}

enum tipc_status staged_publish(struct staged_file *set, int n)
{
    enum tipc_status st = TIPC_OK;
    char **backup = xcalloc((size_t)n, sizeof *backup);
    int renamed = 0;
    for (int i = 0; i < n; i++)
        if (!set[i].done) BUG("staged_publish: '%s' was not finished", set[i].path ? set[i].path : "?");
    /* 1. hard links keep every old target reachable until the whole set is in place (a direct
     * target was written in place: nothing to link, rename or roll back) */
    for (int i = 0; i < n && st == TIPC_OK; i++) {
        struct stat sb;
        if (set[i].direct || lstat(set[i].path, &sb) != 0) continue;
        backup[i] = temp_name(set[i].path);
        if (link(set[i].path, backup[i]) != 0) {
            st = error_msg(TIPC_EIO, "cannot keep a backup of '%s' while replacing it: %s", set[i].path, strerror(errno));
            free(backup[i]);
            backup[i] = NULL;
        }
    }
    /* 2. the renames; on a failure put the old files back */
    for (; st == TIPC_OK && renamed < n; renamed++) {
        if (set[renamed].direct) continue;
        if (rename(set[renamed].tmp, set[renamed].path) != 0) {
            st = error_msg(TIPC_EIO, "cannot rename '%s' to '%s': %s", set[renamed].tmp, set[renamed].path,
                           strerror(errno));
            break;
        }
    }
    if (st != TIPC_OK) {
        for (int i = 0; i < renamed; i++) {
            if (set[i].direct) continue;
            int rc = backup[i] ? rename(backup[i], set[i].path) : unlink(set[i].path);
            if (rc == 0) {
                free(backup[i]);
                backup[i] = NULL;
            } else if (backup[i]) {   /* keep the old file where it is, and say so */
                warning_msg("cannot restore '%s' (%s); the previous file is kept as '%s'", set[i].path,
                            strerror(errno), backup[i]);
                free(backup[i]);
                backup[i] = NULL;
            } else {
                warning_msg("cannot remove the new '%s': %s", set[i].path, strerror(errno));
            }
        }
        if (n > 1 && renamed > 0) error_hint("the previous files were put back");
    } else {
        for (int i = 0; i < n; i++)
            if (!set[i].direct) fsync_dir_of(set[i].path);
    }
    for (int i = 0; i < n; i++) {
        if (backup[i]) unlink(backup[i]);
        free(backup[i]);
        if ((st != TIPC_OK || i >= renamed) && set[i].tmp) unlink(set[i].tmp);
        free(set[i].path);
        free(set[i].tmp);
        memset(&set[i], 0, sizeof set[i]);
        set[i].fd = -1;
    }
    free(backup);
    return st;
}

enum tipc_status staged_commit(struct staged_file *s)
{
    TRY(staged_finish(s));
    return staged_publish(s, 1);
}

enum tipc_status write_file_atomic(const char *path, const void *data, size_t n)
{
    struct staged_file s;
    TRY(staged_open(&s, path));
    staged_write(&s, data, n);
    return staged_commit(&s);
}

enum tipc_status dir_check_writable(const char *dir, const char *what)
{
    char *base = xasprintf("%s/.tipc-write-check", dir);
    char *probe = temp_name(base);
    free(base);
    int fd = open(probe, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    int err = fd < 0 ? errno : 0;
    if (fd >= 0) {
        err = write_all(fd, "x", 1);
        if (close(fd) != 0 && !err) err = errno;
        unlink(probe);
    }
    free(probe);
    if (!err) return TIPC_OK;
    error_msg(TIPC_EIO, "%s '%s' is not writable: %s", what, dir, strerror(err));
    error_hint("choose a writable folder (a read-only mount or missing permission was found before any work started)");
    return TIPC_EIO;
}
