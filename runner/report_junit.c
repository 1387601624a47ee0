/* report_junit.c: JUnit XML with libxml2's xmlTextWriter, in the shape Jenkins (xunit's
 * junit-10.xsd) and GitLab read: testsuites > testsuite(name tests failures errors skipped time
 * timestamp hostname) > properties + testcase(name classname time) > failure | skipped, system-out.
 * Every string goes through xml_text_clean first, so any bytes in a log give a well-formed file. */
#include "report.h"

#include <libxml/xmlwriter.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "xml_text.h"
#include "../core/check.h"
#include "../core/staged.h"   /* defines: write_file_atomic */
#include "../core/banned.h"

#define LOG_TAIL_BYTES 8192 /* of a failing stage's log, in its <failure> body */

/* The writer's calls return < 0 on failure (out of memory); one flag collects them. */
struct jw { xmlTextWriterPtr w; int bad; };

static void start(struct jw *j, const char *el) { j->bad |= xmlTextWriterStartElement(j->w, BAD_CAST el) < 0; }
static void end(struct jw *j) { j->bad |= xmlTextWriterEndElement(j->w) < 0; }

static void attr(struct jw *j, const char *name, const char *raw)
{
    char *v = xml_text_clean_str(raw);
    j->bad |= xmlTextWriterWriteAttribute(j->w, BAD_CAST name, BAD_CAST v) < 0;
    free(v);
}

static void attrf(struct jw *j, const char *name, const char *fmt, double v)
{
    char buf[64];
    snprintf(buf, sizeof buf, fmt, v);
    attr(j, name, buf);
}

static void text(struct jw *j, const char *clean)
{
    j->bad |= xmlTextWriterWriteString(j->w, BAD_CAST clean) < 0;
}

static void property(struct jw *j, const char *name, const char *value)
{
    start(j, "property");
    attr(j, "name", name);
    attr(j, "value", value);
    end(j);
}

static void write_case(struct jw *j, const struct report *r, const struct report_case *c)
{
    char *name = report_case_name(r, c), *classname = xasprintf("%s.%s.%s", r->model, r->mode, c->kind);
    start(j, "testcase");
    attr(j, "name", name);
    attr(j, "classname", classname);
    attrf(j, "time", "%.3f", c->seconds);
    if (c->outcome == CASE_FAILED) {
        start(j, "failure");
        attr(j, "message", c->reason);
        char type[32];
        snprintf(type, sizeof type, "exit %d", c->status);
        attr(j, "type", type);
        bool cut = false;
        char *tail = xml_text_file_tail(c->log_path, LOG_TAIL_BYTES, &cut);
        const char *what = !tail ? "(no log" : !*tail ? "(empty log " : cut ? "(last lines of " : "(";
        char *head = xasprintf("%s\n%s%s)\n", c->reason, what, tail ? c->log_path : "");
        char *clean = xml_text_clean_str(head);
        text(j, clean);
        if (tail) text(j, tail);
        free(clean);
        free(head);
        free(tail);
        end(j);
    } else if (c->outcome == CASE_SKIPPED) {
        start(j, "skipped");
        attr(j, "message", c->reason);
        end(j);
    }
    char *out = xasprintf("command: %s\nconfig: %s:%d\nlog: %s\nexit status: %d\n", c->cmd, r->config, c->line,
                          c->log_path ? c->log_path : "-", c->status);
    char *clean = xml_text_clean_str(out);
    start(j, "system-out");
    text(j, clean);
    end(j);
    end(j);
    free(clean);
    free(out);
    free(name);
    free(classname);
}

enum tipc_status report_junit(const struct report *r, const char *path)
{
    xmlBufferPtr buf = xmlBufferCreate();
    struct jw j = {buf ? xmlNewTextWriterMemory(buf, 0) : NULL, 0};
    if (!j.w) {
        if (buf) xmlBufferFree(buf);
        return error_at(TIPC_EIO, path, 0, "cannot write JUnit report: out of memory");
    }
    double total = 0;
    for (int i = 0; i < r->n; i++) total += r->c[i].seconds;
    char ts[32], tests[16], failures[16], skipped[16];
    time_t t0 = (time_t)r->started;
    struct tm tm;
    strftime(ts, sizeof ts, "%Y-%m-%dT%H:%M:%S", gmtime_r(&t0, &tm)); /* UTC, the form Ant writes */
    snprintf(tests, sizeof tests, "%d", r->n);
    snprintf(failures, sizeof failures, "%d", report_count(r, CASE_FAILED));
    snprintf(skipped, sizeof skipped, "%d", report_count(r, CASE_SKIPPED));
    char *suite = xasprintf("%s.%s", r->model, r->mode);

    j.bad |= xmlTextWriterSetIndent(j.w, 1) < 0;
    j.bad |= xmlTextWriterStartDocument(j.w, NULL, "UTF-8", NULL) < 0;
    start(&j, "testsuites");
    attr(&j, "name", "tipc");
    attr(&j, "tests", tests);
    attr(&j, "failures", failures);
    attr(&j, "errors", "0");
    attrf(&j, "time", "%.3f", total);
    start(&j, "testsuite");
    attr(&j, "name", suite);
    attr(&j, "tests", tests);
    attr(&j, "failures", failures);
    attr(&j, "errors", "0");
    attr(&j, "skipped", skipped);
    attrf(&j, "time", "%.3f", total);
    attr(&j, "timestamp", ts);
    attr(&j, "hostname", r->hostname);
    start(&j, "properties");
    property(&j, "config", r->config);
    property(&j, "model", r->model);
    property(&j, "mode", r->mode);
    end(&j);
    for (int i = 0; i < r->n; i++) write_case(&j, r, &r->c[i]);
    j.bad |= xmlTextWriterEndDocument(j.w) < 0; /* closes every open element */
    xmlFreeTextWriter(j.w);
    free(suite);
    enum tipc_status st;
    if (j.bad) st = error_at(TIPC_EIO, path, 0, "cannot write JUnit report: the XML writer failed (out of memory?)");
    else st = write_file_atomic(path, xmlBufferContent(buf), (size_t)xmlBufferLength(buf));
    xmlBufferFree(buf);
    return st;
}
