/* regfile.h: open a file tipc reads as input (config, recipe, manifest, checkpoint, model, image
 * list, image) only when it is a regular file, with a size bound.
 *
 * A FIFO, a device (/dev/zero, /dev/stdin on a terminal), a socket or a folder given where a file
 * is expected would block in open() or read until memory runs out. The open never blocks
 * (O_NONBLOCK, cleared once fstat says "regular file"), and the type and size are checked on the
 * opened descriptor, so a path swapped between a check and the open cannot slip through.
 * Callers report with their own exit code: the functions fill `why` ("is a FIFO, not a regular
 * file", "is 3.2 GB, more than the 64 MB allowed for ...", or strerror) and return a failure. */
#ifndef TIPC_REGFILE_H
#define TIPC_REGFILE_H
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* Size bounds for inputs (bytes). Text files are small; model files hold weights. */
#define REGFILE_MAX_TEXT  (64u << 20)           /* configs, recipes, manifests, lists: 64 MiB */
#define REGFILE_MAX_IMAGE (64u << 20)           /* one JPEG: 64 MiB */
#define REGFILE_MAX_MODEL ((size_t)4 << 30)     /* checkpoints, inference models: 4 GiB */

/* Read-only fd of a regular file no larger than max_bytes (0: no bound), O_CLOEXEC; -1 + why. */
int open_regular(const char *path, size_t max_bytes, char *why, size_t nwhy);
/* The same as a stdio stream ("rb"); NULL + why. */
FILE *fopen_regular(const char *path, size_t max_bytes, char *why, size_t nwhy);
/* The whole file into *buf (malloc'ed, NUL-terminated beyond *len); 0, or -1 + why. A file that
 * grows while it is read is an error ("changed while being read"). */
int read_regular(const char *path, size_t max_bytes, uint8_t **buf, size_t *len, char *why, size_t nwhy);

#endif
