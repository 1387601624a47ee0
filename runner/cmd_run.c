/* cmd_run.c: `tipc run CONFIG MODE`: read the config, build the plan, run every stage as the
 * original harness does (a failed stage does not stop the later ones), report, exit 0/1. */
#include <errno.h>
#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <sys/stat.h>
#include <unistd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmds.h"      /* defines: usage_run */
#include "config.h"    /* defines: cfg_load_opts */
#include "dialect.h"   /* defines: dialect_choose */
#include "plan.h"      /* defines: plan_build, struct stage */
#include "proc.h"      /* defines: proc_run */
#include "report.h"    /* defines: report_* */
#include "engine_flags.h" /* defines: flags_parse_args */
#include "../core/check.h"
#include "../core/time.h"   /* defines: now_seconds */
#include "../core/fs.h"      /* defines: mkdir_p, self_exe_path, copy_file_to */
#include "../prepare/prepare.h"     /* defines: prepare_for_run */
#include "../core/banned.h"

const char usage_run[] =
    "usage: tipc run CONFIG MODE [GPUID] [--dry-run] [--node_ip IP] [--output DIR] [--junit FILE]\n"
    "                [--no-prepare] [--prepare] [--dialect NAME|auto]\n"
    "\n"
    "Run a TIPC config's chain for MODE, exactly as test_tipc/test_train_inference_python.sh would:\n"
    "training for each gpu_list item and trainer, eval, export, then inference for each use_gpu x\n"
    "batch size (x threads x mkldnn x trt x precision in 51-line configs). A failed stage does not\n"
    "stop the later ones. Each stage prints `Run successfully with command - MODEL - CMD!` or\n"
    "`Run failed with command - MODEL - CMD!` and appends it to OUTPUT/results_python.log; the run\n"
    "ends with `N passed, N failed` and exits 1 if any stage failed.\n"
    "\n"
    "MODE: lite_train_lite_infer, lite_train_whole_infer, whole_infer, whole_train_whole_infer,\n"
    "      klquant_whole_infer. GPUID (whole_infer only): exported as CUDA_VISIBLE_DEVICES.\n"
    "\n"
    "options:\n"
    "  --dry-run        print the commands this node would run, run nothing\n"
    "  --node_ip IP     this node's address in gpu_list's IP list (passed to `tipc launch` as POD_IP)\n"
    "  --output DIR     output root (default ./test_tipc/output/MODEL/MODE for Paddle configs and\n"
    "                   configs under a test_tipc/ folder, ./logs/MODEL/MODE for python:tipc configs)\n"
    "  --junit FILE     also write a JUnit XML report\n"
    "  --dialect NAME   whose harness to follow: auto (default: from the repo the config is in),\n"
    "                   reference, clas, det, seg, ocr, tmpl (README: dialects)\n"
    "  --prepare        first run the repo's own `bash test_tipc/prepare.sh CONFIG MODE` (from the\n"
    "                   current folder, no shell in between); its failure stops the run (exit 3)\n"
    "  --no-prepare     for python:tipc configs, do not run `tipc prepare CONFIG MODE` first\n"
    "                   (it is offline by default: TIPC_OFFLINE=0 lets it download; exit 3 on failure)\n"
    "\n"
    "Commands run with fork/execvp, never through a shell: `> FILE`, `>> FILE` and `2>&1` are applied\n"
    "by tipc; other shell syntax in a command is refused (exit 2, nothing run).\n";

struct run_args {
    const char *config, *mode, *gpuid, *node_ip, *output, *junit, *dialect;
    bool dry_run, no_prepare, prepare;
};

