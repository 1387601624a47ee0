/* fs.h: small file-system helpers for every floor: mkdir -p, rm -rf, existence checks, atomic
 * publication of a finished directory (rename into place), the running executable's path. */
#ifndef TIPC_FS_H
#define TIPC_FS_H
#include <stdbool.h>
#include "status.h"

/* mkdir -p; TIPC_EIO with a message naming the path on failure. */
enum tipc_status mkdir_p(const char *path);
/* rm -rf (does not follow symlinks); 0 on success or when absent, -1 otherwise. */
int rm_rf(const char *path);
bool is_file(const char *path);
bool is_dir(const char *path);
/* Directory part of path ("." when none), malloc'ed. */
char *path_dirname(const char *path);
/* Make a fresh temp directory next to `target` (same file system, so rename is atomic):
 * "<target>.tmp-XXXXXX". Returns malloc'ed path or NULL (message printed). */
char *mkdtemp_beside(const char *target);
/* Replace `target` by directory `tmp`: an existing target is moved aside and removed after the
 * rename, so readers see either the old or the new tree, never a half one. */
enum tipc_status publish_dir(const char *tmp, const char *target);
/* Absolute path of the running executable (malloc'ed), or NULL. */
char *self_exe_path(void);
/* Copy a file's bytes to a stream (for `cat LOG`); returns 0 or an errno value. */
int copy_file_to(const char *path, void *stream /* FILE* */);

#endif
