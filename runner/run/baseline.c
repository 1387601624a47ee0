/* baseline.c: `tipc run ... --baseline DIR` (baseline.h): this run's own figures against DIR's, as
 * `tipc compare DIR THIS-RUN` would judge them (report/compare.h). */
#include "baseline.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../core/check.h"
#include "../../core/banned.h"

enum tipc_status run_baseline(const struct plan *p, const struct run_opts *a, const char *metrics,
                              struct cmp_result *res)
{
    const char **files = xcalloc((size_t)p->n + 2, sizeof *files);
    int n = 0;
    char *what;
    if (p->save_log) {   /* benchmark_train: the records this run wrote, not older ones beside them */
        for (int i = 0; i < p->n; i++) {
            const char *f = p->st[i].kind == STAGE_SPEED ? p->st[i].record : NULL;
            if (f && access(f, R_OK) == 0) files[n++] = f;
        }
        files[n++] = metrics;   /* after the records: their trainings' CPU seconds */
        what = xasprintf("%s: this run's speed records", p->save_log);
    } else {
        files[n++] = metrics;
        what = xstrdup(metrics);
    }
    enum tipc_status st = compare_with_files(a->baseline, files, n, what, &a->th, res);
    free(files);
    free(what);
    if (st == TIPC_OK) compare_print(res, stdout);
    return st;
}
