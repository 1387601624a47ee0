/* bench_case.c: benchmark_train.sh's loops (bench_internal.h): batch size x precision x layout
 * (x model type in PaddleClas's), each case's sed edits, the harness runs it makes (a profiling run
 * first on one card, then the measured run) as the dialect's benchmark_train stages, and after each
 * measured run a STAGE_SPEED with analysis.py's arguments. */
#include "bench_internal.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../core/check.h"
#include "../../core/strv.h"
#include "../../core/banned.h"

/* One case's values and names. */
struct bench_case {
    const char *bs, *precision, *line_precision, *layout, *model_type, *to_static, *save;
    char *gpu_id;
    int repeat;
};

char *bench_gpu_ids(const char *layout, char *err, size_t errlen)
{
    char *end;
    long m = 0, p = 0;
    if (layout[0] == 'N' && isdigit((unsigned char)layout[1])) m = strtol(layout + 1, &end, 10);
    else end = (char *)layout;
    if (m >= 1 && *end == 'C' && isdigit((unsigned char)end[1])) p = strtol(end + 1, &end, 10);
    if (m < 1 || m > 4096 || p < 1 || p > 65536 || *end) {
        snprintf(err, errlen, "device layout '%s': want N<nodes>C<cards>, e.g. N1C1, N1C8, N2C4", layout);
        return NULL;
    }
    long last = (p - 1) / m;   /* set_gpu_id: seq -s, 0 $(( (P-1) / M )) */
    size_t cap = (size_t)(last + 1) * 8 + 1;
    char *s = xmalloc(cap), *o = s;
    for (long i = 0; i <= last; i++) o += snprintf(o, cap - (size_t)(o - s), "%s%ld", i ? "," : "", i);
    return s;
}

/* A word as our command parser reads it back: bare when it is plain, else single-quoted. */
static char *quote_word(const char *w, bool always)
{
    bool plain = *w && !always;
    for (const char *c = w; plain && *c; c++)
        plain = strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_./,:=+-@%", *c) != NULL;
    if (plain) return xstrdup(w);
    size_t n = 3;
    for (const char *c = w; *c; c++) n += *c == '\'' ? 4 : 1;
    char *s = xmalloc(n), *o = s;
    *o++ = '\'';
    for (const char *c = w; *c; c++) {
        if (*c == '\'') memcpy(o, "'\\''", 4), o += 4;
        else *o++ = *c;
    }
    *o++ = '\'';
    *o = 0;
    return s;
}

static void push_stage(struct plan *p, size_t *cap, struct stage *s)
{
    p->st = xgrow(p->st, sizeof *p->st, (size_t)p->n + 1, cap);
    p->st[p->n++] = *s;
}

/* Build the edited config's benchmark_train plan and move its stages into p, their output going to
 * `log` (the original's `bash HARNESS > LOG 2>&1`). *last_train: the last train stage's index. */
static enum tipc_status run_harness(struct plan *p, size_t *cap, struct bench_run *br, const char *log,
                                    const char *tag, double timeout, int *last_train)
{
    size_t len;
    char *text = btext_join(&br->text, &len);
    const struct dialect *d = br->popts && br->popts->dialect ? br->popts->dialect : NULL;
    unsigned flags = d ? (d->short_configs ? CFG_ALLOW_SHORT : 0) | (d->read_all_lines ? CFG_ALL_LINES : 0) : 0;
    struct tipc_config cfg;
    enum tipc_status st = cfg_parse_opts(&cfg, br->path, text, len, flags);
    free(text);
    if (st != TIPC_OK) return st;
    struct plan in;
    st = plan_build(&in, &cfg, "benchmark_train", br->popts);
    cfg_free(&cfg);
    if (st != TIPC_OK) return st;
    if (!p->model) {   /* the first harness run names the run */
        p->model = in.model, in.model = NULL;
        p->mode = in.mode, in.mode = NULL;
        p->log_dir = in.log_dir, in.log_dir = NULL;
        p->status_log = in.status_log, in.status_log = NULL;
        p->results_header = in.results_header, in.results_header = NULL;
        p->seg_model = in.seg_model, in.seg_model = NULL;
        p->ours = in.ours, p->family = in.family, p->dialect = in.dialect, p->dialect_why = in.dialect_why;
    }
    int base = p->n;
    bool first = true;
    *last_train = -1;
    for (int i = 0; i < in.n; i++) {
        struct stage s = in.st[i];
        if (s.dep >= 0) s.dep += base;
        if (s.kind <= STAGE_SPEED) {
            s.tee_log = xstrdup(log);
            s.tee_append = !first;
            first = false;
            s.timeout_s = timeout;
            free(s.matrix);
            s.matrix = xstrdup(tag);
        }
        if (s.kind == STAGE_TRAIN) *last_train = p->n;
        push_stage(p, cap, &s);
    }
    if (first) {   /* no command ran, yet the original's `> LOG` made the log: make it (empty) too */
        struct stage s = {.kind = STAGE_APPEND, .cmd = xstrdup("/dev/null"), .append_to = xstrdup(log),
                          .tee_log = xstrdup(log), .matrix = xstrdup(tag), .dep = -1, .line = br->section_line,
                          .timeout_s = timeout};
        push_stage(p, cap, &s);
    }
    free(in.st);
    in.st = NULL, in.n = 0;
    plan_free(&in);
    return TIPC_OK;
}

