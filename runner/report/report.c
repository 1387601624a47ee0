/* report.c: status lines, results log, progress lines, end-of-run table (see report.h). */
#include "report.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/time.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "../../core/regfile.h"
#include "../../core/version.h"
#include "xml.h"
#include "../../engine/io/metrics.h"
#include "../../core/check.h"
#include "../../core/banned.h"

#define GREEN "\033[32m"
#define RED "\033[31m"
#define YELLOW "\033[33m"
#define RESET "\033[0m"

static double wall_seconds(void)
{
    struct timeval tv;
    gettimeofday(&tv, NULL);
    return (double)tv.tv_sec + tv.tv_usec * 1e-6;
}

double report_now(void) { return wall_seconds(); }

bool report_use_color(int fd)
{
    const char *no = getenv("NO_COLOR"), *force = getenv("FORCE_COLOR");
    if (no && *no) return false;   /* no-color.org: a user's "never" wins */
    /* force-color.org: a CI console that shows colours while tipc writes to a pipe ("0"/"false": not forced) */
    if (force && *force && strcmp(force, "0") && strcasecmp(force, "false")) return true;
    return isatty(fd);
}

void report_init(struct report *r, const char *config, const char *model, const char *mode, const char *status_log)
{
    memset(r, 0, sizeof *r);
    r->config = xstrdup(config);
    r->model = xstrdup(model);
    r->mode = xstrdup(mode);
    r->status_log = xstrdup(status_log);
    r->color = report_use_color(1);
    r->color_err = report_use_color(2);
    r->started = wall_seconds();
    if (gethostname(r->hostname, sizeof r->hostname - 1) != 0) snprintf(r->hostname, sizeof r->hostname, "localhost");
}

void report_free(struct report *r)
{
    if (!r) return;
    for (int i = 0; i < r->n; i++) {
        struct report_case *c = &r->c[i];
        free(c->kind);
        free(c->matrix);
        free(c->cmd);
        free(c->log_path);
        free(c->reason);
        free(c->warnings);
        free(c->error);
    }
    free(r->c);
    for (int i = 0; i < r->ndata; i++) free(r->data[i].name), free(r->data[i].dest), free(r->data[i].origin);
    free(r->data);
    free(r->model);
    free(r->mode);
    free(r->config);
    free(r->status_log);
    memset(r, 0, sizeof *r);
}

/* A JSON string of any bytes (json_string refuses invalid UTF-8). */
static json_t *jstr(const char *s)
{
    char *c = xml_text_clean_str(s);
    json_t *j = json_string(c);
    free(c);
    return j;
}

void report_add_data(struct report *r, const char *name, const char *dest, const char *origin, bool synthetic,
                     bool absent)
{
    r->data = xgrow(r->data, sizeof *r->data, (size_t)r->ndata + 1, &r->data_cap);
    r->data[r->ndata++] = (struct report_data){xstrdup(name), xstrdup(dest), xstrdup(origin), synthetic, absent};
}

char *report_data_line(const struct report *r)
{
    char *s = NULL;
    for (int i = 0; i < r->ndata; i++) {
        char *t = xasprintf("%s%s%s: %s", s ? s : "", s ? "; " : "", r->data[i].dest, r->data[i].origin);
        free(s);
        s = t;
    }
    return s;
}

enum tipc_status report_emit_data(const struct report *r, struct metrics *m)
{
    for (int i = 0; i < r->ndata; i++) {
        const struct report_data *d = &r->data[i];
        json_t *o = json_object();
        json_object_set_new(o, "item", jstr(d->name));
        json_object_set_new(o, "dest", jstr(d->dest));
        json_object_set_new(o, "origin", jstr(d->origin));
        json_object_set_new(o, "synthetic", json_boolean(d->synthetic));
        json_object_set_new(o, "absent", json_boolean(d->absent));
        TRY(metrics_emit(m, "data", o));
    }
    return TIPC_OK;
}

