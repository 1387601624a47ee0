/* staged.h: every file tipc writes for keeps (checkpoints, inference models, ONNX, dataset files)
 * is written to a temp name beside its target, checked write by write, fsync'ed and closed with
 * the errors checked, and only then renamed into place, alone or as a set. A failure of any of
 * those steps (ENOSPC, EIO, a short write, a failed fsync or close) is an error naming the file
 * and errno; the target (or the whole old set) is left as it was and the temp is removed.
 *
 * Temp names are ours by construction: "<target>.tmp.<pid>.<host>.<XXXXXX>". A process killed
 * mid-write leaves one; temp_sweep() removes those of dead processes of this host (and the
 * pre-2026 checkpoint temps "<name>.ckpt.tmp.<pid>", "<name>.tipc.tmp.<pid>"), never anything
 * else: a live writer's temp, another host's, or a name we did not make stay. */
#ifndef TIPC_STAGED_H
#define TIPC_STAGED_H
#include <stdbool.h>
#include <stddef.h>

#include "status.h"

/* write(2) until all n bytes are written (EINTR retried); 0, or the errno of the failure
 * (a write returning 0 counts as ENOSPC). */
int write_all(int fd, const void *p, size_t n);

/* A fresh temp name beside target (malloc'ed); nothing is created. */
char *temp_name(const char *target);
/* 1 when `name` (a file name, no folder) is a temp of ours whose writer is gone: made on this host
 * by a process that no longer exists. */
int temp_is_stale(const char *name);
/* Remove the stale temps (files or folders) in folder `dir`; returns how many were removed. Quiet
 * when there is nothing; one line per removal otherwise. */
int temp_sweep(const char *dir);

/* One file being written. `err` holds the first errno; writes after a failure are dropped. */
struct staged_file {
    char *path, *tmp;
    int fd, err;
    bool done;   /* fsync'ed and closed without error: ready to publish */
    bool direct; /* the target is not a regular file: written in place (tmp is NULL), never renamed over */
};
/* Create the temp for `path` (mode 0666 & ~umask). TIPC_EIO + message naming path on failure.
 *
 * Only a regular file (or a new one) is staged and renamed. A target that exists and is not a
 * regular file is never renamed over, nor linked, nor removed:
 *   - this process's stdout or stderr (`/dev/stdout`, `/proc/self/fd/1`, or the file they are
 *     redirected to): written into that descriptor, after stdio is flushed, so it lands in the
 *     stream in order;
 *   - a FIFO or a character device (`/dev/null`, `/dev/full`, a terminal), also through a
 *     symbolic link: opened and written directly (a FIFO no process reads is an error, not a hang);
 *     a failed write (ENOSPC from /dev/full) is an error like any other;
 *   - a symbolic link to a regular file: the file it points to is staged and replaced, the link stays;
 *   - a folder, a block device, a socket or a dangling link: refused, TIPC_EUSAGE. */
enum tipc_status staged_open(struct staged_file *s, const char *path);
/* 1 or 2 when `path` is this process's stdout or stderr (what staged_open writes into); else 0. A
 * command that writes its result there says its notes on stderr. */
int staged_stdio_fd(const char *path);
void staged_write(struct staged_file *s, const void *p, size_t n);
/* fsync + close; on any error (this one or an earlier write) print "cannot write PATH: errno
 * text", remove the temp and return TIPC_EIO. */
enum tipc_status staged_finish(struct staged_file *s);
/* Remove the temp (error paths); the target is untouched. Safe to call twice. */
void staged_abort(struct staged_file *s);
/* Rename n finished files onto their targets as a unit: the existing targets are first linked
 * to backup names; when a rename fails, the ones done are rolled back, so the old set stays
 * whole. On success the folders are fsync'ed and the backups removed. Every file of the set is
 * released either way. */
enum tipc_status staged_publish(struct staged_file *set, int n);
/* staged_finish + staged_publish for one file. */
enum tipc_status staged_commit(struct staged_file *s);

/* Write `n` bytes to `path` through a staged file (one call). */
enum tipc_status write_file_atomic(const char *path, const void *data, size_t n);

/* Can files be created in `dir` (made if missing)? Creates and removes a probe temp. TIPC_EIO
 * + message naming `what` ("output folder") and the errno, e.g. a read-only mount. */
enum tipc_status dir_check_writable(const char *dir, const char *what);

#endif
