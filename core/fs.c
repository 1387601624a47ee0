/* fs.c: see fs.h. */
#include "fs.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "banned.h"

enum tipc_status mkdir_p(const char *path)
{
    char *p = xstrdup(path);
    for (char *s = p + 1;; s++) {
        if (*s != '/' && *s != 0) continue;
        char c = *s;
        *s = 0;
        if (mkdir(p, 0777) != 0 && errno != EEXIST) {
            enum tipc_status st = error_msg(TIPC_EIO, "cannot create directory '%s': %s", p, strerror(errno));
            free(p);
            return st;
        }
        *s = c;
        if (!c) break;
    }
    free(p);
    if (!is_dir(path)) return error_msg(TIPC_EIO, "'%s' exists and is not a directory", path);
    return TIPC_OK;
}

static int rm_one(const char *p, const struct stat *sb, int flag, struct FTW *ftw)
{
    (void)sb; (void)ftw;
    return (flag == FTW_DP ? rmdir(p) : unlink(p)) ? -1 : 0;
}

int rm_rf(const char *path)
{
    struct stat st;
    if (lstat(path, &st) != 0) return errno == ENOENT ? 0 : -1;
    if (!S_ISDIR(st.st_mode)) return unlink(path);
    return nftw(path, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

bool is_file(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

bool is_dir(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

char *path_dirname(const char *path)
{
    const char *slash = strrchr(path, '/');
    if (!slash) return xstrdup(".");
    if (slash == path) return xstrdup("/");
    return xstrndup(path, (size_t)(slash - path));
}

char *mkdtemp_beside(const char *target)
{
    char *parent = path_dirname(target);
    enum tipc_status st = mkdir_p(parent);
    free(parent);
    if (st != TIPC_OK) return NULL;
    char *tmp = temp_name(target);
    if (mkdir(tmp, 0777) != 0) {   /* umask applies: the published tree gets normal permissions */
        error_msg(TIPC_EIO, "cannot create a temporary directory next to '%s': %s", target, strerror(errno));
        free(tmp);
        return NULL;
    }
    return tmp;
}

/* 1 when dir has no entries, 0 when it has, -1 when unreadable. */
static int dir_empty(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d) return -1;
    struct dirent *e;
    int empty = 1;
    while (empty && (e = readdir(d)) != NULL)
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) empty = 0;
    closedir(d);
    return empty;
}

enum tipc_status check_replaceable(const char *target)
{
    struct stat sb;
    if (lstat(target, &sb) != 0) return TIPC_OK;
    if (S_ISDIR(sb.st_mode)) {
        char *marker = xasprintf("%s/%s", target, PREPARED_MARKER);
        struct stat ms;
        bool ours = lstat(marker, &ms) == 0 && S_ISREG(ms.st_mode);
        free(marker);
        if (ours || dir_empty(target) == 1) return TIPC_OK;
    }
    error_msg(TIPC_EDATA, "'%s' exists and was not made by tipc prepare (%s); it is left untouched", target,
              S_ISDIR(sb.st_mode) ? "no " PREPARED_MARKER " inside" : "not a folder");
    error_hint("move it away (mv '%s' '%s.mine') or delete it yourself, then run again; or point the "
               "config at it if it is a dataset you made", target, target);
    return TIPC_EDATA;
}

/* Make a rename in path's folder durable. */
static void fsync_parent(const char *path)
{
    char *dir = path_dirname(path);
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd >= 0) {
        fsync(fd);
        close(fd);
    }
    free(dir);
}

enum tipc_status publish_dir(const char *tmp, const char *target, const char *source)
{
    char *marker = xasprintf("%s/%s", tmp, PREPARED_MARKER);
    char *text = xasprintf("%s\n", source);
    enum tipc_status st = write_file_atomic(marker, text, strlen(text));
    free(marker);
    free(text);
    if (st != TIPC_OK) return TIPC_EDATA;
    int fd = open(tmp, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0 || syncfs(fd) != 0) {
        int err = errno;
        if (fd >= 0) close(fd);
        error_msg(TIPC_EDATA, "cannot flush '%s' to disk: %s; nothing was published", tmp, strerror(err));
        return TIPC_EDATA;
    }
    close(fd);
    TRY(check_replaceable(target));
    struct stat sb;
    char *old = NULL;
    bool exists = lstat(target, &sb) == 0;
    /* swap in one step where the file system can (no moment without a target, even on a crash);
     * the old tree is then at `tmp` and is removed */
    if (exists && renameat2(AT_FDCWD, tmp, AT_FDCWD, target, RENAME_EXCHANGE) == 0) {
        if (rm_rf(tmp) != 0) warning_msg("cannot remove old copy '%s'", tmp);
        fsync_parent(target);
        return TIPC_OK;
    }
    if (exists) {
        old = temp_name(target);
        if (rename(target, old) != 0) {
            st = error_msg(TIPC_EDATA, "cannot move '%s' aside: %s", target, strerror(errno));
            free(old);
            return st;
        }
    }
    if (rename(tmp, target) != 0) {
        st = error_msg(TIPC_EDATA, "cannot rename '%s' to '%s': %s", tmp, target, strerror(errno));
        if (old && rename(old, target) != 0) warning_msg("old copy left at '%s'", old);
        free(old);
        return st;
    }
    if (old && rm_rf(old) != 0) warning_msg("cannot remove old copy '%s'", old);
    free(old);
    fsync_parent(target);
    return TIPC_OK;
}

char *self_exe_path(void)
{
    char buf[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
    if (n <= 0) return NULL;
    buf[n] = 0;
    return xstrdup(buf);
}

int copy_file_to(const char *path, void *stream)
{
    FILE *in = fopen(path, "rb");
    if (!in) return errno;
    char buf[8192];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, in)) > 0) fwrite(buf, 1, n, (FILE *)stream);
    fclose(in);
    fflush((FILE *)stream);
    return 0;
}