char *report_case_name(const struct report *r, const struct report_case *c)
{
    if (!*c->matrix) return xasprintf("%s.%s.%s", r->model, r->mode, c->kind);
    return xasprintf("%s.%s.%s[%s]", r->model, r->mode, c->kind, c->matrix);
}

/* s on one line: a newline, carriage return or other control character (a newline in --output
 * reaches every command that writes there) is written visibly as \n, \r, \xNN; tabs stay. */
static char *one_line(const char *s)
{
    size_t n = 0;
    for (const char *p = s; *p; p++) n += (unsigned char)*p < 0x20 || *p == 0x7f ? 4 : 1;
    char *out = xmalloc(n + 1), *o = out;
    for (const char *p = s; *p; p++) {
        unsigned char c = (unsigned char)*p;
        if (c == '\t' || (c >= 0x20 && c != 0x7f)) *o++ = (char)c;
        else if (c == '\n' || c == '\r') *o++ = '\\', *o++ = c == '\n' ? 'n' : 'r';
        else o += snprintf(o, 5, "\\x%02x", c);
    }
    *o = 0;
    return out;
}

char *report_status_line(const char *model, const char *cmd, bool ok)
{
    char *m = one_line(model), *c = one_line(cmd);
    char *line = xasprintf("Run %s with command - %s - %s!", ok ? "successfully" : "failed", m, c);
    free(m), free(c);
    return line;
}

static struct report_case *add_case(struct report *r, const char *kind, const char *matrix, const char *cmd, int line)
{
    r->c = xgrow(r->c, sizeof *r->c, (size_t)r->n + 1, &r->cap);
    struct report_case *c = &r->c[r->n++];
    memset(c, 0, sizeof *c);
    c->kind = xstrdup(kind);
    c->matrix = xstrdup(matrix ? matrix : "");
    c->cmd = xstrdup(cmd);
    c->line = line;
    c->cpu_s = -1;
    return c;
}

void report_begin(const struct report *r, int k, int total, const char *kind, const char *matrix)
{
    (void)r;
    fflush(stdout);
    fprintf(stderr, "[%d/%d] %s%s%s\n", k, total, kind, matrix && *matrix ? " " : "", matrix ? matrix : "");
    fflush(stderr);
}

static char *default_reason(int status)
{
    if (status > 128 && status < 128 + 65) return xasprintf("killed by signal %d", status - 128);
    if (status == 127) return xstrdup("exit status 127 (program not found)");
    return xasprintf("exit status %d", status);
}

/* The `warning: ` lines of a stage's log (a regular file only: never a FIFO), '\n'-joined, at most
 * REPORT_MAX_WARNINGS; NULL when none. */
static char *collect_warnings(const char *log_path)
{
    char why[160], line[1024];
    FILE *f = log_path ? fopen_regular(log_path, 0, why, sizeof why) : NULL;
    char *all = NULL;
    int n = 0;
    while (f && n < REPORT_MAX_WARNINGS && fgets(line, sizeof line, f)) {
        if (!strstr(line, "warning: ")) continue;
        line[strcspn(line, "\r\n")] = 0;
        char *t = xasprintf("%s%s%s", all ? all : "", all ? "\n" : "", line);
        free(all);
        all = t;
        n++;
    }
    if (f) fclose(f);
    return all;
}

enum tipc_status report_stage(struct report *r, const char *kind, const char *matrix, const char *cmd,
                              const char *log_path, int status, const char *reason, double started,
                              double seconds, int line)
{
    struct report_case *c = add_case(r, kind, matrix, cmd, line);
    c->log_path = log_path ? xstrdup(log_path) : NULL;
    c->warnings = collect_warnings(log_path);
    c->status = status;
    c->outcome = status == 0 ? CASE_PASSED : CASE_FAILED;
    c->reason = status == 0 ? NULL : reason ? xstrdup(reason) : default_reason(status);
    c->started = started;
    c->seconds = seconds;

    char *text = report_status_line(r->model, cmd, status == 0);
    /* The original: echo -e "\033[33m ${text}  \033[0m"; we keep its framing, in green or red. */
    if (r->color) printf("%s %s  " RESET "\n", status == 0 ? GREEN : RED, text);
    else printf("%s\n", text);
    fflush(stdout);
    enum tipc_status st = TIPC_OK;
    /* never through a symlink; O_NONBLOCK: a FIFO there without a reader fails (ENXIO), no hang */
    int fd = open(r->status_log, O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK, 0644);
    if (fd >= 0) fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
    FILE *f = fd >= 0 ? fdopen(fd, "a") : NULL;
    if (!f && fd >= 0) close(fd);
    if (!f || fprintf(f, "%s\n", text) < 0 || fclose(f) != 0) {
        st = error_at(TIPC_EIO, r->status_log, 0, "cannot append to results log: %s", strerror(errno));
        if (f) fclose(f);
    }
    free(text);
    return st;
}

