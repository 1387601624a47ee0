/* builder.c: the vocabulary every harness's plan builder speaks (internal.h): the shell's
 * tests and expansions the original scripts use, gpu_list items, the launcher prefix, trainer
 * names, and pb_add_stage, which parses a command and appends it to the plan. Variable names mirror
 * the original scripts' so the two can be read side by side (tipc-spec.md sections 2-3). */
#include "internal.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../core/check.h"
#include "../../core/banned.h"

/* Trainer names that appear in real configs (tipc-spec.md 6; "norm" in PaddleSeg's fleet configs,
 * which the 51-line harness runs as the norm trainer); a config's own trainer keys are accepted
 * too. Anything else is almost certainly a typo that the original would silently run. */
static const char *const known_trainers[] = {"norm_train", "norm", "pact_train", "fpgm_train", "distill_train",
                                             "amp_train", "fleet_train", "to_static_train", NULL};

void *pb_keep(struct builder *b, void *s)
{
    b->tmp = xgrow(b->tmp, sizeof *b->tmp, b->ntmp + 1, &b->tmpcap);
    b->tmp[b->ntmp++] = s;
    return s;
}

/* `[ $x = lit ]` / `[ $x != lit ]` under IFS="|": the expansion must be exactly one non-empty word,
 * otherwise `[` fails with a syntax error, which the script treats as false. */
static bool pb_one_word(const char *x) { return *x && !strchr(x, '|'); }
bool pb_sh_eq(const char *x, const char *lit) { return pb_one_word(x) && !strcmp(x, lit); }
bool pb_sh_ne(const char *x, const char *lit) { return pb_one_word(x) && strcmp(x, lit) != 0; }

/* `echo $x` under IFS="|": words split on '|' and joined by single spaces. */
char *pb_sh_echo(struct builder *b, const char *x)
{
    char *s = pb_keep(b, xstrdup(x));
    for (char *q = s; *q; q++)
        if (*q == '|') *q = ' ';
    return s;
}

const char *pb_dirname(struct builder *b, const char *x)
{
    if (!*x) return "";
    char *d = pb_keep(b, xstrdup(x));
    size_t n = strlen(d);
    while (n > 1 && d[n - 1] == '/') d[--n] = 0;
    char *slash = strrchr(d, '/');
    if (!slash) return ".";
    while (slash > d && slash[-1] == '/') slash--;
    if (slash == d) return "/";
    *slash = 0;
    return d;
}

/* PaddleOCR f773 and PaddleDetection: `line_num=$(grep -n -w to_static_train_benchmark_params FILE | cut -d: -f1)` then
 * lines[line_num]: the entry whose INDEX is that physical line number (entry 0 when absent). */
const struct cfg_entry *pb_to_static_entry(struct builder *b)
{
    static const char word[] = "to_static_train_benchmark_params";
    for (int i = 0; i < b->cfg->n; i++) {
        const char *raw = b->cfg->e[i].raw, *hit = raw;
        while ((hit = strstr(hit, word)) != NULL) {
            char before = hit == raw ? ' ' : hit[-1], after = hit[sizeof word - 1];
            bool w1 = isalnum((unsigned char)before) || before == '_', w2 = isalnum((unsigned char)after) || after == '_';
            if (!w1 && !w2) return cfg_at(b->cfg, b->cfg->e[i].line);
            hit++;
        }
    }
    return cfg_at(b->cfg, 0);
}

int pb_split(struct builder *b, const char *s, char sep, char ***out)
{
    int n = cfg_split(s, sep, out);
    for (int i = 0; i < n; i++) pb_keep(b, (*out)[i]);
    pb_keep(b, (char *)*out);
    return n;
}

/* Find the config line a bad character most likely came from, for the error message. */
static int pb_blame_line(const struct tipc_config *cfg, char c, int primary)
{
    for (int i = 1; i < cfg->n; i++)
        if (cfg->e[i].line == primary && c && strchr(cfg->e[i].raw, c)) return primary;
    for (int i = 1; i < cfg->n; i++)
        if (c && strchr(cfg->e[i].value, c)) return cfg->e[i].line;
    return primary;
}