/* analysis.py's command line, with `tipc speed` in place of `${python} ${BENCHMARK_ROOT}/scripts/analysis.py`. */
static void add_speed(struct plan *p, size_t *cap, const struct bench_run *br, const struct bench_case *c,
                      const char *log, const char *rec, const char *tag, int dep, bool multi)
{
    const struct bench_style *s = br->style;
    char *qlog = quote_word(log, false), *qrec = quote_word(rec, true);
    char *model = xasprintf("%s_bs%s_%s_%s", br->model_name, c->bs, c->precision, br->run_mode);
    char *qmodel = quote_word(model, false), *qbs = quote_word(c->bs, false), *qrun = quote_word(br->run_mode, false);
    char *qfp = quote_word(c->precision, false), *qdev = quote_word(c->layout, false);
    struct stage st = {0};
    st.kind = STAGE_SPEED;
    st.cmd = xasprintf("tipc speed --filename %s --speed_log_file %s --model_name %s --base_batch_size %s --run_mode %s "
                       "--fp_item %s --keyword %s --skip_steps %d --device_num %s --speed_unit %s --convergence_key loss:",
                       qlog, qrec, qmodel, qbs, qrun, qfp, s->keyword, s->skip_steps, qdev,
                       multi ? s->unit_multi : s->unit_single);
    char err[256], bad;
    if (cmdline_parse(st.cmd, &st.cl, err, sizeof err, &bad) != TIPC_OK) BUG("speed command '%s': %s", st.cmd, err);
    st.line = br->section_line;
    st.matrix = xstrdup(tag);
    st.dep = dep;
    st.cvd = CVD_INHERIT;
    st.status_log = xasprintf("%s/benchmark_log/results.log", c->save);
    st.record = xstrdup(rec);
    push_stage(p, cap, &st);
    free(qlog), free(qrec), free(model), free(qmodel), free(qbs), free(qrun), free(qfp), free(qdev);
}

/* Our layout's trainer line: the config's line 14 with a log line per step, and the case's
 * precision and workers. */
static void step6_trainer(struct bench_run *br, const struct bench_case *c)
{
    const char *prec = !strcmp(c->line_precision, "fp32") ? ""
                       : !strcmp(c->line_precision, "amp") ? " --amp_level=O1"
                       : br->ours ? NULL : " --amp_level=O2";
    char *pflag = prec ? xstrdup(prec) : xasprintf(" --precision=%s", c->line_precision);
    const char *nw = br->num_workers && *br->num_workers && strcmp(br->num_workers, "null") ? br->num_workers : NULL;
    char *workers = nw ? xasprintf(" --workers=%s", nw) : xstrdup("");
    char *line = xasprintf("%s --print-freq=1%s%s%s", br->trainer_line,
                           br->ours ? " -o Global.eval_during_train=false" : "", workers, pflag);
    btext_put(&br->text, 14, line);
    free(line), free(workers), free(pflag);
}

