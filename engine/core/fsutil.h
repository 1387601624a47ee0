/* fsutil.h: small filesystem helpers shared by the runner, prepare and the engine. */
#ifndef TIPC_FSUTIL_H
#define TIPC_FSUTIL_H
#include <stddef.h>
#include "status.h"

/* mkdir -p; returns 0 or an errno value. */
int mkdir_p(const char *path, unsigned mode);
/* Absolute path of the running executable (malloc'ed), or NULL. */
char *self_exe_path(void);
/* Copy a file's bytes to a stream (for `cat LOG`); returns 0 or an errno value. */
int copy_file_to(const char *path, void *stream /* FILE* */);

#endif
