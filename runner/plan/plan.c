/* plan.c: plan_build(): MODE -> ordered stages. Checks the mode, picks the output directory, hands
 * the config to its harness's builder (step6.c for 32-line configs, else the dialect's:
 * clas.c, det.c, seg.c, full.c), then gives every path the real output
 * directory. The builders' shared vocabulary is builder.c. */
#include "plan.h"
#include "internal.h"

#include <errno.h>
#include <limits.h>
#include <unistd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../core/check.h"
#include "../../core/strv.h"
#include "../../core/banned.h"

const char *const plan_modes[] = {"lite_train_lite_infer", "lite_train_whole_infer", "whole_infer",
                                  "whole_train_whole_infer", "klquant_whole_infer", "benchmark_train", NULL};

static bool under_test_tipc(const char *path)
{
    return !strncmp(path, "test_tipc/", 10) || strstr(path, "/test_tipc/") != NULL;
}

/* LOG_PATH: --output, else the dialect's default (plan_output_dir). NULL with a message when the
 * current folder cannot be read (PaddleClas wants it absolute). */
static char *output_dir(const struct tipc_config *cfg, const char *model, const char *mode, const struct dialect *d,
                        bool ours, const struct plan_opts *o)
{
    char *out_dir;
    if (o && o->output_dir) out_dir = xstrdup(o->output_dir);
    else if (ours && !under_test_tipc(cfg->path)) out_dir = xasprintf("./logs/%s/%s", model, mode);
    else if (d->id == DIALECT_TMPL && cfg->family == CFG_FULL) out_dir = xstrdup("./test_tipc/output");
    else if (d->id == DIALECT_CLAS && cfg->family == CFG_FULL) out_dir = xasprintf("test_tipc/output/%s/%s", model, mode);
    else out_dir = xasprintf("./test_tipc/output/%s/%s", model, mode);
    if (d->id == DIALECT_CLAS && cfg->family == CFG_FULL && out_dir[0] != '/') { /* $(pwd)/...: inference runs in deploy/ */
        char cwd[PATH_MAX];
        if (!getcwd(cwd, sizeof cwd)) {
            free(out_dir);
            error_msg(TIPC_EIO, "cannot read the current folder: %s", strerror(errno));
            return NULL;
        }
        char *abs = xasprintf("%s/%s", cwd, out_dir);
        free(out_dir);
        out_dir = abs;
    }
    return out_dir;
}

char *plan_output_dir(const struct tipc_config *cfg, const char *mode, const struct plan_opts *o)
{
    const char *model = cfg_at(cfg, 1)->value;
    if (!*model) return NULL;
    return output_dir(cfg, model, mode, o && o->dialect ? o->dialect : dialect_get(DIALECT_REF),
                      !strcmp(cfg_at(cfg, 2)->value, "tipc"), o);
}