/* Our layout on several nodes: the config's own IP list with this layout's devices per node. */
static enum tipc_status step6_gpu_line(struct bench_run *br, const struct bench_case *c, const char *orig_gpu_list,
                                       int nodes, int cards)
{
    if (nodes == 1) {
        btext_set_value(&br->text, 4, c->gpu_id);
        return TIPC_OK;
    }
    const char *semi = strchr(orig_gpu_list, ';');
    int nips = 1;
    for (const char *q = orig_gpu_list; semi && q < semi; q++) nips += *q == ',';
    if (!semi || nips != nodes || cards % nodes)
        return error_at(TIPC_EUSAGE, br->path, 4, "layout %s needs %d nodes with %d cards each: gpu_list must name "
                        "%d IPs (IP1,IP2;0,1), it is '%s'", c->layout, nodes, cards / nodes ? cards / nodes : 1, nodes,
                        orig_gpu_list);
    char *v = xasprintf("%.*s;%s", (int)(semi - orig_gpu_list), orig_gpu_list, c->gpu_id);
    btext_set_value(&br->text, 4, v);
    free(v);
    return TIPC_OK;
}

static enum tipc_status one_case(struct plan *p, size_t *cap, struct bench_run *br, struct bench_case *c,
                                 const char *orig_gpu_list)
{
    const struct bench_style *s = br->style;
    struct btext *t = &br->text;
    const char *mp = s->mode_prefix ? "benchmark_train=" : "";
    char *bsv = xasprintf("%s%s", mp, c->bs), *epv = xasprintf("%s%s", mp, br->epoch ? br->epoch : "");
    if (s->l_precision) btext_set_value(t, s->l_precision, c->line_precision);
    btext_set_value(t, s->l_bs, bsv);
    btext_set_value(t, s->l_epoch, epv);
    free(bsv), free(epv);
    if (s->l_model_type && c->model_type) btext_set_value(t, s->l_model_type, c->model_type);
    if (!s->l_precision) step6_trainer(br, c);
    char err[200];
    c->gpu_id = bench_gpu_ids(c->layout, err, sizeof err);
    if (!c->gpu_id) return error_at(TIPC_EUSAGE, br->path, 0, "%s", err);
    int nodes = (int)strtol(c->layout + 1, NULL, 10), cards = (int)strtol(strchr(c->layout, 'C') + 1, NULL, 10);
    bool one = strlen(c->gpu_id) <= 1;
    char *base = xasprintf("%s_%s_bs%s_%s_%s_%s_%s", br->opts->repo_name, br->model_name, c->bs, c->precision,
                           br->run_mode, c->layout, c->to_static);
    char *tag = xasprintf("bs%s_%s_%s_%s%s", c->bs, c->precision, br->run_mode, c->layout,
                          *c->to_static ? "_d2sT" : "");
    if (c->repeat > 1 || br->opts->repeat > 1) {
        char *t2 = xasprintf("%s repeat=%d", tag, c->repeat);
        free(tag);
        tag = t2;
    }
    enum tipc_status st = TIPC_OK;
    int last;
    if (!strcmp(s->name, "step6")) st = step6_gpu_line(br, c, orig_gpu_list, nodes, cards);
    else btext_set_value(t, s->l_gpuid, one ? "0" : c->gpu_id);
    if (st == TIPC_OK && one && s->l_profile && (s->profile_always || strcmp(br->opts->timer_only, "no"))) {
        if (!s->profile_always && !strcmp(br->opts->timer_only, "False")) {
            char *po = xasprintf("%s;timer_only=False", br->profile_option);
            free(br->profile_option);
            br->profile_option = po;
        }
        char *line = s->profile_quoted ? xasprintf("\"%s\"", br->profile_option) : xstrdup(br->profile_option);
        btext_set(t, s->l_profile, line);
        free(line);
        char *log = xasprintf("%s/profiling_log/%sprofiling", c->save, base);
        char *ptag = xasprintf("%s profiling", tag);
        st = run_harness(p, cap, br, log, ptag, s->t_profile, &last);
        free(log), free(ptag);
    }
    if (st == TIPC_OK) {
        if (s->l_profile) btext_set_value(t, s->l_profile, "null");
        char *log = xasprintf("%s/train_log/%slog", c->save, base), *rec = xasprintf("%s/index/%sspeed", c->save, base);
        double timeout = one ? s->t_single : !strcmp(c->layout, "N4C32") ? s->t_n4c32 : s->t_multi;
        st = run_harness(p, cap, br, log, tag, timeout, &last);
        if (st == TIPC_OK) add_speed(p, cap, br, c, log, rec, tag, last, !one);
        free(log), free(rec);
    }
    free(base), free(tag);
    free(c->gpu_id);
    c->gpu_id = NULL;
    return st;
}