static enum tipc_status parse_args(int argc, char **argv, struct run_args *a)
{
    memset(a, 0, sizeof *a);
    const struct flag tbl[] = {
        {"--dry-run", NULL, FLAG_SWITCH, &a->dry_run, NULL},
        {"--no-prepare", NULL, FLAG_SWITCH, &a->no_prepare, NULL},
        {"--prepare", NULL, FLAG_SWITCH, &a->prepare, NULL},
        {"--node_ip", NULL, FLAG_STR, &a->node_ip, NULL},
        {"--output", NULL, FLAG_STR, &a->output, NULL},
        {"--junit", NULL, FLAG_STR, &a->junit, NULL},
        {"--dialect", NULL, FLAG_STR, &a->dialect, NULL},
        {0},
    };
    const char *pos[3] = {0};
    int npos = 0;
    bool help; /* main() answers --help before we get here */
    TRY(flags_parse_args("run", usage_run, argc, argv, tbl, &help, pos, 3, &npos));
    const char *opt[][2] = {{"--node_ip", a->node_ip}, {"--output", a->output}, {"--junit", a->junit},
                            {"--dialect", a->dialect}};
    for (size_t k = 0; k < sizeof opt / sizeof opt[0]; k++)
        if (opt[k][1] && !*opt[k][1]) return error_msg(TIPC_EUSAGE, "option '%s' needs a non-empty value", opt[k][0]);
    if (npos < 2) {
        fputs(usage_run, stderr);
        return TIPC_EUSAGE;
    }
    a->config = pos[0];
    a->mode = pos[1];
    a->gpuid = pos[2];
    return TIPC_OK;
}

/* PB_MODEL_TOKEN in `s` replaced by `name` (a copy of s when there is none). */
static char *subst_model(const char *s, const char *name)
{
    size_t tl = strlen(PB_MODEL_TOKEN), nl = strlen(name), n = 0;
    for (const char *q = s; (q = strstr(q, PB_MODEL_TOKEN)) != NULL; q += tl) n++;
    char *out = xmalloc(strlen(s) + n * nl + 1), *o = out;
    for (const char *q = s, *hit; ; q = hit + tl) {
        hit = strstr(q, PB_MODEL_TOKEN);
        size_t k = hit ? (size_t)(hit - q) : strlen(q);
        memcpy(o, q, k);
        o += k;
        if (!hit) break;
        memcpy(o, name, nl);
        o += nl;
    }
    *o = 0;
    return out;
}

static void print_plan(const struct plan *p, const struct run_args *a)
{
    printf("# tipc run %s %s (dry run): %d commands, %d-line layout, python:%s\n", a->config, a->mode,
           plan_count_runs(p), (int)p->family, p->ours ? "tipc" : "(as in the config)");
    printf("# dialect: %s (%s): %s\n", p->dialect->name, p->family == CFG_STEP6 ? "Step6's harness for 32-line configs"
           : p->dialect->repo, p->dialect_why);
    printf("# output: %s\n", p->log_dir);
    if (a->prepare) printf("  0 prepare      bash test_tipc/prepare.sh %s %s\n", a->config, a->mode);
    int k = 0;
    for (int i = 0; i < p->n; i++) {
        const struct stage *s = &p->st[i];
        if (s->kind == STAGE_NOTE) {
            printf("         echo: %s\n", s->cmd);
            continue;
        }
        if (s->kind == STAGE_LINKS) {
            printf("         links: %s/inference.{pdmodel,pdiparams} -> model.* (if that folder exists)\n", s->cmd);
            continue;
        }
        if (s->kind == STAGE_COPY) {
            printf("         copy: the files of %s into %s/ (if that folder exists)\n", s->cmd, s->append_to);
            continue;
        }
        if (s->kind == STAGE_APPEND) {
            printf("         append: %s >> %s (if it exists)\n", s->cmd, s->append_to);
            continue;
        }
        char *shown = subst_model(s->cmd, p->seg_model ? p->seg_model : "");
        printf("%3d %-6s line %-3d %s\n", ++k, stage_kind_name(s->kind), s->line, shown);
        free(shown);
        if (s->model_probe)
            printf("               then: if %s/<weights> is missing, the weights become %s\n", s->model_probe,
                   s->model_fallback);
        for (int c = 0; c < 2; c++)
            if (s->cwd[c]) printf("               cd %s (skipped if missing)\n", s->cwd[c]);
        if (s->status_file)
            printf("               status: can %s be read (appended to %s)\n", s->status_file, s->append_to);
        if (s->cvd == CVD_SET) printf("               env CUDA_VISIBLE_DEVICES=%s\n", s->cvd_value);
        else if (s->cvd == CVD_UNSET) printf("               env -u CUDA_VISIBLE_DEVICES\n");
        if (s->ips) {
            if (a->node_ip) printf("               this node: %s (POD_IP) in --ips=%s\n", a->node_ip, s->ips);
            else printf("               this node: found by `tipc launch` among --ips=%s\n", s->ips);
        }
    }
}

