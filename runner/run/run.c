/* run.c: `tipc run` below its option table (run.h): read the config, build the plan, check it,
 * then print it (--dry-run) or run its stages in order as the original harness does: a stage whose
 * train/export failed is skipped, a failed stage does not stop the later ones; each gets a status
 * line, a report case and a metrics event; the JUnit and HTML reports close the run. */
#include "run.h"

#include <errno.h>
#include <limits.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "baseline.h"          /* defines: run_baseline */
#include "bench_run.h"         /* defines: bench_plan_load, bench_stage_dirs */
#include "cluster.h"           /* defines: run_check_cluster */
#include "dry_run.h"           /* defines: run_print_plan */
#include "lock.h"              /* defines: run_lock_take, run_lock_try */
#include "pending.h"           /* defines: pending_incomplete, pending_stopped */
#include "optcheck.h"          /* defines: run_check_options */
#include "proc.h"              /* defines: proc_run, proc_signals_init */
#include "steps.h"             /* defines: cwd_enter, status_from_file, subst_model, run_repo_prepare */
#include "tee.h"               /* defines: tee_start, tee_finish */
#include "../plan/config.h"    /* defines: cfg_load_opts */
#include "../plan/dialect.h"   /* defines: dialect_choose */
#include "../plan/inputs.h"    /* defines: plan_resolve_inputs */
#include "../plan/plan.h"      /* defines: plan_build, struct stage */
#include "../report/report.h"  /* defines: report_*, report_junit, report_html */
#include "../../engine/io/metrics.h" /* defines: metrics_create, metrics_emit */
#include "../../core/check.h"
#include "../../core/fs.h"        /* defines: mkdir_p, self_exe_path, copy_file_to */
#include "../../core/interrupt.h" /* defines: interrupted */
#include "../../core/sha256.h"
#include "../../core/staged.h"
#include "../../core/time.h"      /* defines: now_seconds */
#include "../../prepare/prepare.h" /* defines: prepare_for_run */
#include "../../core/banned.h"

/* What a stage gets besides its own command: our binary, CUDA_VISIBLE_DEVICES as the original
 * leaves it, POD_IP, where to append metrics, its report name, how to draw progress. */
struct stage_env {
    const char *self, *pod_ip;
    const char *metrics;   /* "TIPC_METRICS=PATH" */
    const char *progress;  /* "TIPC_PROGRESS=bar" or "=lines" */
    const char *config, *mode;
    const char *config_sha256; /* the config's digest (struct tipc_config), for the job id */
    double timeout_s;         /* per stage, 0: none */
    const char *timeout_text; /* as the user wrote it, for messages */
    bool real_data;           /* --real-data: the stages refuse synthetic data */
    char *const *env;         /* benchmark_train: the flags line's NAME=value, for every stage */
    size_t nenv;
    const char *run_time;     /* a speed stage's "model_run_time=S" (its training's seconds), else NULL */
};

/* A multi-node stage's job id and fingerprint, the same on every node of this run and different
 * for another config, mode or stage: SHA-256 of the config's digest (cfg_load's, of the bytes it
 * read), the mode, the node list and the stage's index. Two runs that meet on one master port are
 * then told apart (launch: exit 4 naming both) instead of merging. A TIPC_JOB_ID of the user's is
 * kept. */
static void job_env(const struct stage_env *se, const struct stage *s, int index, char **id, char **fp)
{
    char idx[16], md[65];
    snprintf(idx, sizeof idx, "%d", index);
    struct sha256 h;
    sha256_init(&h);
    sha256_update(&h, se->config_sha256, strlen(se->config_sha256) + 1);
    sha256_update(&h, se->mode, strlen(se->mode) + 1);
    sha256_update(&h, s->ips, strlen(s->ips) + 1);
    sha256_update(&h, idx, strlen(idx));
    sha256_final_hex(&h, md);
    const char *user = getenv("TIPC_JOB_ID");
    *id = user && *user ? NULL : xasprintf("TIPC_JOB_ID=run-%.12s", md);
    *fp = xasprintf("TIPC_JOB_FINGERPRINT=%.32s:%s", md, se->mode);
}

/* User + system seconds of this process's waited-for children and their descendants (each parent
 * waits for its own; tipc is the subreaper of the orphans). A stage's share is the difference. */
