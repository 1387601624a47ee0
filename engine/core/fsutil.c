/* fsutil.c: see fsutil.h. */
#include "fsutil.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "banned.h"

int mkdir_p(const char *path, unsigned mode)
{
    char *p = xstrdup(path);
    int err = 0;
    for (char *q = p + 1; ; q++) {
        if (*q == '/' || *q == 0) {
            char c = *q;
            *q = 0;
            if (mkdir(p, (mode_t)mode) != 0 && errno != EEXIST) { err = errno; break; }
            *q = c;
            if (!c) break;
        }
    }
    if (!err) {
        struct stat st;
        if (stat(path, &st) != 0) err = errno;
        else if (!S_ISDIR(st.st_mode)) err = ENOTDIR;
    }
    free(p);
    return err;
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
