/* extract.c: libarchive read -> checks -> archive_write_disk into a temp dir -> rename.
 * libarchive's own ARCHIVE_EXTRACT_SECURE_* flags are on as a second line of defence, but the
 * decision (refuse the whole archive) is ours, made on the entry names before anything is written. */
#include "extract.h"

#include <archive.h>
#include <archive_entry.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "../core/fs.h"
#include "../core/check.h"
#include "../core/banned.h"

/* Walk `path` component by component starting at `depth`; -1 as soon as it climbs above 0.
 * `..` is only accepted before the first normal component: after one, it could climb out of a
 * directory that is itself a symlink (a/b -> .. ; x -> a/b/..), which no lexical walk sees. */
static int walk_depth(const char *path, int depth)
{
    const char *p = path;
    int descended = 0;
    while (*p) {
        const char *e = strchr(p, '/');
        size_t n = e ? (size_t)(e - p) : strlen(p);
        if (n == 2 && p[0] == '.' && p[1] == '.') {
            if (descended || --depth < 0) return -1;
        } else if (n > 0 && !(n == 1 && p[0] == '.')) {
            depth++;
            descended = 1;
        }
        p += n;
        if (*p == '/') p++;
    }
    return depth;
}

static int has_dotdot(const char *path)
{
    for (const char *p = path; (p = strstr(p, "..")) != NULL; p += 2)
        if ((p == path || p[-1] == '/') && (p[2] == 0 || p[2] == '/')) return 1;
    return 0;
}

int extract_path_is_safe(const char *name, const char *link, int is_symlink)
{
    if (!name || !*name || name[0] == '/' || has_dotdot(name)) return -1;
    if (!link) return 0;
    if (!*link || link[0] == '/') return -1;
    if (!is_symlink) return has_dotdot(link) ? -1 : 0;
    /* symlink: resolve lexically from the entry's folder (depth = its number of components) */
    int depth = walk_depth(name, 0) - 1;
    if (depth < 0) return -1;
    return walk_depth(link, depth) < 0 ? -1 : 0;
}

static enum tipc_status refuse(const char *archive, const char *name, const char *why)
{
    error_msg(TIPC_EDATA, "'%s': refusing entry '%s': %s; nothing was extracted", archive, name, why);
    error_hint("the archive is unsafe or damaged; get it again from a trusted source");
    return TIPC_EDATA;
}

static enum tipc_status check_entry(const char *archive, struct archive_entry *e)
{
    const char *name = archive_entry_pathname(e);
    const char *hard = archive_entry_hardlink(e);
    const char *sym = archive_entry_symlink(e);
    mode_t type = archive_entry_filetype(e);
    if (!name) return refuse(archive, "?", "entry without a name");
    if (name[0] == '/') return refuse(archive, name, "absolute path");
    if (has_dotdot(name)) return refuse(archive, name, "path contains '..'");
    if (hard && extract_path_is_safe(name, hard, 0) != 0)
        return refuse(archive, name, "hardlink pointing outside the target");
    if (type == AE_IFLNK && extract_path_is_safe(name, sym ? sym : "", 1) != 0)
        return refuse(archive, name, "symlink pointing outside the target");
    if (!hard && type != AE_IFREG && type != AE_IFDIR && type != AE_IFLNK)
        return refuse(archive, name, "not a file, folder or link");
    return TIPC_OK;
}

/* A write to disk failed: name the entry and errno's text. */
static enum tipc_status write_failed(struct archive *out, const char *archive, const char *name)
{
    int err = archive_errno(out);
    const char *msg = archive_error_string(out);
    error_msg(TIPC_EDATA, "'%s': cannot write entry '%s': %s%s%s; nothing was published", archive, name,
              msg ? msg : "write failed", err > 0 ? ": " : "", err > 0 ? strerror(err) : "");
    if (err == ENOSPC || err == EDQUOT) error_hint("free some space where the dataset goes, then run again");
    return TIPC_EDATA;
}

static enum tipc_status copy_data(struct archive *in, struct archive *out, const char *archive, const char *name)
{
    const void *buf;
    size_t size;
    la_int64_t off;
    for (;;) {
        int r = archive_read_data_block(in, &buf, &size, &off);
        if (r == ARCHIVE_EOF) return TIPC_OK;
        if (r != ARCHIVE_OK)
            return error_msg(TIPC_EDATA, "'%s': entry '%s': %s", archive, name, archive_error_string(in));
        /* libarchive reports a failed write(2) (ENOSPC, EIO) as ARCHIVE_WARN: a warning is a failure */
        if (archive_write_data_block(out, buf, size, off) != ARCHIVE_OK)
            return write_failed(out, archive, name);
    }
}

