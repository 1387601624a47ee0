/* binfile.c: see binfile.h. */
#include <stdlib.h>
#include <string.h>

#include "binfile.h"
#include "../../core/check.h"
#include "../../core/regfile.h"
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
    TRY(staged_open(&w->sf, path));
    w->hash = FNV1A64_INIT;
    bin_write(w, magic, 8);
    return TIPC_OK;
}

void bin_write(struct bin_writer *w, const void *p, size_t n)
{
    if (!n) return;
    w->hash = fnv1a64(w->hash, p, n);
    staged_write(&w->sf, p, n);
}

enum tipc_status bin_finish(struct bin_writer *w)
{
    uint64_t h = w->hash;
    staged_write(&w->sf, &h, sizeof h);
    return staged_finish(&w->sf);
}

enum tipc_status bin_commit(struct bin_writer *w)
{
    TRY(bin_finish(w));
    return staged_publish(&w->sf, 1);
}

enum tipc_status bin_open(struct bin_reader *r, const char *path, const char magic[8], const char *what)
{
    memset(r, 0, sizeof *r);
    r->path = path;
    char why[160];
    size_t n = 0;
    if (read_regular(path, REGFILE_MAX_MODEL, &r->buf, &n, why, sizeof why) != 0)
        return error_msg(TIPC_EIO, "cannot read %s '%s': %s", what, path, why);
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