enum tipc_status bench_cases(struct plan *p, struct bench_run *br)
{
    const struct bench_style *s = br->style;
    size_t cap = 0;
    char **bss, **fps, **devs, **mts = NULL;
    int nbs = cfg_split(br->batch_size, '|', &bss), nfp = cfg_split(br->fp_items, '|', &fps);
    int ndev = cfg_split(br->devices, ' ', &devs), nmt = 1;
    const char *to_static = "";
    if (s->model_type_loop) {
        const char *list = !br->param_model_type ? (br->model_type ? br->model_type : "")
                           : !strcmp(br->param_model_type, "dynamicTostatic") && !strchr(br->opts->params, '_') ? ""
                           : !strcmp(br->param_model_type, "dynamicTostatic") ? "to_static_train" : "norm_train";
        nmt = cfg_split(list, '|', &mts);
    } else if (br->param_model_type && !strcmp(br->param_model_type, "dynamicTostatic")) {
        to_static = "d2sT_";
        btext_replace_all(&br->text, "trainer:norm_train", "trainer:to_static_train");
    }
    const char *gl = btext_get(&br->text, 4);
    char *orig_gpu = xstrdup(gl && strchr(gl, ':') ? strchr(gl, ':') + 1 : "");
    int reps = br->opts->repeat > 1 ? br->opts->repeat : 1;
    enum tipc_status st = TIPC_OK;
    char *save = NULL;
    free(p->save_log);
    p->save_log = xstrdup(br->opts->save_log);
    for (int r = 1; r <= reps && st == TIPC_OK; r++) {
        free(save);
        save = reps > 1 ? xasprintf("%s/repeat_%d", br->opts->save_log, r) : xstrdup(br->opts->save_log);
        for (int i = 0; i < nbs && st == TIPC_OK; i++)
            for (int j = 0; j < nfp && st == TIPC_OK; j++)
                for (int k = 0; k < ndev && st == TIPC_OK; k++)
                    for (int m = 0; m < nmt && st == TIPC_OK; m++) {
                        if (!*devs[k]) continue;
                        const char *mt = mts ? mts[m] : NULL;
                        /* PaddleOCR names the precision fp16/fp32 and writes amp on the line */
                        const char *lp = fps[j], *name_p = !s->amp_names ? lp : !strcmp(lp, "amp") ? "fp16" : "fp32";
                        struct bench_case c = {bss[i], name_p, lp, devs[k], mt,
                                               mt ? (!strcmp(mt, "to_static_train") ? "d2sT_" : "") : to_static, save,
                                               NULL, r};
                        st = one_case(p, &cap, br, &c, orig_gpu);
                    }
    }
    free(save);
    free(orig_gpu);
    strv_free(bss), strv_free(fps), strv_free(devs);
    if (mts) strv_free(mts);
    if (st == TIPC_OK && !p->n) nmt = mts ? nmt : 0;
    if (st == TIPC_OK && !p->n)   /* e.g. PaddleClas's script given PARAMS dynamicTostatic alone */
        return error_at(TIPC_EUSAGE, br->path, br->section_line, "benchmark_train%s%s: no case to run (batch sizes "
                        "'%s', precisions '%s', layouts '%s'%s%s)", br->opts->params ? " " : "",
                        br->opts->params ? br->opts->params : "", br->batch_size, br->fp_items, br->devices,
                        s->model_type_loop ? ", model types " : "", s->model_type_loop ? (nmt ? "given" : "none") : "");
    return st;
}
