/* extract.h: unpack a tar, tar.gz or zip safely and atomically (libarchive).
 *
 * Refused, with the entry named, and nothing published: absolute paths, `..` components,
 * symlinks or hardlinks whose target leaves the tree, and device/fifo entries. The archive is
 * unpacked into a temp dir of ours (core/staged.h temp_name) beside the target and renamed into place only when every
 * entry was written and the file system flushed without error: a failed write of any kind (ENOSPC,
 * EIO, a libarchive warning, an error at writeback) fails the extraction, the temp dir is removed
 * and the previous target, if any, is left as it was. An existing target is replaced only when
 * prepare made it (core/fs.h, check_replaceable). */
#ifndef TIPC_EXTRACT_H
#define TIPC_EXTRACT_H
#include "../core/status.h"

/* Extract `archive` and publish it as directory `target` (replacing one prepare made before).
 * source: the text of its PREPARED_MARKER (the URL; NULL: the archive path).
 * subdir: when non-NULL, the archive's top folder to publish (e.g. "lite_data" of lite_data.tar:
 * target gets that folder's contents); it must exist in the archive.
 * Errors: TIPC_EDATA, message names the archive and the entry. */
enum tipc_status extract_archive(const char *archive, const char *target, const char *subdir, const char *source);

/* `tar -xf ARCHIVE -C DIR` made atomic: an archive with one top-level folder F is published as
 * DIR/F, anything else as DIR/<archive name without extension>. *published (malloc'ed) names it. */
enum tipc_status extract_archive_into(const char *archive, const char *dir, const char *source, char **published);

/* The check applied to every entry name, exposed for tests: 0 when `name` is a relative path
 * without `..` components; for links, also when `link` (symlink target, relative to the entry's
 * folder; or hardlink target, relative to the root) stays inside. */
int extract_path_is_safe(const char *name, const char *link, int is_symlink);

#endif