static int run_stage(const struct stage *s, const char *self, const char *pod_ip_env)
{
    const char *set[4] = {0}, *unset[2] = {0};
    char *cvd = NULL;
    int ns = 0;
    if (s->cvd == CVD_SET) set[ns++] = cvd = xasprintf("CUDA_VISIBLE_DEVICES=%s", s->cvd_value);
    else if (s->cvd == CVD_UNSET) unset[0] = "CUDA_VISIBLE_DEVICES";
    if (pod_ip_env) set[ns++] = pod_ip_env;
    struct proc_env env = {self, set, unset};
    int status = proc_run(&s->cl, &env);
    free(cvd);
    return status;
}

/* The original `cd`s before some commands (PaddleClas: deploy/); a failed cd is skipped, as the
 * shell goes on, and tipc comes back to where it was afterwards. */
static int run_in_cwd(const struct stage *s, const char *self, const char *pod_ip_env)
{
    if (!s->cwd[0]) return run_stage(s, self, pod_ip_env);
    int here = open(".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (here < 0) {
        error_msg(TIPC_EIO, "cannot open the current folder: %s", strerror(errno));
        return 1;
    }
    for (int c = 0; c < 2; c++)
        if (s->cwd[c] && chdir(s->cwd[c]) != 0)
            fprintf(stderr, "tipc: cd %s: %s (the command runs where it is, as in the original)\n", s->cwd[c],
                    strerror(errno));
    int status = run_stage(s, self, pod_ip_env);
    if (fchdir(here) != 0) tipc_die_msg(TIPC_EIO, "cannot return to the starting folder: %s", strerror(errno));
    close(here);
    return status;
}

/* `cat SRC >> DST` as the status of a train (PaddleClas, PaddleOCR f773): DST is created even
 * when SRC is missing; the status is 1 when SRC cannot be read. */
static int status_from_file(const char *src, const char *dst)
{
    FILE *out = fopen(dst, "ab");
    if (!out) {
        error_at(TIPC_EIO, dst, 0, "cannot append the train log: %s", strerror(errno));
        return 1;
    }
    FILE *in = fopen(src, "rb");
    int status = in ? 0 : 1;
    char buf[65536];
    size_t n;
    while (in && (n = fread(buf, 1, sizeof buf, in)) > 0)
        if (fwrite(buf, 1, n, out) != n) status = 1;
    if (in && ferror(in)) status = 1;
    if (in) fclose(in);
    if (fclose(out) != 0) status = 1;
    return status;
}

/* PaddleClas's whole_infer: `cd DIR; ln -s model.pdmodel inference.pdmodel; ln -s model.pdiparams ...`.
 * Made only inside DIR (the original's links land in the current folder when DIR is missing). */
static void stage_links(const char *dir)
{
    struct stat st;
    if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode)) {
        fprintf(stderr, "tipc: %s: no such folder; the quantised model's links are not made\n", dir);
        return;
    }
    const char *names[][2] = {{"model.pdmodel", "inference.pdmodel"}, {"model.pdiparams", "inference.pdiparams"}};
    for (int i = 0; i < 2; i++) {
        char *link = xasprintf("%s/%s", dir, names[i][1]);
        if (symlink(names[i][0], link) != 0 && errno != EEXIST)
            fprintf(stderr, "tipc: ln -s %s %s: %s\n", names[i][0], link, strerror(errno));
        free(link);
    }
}