/* Unpack every entry of `archive` under directory `tmp`. */
static enum tipc_status unpack(const char *archive, const char *tmp)
{
    struct archive *in = archive_read_new(), *out = archive_write_disk_new();
    archive_read_support_format_tar(in);
    archive_read_support_format_gnutar(in);
    archive_read_support_format_zip(in);
    archive_read_support_filter_gzip(in);
    archive_read_support_filter_bzip2(in);
    archive_read_support_filter_xz(in);
    archive_write_disk_set_options(out, ARCHIVE_EXTRACT_TIME | ARCHIVE_EXTRACT_SECURE_SYMLINKS |
                                            ARCHIVE_EXTRACT_SECURE_NODOTDOT);
    enum tipc_status st = TIPC_OK;
    if (archive_read_open_filename(in, archive, 1 << 16) != ARCHIVE_OK) {
        st = error_msg(TIPC_EDATA, "cannot open archive '%s': %s", archive, archive_error_string(in));
        goto done;
    }
    struct archive_entry *e;
    int r;
    while ((r = archive_read_next_header(in, &e)) == ARCHIVE_OK) {
        if ((st = check_entry(archive, e)) != TIPC_OK) goto done;
        char *name = xstrdup(archive_entry_pathname(e));
        char *full = xasprintf("%s/%s", tmp, name);
        archive_entry_set_pathname(e, full);
        if (archive_entry_hardlink(e)) {
            char *hl = xasprintf("%s/%s", tmp, archive_entry_hardlink(e));
            archive_entry_set_hardlink(e, hl);
            free(hl);
        }
        archive_entry_set_perm(e, archive_entry_filetype(e) == AE_IFDIR ? 0755 : 0644);
        if (archive_write_header(out, e) != ARCHIVE_OK)
            st = write_failed(out, archive, name);
        else if (archive_entry_size(e) > 0)
            st = copy_data(in, out, archive, name);
        if (st == TIPC_OK && archive_write_finish_entry(out) != ARCHIVE_OK) st = write_failed(out, archive, name);
        free(full);
        free(name);
        if (st != TIPC_OK) goto done;
    }
    if (r != ARCHIVE_EOF)   /* a warning too: tipc does not publish what libarchive had doubts about */
        st = error_msg(TIPC_EDATA, "'%s': damaged archive: %s", archive, archive_error_string(in));
done:
    archive_read_free(in);
    if (archive_write_close(out) != ARCHIVE_OK && st == TIPC_OK)
        st = error_msg(TIPC_EDATA, "'%s': %s", archive, archive_error_string(out));
    archive_write_free(out);
    return st;
}

/* The single top-level folder of tmp (malloc'ed name), or NULL when there are several entries. */
static char *single_top(const char *tmp)
{
    DIR *d = opendir(tmp);
    char *name = NULL;
    int n = 0;
    struct dirent *e;
    while (d && (e = readdir(d)) != NULL) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
        n++;
        free(name);
        name = xstrdup(e->d_name);
    }
    if (d) closedir(d);
    if (n == 1) {
        char *full = xasprintf("%s/%s", tmp, name);
        int dir = is_dir(full);
        free(full);
        if (dir) return name;
    }
    free(name);
    return NULL;
}

enum tipc_status extract_archive(const char *archive, const char *target, const char *subdir, const char *source)
{
    if (subdir && extract_path_is_safe(subdir, NULL, 0) != 0)
        return error_msg(TIPC_EDATA, "'%s': bad archive folder '%s'", archive, subdir);
    TRY(check_replaceable(target));   /* before the work: a user's folder is never replaced */
    char *tmp = mkdtemp_beside(target);
    if (!tmp) return TIPC_EDATA;
    enum tipc_status st = unpack(archive, tmp);
    char *src = subdir ? xasprintf("%s/%s", tmp, subdir) : xstrdup(tmp);
    struct stat sb;
    if (st == TIPC_OK && (lstat(src, &sb) != 0 || !S_ISDIR(sb.st_mode)))   /* a real folder, not a link */
        st = error_msg(TIPC_EDATA, "'%s': has no folder '%s'", archive, subdir);
    if (st == TIPC_OK && publish_dir(src, target, source ? source : archive) != TIPC_OK) st = TIPC_EDATA;
    if (rm_rf(tmp) != 0) warning_msg("cannot remove temporary '%s': %s", tmp, strerror(errno));
    free(src);
    free(tmp);
    return st;
}

enum tipc_status extract_archive_into(const char *archive, const char *dir, const char *source, char **published)
{
    *published = NULL;
    const char *base = strrchr(archive, '/') ? strrchr(archive, '/') + 1 : archive;
    char *stem = xstrdup(base);
    static const char *const exts[] = {".tar.gz", ".tgz", ".tar", ".zip"};
    for (int i = 0; i < 4; i++) {
        size_t n = strlen(stem), e = strlen(exts[i]);
        if (n > e && !strcmp(stem + n - e, exts[i])) { stem[n - e] = 0; break; }
    }
    char *beside = xasprintf("%s/%s", dir, stem);
    char *tmp = mkdtemp_beside(beside);
    enum tipc_status st = tmp ? unpack(archive, tmp) : TIPC_EDATA;
    char *top = st == TIPC_OK ? single_top(tmp) : NULL;
    char *src = top ? xasprintf("%s/%s", tmp, top) : xstrdup(tmp ? tmp : "");
    char *target = top ? xasprintf("%s/%s", dir, top) : xstrdup(beside);
    if (st == TIPC_OK && publish_dir(src, target, source ? source : archive) != TIPC_OK) st = TIPC_EDATA;
    if (st == TIPC_OK) { *published = target; target = NULL; }
    if (tmp && rm_rf(tmp) != 0) warning_msg("cannot remove temporary '%s': %s", tmp, strerror(errno));
    free(stem); free(beside); free(tmp); free(top); free(src); free(target);
    return st;
}
