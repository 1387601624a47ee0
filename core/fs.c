/* fs.c: see fs.h. */
#include "fs.h"

#include <errno.h>
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
    char *tmp = xasprintf("%s.tmp-XXXXXX", target);
    if (!mkdtemp(tmp)) {
        error_msg(TIPC_EIO, "cannot create a temporary directory next to '%s': %s", target, strerror(errno));
        free(tmp);
        return NULL;
    }
    mode_t mask = umask(0);
    umask(mask);
    chmod(tmp, 0777 & ~mask);   /* mkdtemp makes 0700; the published tree gets normal permissions */
    return tmp;
}

enum tipc_status publish_dir(const char *tmp, const char *target)
{
    struct stat sb;
    char *old = NULL;
    if (lstat(target, &sb) == 0) {
        old = xasprintf("%s.old-%ld", target, (long)getpid());
        rm_rf(old);
        if (rename(target, old) != 0) {
            enum tipc_status st = error_msg(TIPC_EIO, "cannot move '%s' aside: %s", target, strerror(errno));
            free(old);
            return st;
        }
    }
    if (rename(tmp, target) != 0) {
        enum tipc_status st = error_msg(TIPC_EIO, "cannot rename '%s' to '%s': %s", tmp, target, strerror(errno));
        if (old && rename(old, target) != 0) warning_msg("old copy left at '%s'", old);
        free(old);
        return st;
    }
    if (old && rm_rf(old) != 0) warning_msg("cannot remove old copy '%s'", old);
    free(old);
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
