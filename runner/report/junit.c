/* junit.c: JUnit XML with libxml2's xmlTextWriter, in the shape Jenkins (xunit's
 * junit-10.xsd) and GitLab read: testsuites > testsuite(name tests failures errors skipped time
 * timestamp hostname) > properties + testcase(name classname time) > failure | skipped, system-out.
 * Every string goes through xml_text_clean first, so any bytes in a log give a well-formed file. */
#include "report.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "compare.h"
#include "xml.h"
#include "../../core/check.h"
#include "../../core/banned.h"

#define LOG_TAIL_BYTES 8192 /* of a failing stage's log, in its <failure> body */

static void property(struct xw *j, const char *name, const char *value)
{
    xw_start(j, "property");
    xw_attr(j, "name", name);
    xw_attr(j, "value", value);
    xw_end(j);
}

static void write_case(struct xw *j, const struct report *r, const struct report_case *c)
{
    char *name = report_case_name(r, c), *classname = xasprintf("%s.%s.%s", r->model, r->mode, c->kind);
    xw_start(j, "testcase");
    xw_attr(j, "name", name);
    xw_attr(j, "classname", classname);
    xw_attrf(j, "time", "%.3f", c->seconds);
    if (c->outcome == CASE_FAILED) {
        xw_start(j, "failure");
        char *message = report_failure_message(c);   /* what a CI page shows first: the error itself */
        xw_attr(j, "message", message);
        char type[32];
        snprintf(type, sizeof type, "exit %d", c->status);
        xw_attr(j, "type", type);
        bool cut = false;
        char *tail = xml_text_file_tail(c->log_path, LOG_TAIL_BYTES, &cut);
        const char *what = !tail ? "(no log" : !*tail ? "(empty log " : cut ? "(last lines of " : "(";
        char *head = xasprintf("%s\n%s%s)\n", message, what, tail ? c->log_path : "");
        free(message);
        xw_text(j, head);
        if (tail) xw_text(j, tail);
        free(head);
        free(tail);
        xw_end(j);
    } else if (c->outcome == CASE_SKIPPED) {
        xw_start(j, "skipped");
        xw_attr(j, "message", c->reason);
        xw_end(j);
    }
    char *out = xasprintf("command: %s\nconfig: %s:%d\nlog: %s\nexit status: %d\n%s%s%s", c->cmd, r->config, c->line,
                          c->log_path ? c->log_path : "-", c->status, c->warnings ? "warnings:\n" : "",
                          c->warnings ? c->warnings : "", c->warnings ? "\n" : "");
    xw_start(j, "system-out");
    xw_text(j, out);
    xw_end(j);
    xw_end(j);
    free(out);
    free(name);
    free(classname);
}

/* A testsuite with one testcase per compared figure (compare.h): failed when it regressed, is no
 * number in the new run, or is missing from it. */
static void compare_suite(struct xw *j, const struct cmp_result *c, const char *suite, const char *host, const char *ts)
{
    char n[16], f[16];
    snprintf(n, sizeof n, "%d", c->n);
    snprintf(f, sizeof f, "%d", compare_failures(c));
    xw_start(j, "testsuite");
    xw_attr(j, "name", suite);
    xw_attr(j, "tests", n);
    xw_attr(j, "failures", f);
    xw_attr(j, "errors", "0");
    xw_attr(j, "skipped", "0");
    xw_attr(j, "time", "0");
    if (ts) xw_attr(j, "timestamp", ts);
    if (host) xw_attr(j, "hostname", host);
    xw_start(j, "properties");
    property(j, "baseline", c->base_what);
    property(j, "new", c->new_what);
    xw_end(j);
    for (int i = 0; i < c->n; i++) {
        const struct cmp_row *r = &c->row[i];
        char *name = xasprintf("%s.%s[%s]", suite, cmp_figure_name(r->fig), r->case_name);
        char *cls = xasprintf("%s.%s", suite, cmp_figure_name(r->fig)), *text = compare_row_text(r);
        xw_start(j, "testcase");
        xw_attr(j, "name", name);
        xw_attr(j, "classname", cls);
        xw_attr(j, "time", "0");
        bool bad = r->verdict == CMP_REGRESSION || r->verdict == CMP_INVALID || r->verdict == CMP_MISSING;
        if (bad) {
            xw_start(j, "failure");
            xw_attr(j, "message", text);
            xw_attr(j, "type", cmp_verdict_name(r->verdict));
            xw_text(j, text);
            xw_end(j);
        }
        char *out = xasprintf("%s\nverdict: %s\nbaseline: %s\nnew: %s\n", text, cmp_verdict_name(r->verdict),
                              c->base_what, c->new_what);
        xw_start(j, "system-out");
        xw_text(j, out);
        xw_end(j);
        xw_end(j);
        free(out), free(text), free(name), free(cls);
    }
    xw_end(j);
}

