/* report.c: status lines, results log, summary, JUnit XML (see report.h). */
#include "report.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../core/check.h"
#include "../core/banned.h"

void report_init(struct report *r, const char *config, const char *model, const char *mode, const char *status_log)
{
    memset(r, 0, sizeof *r);
    r->config = xstrdup(config);
    r->model = xstrdup(model);
    r->mode = xstrdup(mode);
    r->status_log = xstrdup(status_log);
    r->color = isatty(1);
}

void report_free(struct report *r)
{
    if (!r) return;
    for (int i = 0; i < r->n; i++) {
        free(r->c[i].kind);
        free(r->c[i].cmd);
        free(r->c[i].log_path);
    }
    free(r->c);
    free(r->model);
    free(r->mode);
    free(r->config);
    free(r->status_log);
    memset(r, 0, sizeof *r);
}

char *report_status_line(const char *model, const char *cmd, bool ok)
{
    return xasprintf("Run %s with command - %s - %s!", ok ? "successfully" : "failed", model, cmd);
}

enum tipc_status report_stage(struct report *r, const char *kind, const char *cmd, const char *log_path,
                              int status, double seconds, int line)
{
    r->c = xgrow(r->c, sizeof *r->c, (size_t)r->n + 1, &r->cap);
    struct report_case *c = &r->c[r->n++];
    c->kind = xstrdup(kind);
    c->cmd = xstrdup(cmd);
    c->log_path = log_path ? xstrdup(log_path) : NULL;
    c->status = status;
    c->seconds = seconds;
    c->line = line;

    char *text = report_status_line(r->model, cmd, status == 0);
    /* The original: echo -e "\033[33m ${text}  \033[0m" (yellow for both outcomes). */
    if (r->color) printf("\033[33m %s  \033[0m\n", text);
    else printf("%s\n", text);
    fflush(stdout);
    enum tipc_status st = TIPC_OK;
    FILE *f = fopen(r->status_log, "a");
    if (!f || fprintf(f, "%s\n", text) < 0 || fclose(f) != 0) {
        st = error_at(TIPC_EIO, r->status_log, 0, "cannot append to results log: %s", strerror(errno));
        if (f) fclose(f);
    }
    free(text);
    return st;
}

int report_failed(const struct report *r)
{
    int n = 0;
    for (int i = 0; i < r->n; i++) n += r->c[i].status != 0;
    return n;
}

void report_summary(const struct report *r, FILE *out)
{
    int failed = report_failed(r);
    fprintf(out, "%d passed, %d failed\n", r->n - failed, failed);
}

static void xml_escape(FILE *f, const char *s)
{
    for (; s && *s; s++) {
        unsigned char ch = (unsigned char)*s;
        switch (ch) {
        case '<': fputs("&lt;", f); break;
        case '>': fputs("&gt;", f); break;
        case '&': fputs("&amp;", f); break;
        case '"': fputs("&quot;", f); break;
        case '\'': fputs("&apos;", f); break;
        default:
            if (ch < 0x20 && ch != '\n' && ch != '\t') fprintf(f, "&#xFFFD;"); /* not allowed in XML 1.0 */
            else fputc(ch, f);
        }
    }
}

/* The last `max` bytes of a log, for the <failure> body. */
static void write_log_tail(FILE *f, const char *path, long max)
{
    FILE *in = path ? fopen(path, "rb") : NULL;
    if (!in) return;
    if (fseek(in, 0, SEEK_END) == 0) {
        long size = ftell(in);
        fseek(in, size > max ? size - max : 0, SEEK_SET);
    }
    char buf[4096];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf - 1, in)) > 0) {
        buf[n] = 0;
        xml_escape(f, buf);
    }
    fclose(in);
}

enum tipc_status report_junit(const struct report *r, const char *path)
{
    char *tmp = xasprintf("%s.tmp.%d", path, (int)getpid());
    FILE *f = fopen(tmp, "w");
    if (!f) {
        enum tipc_status st = error_at(TIPC_EIO, path, 0, "cannot write JUnit report: %s", strerror(errno));
        free(tmp);
        return st;
    }
    double total = 0;
    for (int i = 0; i < r->n; i++) total += r->c[i].seconds;
    fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites>\n  <testsuite name=\"");
    xml_escape(f, r->model);
    fprintf(f, " ");
    xml_escape(f, r->mode);
    fprintf(f, "\" tests=\"%d\" failures=\"%d\" errors=\"0\" time=\"%.3f\">\n", r->n, report_failed(r), total);
    for (int i = 0; i < r->n; i++) {
        const struct report_case *c = &r->c[i];
        fprintf(f, "    <testcase classname=\"tipc.");
        xml_escape(f, r->model);
        fprintf(f, ".%s\" name=\"%02d %s: ", c->kind, i + 1, c->kind);
        xml_escape(f, c->cmd);
        fprintf(f, "\" file=\"");
        xml_escape(f, r->config);
        fprintf(f, "\" line=\"%d\" time=\"%.3f\">\n", c->line, c->seconds);
        if (c->status != 0) {
            fprintf(f, "      <failure message=\"exit status %d\">", c->status);
            write_log_tail(f, c->log_path, 4000);
            fprintf(f, "</failure>\n");
        }
        if (c->log_path) {
            fprintf(f, "      <system-out>log: ");
            xml_escape(f, c->log_path);
            fprintf(f, "</system-out>\n");
        }
        fprintf(f, "    </testcase>\n");
    }
    fprintf(f, "  </testsuite>\n</testsuites>\n");
    int bad = ferror(f);
    bad |= fflush(f) != 0 || fsync(fileno(f)) != 0;
    bad |= fclose(f) != 0;
    if (bad || rename(tmp, path) != 0) {
        enum tipc_status st = error_at(TIPC_EIO, path, 0, "cannot write JUnit report: %s", strerror(errno));
        unlink(tmp);
        free(tmp);
        return st;
    }
    free(tmp);
    return TIPC_OK;
}