/* A copy of s with every PLAN_DIR_MARK replaced by the real output directory. */
char *pb_real_dir(const struct builder *b, const char *s)
{
    size_t ml = strlen(PLAN_DIR_MARK), dl = strlen(b->out_dir), n = 0;
    for (const char *q = strstr(s, PLAN_DIR_MARK); q; q = strstr(q + ml, PLAN_DIR_MARK)) n++;
    char *out = xmalloc(strlen(s) + n * dl + 1), *o = out;
    for (const char *q; (q = strstr(s, PLAN_DIR_MARK)); s = q + ml) {
        memcpy(o, s, (size_t)(q - s));
        o += q - s;
        memcpy(o, b->out_dir, dl);
        o += dl;
    }
    memcpy(o, s, strlen(s) + 1);
    return out;
}

void pb_real_word(const struct builder *b, char **w)
{
    if (!*w || !strstr(*w, PLAN_DIR_MARK)) return;
    char *r = pb_real_dir(b, *w);
    free(*w);
    *w = r;
}

/* The value of `name=` among the space-separated words of loop values, malloc'ed, or NULL. */
static char *loop_value(const char *vals, const char *name)
{
    size_t n = strlen(name);
    for (const char *p = vals; *p;) {
        size_t k = strcspn(p, " ");
        if (k > n && !strncmp(p, name, n) && p[n] == '=') return xstrndup(p + n + 1, k - n - 1);
        p += k;
        while (*p == ' ') p++;
    }
    return NULL;
}

/* Does the stage need a GPU (`tipc run --skip-gpu`)? An inference with use_gpu True (or gpu); a
 * Paddle config's training on a device (gpu_list item other than -1). Our own configs train
 * where their recipe says (Global.device), whatever gpu_list holds. */
static bool needs_gpu(const struct builder *b, enum stage_kind kind, const char *ctx, const char *mx)
{
    char *v = kind == STAGE_INFER ? loop_value(mx, "use_gpu") : kind == STAGE_TRAIN && !b->p->ours
                                                               ? loop_value(ctx, "gpus") : NULL;
    bool gpu = v && (kind == STAGE_INFER ? pb_sh_eq(v, "True") || pb_sh_eq(v, "gpu") : strcmp(v, "-1") != 0);
    free(v);
    return gpu;
}

enum tipc_status pb_add_stage(struct builder *b, enum stage_kind kind, const char *cmd, int line,
                                  const char *log, bool cat)
{
    return pb_add_stage_exec(b, kind, cmd, cmd, line, log, cat);
}

