/* check.h: error reporting in two tiers (after git's die/error and ggml's CUDA_CHECK_GEN).
 *
 *  - error_at(st, file, line, fmt, ...) / error_msg(st, fmt, ...): for anything driven by user
 *    input. Print one line `file:line: message` (or `tipc: message`) to stderr and RETURN st,
 *    so callers write `return error_at(TIPC_EUSAGE, path, ln, "unknown mode '%s'", m);`.
 *  - CHECK(cond, fmt, ...) / BUG(...): invariants. Print `BUG: src.c:12: ...` and die through a
 *    replaceable die routine (tests install one that longjmps), exit code TIPC_EINTERNAL.
 *  - TRY(expr): propagate a non-OK status.
 *
 * Messages follow git's grammar: lower case, no full stop, subject in quotes. A `hint: ...`
 * line may follow when there is a concrete next step (error_hint). */
#ifndef TIPC_CHECK_H
#define TIPC_CHECK_H

#include <stddef.h>
#include "status.h"

#if defined(__GNUC__)
#define TIPC_PRINTF(a, b) __attribute__((format(printf, a, b)))
#define TIPC_NORETURN __attribute__((noreturn))
#else
#define TIPC_PRINTF(a, b)
#define TIPC_NORETURN
#endif

/* Prefix added to every message (e.g. "[node 1:rank 3] "); empty by default. Not owned. */
void tipc_set_msg_prefix(const char *prefix);
/* Also append each error line (error_at, error_msg, a die message; not hints or warnings), as
 * printed, to the file at `path` (NULL: none; not owned): `tipc run` gives each stage one
 * (TIPC_ERROR_LOG) and reports the first line as why the stage failed. At most
 * TIPC_ERROR_LOG_MAX lines per process. */
void tipc_set_error_log(const char *path);
#define TIPC_ERROR_LOG_MAX 8
/* Called before each message is printed (NULL: none): a progress bar on the terminal erases itself
 * there, so no message is glued to it. */
void tipc_set_msg_hook(void (*fn)(void));

enum tipc_status error_at(enum tipc_status st, const char *file, int line, const char *fmt, ...)
    TIPC_PRINTF(4, 5);
enum tipc_status error_msg(enum tipc_status st, const char *fmt, ...) TIPC_PRINTF(2, 3);
void error_hint(const char *fmt, ...) TIPC_PRINTF(1, 2);
/* The first error_at/error_msg line this process printed (as printed, without the newline), or ""
 * when none: why a run that stopped early stopped, for its report. */
const char *error_first(void);
void warning_msg(const char *fmt, ...) TIPC_PRINTF(1, 2);

/* Die routine: called with the formatted message; must not return. Default prints and exits. */
typedef void (*tipc_die_fn)(const char *msg, int code);
void tipc_set_die_routine(tipc_die_fn fn);
TIPC_NORETURN void tipc_die_at(const char *src, int line, int code, const char *fmt, ...)
    TIPC_PRINTF(4, 5);

/* Die with the message as given (no "BUG:" prefix), for fatal failures of the environment that
 * are not bugs in tipc (a CUDA call failing, the GPU running out of memory). */
TIPC_NORETURN void tipc_die_msg(int code, const char *fmt, ...) TIPC_PRINTF(2, 3);

#define CHECK(cond, ...) \
    do { if (!(cond)) tipc_die_at(__FILE__, __LINE__, TIPC_EINTERNAL, "check '" #cond "' failed: " __VA_ARGS__); } while (0)
#define BUG(...) tipc_die_at(__FILE__, __LINE__, TIPC_EINTERNAL, __VA_ARGS__)
#define TRY(expr) \
    do { enum tipc_status try_st_ = (expr); if (try_st_ != TIPC_OK) return try_st_; } while (0)

/* Allocation that dies on OOM (out of memory is not a user error we can recover from). */
void *xmalloc(size_t n);
void *xcalloc(size_t n, size_t sz);
void *xrealloc(void *p, size_t n);
char *xstrdup(const char *s);
char *xstrndup(const char *s, size_t n);
/* Grow *arr so that it holds at least `need` items of `sz` bytes; *cap is updated. */
void *xgrow(void *arr, size_t sz, size_t need, size_t *cap);
/* malloc'ed printf. */
char *xasprintf(const char *fmt, ...) TIPC_PRINTF(1, 2);

#endif
