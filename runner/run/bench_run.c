/* bench_run.c: what `tipc run CONFIG benchmark_train [PARAMS]` needs besides an ordinary run (run.h):
 * the config's text and the script's environment (the log names' repo part, SAVE_LOG,
 * PROFILING_TIMER_ONLY) for plan/bench.c, and the folders its stages write into. */
#include "bench_run.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../plan/bench.h"
#include "../plan/config.h"
#include "../../core/check.h"
#include "../../core/fs.h"       /* defines: mkdir_p */
#include "../../core/regfile.h"  /* defines: fopen_regular */
#include "../../core/sha256.h"   /* defines: sha256_hex */
#include "../../core/banned.h"

static enum tipc_status read_text(const char *path, char **text, size_t *len)
{
    char why[160];
    FILE *f = fopen_regular(path, 0, why, sizeof why);
    if (!f) return error_at(TIPC_EUSAGE, path, 0, "cannot open config: %s", why);
    size_t cap = 0;
    *text = NULL, *len = 0;
    for (;;) {
        *text = xgrow(*text, 1, *len + 4096, &cap);
        size_t r = fread(*text + *len, 1, cap - *len, f);
        *len += r;
        if (r == 0) break;
        if (*len > (4u << 20)) {
            fclose(f);
            free(*text);
            return error_at(TIPC_EUSAGE, path, 0, "config is larger than 4 MB");
        }
    }
    bool bad = ferror(f);
    fclose(f);
    if (bad) {
        free(*text);
        return error_at(TIPC_EUSAGE, path, 0, "cannot read config: %s", strerror(errno ? errno : EIO));
    }
    return TIPC_OK;
}

enum tipc_status bench_plan_load(struct plan *p, const struct run_opts *a, const struct plan_opts *po, char sha[65])
{
    char *text = NULL;
    size_t len = 0;
    TRY(read_text(a->config, &text, &len));
    sha256_hex(text, len, sha);
    char cwd[PATH_MAX];
    if (!getcwd(cwd, sizeof cwd)) {
        free(text);
        return error_msg(TIPC_EIO, "cannot read the current folder: %s", strerror(errno));
    }
    /* SAVE_LOG: --output, else BENCHMARK_LOG_DIR, else the current folder (the script's $(pwd));
     * our configs keep everything in their output folder, ./logs/MODEL/benchmark_train */
    struct tipc_config c;
    enum tipc_status st = cfg_parse_opts(&c, a->config, text, len, CFG_ALL_LINES | CFG_ALLOW_SHORT);
    char *save = NULL;
    if (st == TIPC_OK) {
        const char *env = getenv("BENCHMARK_LOG_DIR");
        bool ours = !strcmp(cfg_at(&c, 2)->value, "tipc");
        save = a->output ? xstrdup(a->output) : env && *env ? xstrdup(env)
               : ours ? xasprintf("./logs/%s/benchmark_train", cfg_at(&c, 1)->value) : xstrdup(cwd);
        cfg_free(&c);
    }
    const char *slash = strrchr(cwd, '/'), *timer = getenv("PROFILING_TIMER_ONLY");
    struct bench_opts bo = {a->gpuid, slash ? slash + 1 : cwd, save, timer && *timer ? timer : "True",
                            a->repeat > 0 ? a->repeat : 1};
    if (st == TIPC_OK) st = plan_build_benchmark(p, a->config, text, len, po, &bo);
    free(save);
    free(text);
    return st;
}

static enum tipc_status mkdir_parent(const char *path)
{
    const char *slash = path ? strrchr(path, '/') : NULL;
    if (!slash || slash == path) return TIPC_OK;
    char *d = xstrndup(path, (size_t)(slash - path));
    enum tipc_status st = mkdir_p(d);
    free(d);
    return st;
}

enum tipc_status bench_stage_dirs(const struct stage *s)
{
    TRY(mkdir_parent(s->tee_log));
    return mkdir_parent(s->status_log);
}

enum tipc_status bench_empty_log(const struct stage *s)
{
    TRY(mkdir_parent(s->tee_log));
    FILE *f = fopen(s->tee_log, "w");
    if (!f || fclose(f) != 0) return error_at(TIPC_EIO, s->tee_log, 0, "cannot create log: %s", strerror(errno));
    return TIPC_OK;
}
