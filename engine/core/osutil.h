/* osutil.h: process/OS helpers shared by the runner and the engine (files: prepare/fsutil.h). */
#ifndef TIPC_OSUTIL_H
#define TIPC_OSUTIL_H
#include <stddef.h>
#include "status.h"

/* Absolute path of the running executable (malloc'ed), or NULL. */
char *self_exe_path(void);
/* Copy a file's bytes to a stream (for `cat LOG`); returns 0 or an errno value. */
int copy_file_to(const char *path, void *stream /* FILE* */);

#endif