/* PaddleDetection's `cp SRC/(all) DST/`: regular files only (cp without -r refuses folders); a missing
 * SRC is reported and skipped, as cp's error is in the original. */
static void stage_copy(const char *src, const char *dst)
{
    DIR *d = opendir(src);
    if (!d) {
        fprintf(stderr, "tipc: cp %s/* %s/: %s\n", src, dst, strerror(errno));
        return;
    }
    struct dirent *de;
    while ((de = readdir(d)) != NULL) {
        if (de->d_name[0] == '.') continue; /* the glob skips dot files */
        char *from = xasprintf("%s/%s", src, de->d_name), *to = xasprintf("%s/%s", dst, de->d_name);
        struct stat st;
        if (stat(from, &st) == 0 && S_ISREG(st.st_mode)) {
            FILE *in = fopen(from, "rb"), *out = in ? fopen(to, "wb") : NULL;
            char buf[65536];
            size_t n;
            bool ok = in && out;
            while (ok && (n = fread(buf, 1, sizeof buf, in)) > 0) ok = fwrite(buf, 1, n, out) == n;
            if (in && ferror(in)) ok = false;
            if (in) fclose(in);
            if (out && fclose(out) != 0) ok = false;
            if (!ok) fprintf(stderr, "tipc: cp %s %s: %s\n", from, to, strerror(errno ? errno : EIO));
        }
        free(from);
        free(to);
    }
    closedir(d);
}

/* --prepare: the repo's own data script, as Paddle users run it by hand before the harness:
 * `bash test_tipc/prepare.sh CONFIG MODE`, an argv (the config path never meets a shell). */
static enum tipc_status run_repo_prepare(const struct run_args *a, const char *self)
{
    static const char script[] = "test_tipc/prepare.sh";
    struct stat st;
    if (stat(script, &st) != 0 || !S_ISREG(st.st_mode))
        return error_msg(TIPC_EUSAGE, "--prepare: %s: %s; run tipc from the repo root, where the harness runs",
                         script, strerror(errno ? errno : ENOENT));
    struct cmdline cl = {0};
    const char *argv[] = {"bash", script, a->config, a->mode};
    cl.argc = 4;
    cl.argv = xcalloc(5, sizeof *cl.argv);
    for (int i = 0; i < 4; i++) cl.argv[i] = xstrdup(argv[i]);
    printf("prepare: bash %s %s %s\n", script, a->config, a->mode);
    fflush(stdout);
    proc_signals_init();
    const char *none[1] = {NULL};
    struct proc_env env = {self, none, none};
    int status = proc_run(&cl, &env);
    cmdline_free(&cl);
    if (status != 0)
        return error_msg(TIPC_EDATA, "--prepare: bash %s %s %s exited with status %d; nothing else was run", script,
                         a->config, a->mode, status);
    return TIPC_OK;
}