enum tipc_status plan_build(struct plan *p, const struct tipc_config *cfg, const char *mode,
                            const struct plan_opts *o)
{
    memset(p, 0, sizeof *p);
    bool known = false;
    for (int i = 0; plan_modes[i]; i++) known |= !strcmp(mode, plan_modes[i]);
    if (!known)
        return error_at(TIPC_EUSAGE, cfg->path, 0, "unknown mode '%s': expected lite_train_lite_infer, "
                        "lite_train_whole_infer, whole_infer, whole_train_whole_infer, klquant_whole_infer or "
                        "benchmark_train", mode);
    struct builder bb = {.p = p, .cfg = cfg, .cvd = CVD_INHERIT, .last_train = -1, .last_export = -1};
    struct builder *b = &bb;
    p->family = cfg->family;
    p->dialect = o && o->dialect ? o->dialect : dialect_get(DIALECT_REF);
    p->dialect_why = o && o->dialect_why ? o->dialect_why : "";
    if (cfg->family == CFG_FULL && cfg->n < CFG_FULL && !p->dialect->short_configs) {
        int at = cfg->n ? cfg->e[cfg->n - 1].line : 1;
        return error_at(TIPC_EUSAGE, cfg->path, at, "too few lines: %d non-empty lines in the first %d, the %d-line "
                        "layout needs %d (empty lines do not count; PaddleClas's train-only configs run with "
                        "--dialect clas)", cfg->n, CFG_FULL, CFG_FULL, CFG_FULL);
    }
    p->model = xstrdup(V(1));
    p->mode = xstrdup(mode);
    b->python = V(2);
    p->ours = !strcmp(b->python, "tipc");
    p->max_restarts = p->ours && o ? o->max_restarts : 0;
    b->launch = !p->ours ? "-m paddle.distributed.launch"
                : p->max_restarts > 0 ? FMT("launch --max_restarts=%d", p->max_restarts) : "launch";
    if (!*p->model) {
        error_at(TIPC_EUSAGE, cfg->path, LN(1), "empty model_name");
        plan_free(p);
        return TIPC_EUSAGE;
    }
    char *out_dir = output_dir(cfg, p->model, mode, p->dialect, p->ours, o);
    if (!out_dir) {
        plan_free(p);
        return TIPC_EIO;
    }
    /* Commands are built around a mark that the command parser reads as plain text, and get the
     * real directory back word by word (pb_add_stage): a space, quote, '$' or ';' in it can neither
     * split a word nor be refused as shell syntax blamed on a config line. */
    b->out_dir = out_dir;
    p->log_dir = xstrdup(PLAN_DIR_MARK);
    const char *gpuid = o && o->gpuid && *o->gpuid ? o->gpuid : NULL;
    enum tipc_status st;
    if (cfg->family == CFG_STEP6) st = build_step6(b, gpuid); /* Step6 stays Step6 in every dialect */
    else if (p->dialect->id == DIALECT_CLAS) st = build_clas(b);
    else if (p->dialect->id == DIALECT_DET) st = build_det(b, gpuid);
    else if (p->dialect->id == DIALECT_SEG) st = build_seg(b, gpuid);
    else st = build_full(b, gpuid);
    for (int i = 0; i < p->n; i++) { /* the dialects' other paths get the real directory too */
        struct stage *s = &p->st[i];
        char **f[] = {&s->status_file, &s->append_to, &s->model_probe, &s->model_fallback, &s->cwd[0], &s->cwd[1]};
        for (size_t j = 0; j < sizeof f / sizeof f[0]; j++) pb_real_word(b, f[j]);
        if (s->kind == STAGE_LINKS || s->kind == STAGE_COPY || s->kind == STAGE_APPEND) pb_real_word(b, &s->cmd);
    }
    free(p->log_dir);
    p->log_dir = out_dir;
    p->status_log = xasprintf("%s/results_python.log", p->log_dir);
    for (size_t i = 0; i < b->ntmp; i++) free(b->tmp[i]);
    free(b->tmp);
    if (st != TIPC_OK) plan_free(p);
    return st;
}

void plan_free(struct plan *p)
{
    if (!p) return;
    for (int i = 0; i < p->n; i++) {
        struct stage *s = &p->st[i];
        free(s->cmd);
        cmdline_free(&s->cl);
        free(s->log_path);
        free(s->cvd_value);
        free(s->ips);
        free(s->rank_log_dir);
        free(s->matrix);
        free(s->cwd[0]);
        free(s->cwd[1]);
        free(s->status_file);
        free(s->append_to);
        free(s->model_probe);
        free(s->exec);
        free(s->model_fallback);
        free(s->tee_log);
        free(s->status_log);
        free(s->record);
    }
    strv_clear(&p->env);
    free(p->save_log);
    free(p->results_header);
    free(p->seg_model);
    free(p->st);
    free(p->model);
    free(p->mode);
    free(p->log_dir);
    free(p->status_log);
    memset(p, 0, sizeof *p);
}

int plan_count_runs(const struct plan *p)
{
    int n = 0;
    for (int i = 0; i < p->n; i++) n += p->st[i].kind <= STAGE_SPEED;
    return n;
}

const char *stage_kind_name(enum stage_kind k)
{
    switch (k) {
    case STAGE_TRAIN: return "train";
    case STAGE_EVAL: return "eval";
    case STAGE_EXPORT: return "export";
    case STAGE_INFER: return "infer";
    case STAGE_SPEED: return "speed";
    case STAGE_NOTE: return "note";
    case STAGE_LINKS: return "links";
    case STAGE_COPY: return "copy";
    case STAGE_APPEND: return "append";
    }
    return "?";
}