char *report_failure_message(const struct report_case *c)
{
    const char *reason = c->reason ? c->reason : "failed";
    return c->error ? xasprintf("%s: %s", reason, c->error) : xstrdup(reason);
}

void report_stage_error(struct report *r, char *error)
{
    if (r->n > 0 && !r->c[r->n - 1].error) r->c[r->n - 1].error = error;
    else free(error);
}

void report_skip(struct report *r, int k, int total, const char *kind, const char *matrix, const char *cmd,
                 const char *reason, int line, bool requested)
{
    struct report_case *c = add_case(r, kind, matrix, cmd, line);
    c->outcome = CASE_SKIPPED;
    c->requested = requested;
    c->status = -1;
    c->reason = xstrdup(reason);
    c->started = wall_seconds();
    fflush(stdout);
    fprintf(stderr, "[%d/%d] %s%s%s: %sskipped%s (%s)\n", k, total, kind, *c->matrix ? " " : "", c->matrix,
            r->color_err ? YELLOW : "", r->color_err ? RESET : "", reason);
    fflush(stderr);
}

int report_count(const struct report *r, enum case_outcome o)
{
    int n = 0;
    for (int i = 0; i < r->n; i++) n += r->c[i].outcome == o;
    return n;
}

int report_failed(const struct report *r) { return report_count(r, CASE_FAILED); }

bool report_run_failed(const struct report *r)
{
    for (int i = 0; i < r->n; i++)
        if (r->c[i].outcome == CASE_FAILED || (r->c[i].outcome == CASE_SKIPPED && !r->c[i].requested)) return true;
    return false;
}

void report_summary(const struct report *r, FILE *table, FILE *out)
{
    int np = report_count(r, CASE_PASSED), nf = report_count(r, CASE_FAILED), ns = report_count(r, CASE_SKIPPED);
    if (table && r->n > 0) {
        bool col = table == stderr ? r->color_err : table == stdout ? r->color : false;
        int w = 5;
        for (int i = 0; i < r->n; i++) {
            int l = (int)(strlen(r->c[i].kind) + strlen(r->c[i].matrix) + 2);
            if (l > w) w = l;
        }
        if (w > 72) w = 72;
        fflush(stdout);
        fprintf(table, "\n%s.%s on %s:\n%4s  %-*s  %-9s %9s  %s\n", r->model, r->mode, r->hostname, "#", w, "stage",
                "status", "seconds", "log");
        for (int i = 0; i < r->n; i++) {
            const struct report_case *c = &r->c[i];
            char name[512], status[32], secs[32];
            if (*c->matrix) snprintf(name, sizeof name, "%s[%s]", c->kind, c->matrix);
            else snprintf(name, sizeof name, "%s", c->kind);
            const char *color = "";
            switch (c->outcome) {
            case CASE_PASSED: snprintf(status, sizeof status, "passed"), color = GREEN; break;
            case CASE_FAILED: snprintf(status, sizeof status, "FAILED(%d)", c->status), color = RED; break;
            case CASE_SKIPPED: snprintf(status, sizeof status, "skipped"), color = YELLOW; break;
            }
            if (c->outcome == CASE_SKIPPED) snprintf(secs, sizeof secs, "-");
            else snprintf(secs, sizeof secs, "%.1f", c->seconds);
            char *log = one_line(c->log_path ? c->log_path : "-");
            fprintf(table, "%4d  %-*s  %s%-9s%s %9s  %s\n", i + 1, w, name, col ? color : "", status, col ? RESET : "",
                    secs, log);
            free(log);
            if (c->reason) fprintf(table, "%4s    reason: %s\n", "", c->reason);
            for (const char *wl = c->warnings; wl && *wl;) {   /* each warning line, as the log has it */
                size_t k = strcspn(wl, "\n");
                fprintf(table, "%4s    %s%.*s%s\n", "", col ? YELLOW : "", (int)k, wl, col ? RESET : "");
                wl += k + (wl[k] == '\n');
            }
            if (c->error) fprintf(table, "%4s    error:  %s\n", "", c->error);
        }
        /* the run's wall clock (stages, preparation and reports between them) */
        fprintf(table, "%4s  %-*s  %-9s %9.1f\n", "", w, "total", "", report_now() - r->started);
        fflush(table);
    }
    fprintf(out, "%d passed, %d failed, %d skipped\n", np, nf, ns);
    fflush(out);
}