static enum tipc_status run_plan(const struct plan *p, const struct run_args *a)
{
    if (a->prepare) {
        char *me = self_exe_path();
        enum tipc_status ps = run_repo_prepare(a, me);
        free(me);
        TRY(ps);
    }
    TRY(mkdir_p(p->log_dir));
    /* Our own configs get their data first (the original leaves that to a separate prepare.sh). */
    if (p->ours && !a->no_prepare) TRY(prepare_for_run(a->config, p->model, p->mode));
    char *self = self_exe_path();
    char *pod_ip = a->node_ip ? xasprintf("POD_IP=%s", a->node_ip) : NULL;
    if (p->results_header) { /* PaddleSeg: `echo "--- MODE ---" >> $status_log` first */
        FILE *f = fopen(p->status_log, "a");
        if (!f || fprintf(f, "%s\n", p->results_header) < 0 || fclose(f) != 0) {
            if (f) fclose(f);
            free(self);
            free(pod_ip);
            return error_at(TIPC_EIO, p->status_log, 0, "cannot append to results log: %s", strerror(errno));
        }
    }
    const char *cur_model = p->seg_model;
    struct report r;
    report_init(&r, a->config, p->model, p->mode, p->status_log);
    fprintf(stderr, "tipc: %d commands from %s (%s), logs in %s\n", plan_count_runs(p), a->config, p->mode, p->log_dir);
    enum tipc_status st = TIPC_OK;
    proc_signals_init();
    for (int i = 0; i < p->n && !proc_interrupted(); i++) {
        const struct stage *s = &p->st[i];
        if (s->kind == STAGE_NOTE) {
            printf("%s\n", s->cmd);
            continue;
        }
        if (s->kind == STAGE_LINKS) {
            stage_links(s->cmd);
            continue;
        }
        if (s->kind == STAGE_COPY) {
            stage_copy(s->cmd, s->append_to);
            continue;
        }
        if (s->kind == STAGE_APPEND) {
            (void)status_from_file(s->cmd, s->append_to); /* the original ignores this cat's status */
            continue;
        }
        struct stage now = *s; /* with the weights' name decided so far (PaddleSeg) */
        char *cmd = NULL, *exec = NULL;
        if (cur_model && strstr(s->exec ? s->exec : s->cmd, PB_MODEL_TOKEN)) {
            now.cmd = cmd = subst_model(s->cmd, cur_model);
            exec = subst_model(s->exec ? s->exec : s->cmd, cur_model);
            char err[256], bad = 0;
            if (cmdline_parse(exec, &now.cl, err, sizeof err, &bad) != TIPC_OK) {
                st = error_at(TIPC_EUSAGE, a->config, s->line, "%s: %s", err, exec);
                free(cmd);
                free(exec);
                break;
            }
        }
        double t0 = now_seconds();
        int status = run_in_cwd(&now, self, pod_ip);
        if (s->status_file) status = status_from_file(s->status_file, s->append_to);
        if (s->model_probe && cur_model) {
            char *w = xasprintf("%s/%s", s->model_probe, cur_model);
            struct stat sb;
            if (stat(w, &sb) != 0 || !S_ISREG(sb.st_mode)) cur_model = s->model_fallback;
            free(w);
        }
        if (s->cat_log && s->log_path) copy_file_to(s->log_path, stdout);
        enum tipc_status ws = report_stage(&r, stage_kind_name(s->kind), now.cmd, s->log_path, status,
                                           now_seconds() - t0, s->line);
        if (ws != TIPC_OK) st = ws;
        if (exec) cmdline_free(&now.cl);
        free(cmd);
        free(exec);
    }
    report_summary(&r, stdout);
    if (a->junit) {
        enum tipc_status js = report_junit(&r, a->junit);
        if (js != TIPC_OK && st == TIPC_OK) st = js;
    }
    if (proc_interrupted()) {
        error_msg(TIPC_EINTR, "interrupted; %d of %d commands ran", r.n, plan_count_runs(p));
        st = TIPC_EINTR;
    } else if (st == TIPC_OK && report_failed(&r)) {
        st = TIPC_EFAIL;
    }
    report_free(&r);
    free(self);
    free(pod_ip);
    return st;
}

int cmd_run(int argc, char **argv)
{
    struct run_args a;
    TRY(parse_args(argc, argv, &a));
    char why[PATH_MAX + 256];
    const struct dialect *d = dialect_choose(a.config, a.dialect, why, sizeof why);
    if (!d) return TIPC_EUSAGE;
    struct tipc_config cfg;
    TRY(cfg_load_opts(&cfg, a.config, (d->short_configs ? CFG_ALLOW_SHORT : 0) | (d->read_all_lines ? CFG_ALL_LINES : 0)));
    struct plan p;
    struct plan_opts o = {a.output, a.gpuid, d, why};
    enum tipc_status st = plan_build(&p, &cfg, a.mode, &o);
    if (st == TIPC_OK) {
        if (a.dry_run) print_plan(&p, &a);
        else st = run_plan(&p, &a);
        plan_free(&p);
    }
    cfg_free(&cfg);
    return st;
}
