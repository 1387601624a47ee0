/* binfile.c: see binfile.h. */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "binfile.h"
#include "../../core/check.h"
#include "../../core/banned.h"

uint64_t fnv1a64(uint64_t h, const void *p, size_t n)
{
    const uint8_t *b = p;
    for (size_t i = 0; i < n; i++) h = (h ^ b[i]) * 0x100000001b3ULL;
    return h;
}

enum tipc_status bin_create(struct bin_writer *w, const char *path, const char magic[8])
{
    memset(w, 0, sizeof *w);
    w->path = xstrdup(path);
    w->tmp = xasprintf("%s.tmp.%ld", path, (long)getpid());
    w->f = fopen(w->tmp, "wb");
    if (!w->f) {
        enum tipc_status st = error_msg(TIPC_EIO, "cannot create '%s': %s", w->tmp, strerror(errno));
        free(w->path);
        free(w->tmp);
        memset(w, 0, sizeof *w);
        return st;
    }
    w->hash = FNV1A64_INIT;
    bin_write(w, magic, 8);
    return TIPC_OK;
}

void bin_write(struct bin_writer *w, const void *p, size_t n)
{
    if (w->failed || !n) return;
    w->hash = fnv1a64(w->hash, p, n);
    if (fwrite(p, 1, n, w->f) != n) w->failed = true;
}

void bin_abort(struct bin_writer *w)
{
    if (w->f) fclose(w->f);
    if (w->tmp) unlink(w->tmp);
    free(w->path);
    free(w->tmp);
    memset(w, 0, sizeof *w);
}

enum tipc_status bin_commit(struct bin_writer *w)
{
    uint64_t h = w->hash;
    if (!w->failed && fwrite(&h, sizeof h, 1, w->f) != 1) w->failed = true;
    int err = 0;
    if (w->failed || fflush(w->f) || fsync(fileno(w->f))) err = errno ? errno : EIO;
    if (fclose(w->f) && !err) err = errno;
    w->f = NULL;
    if (!err && rename(w->tmp, w->path)) err = errno;
    if (err) {
        enum tipc_status st = error_msg(TIPC_EIO, "cannot write '%s': %s", w->path, strerror(err));
        bin_abort(w);
        return st;
    }
    char *dir = xstrdup(w->path);
    int dfd = open(dirname(dir), O_RDONLY | O_DIRECTORY);
    if (dfd >= 0) {
        fsync(dfd);
        close(dfd);
    }
    free(dir);
    free(w->path);
    free(w->tmp);
    memset(w, 0, sizeof *w);
    return TIPC_OK;
}

enum tipc_status bin_open(struct bin_reader *r, const char *path, const char magic[8], const char *what)
{
    memset(r, 0, sizeof *r);
    r->path = path;
    FILE *f = fopen(path, "rb");
    if (!f) return error_msg(TIPC_EIO, "cannot open %s '%s': %s", what, path, strerror(errno));
    struct stat st;
    if (fstat(fileno(f), &st) || !S_ISREG(st.st_mode)) {
        fclose(f);
        return error_msg(TIPC_EIO, "%s '%s' is not a regular file", what, path);
    }
    size_t n = (size_t)st.st_size;
    r->buf = xmalloc(n ? n : 1);
    size_t got = fread(r->buf, 1, n, f);
    fclose(f);
    if (got != n) {
        bin_close(r);
        return error_msg(TIPC_EIO, "cannot read %s '%s'", what, path);
    }
    if (n < 16 || memcmp(r->buf, magic, 8)) {
        bin_close(r);
        return error_msg(TIPC_EIO, "'%s' is not a tipc %s (bad magic%s)", path, what, n < 16 ? ", too short" : "");
    }
    uint64_t want;
    memcpy(&want, r->buf + n - 8, 8);
    if (fnv1a64(FNV1A64_INIT, r->buf, n - 8) != want) {
        bin_close(r);
        error_msg(TIPC_EIO, "%s '%s' is corrupt or truncated (checksum mismatch)", what, path);
        error_hint("the file was not written completely; use an earlier one (e.g. epoch_N.ckpt)");
        return TIPC_EIO;
    }
    r->n = n - 8;
    r->pos = 8;
    return TIPC_OK;
}

const void *bin_peek(struct bin_reader *r, size_t n)
{
    if (n > r->n - r->pos) return NULL;
    const void *p = r->buf + r->pos;
    r->pos += n;
    return p;
}

bool bin_read(struct bin_reader *r, void *p, size_t n)
{
    const void *s = bin_peek(r, n);
    if (!s) return false;
    memcpy(p, s, n);
    return true;
}

void bin_close(struct bin_reader *r)
{
    free(r->buf);
    memset(r, 0, sizeof *r);
}