enum tipc_status report_emit_run(const struct report *r, struct metrics *m)
{
    struct utsname u;
    char os[200] = "?";
    if (uname(&u) == 0) snprintf(os, sizeof os, "%s %s %s", u.sysname, u.release, u.machine);
    json_t *o = json_object();
    json_object_set_new(o, "model", jstr(r->model));
    json_object_set_new(o, "mode", jstr(r->mode));
    json_object_set_new(o, "config", jstr(r->config));
    json_object_set_new(o, "host", jstr(r->hostname));
    json_object_set_new(o, "os", jstr(os));
    json_object_set_new(o, "cpus", json_integer(sysconf(_SC_NPROCESSORS_ONLN)));
    json_object_set_new(o, "tipc_version", json_string(TIPC_VERSION));
    json_object_set_new(o, "started", json_real(r->started));
    return metrics_emit(m, "run", o);
}

enum tipc_status report_emit_stage(const struct report *r, int i, struct metrics *m)
{
    const struct report_case *c = &r->c[i];
    char *name = report_case_name(r, c);
    json_t *o = json_object();
    json_object_set_new(o, "k", json_integer(i + 1));
    json_object_set_new(o, "name", jstr(name));
    json_object_set_new(o, "kind", jstr(c->kind));
    json_object_set_new(o, "outcome", json_string(c->outcome == CASE_PASSED   ? "passed"
                                                  : c->outcome == CASE_FAILED ? "failed"
                                                                              : "skipped"));
    json_object_set_new(o, "status", json_integer(c->status));
    json_object_set_new(o, "reason", c->reason ? jstr(c->reason) : json_null());
    json_object_set_new(o, "error", c->error ? jstr(c->error) : json_null());
    json_object_set_new(o, "started", json_real(c->started));
    json_object_set_new(o, "seconds", json_real(c->seconds));
    if (c->cpu_s >= 0) json_object_set_new(o, "cpu_s", json_real(c->cpu_s));
    json_object_set_new(o, "log", c->log_path ? jstr(c->log_path) : json_null());
    json_object_set_new(o, "command", jstr(c->cmd));
    free(name);
    return metrics_emit(m, "stage", o);
}

enum tipc_status report_emit_summary(const struct report *r, struct metrics *m)
{
    return metrics_emit(m, "summary", json_pack("{s:i, s:i, s:i, s:f}", "passed", report_count(r, CASE_PASSED),
                                                "failed", report_count(r, CASE_FAILED), "skipped",
                                                report_count(r, CASE_SKIPPED), "seconds", wall_seconds() - r->started));
}

void report_fail_run(struct report *r, const char *cmd, const char *reason, int status)
{
    struct report_case *c = add_case(r, "run", "", cmd, 0);
    c->outcome = CASE_FAILED;
    c->status = status;
    c->reason = xstrdup(reason);
    c->started = wall_seconds();
}
