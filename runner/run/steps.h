/* steps.h: the steps `tipc run` takes besides running commands, for the dialects. */
#ifndef TIPC_RUN_STEPS_H
#define TIPC_RUN_STEPS_H
#include "../../core/status.h"

/* PB_MODEL_TOKEN in `s` replaced by `name` (malloc'ed). */
char *subst_model(const char *s, const char *name);
/* cd into cwd[0] then cwd[1] (each skipped when it fails); returns the folder to come back to with
 * cwd_leave, -1 when cwd[0] is NULL. */
int cwd_enter(char *const cwd[2]);
void cwd_leave(int here);
/* `cat SRC >> DST`: DST is created; 1 when SRC cannot be read, else 0. */
int status_from_file(const char *src, const char *dst);
/* PaddleClas: inference.pdmodel/.pdiparams -> model.* inside DIR, when DIR exists. */
void stage_links(const char *dir);
/* PaddleDetection's cp SRC/(all) DST/: the regular files. */
void stage_copy(const char *src, const char *dst);
/* `bash test_tipc/prepare.sh CONFIG MODE` from the current folder; TIPC_EDATA when it fails,
 * TIPC_EUSAGE when there is no such script. */
enum tipc_status run_repo_prepare(const char *config, const char *mode, const char *self);
enum tipc_status append_line(const char *path, const char *line);

#endif
