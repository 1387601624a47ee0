/* pending.h: no stale green. A CI job that publishes `tipc run`'s JUnit in an `always` step must
 * never publish the previous run's green report for a run that was killed (kill -9: a timeout, the
 * out-of-memory killer) or refused (exit 2). So the report files of a run are replaced by a failing
 * one-case report (case "run"), printed nowhere:
 *   - "incomplete" as the run starts: the --junit file first, then OUTPUT/tipc/junit.xml and
 *     report.html once the run holds its output folder (lock.h); the run's real reports replace
 *     them at its end;
 *   - "refused" / "stopped" when the run ends before writing its real reports (a config or option
 *     error, a failed prepare), with the exit code and the first error it printed.
 * Only a regular file (or a new one) is written: a --junit FIFO, /dev/stdout or other special file
 * gets the real report alone, never a second document. */
#ifndef TIPC_RUN_PENDING_H
#define TIPC_RUN_PENDING_H

#include <stdbool.h>
#include "../../core/status.h"

struct pending {
    const char *config, *mode;   /* as given; NULL when the command line could not be read */
    const char *model;           /* the config's model_name once known, else NULL */
    const char *junit;           /* --junit FILE, or NULL */
};

/* The "incomplete" report: into the --junit file (junit true), and/or into own_dir (OUTPUT/tipc:
 * junit.xml and report.html; NULL: not that). Failures to write are printed, not returned: the run
 * itself decides its status. */
void pending_incomplete(const struct pending *pd, bool junit, const char *own_dir);
/* The run ended with status st before its real reports: a failing report saying so (exit code,
 * name, the first error printed) into the --junit file and into own_dir when not NULL. */
void pending_stopped(const struct pending *pd, const char *own_dir, enum tipc_status st);
/* "tipc run CONFIG MODE" as the case's command, malloc'ed. */
char *pending_run_cmd(const struct pending *pd);

#endif
