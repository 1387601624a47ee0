/* osutil.c: see osutil.h. */
#include "osutil.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "banned.h"

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
