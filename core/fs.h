/* fs.h: small file-system helpers for every floor: mkdir -p, rm -rf, existence checks, atomic
 * publication of a finished directory (rename into place), the running executable's path. */
#ifndef TIPC_FS_H
#define TIPC_FS_H
#include <stdbool.h>
#include "status.h"
#include "staged.h"

/* mkdir -p; TIPC_EIO with a message naming the path on failure. */
enum tipc_status mkdir_p(const char *path);
/* rm -rf (does not follow symlinks); 0 on success or when absent, -1 otherwise. */
int rm_rf(const char *path);
bool is_file(const char *path);
bool is_dir(const char *path);
/* Directory part of path ("." when none), malloc'ed. */
char *path_dirname(const char *path);
/* The file every tree tipc prepare publishes holds: its first line names the source (URL, or the
 * synthetic generator's parameters). Only a folder holding it is ever replaced or removed. */
#define PREPARED_MARKER ".tipc-prepared"

/* Make a fresh temp directory next to `target` (same file system, so rename is atomic), named
 * like every temp of ours (core/staged.h: "<target>.tmp.<pid>.<host>.<XXXXXX>", so an interrupted
 * one is swept by temp_sweep once its process is gone). malloc'ed path, or NULL (message printed). */
char *mkdtemp_beside(const char *target);
/* May `target` be replaced by a prepared tree? TIPC_OK when it does not exist, is an empty
 * folder, or is a folder holding PREPARED_MARKER; otherwise TIPC_EDATA and a message naming the
 * folder and how to proceed (it is the user's: tipc never deletes it). */
enum tipc_status check_replaceable(const char *target);
/* Publish directory `tmp` as `target`: write PREPARED_MARKER (text `source`) into it, flush the
 * file system (syncfs: a write error that surfaced only at writeback fails here, and nothing is
 * published), then rename it into place. An existing target must pass check_replaceable; it is
 * moved aside to a temp name and removed after the rename, so readers see the old or the new
 * tree, never a half one. */
enum tipc_status publish_dir(const char *tmp, const char *target, const char *source);
/* Absolute path of the running executable (malloc'ed), or NULL. */
char *self_exe_path(void);
/* Copy a file's bytes to a stream (for `cat LOG`); returns 0 or an errno value. */
int copy_file_to(const char *path, void *stream /* FILE* */);

#endif