enum tipc_status pb_add_stage_exec(struct builder *b, enum stage_kind kind, const char *cmd, const char *exec,
                                   int line, const char *log, bool cat)
{
    struct plan *p = b->p;
    bool exec_is_cmd = !strcmp(exec, cmd);
    if (kind == STAGE_INFER && log && b->pass_tag) {   /* the original overwrites: keep both logs */
        bool used = false;
        char *real = pb_real_dir(b, log); /* stages keep the real path (log has PLAN_DIR_MARK) */
        for (int i = 0; i < p->n && !used; i++) used = p->st[i].log_path && !strcmp(p->st[i].log_path, real);
        free(real);
        const char *pat = used ? FMT("> %s ", log) : NULL, *hit = pat ? strstr(cmd, pat) : NULL;
        if (hit) {
            const char *slash = strrchr(log, '/');
            const char *nlog = slash ? FMT("%.*s/%s_%s", (int)(slash - log), log, b->pass_tag, slash + 1)
                                     : FMT("%s_%s", b->pass_tag, log);
            cmd = FMT("%.*s> %s %s", (int)(hit - cmd), cmd, nlog, hit + strlen(pat));
            log = nlog;
            if (exec_is_cmd) exec = cmd;
        }
    }
    b->bytes += strlen(cmd);
    if (p->n >= PLAN_MAX_STAGES || b->bytes > PLAN_MAX_BYTES) /* refuse before the expansion runs away */
        return error_at(TIPC_EUSAGE, b->cfg->path, line, "the config expands to more than %d commands or %d MB "
                        "of command text; shorten its '|' lists", PLAN_MAX_STAGES, PLAN_MAX_BYTES >> 20);
    p->st = xgrow(p->st, sizeof *p->st, (size_t)p->n + 1, &b->cap);
    struct stage *s = &p->st[p->n];
    memset(s, 0, sizeof *s);
    s->kind = kind;
    s->line = line;
    char *shown = pb_real_dir(b, cmd);
    if (kind <= STAGE_SPEED) {
        char err[256], bad = 0;
        if (cmdline_parse(exec, &s->cl, err, sizeof err, &bad) != TIPC_OK) {
            char *e = pb_real_dir(b, exec);
            error_at(TIPC_EUSAGE, b->cfg->path, pb_blame_line(b->cfg, bad, line), "%s: %s", err, e);
            free(e);
            free(shown);
            return TIPC_EUSAGE;
        }
        /* the output dir goes back into the words it was put in: one argv word whatever it holds */
        for (int i = 0; i < s->cl.argc; i++) pb_real_word(b, &s->cl.argv[i]);
        for (int i = 0; i < s->cl.nenv; i++) pb_real_word(b, &s->cl.env[i]);
        for (int i = 0; i < s->cl.nredir; i++) pb_real_word(b, &s->cl.redir[i].path);
    }
    s->cmd = shown;
    s->exec = strcmp(exec, cmd) != 0 ? pb_real_dir(b, exec) : NULL;
    s->log_path = log ? pb_real_dir(b, log) : NULL;
    s->cat_log = cat;
    s->cvd = b->cvd;
    s->cvd_value = b->cvd == CVD_SET ? xstrdup(b->cvd_value) : NULL;
    const char *ctx = b->ctx ? b->ctx : "", *mx = b->matrix ? b->matrix : "";
    s->matrix = xasprintf("%s%s%s", ctx, *ctx && *mx ? " " : "", mx);
    s->needs_gpu = needs_gpu(b, kind, ctx, mx);
    s->dep = -1;
    switch (kind) {
    case STAGE_TRAIN:
        b->last_train = p->n, b->last_export = -1;
        s->launched = b->launched;
        b->launched = false;
        break;
    case STAGE_EVAL: s->dep = b->last_train; break;
    case STAGE_EXPORT: s->dep = b->last_train, b->last_export = p->n; break;
    case STAGE_INFER: s->dep = b->last_export >= 0 ? b->last_export : b->last_train; break;
    case STAGE_SPEED: case STAGE_NOTE: case STAGE_LINKS: case STAGE_COPY: case STAGE_APPEND: break;
    }
    if (kind <= STAGE_SPEED) b->matrix = NULL;
    p->n++;
    return TIPC_OK;
}

void pb_set_ctx(struct builder *b, const char *ctx)
{
    b->ctx = ctx;
    b->last_train = b->last_export = -1;
}
void pb_set_matrix(struct builder *b, const char *matrix) { b->matrix = matrix; }

enum tipc_status pb_note(struct builder *b, const char *text, int line)
{
    return pb_add_stage(b, STAGE_NOTE, text, line, NULL, false);
}

/* `eval $env`: only a non-blank env changes the shell. */
void pb_apply_env(struct builder *b, const char *env)
{
    if (!env) return;
    b->cvd = CVD_SET;
    b->cvd_value = env;
}
void pb_unset_env(struct builder *b) { b->cvd = CVD_UNSET; b->cvd_value = NULL; }

static bool pb_is_dev_list(const char *s)
{
    if (!strcmp(s, "-1")) return true;
    if (!*s) return false;
    for (const char *q = s; *q; q++) {
        if (!isdigit((unsigned char)*q) && *q != ',') return false;
        if (*q == ',' && (q == s || q[1] == 0 || q[1] == ',')) return false;
    }
    return true;
}

static bool pb_is_ip_list(const char *s)
{
    if (!*s) return false;
    for (const char *q = s; *q; q++) {
        if (!isalnum((unsigned char)*q) && !strchr(".-:_,", *q)) return false;
        if (*q == ',' && (q == s || q[1] == 0 || q[1] == ',')) return false;
    }
    return true;
}

static int pb_count_commas(const char *s)
{
    int n = 0;
    for (; *s; s++) n += *s == ',';
    return n;
}

/* The original tells single/multi-GPU/multi-node apart by string LENGTH (<=1, <=15, else
 * "ips;gpus"); we follow it for Paddle configs and refuse the items it would mangle. Our own
 * configs are parsed by structure. */
