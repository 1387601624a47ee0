/* binfile.h: binary files with a magic, an FNV-1a 64 checksum trailer and atomic replacement
 * (a staged file, core/staged.h: checked writes, fsync, rename; the previous PATH survives any
 * failure, and the temp is removed).
 * Readers load the whole file, check magic and checksum, then read bounded fields: a
 * truncated or corrupt file is an error naming the file, never a crash. Used by checkpoints
 * and the inference model. */
#ifndef TIPC_BINFILE_H
#define TIPC_BINFILE_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "../../core/status.h"
#include "../../core/staged.h"

struct bin_writer { struct staged_file sf; uint64_t hash; };
/* Opens PATH's temp file and writes the 8-byte magic. */
enum tipc_status bin_create(struct bin_writer *w, const char *path, const char magic[8]);
void bin_write(struct bin_writer *w, const void *p, size_t n);
/* Append the checksum, fsync, rename over PATH (fsync the directory too). */
enum tipc_status bin_commit(struct bin_writer *w);
/* Append the checksum, fsync and close, without publishing: w->sf then goes into a
 * staged_publish() set with other files (an exported model's pair). */
enum tipc_status bin_finish(struct bin_writer *w);

struct bin_reader { const char *path; uint8_t *buf; size_t n, pos; };
/* Load PATH (a regular file of at most REGFILE_MAX_MODEL bytes), check the magic (what = "checkpoint", "inference model" for messages) and the
 * checksum. Returns TIPC_EIO with a message on any failure. */
enum tipc_status bin_open(struct bin_reader *r, const char *path, const char magic[8], const char *what);
/* Copy n bytes; false when the file is too short (the caller reports). */
bool bin_read(struct bin_reader *r, void *p, size_t n);
/* Pointer to n bytes in place (aligned copy is the caller's job); NULL when too short. */
const void *bin_peek(struct bin_reader *r, size_t n);
void bin_close(struct bin_reader *r);

uint64_t fnv1a64(uint64_t h, const void *p, size_t n);
#define FNV1A64_INIT 0xcbf29ce484222325ULL

#endif