enum tipc_status report_compare_junit(const struct cmp_result *c, const char *path)
{
    struct xw j;
    TRY(xw_open(&j, path, "JUnit report"));
    char n[16], f[16];
    snprintf(n, sizeof n, "%d", c->n);
    snprintf(f, sizeof f, "%d", compare_failures(c));
    xw_declaration(&j);
    xw_start(&j, "testsuites");
    xw_attr(&j, "name", "tipc");
    xw_attr(&j, "tests", n);
    xw_attr(&j, "failures", f);
    xw_attr(&j, "errors", "0");
    xw_attr(&j, "time", "0");
    compare_suite(&j, c, "tipc.compare", NULL, NULL);
    return xw_save(&j);
}

enum tipc_status report_junit(const struct report *r, const char *path)
{
    struct xw j;
    TRY(xw_open(&j, path, "JUnit report"));
    double total = 0;
    for (int i = 0; i < r->n; i++) total += r->c[i].seconds;
    char ts[40], tests[16], failures[16], skipped[16];
    time_t t0 = (time_t)r->started;
    struct tm tm;
    /* ISO 8601 with the time zone (UTC, "Z"): a reader elsewhere knows when the run started */
    strftime(ts, sizeof ts, "%Y-%m-%dT%H:%M:%SZ", gmtime_r(&t0, &tm));
    snprintf(tests, sizeof tests, "%d", r->n);
    snprintf(failures, sizeof failures, "%d", report_count(r, CASE_FAILED));
    snprintf(skipped, sizeof skipped, "%d", report_count(r, CASE_SKIPPED));
    char *suite = xasprintf("%s.%s", r->model, r->mode);

    xw_declaration(&j);
    xw_start(&j, "testsuites");
    xw_attr(&j, "name", "tipc");
    xw_attrf(&j, "tests", "%d", r->n + (r->baseline ? r->baseline->n : 0));
    xw_attrf(&j, "failures", "%d", report_count(r, CASE_FAILED) + (r->baseline ? compare_failures(r->baseline) : 0));
    xw_attr(&j, "errors", "0");
    xw_attrf(&j, "time", "%.3f", total);
    xw_start(&j, "testsuite");
    xw_attr(&j, "name", suite);
    xw_attr(&j, "tests", tests);
    xw_attr(&j, "failures", failures);
    xw_attr(&j, "errors", "0");
    xw_attr(&j, "skipped", skipped);
    xw_attrf(&j, "time", "%.3f", total);
    xw_attr(&j, "timestamp", ts);
    xw_attr(&j, "hostname", r->hostname);
    xw_start(&j, "properties");
    property(&j, "config", r->config);
    property(&j, "model", r->model);
    property(&j, "mode", r->mode);
    for (int i = 0; i < r->ndata; i++) {   /* which data the run used: "data/lite_data: fetched URL ..." */
        char *name = xasprintf("data.%s", r->data[i].name), *val = xasprintf("%s: %s", r->data[i].dest, r->data[i].origin);
        property(&j, name, val);
        free(name), free(val);
    }
    if (!r->ndata) property(&j, "data", "not prepared by this run (--no-prepare, or a Paddle config)");
    xw_end(&j);
    for (int i = 0; i < r->n; i++) write_case(&j, r, &r->c[i]);
    if (r->baseline) {
        xw_end(&j);   /* the stages' testsuite */
        char *bs = xasprintf("%s.baseline", suite);
        compare_suite(&j, r->baseline, bs, r->hostname, ts);
        free(bs);
    }
    free(suite);
    return xw_save(&j);
}