static double children_cpu_seconds(void)
{
    struct rusage ru;
    if (getrusage(RUSAGE_CHILDREN, &ru) != 0) return 0;
    return (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 + (double)ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6;
}

/* *reason: why it failed when the exit status alone does not say (a timeout), else NULL. */
static int run_stage(const struct stage *s, int index, const struct stage_env *se, const char *name,
                     const char *error_log, struct tee *tee, char **reason)
{
    const char *unset[2] = {0};
    const char **set = xcalloc(se->nenv + 16, sizeof *set);
    char *cvd = NULL, *logdir = NULL, *stage = xasprintf("TIPC_STAGE=%s", name), *id = NULL, *fp = NULL;
    char *errlog = xasprintf("TIPC_ERROR_LOG=%s", error_log);   /* its tipc processes' error lines */
    int ns = 0;
    set[ns++] = errlog;
    for (size_t i = 0; i < se->nenv; i++) set[ns++] = se->env[i];   /* benchmark_train's flags line */
    if (se->run_time) set[ns++] = se->run_time;
    if (s->cvd == CVD_SET) set[ns++] = cvd = xasprintf("CUDA_VISIBLE_DEVICES=%s", s->cvd_value);
    else if (s->cvd == CVD_UNSET) unset[0] = "CUDA_VISIBLE_DEVICES";
    if (s->rank_log_dir) set[ns++] = logdir = xasprintf("TIPC_LOG_DIR=%s", s->rank_log_dir);   /* under --output */
    if (se->pod_ip) set[ns++] = se->pod_ip;
    if (se->real_data) set[ns++] = "TIPC_REAL_DATA=1";   /* training refuses synthetic data too */
    set[ns++] = se->metrics;
    set[ns++] = se->progress;
    set[ns++] = stage;
    /* its output now goes through a pipe: keep Python's training log live, as on a terminal */
    if (tee && !getenv("PYTHONUNBUFFERED")) set[ns++] = "PYTHONUNBUFFERED=1";
    if (s->ips) {
        job_env(se, s, index, &id, &fp);
        if (id) set[ns++] = id;
        set[ns++] = fp;
    }
    struct proc_env env = {se->self, set, unset, tee ? tee->child_out : -1, tee ? tee->child_err : -1,
                           se->timeout_s > 0 ? se->timeout_s : s->timeout_s};
    struct proc_result res;
    int status = proc_run(&s->cl, &env, &res);
    free(set);
    free(cvd), free(id), free(fp);
    free(logdir);
    free(stage);
    free(errlog);
    const char *kind = stage_kind_name(s->kind);
    *reason = NULL;
    if (res.timed_out) {
        char own[32];
        snprintf(own, sizeof own, "%gs", s->timeout_s);
        const char *after = se->timeout_s > 0 ? se->timeout_text : own,
                   *by = se->timeout_s > 0 ? "--stage-timeout" : "the benchmark script's own timeout";
        error_at(TIPC_EFAIL, se->config, s->line, "the %s stage timed out after %s (%s); it and "
                 "every process it started were stopped (SIGTERM, SIGKILL after 5 s)", kind, after, by);
        *reason = xasprintf("timed out after %s (%s)", after, by);
    } else if (res.leftovers)
        warning_msg("%s:%d: the %s stage ended but left %d process%s running; stopped (nothing a stage starts "
                    "outlives it)", se->config, s->line, kind, res.leftovers, res.leftovers == 1 ? "" : "es");
    return status;
}

static char *stage_label(const struct stage *s)
{
    return *s->matrix ? xasprintf("%s[%s]", stage_kind_name(s->kind), s->matrix) : xstrdup(stage_kind_name(s->kind));
}

/* One run of a plan: what every stage needs besides itself. */
struct run_state {
    const struct plan *p;
    const struct stage_env *se;
    const char *own_dir;       /* OUTPUT/tipc: the logs tipc keeps, metrics, reports */
    const char *own_abs;       /* the same, absolute (for a stage that starts in another folder) */
    struct report *r;
    enum case_outcome *done;   /* [p->n]: each stage's outcome so far */
    bool *requested;           /* [p->n]: skipped on request (--skip-gpu), not because of a failure */
    double *secs;              /* [p->n]: each stage's seconds (a speed stage's model_run_time) */
    const char *cur_model;     /* PaddleSeg's weights name as decided so far */
    int total;                 /* stages that run a command */
    const char *skip_gpu;      /* --skip-gpu's reason: stages that need a GPU are skipped; NULL: run */
};

/* Run stage i (number k of R->total) unless the stage it depends on did not pass. */
static enum tipc_status run_one_stage(struct run_state *R, int i, int k, const struct stage *s)
{
    const char *kind = stage_kind_name(s->kind);
    if (R->skip_gpu && s->needs_gpu) {   /* this machine has no GPU, the run was told */
        char *why = xasprintf("needs a GPU: %s (--skip-gpu)", R->skip_gpu);
        report_skip(R->r, k, R->total, kind, s->matrix, s->cmd, why, s->line, true);
        free(why);
        R->done[i] = CASE_SKIPPED, R->requested[i] = true;
        return TIPC_OK;
    }
    if (s->dep >= 0 && R->done[s->dep] != CASE_PASSED) {
        int root = s->dep; /* name the failure itself, not the stages skipped because of it */
        while (R->done[root] == CASE_SKIPPED && !R->requested[root] && R->p->st[root].dep >= 0)
            root = R->p->st[root].dep;
        char *dep = stage_label(&R->p->st[root]);
        bool requested = R->requested[root];
        char *why = requested ? xasprintf("%s was skipped (needs a GPU)", dep) : xasprintf("%s failed", dep);
        report_skip(R->r, k, R->total, kind, s->matrix, s->cmd, why, s->line, requested);
        free(why);
        free(dep);
        R->done[i] = CASE_SKIPPED, R->requested[i] = requested;
        return TIPC_OK;
    }
    report_begin(R->r, k, R->total, kind, s->matrix);
    /* A command that does not keep its own log (training): keep a copy of its output. A benchmark
     * run's stages write to the log the original redirects its harness run to. */
    char *log = s->tee_log ? xstrdup(s->tee_log) : s->log_path ? NULL : xasprintf("%s/%02d_%s.log", R->own_dir, k, kind);
    struct tee tee;
    enum tipc_status st = bench_stage_dirs(s);
    if (st == TIPC_OK && log) st = tee_start_append(&tee, log, s->tee_append);
    if (st != TIPC_OK) {
        free(log);
        return st;
    }
    char *name = xasprintf("%s.%s.%s%s%s%s", R->p->model, R->p->mode, kind, *s->matrix ? "[" : "", s->matrix,
                           *s->matrix ? "]" : "");
    double t0 = now_seconds(), wall = metrics_now(), cpu0 = children_cpu_seconds();
    char *reason, *errors = xasprintf("%s/%02d_%s.errors", R->own_abs, k, kind);
    (void)unlink(errors);   /* a file of an earlier run in this folder */
    int here = cwd_enter(s->cwd);
    struct stage_env se = *R->se;
    char *run_time = s->kind == STAGE_SPEED && s->dep >= 0 ? xasprintf("model_run_time=%.0f", R->secs[s->dep]) : NULL;
    se.run_time = run_time;
    int status = run_stage(s, i, &se, name, errors, log ? &tee : NULL, &reason);
    free(run_time);
    cwd_leave(here);
    if (s->status_file) status = status_from_file(s->status_file, s->append_to);
    double secs = now_seconds() - t0;
    if (log) st = tee_finish(&tee);
    if (s->cat_log && s->log_path) copy_file_to(s->log_path, stdout);
    /* our own commands' exit codes have documented meanings: say which (README's table) */
    const char *meaning = status > 0 && s->cl.argc > 0 && !strcmp(s->cl.argv[0], "tipc")
                              ? tipc_status_name((enum tipc_status)status) : "unknown";
    char *why = reason ? reason
                       : strcmp(meaning, "unknown") ? xasprintf("exit status %d (tipc: %s)", status, meaning) : NULL;
    R->secs[i] = secs;
    double cpu = children_cpu_seconds() - cpu0;   /* the stage's whole tree: every process was waited for */
    char *plan_log = R->r->status_log;   /* a speed stage's line goes to benchmark_log/results.log */
    if (s->status_log) R->r->status_log = s->status_log;
    enum tipc_status ws = report_stage(R->r, kind, s->matrix, s->cmd, log ? log : s->log_path, status, why, wall,
                                       secs, s->line);
    R->r->status_log = plan_log;
    R->r->c[R->r->n - 1].cpu_s = cpu;
    if (status != 0) report_stage_error(R->r, report_why(errors, log ? log : s->log_path));
    (void)unlink(errors);
    free(errors);
    free(why);
    R->done[i] = status == 0 ? CASE_PASSED : CASE_FAILED;
    free(name);
    free(log);
    return st != TIPC_OK ? st : ws;
}

/* Stage i with PaddleSeg's weights name as decided so far; after a train, decide it anew. */
static enum tipc_status run_one(struct run_state *R, int i, int k)
{
    const struct plan *p = R->p;
    struct stage now = p->st[i]; /* with PaddleSeg's weights name as decided so far */
    const struct stage *s = &now;
    char *shown = NULL, *exec = NULL;
    if (R->cur_model && strstr(now.exec ? now.exec : now.cmd, PB_MODEL_TOKEN)) {
        now.cmd = shown = subst_model(p->st[i].cmd, R->cur_model);
        exec = subst_model(p->st[i].exec ? p->st[i].exec : p->st[i].cmd, R->cur_model);
        char err[256], bad = 0;
        if (cmdline_parse(exec, &now.cl, err, sizeof err, &bad) != TIPC_OK) {
            free(shown);
            free(exec);
            return error_at(TIPC_EUSAGE, p->st[i].cmd, s->line, "%s", err);
        }
    }
    enum tipc_status rs = run_one_stage(R, i, k, s);
    if (rs == TIPC_OK && s->model_probe && R->cur_model && R->done[i] != CASE_SKIPPED) {
        char *w = xasprintf("%s/%s", s->model_probe, R->cur_model); /* `[ ! -f SAVE/NAME ] && NAME=iter_N/...` */
        struct stat sb;
        if (stat(w, &sb) != 0 || !S_ISREG(sb.st_mode)) R->cur_model = s->model_fallback;
        free(w);
    }
    if (exec) cmdline_free(&now.cl);
    free(shown);
    free(exec);
    return rs;
}

/* The output folder is this run's (lock.h) and its reports say "incomplete" until the end
 * (pending.h); then what runs before the stages: the repo's prepare.sh, our data (*data: which). */
static enum tipc_status claim_output(const struct plan *p, const struct run_opts *a, const struct pending *pd,
                                     const char *own, int *lock, struct prepare_record *data)
{
    TRY(mkdir_p(p->log_dir));
    TRY(dir_check_writable(p->log_dir, "output folder"));   /* before any stage runs */
    /* tipc's own files (stage logs it keeps, metrics, reports, the lock) in one folder the original never uses */
    TRY(mkdir_p(own));
    char *what = xasprintf("%s %s", a->config, a->mode);
    enum tipc_status st = run_lock_take(p->log_dir, own, what, lock);
    free(what);
    TRY(st);
    pending_incomplete(pd, false, own);
    if (a->prepare) {
        char *me = self_exe_path();
        enum tipc_status ps = run_repo_prepare(a->config, a->mode, me);
        free(me);
        TRY(ps);
    }
    if (p->results_header) TRY(append_line(p->status_log, p->results_header)); /* PaddleSeg */
    /* Our own configs get their data first (the original leaves that to a separate prepare.sh). */
    if (p->ours && !a->no_prepare) {
        struct prepare_opts po = a->prep;
        po.record = data;
        TRY(prepare_for_run(a->config, p->model, p->mode, &po));
    }
    return TIPC_OK;
}

/* *reported: the run's real reports were written (else the caller writes the stand-in). */
static enum tipc_status run_plan(const struct plan *p, const struct run_opts *a, const char *config_sha256,
                                 const struct pending *pd, bool *reported)
{
    double started = report_now();   /* the run's wall clock starts before its preparation */
    struct prepare_record data = {0};   /* which data the run uses, for its reports */
    char *own = xasprintf("%s/tipc", p->log_dir);
    int lock = -1;
    enum tipc_status st = claim_output(p, a, pd, own, &lock, &data);
    if (st != TIPC_OK) {
        run_lock_release(lock);
        free(own);
        prepare_record_free(&data);
        return st;
    }
    char *self = self_exe_path();
    char *pod_ip = a->node_ip ? xasprintf("POD_IP=%s", a->node_ip) : NULL;
    char *metrics = xasprintf("TIPC_METRICS=%s/metrics.jsonl", own);
    struct stage_env se = {self, pod_ip, metrics, isatty(2) ? "TIPC_PROGRESS=bar" : "TIPC_PROGRESS=lines", a->config,
                           a->mode, config_sha256, a->timeout_s, a->timeout_text, a->prep.real_data, p->env.v, p->env.n,
                           NULL};
    struct report r;
    report_init(&r, a->config, p->model, p->mode, p->status_log);
    r.started = started;
    for (int i = 0; i < data.n; i++)
        report_add_data(&r, data.v[i].name, data.v[i].dest, data.v[i].origin, data.v[i].synthetic, data.v[i].absent);
    prepare_record_free(&data);
    struct metrics mx;
    st = metrics_create(&mx, metrics + strlen("TIPC_METRICS="));
    if (st == TIPC_OK) st = report_emit_run(&r, &mx);
    if (st == TIPC_OK) st = report_emit_data(&r, &mx);
    int total = plan_count_runs(p);
    fprintf(stderr, "tipc: %d commands from %s (%s), logs in %s\n", total, a->config, p->mode, p->log_dir);
    char *own_abs = realpath(own, NULL);
    struct run_state R = {p, &se, own, own_abs ? own_abs : own, &r, xcalloc((size_t)p->n + 1, sizeof *R.done),
                          xcalloc((size_t)p->n + 1, sizeof *R.requested), xcalloc((size_t)p->n + 1, sizeof(double)),
                          p->seg_model, total, a->skip_gpu};
    proc_signals_init();
    for (int i = 0, k = 0; i < p->n && !interrupted() && st == TIPC_OK; i++) {
        const struct stage *s = &p->st[i];
        if (s->kind == STAGE_NOTE) {
            printf("%s\n", s->cmd);
            continue;
        }
        if (s->kind == STAGE_LINKS || s->kind == STAGE_COPY || s->kind == STAGE_APPEND) {
            if (s->kind == STAGE_LINKS) stage_links(s->cmd);
            else if (s->kind == STAGE_COPY) stage_copy(s->cmd, s->append_to);
            else if (s->tee_log) st = bench_empty_log(s);   /* a benchmark harness run without commands */
            else (void)status_from_file(s->cmd, s->append_to); /* the original ignores this cat's status */
            R.done[i] = CASE_PASSED;
            continue;
        }
        enum tipc_status ws = run_one(&R, i, ++k);
        if (ws == TIPC_OK) ws = report_emit_stage(&r, r.n - 1, &mx);
        if (ws != TIPC_OK) st = ws; /* a log or the metrics file cannot be written: stop */
    }
    char *why = interrupted() ? xasprintf("interrupted after %d of %d commands", r.n, total)
              : st != TIPC_OK ? xasprintf("stopped after %d of %d commands: exit %d (%s)%s%s", r.n, total, (int)st,
                                          tipc_status_name(st), *error_first() ? ": " : "", error_first())
                              : NULL;
    if (why) {   /* a run that did not end as planned is never a passing report */
        char *cmd = pending_run_cmd(pd);
        report_fail_run(&r, cmd, why, interrupted() ? TIPC_EINTR : (int)st);
        free(cmd), free(why);
    }
    report_summary(&r, stderr, stdout);
    enum tipc_status ms = report_emit_summary(&r, &mx);
    if (st == TIPC_OK) st = ms;
    metrics_close(&mx);
    struct cmp_result cmp;
    if (a->baseline && !interrupted()) {   /* the gate: in the table, the JUnit report and report.html */
        enum tipc_status bs = run_baseline(p, a, metrics + strlen("TIPC_METRICS="), &cmp);
        if (bs == TIPC_OK) r.baseline = &cmp;
        else if (st == TIPC_OK) st = bs;
    }
    char *own_junit = xasprintf("%s/junit.xml", own), *html = xasprintf("%s/report.html", own);
    const char *junits[] = {own_junit, a->junit};
    for (int j = 0; j < 2; j++) {
        if (!junits[j]) continue;
        enum tipc_status js = report_junit(&r, junits[j]);
        if (js != TIPC_OK && st == TIPC_OK) st = js;
    }
    enum tipc_status hs = report_html(&r, metrics + strlen("TIPC_METRICS="), html);
    if (hs != TIPC_OK && st == TIPC_OK) st = hs;
    free(html);
    *reported = true;
    if (interrupted()) {
        error_msg(TIPC_EINTR, "interrupted; %d of %d commands ran", r.n, total);
        st = TIPC_EINTR;
    } else if (st == TIPC_OK && report_run_failed(&r)) {
        st = TIPC_EFAIL;
    } else if (st == TIPC_OK && r.baseline && compare_failures(r.baseline)) {
        error_msg(TIPC_EFAIL, "%d figure%s worse than the baseline '%s' allows (the table above)",
                  compare_failures(r.baseline), compare_failures(r.baseline) == 1 ? " is" : "s are", a->baseline);
        st = TIPC_EFAIL;
    }
    if (r.baseline) compare_free(&cmp);
    report_free(&r);
    run_lock_release(lock);
    free(R.done);
    free(R.requested);
    free(R.secs);
    free(own_junit);
    free(metrics);
    free(own);
    free(own_abs);
    free(self);
    free(pod_ip);
    return st;
}

/* --max-restarts reaches only `tipc launch` (the plan records the trains it launches): say so when
 * no training stage runs it (a Paddle config's launcher, one device without a launcher), not silently ignore it. */
static void restarts_check(const struct plan *p, const struct run_opts *a)
{
    if (a->max_restarts <= 0) return;
    for (int i = 0; i < p->n; i++)
        if (p->st[i].kind == STAGE_TRAIN && p->st[i].launched && p->max_restarts > 0) return;
    warning_msg("%s: --max-restarts %d (or TIPC_MAX_RESTARTS) has no effect here: no training stage of this run "
                "goes through `tipc launch` (%s)", a->config, a->max_restarts,
                p->ours ? "each gpu_list item is one device, trained without a launcher"
                        : "restarts are tipc launch's; this config's trainings use its own launcher");
}

/* The run ended (st) without its real reports: the --junit file, and OUTPUT/tipc's reports when
 * that folder exists and no other run holds it, say so instead of what the last run said. */
static void stopped_reports(const struct pending *pd, const char *out_dir, enum tipc_status st)
{
    char *own = out_dir ? xasprintf("%s/tipc", out_dir) : NULL;
    struct stat sb;
    int lock = -1;
    bool mine = own && stat(own, &sb) == 0 && S_ISDIR(sb.st_mode) && run_lock_try(own, &lock);
    pending_stopped(pd, mine ? own : NULL, st);
    run_lock_release(lock);
    free(own);
}

void run_refused(const struct run_opts *a, enum tipc_status st)
{
    struct pending pd = {a->config, a->mode, NULL, a->junit};
    if (a->junit) pending_stopped(&pd, NULL, st);
}

enum tipc_status run_config(const struct run_opts *a)
{
    struct pending pd = {a->config, a->mode, NULL, a->junit};
    if (!a->dry_run) pending_incomplete(&pd, true, NULL);   /* first: whatever stops this run now */
    char why[PATH_MAX + 256], *out_dir = NULL, *model = NULL;
    bool reported = false;
    enum tipc_status st = TIPC_EUSAGE;
    const struct dialect *d = dialect_choose(a->config, a->dialect, why, sizeof why);
    struct tipc_config cfg;
    bool bench = !strcmp(a->mode, "benchmark_train");
    char bench_sha[65] = "";
    int cfg_flags = bench ? CFG_ALL_LINES | CFG_ALLOW_SHORT   /* as bench_plan_load reads it */
                    : d ? (d->short_configs ? CFG_ALLOW_SHORT : 0) | (d->read_all_lines ? CFG_ALL_LINES : 0) : 0;
    if (d) st = cfg_load_opts(&cfg, a->config, cfg_flags);
    if (d && st == TIPC_OK) {
        struct plan p;
        struct plan_opts po = {.output_dir = a->output, .gpuid = bench ? NULL : a->gpuid, .dialect = d,
                               .dialect_why = why, .max_restarts = a->max_restarts};
        out_dir = plan_output_dir(&cfg, a->mode, &po);
        model = xstrdup(cfg_at(&cfg, 1)->value);
        pd.model = model;
        if (bench) {
            st = bench_plan_load(&p, a, &po, bench_sha);   /* the third word is PARAMS */
        } else {
            if (a->repeat > 1)
                warning_msg("%s: --repeat %d has no effect in %s: it repeats benchmark_train's cases", a->config,
                            a->repeat, a->mode);
            st = plan_build(&p, &cfg, a->mode, &po);
        }
        if (st == TIPC_OK) {
            restarts_check(&p, a);
            st = plan_resolve_inputs(&p, &cfg);   /* before anything runs */
            if (st == TIPC_OK) st = run_check_options(&p, &cfg, a->find_cmd);   /* a mistyped flag, at its line */
            if (st == TIPC_OK) st = run_check_cluster(&p, a->config);
            if (st == TIPC_OK && a->dry_run) run_print_plan(&p, a);
            else if (st == TIPC_OK) st = run_plan(&p, a, bench ? bench_sha : cfg.sha256, &pd, &reported);
            plan_free(&p);
        }
        cfg_free(&cfg);
    }
    if (st != TIPC_OK && !reported && !a->dry_run) stopped_reports(&pd, out_dir, st);
    free(out_dir);
    free(model);
    return st;
}
