/* pending.c: the failing reports that stand in for a run's real ones (pending.h). */
#include "pending.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "../report/report.h"
#include "../../core/check.h"
#include "../../core/banned.h"

/* A regular file, a link to one, or nothing yet in an existing folder: what may get a stand-in
 * report (where the folder is missing no old report can be, and the run may yet create it). */
static bool plain_target(const char *path)
{
    struct stat st;
    if (stat(path, &st) == 0) return S_ISREG(st.st_mode);
    if (errno != ENOENT) return false;
    const char *slash = strrchr(path, '/');
    if (!slash) return true;
    char *dir = slash == path ? xstrdup("/") : xstrndup(path, (size_t)(slash - path));
    bool ok = stat(dir, &st) == 0 && S_ISDIR(st.st_mode);
    free(dir);
    return ok;
}

char *pending_run_cmd(const struct pending *pd)
{
    return xasprintf("tipc run %s %s", pd->config ? pd->config : "?", pd->mode ? pd->mode : "?");
}

static void write_reports(const struct pending *pd, bool junit, const char *own_dir, const char *reason, int status)
{
    struct report r;
    report_init(&r, pd->config ? pd->config : "?", pd->model ? pd->model : "tipc", pd->mode ? pd->mode : "?", "");
    char *cmd = pending_run_cmd(pd);
    report_fail_run(&r, cmd, reason, status);
    if (junit && pd->junit && plain_target(pd->junit)) report_junit(&r, pd->junit);
    if (own_dir) {
        char *j = xasprintf("%s/junit.xml", own_dir), *h = xasprintf("%s/report.html", own_dir);
        if (plain_target(j)) report_junit(&r, j);
        if (plain_target(h)) report_html(&r, NULL, h);
        free(j), free(h);
    }
    free(cmd);
    report_free(&r);
}

void pending_incomplete(const struct pending *pd, bool junit, const char *own_dir)
{
    char host[256] = "?", when[40] = "?";
    gethostname(host, sizeof host - 1);
    time_t now = time(NULL);
    struct tm tm;
    strftime(when, sizeof when, "%Y-%m-%d %H:%M:%S UTC", gmtime_r(&now, &tm));
    char *reason = xasprintf("incomplete: tipc run (pid %d on %s) started at %s and has not finished: it is still "
                             "running, or it was killed (SIGKILL, out of memory, a CI timeout) before it wrote its "
                             "report", (int)getpid(), host, when);
    write_reports(pd, junit, own_dir, reason, -1);
    free(reason);
}

void pending_stopped(const struct pending *pd, const char *own_dir, enum tipc_status st)
{
    const char *why = error_first();
    char *reason = st == TIPC_EUSAGE
        ? xasprintf("refused: tipc run exited %d (%s) before running any stage%s%s", (int)st, tipc_status_name(st),
                    *why ? ": " : "", why)
        : xasprintf("stopped: tipc run exited %d (%s) before running any stage%s%s", (int)st, tipc_status_name(st),
                    *why ? ": " : "", why);
    write_reports(pd, true, own_dir, reason, (int)st);
    free(reason);
}