enum tipc_status pb_parse_gpu(struct builder *b, const char *item, struct gpu_item *g)
{
    const char *path = b->cfg->path;
    int line = LN(3);
    memset(g, 0, sizeof *g);
    g->ips = "";
    g->nodes = 1;
    const char *semi = strchr(item, ';');
    size_t len = strlen(item);
    bool fleet = b->p->ours ? semi != NULL : len > 15;
    if (!fleet) {
        if (semi)
            return error_at(TIPC_EUSAGE, path, line, "gpu_list item '%s' has ';' but is 15 characters or "
                            "shorter, so the original harness reads it as a device list; list at least two "
                            "node IPs ('IP1,IP2;0,1')", item);
        if (!pb_is_dev_list(item))
            return error_at(TIPC_EUSAGE, path, line, "malformed gpu_list item '%s': expected -1, a device "
                            "list like 0,1, or IP1,IP2;0,1", item);
        g->gpu = item;
        if (!strcmp(item, "-1")) g->env = NULL;
        else if (len <= 1) g->env = item;
        else g->env = pb_keep(b, xstrndup(item, strcspn(item, ",")));
        return TIPC_OK;
    }
    if (!semi || strchr(semi + 1, ';'))
        return error_at(TIPC_EUSAGE, path, line, "malformed gpu_list item '%s': longer than 15 characters, "
                        "so it must be 'IP1,IP2;DEVICES' with exactly one ';'", item);
    char *ips = pb_keep(b, xstrndup(item, (size_t)(semi - item)));
    const char *gpu = semi + 1;
    if (!pb_is_ip_list(ips) || !pb_is_dev_list(gpu) || !strcmp(gpu, "-1"))
        return error_at(TIPC_EUSAGE, path, line, "malformed gpu_list item '%s': expected 'IP1,IP2;0,1'", item);
    g->ips = ips;
    g->gpu = gpu;
    g->nodes = pb_count_commas(ips) + 1;
    /* Step6 exports the first device; PaddleOCR's harness sets env=" " (nothing). */
    g->env = b->p->family == CFG_STEP6 ? pb_keep(b, xstrndup(gpu, strcspn(gpu, ","))) : NULL;
    if (!b->p->ours && strlen(ips) <= 15) g->nodes = 1; /* the original's `${#ips} -le 15` */
    return TIPC_OK;
}

enum tipc_status pb_check_trainers(struct builder *b, char **list, int n, const int *key_idx, int nkeys)
{
    for (int i = 0; i < n; i++) {
        bool ok = false;
        for (int k = 0; known_trainers[k] && !ok; k++) ok = !strcmp(list[i], known_trainers[k]);
        for (int k = 0; k < nkeys && !ok; k++) ok = !strcmp(list[i], K(key_idx[k]));
        if (!ok)
            return error_at(TIPC_EUSAGE, b->cfg->path, LN(b->p->family == CFG_STEP6 ? 12 : 14),
                            "unknown trainer '%s': expected one of norm_train, norm, pact_train, fpgm_train, "
                            "distill_train, amp_train, fleet_train, to_static_train or a trainer key of "
                            "this file", list[i]);
    }
    return TIPC_OK;
}

const char *pb_named_launcher(const char *run_train)
{
    static const char *const own[] = {"torchrun", "srun", "mpirun", "mpiexec"};
    const char *p = run_train + strspn(run_train, " \t");
    size_t n = strcspn(p, " \t");
    for (size_t i = 0; i < sizeof own / sizeof *own; i++)
        if (n == strlen(own[i]) && !strncmp(p, own[i], n)) return own[i];
    if (strncmp(p, "python", 6)) return NULL;   /* python3 -m paddle.distributed.launch / torch.distributed.run */
    const char *m = p + n + strspn(p + n, " \t");
    if (!strncmp(m, "-m paddle.distributed.launch", 28)) return "paddle.distributed.launch";
    if (!strncmp(m, "-m torch.distributed.run", 24)) return "torch.distributed.run";
    return NULL;
}

const char *pb_launcher(struct builder *b)
{
    b->launched = true;
    return b->launch;
}

/* The training command's launcher part for 1 device / several / several nodes. */
const char *pb_launch_prefix(struct builder *b, const struct gpu_item *g, bool *single)
{
    bool fleet = b->p->ours ? *g->ips != 0 : strlen(g->ips) > 15;
    *single = b->p->ours ? (!fleet && !strchr(g->gpu, ',')) : strlen(g->gpu) <= 2;
    if (*single) return NULL;
    if (!fleet) return FMT("%s %s --gpus=%s", b->python, pb_launcher(b), g->gpu);
    return FMT("%s %s --ips=%s --gpus=%s", b->python, pb_launcher(b), g->ips, g->gpu);
}
