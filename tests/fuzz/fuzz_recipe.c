/* fuzz_recipe.c: libFuzzer harness for the YAML training recipe (engine/io/recipe.c). The input up
 * to the first "\n---8<---\n" is the recipe file (read through a memfd, as recipe_load reads any
 * file); each line after it is a `-o Section.key=value` override. When everything is accepted, the
 * learning-rate schedule is evaluated over the epochs. Errors are fine; crashes, leaks, hangs and
 * sanitizer reports are bugs.   make fuzz FUZZ_SECONDS=600 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "../../engine/io/recipe.h"

static const char SEP[] = "\n---8<---\n";

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static int fd = -1;
    static char path[64];
    if (fd < 0) {
        fd = memfd_create("recipe", 0);
        if (fd < 0) abort();
        snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
    }
    char *buf = malloc(size + 1);
    memcpy(buf, data, size);
    buf[size] = 0;
    char *cut = memmem(buf, size, SEP, sizeof SEP - 1);
    size_t yl = cut ? (size_t)(cut - buf) : size;
    if (ftruncate(fd, 0) || pwrite(fd, buf, yl, 0) != (ssize_t)yl) abort();
    struct recipe r;
    recipe_defaults(&r);
    enum tipc_status st = recipe_load(&r, path);
    for (char *line = cut ? cut + sizeof SEP - 1 : NULL, *nl; line && *line; line = nl ? nl + 1 : NULL) {
        nl = strchr(line, '\n');
        if (nl) *nl = 0;
        if (recipe_override(&r, line) != TIPC_OK) st = TIPC_EUSAGE;
    }
    if (st == TIPC_OK && r.epochs > 0 && r.epochs < 100000)
        for (int e = 0; e <= r.epochs && e < 1000; e++) (void)recipe_lr(&r, e + 0.5);
    (void)lr_schedule_name(r.lr_name);
    free(buf);
    return 0;
}
