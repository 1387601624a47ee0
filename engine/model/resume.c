/* resume.c: see resume.h. */
#include "resume.h"

#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../io/checkpoint.h"
#include "../dist/comm.h"
#include "net.h"
#include "../../core/check.h"
#include "../../core/banned.h"

bool ckpt_name_ours(const char *n, bool with_best)
{
    if (!strcmp(n, "latest.ckpt") || (with_best && !strcmp(n, "best.ckpt"))) return true;
    const char *d = !strncmp(n, "epoch_", 6) ? n + 6 : !strncmp(n, "step_", 5) ? n + 5 : NULL;
    if (!d || !*d) return false;
    while (*d >= '0' && *d <= '9') d++;
    return !strcmp(d, ".ckpt");
}

struct cand { char *path; int64_t step; };

static int scan(const char *dir, const char *only_run, int rank, struct cand **out)
{
    DIR *dp = opendir(dir);
    int n = 0;
    size_t cap = 0;
    *out = NULL;
    if (!dp) return 0;   /* no folder yet: nothing to resume */
    struct dirent *e;
    while ((e = readdir(dp))) {
        if (!ckpt_name_ours(e->d_name, false)) continue;
        char *p = xasprintf("%s/%s", dir, e->d_name);
        struct ckpt_meta m;
        if (ckpt_read_meta(p, &m) != TIPC_OK) {   /* a foreign or damaged file: said, and passed over */
            warning_msg("'%s' is not a usable checkpoint; not resuming from it", p);
            free(p);
            continue;
        }
        if (only_run && strcmp(m.run_id, only_run)) {   /* a reused folder: another run's file */
            if (rank == 0)
                printf("'%s' is another run's checkpoint (run id %s; this run: %s): not resuming from it\n", p,
                       m.run_id[0] ? m.run_id : "none, an older tipc's", only_run);
            free(p);
            continue;
        }
        *out = xgrow(*out, sizeof **out, (size_t)n + 1, &cap);
        (*out)[n++] = (struct cand){p, m.step};
    }
    closedir(dp);
    return n;
}

enum tipc_status resume_find(const char *dir, struct comm *comm, int rank, const char *only_run, char **path)
{
    *path = NULL;
    struct cand *c;
    int n = scan(dir, only_run, rank, &c);
    int64_t newest = -1;
    for (int i = 0; i < n; i++)
        if (c[i].step > newest) newest = c[i].step;
    int64_t agreed = newest;
    enum tipc_status st = TIPC_OK;
    if (comm) {   /* the oldest of the ranks' newest: one that every node has */
        int w = comm_world(comm);
        int64_t *all = xcalloc((size_t)w, sizeof *all);
        st = comm_allgather(comm, &newest, all, sizeof newest);
        for (int i = 0; i < w && st == TIPC_OK; i++)
            if (all[i] < agreed) agreed = all[i];
        free(all);
    }
    const char *pick = NULL;
    for (int i = 0; i < n && st == TIPC_OK && agreed >= 0; i++)
        if (c[i].step == agreed && (!pick || strstr(c[i].path, "/latest.ckpt"))) pick = c[i].path;
    if (st == TIPC_OK && agreed >= 0 && !pick) {
        st = error_msg(TIPC_EIO, "rank %d: the ranks agreed to resume from global step %lld (the newest checkpoint "
                                 "every node has), but '%s' holds none of that step (its newest: step %lld)",
                       rank, (long long)agreed, dir, (long long)newest);
        error_hint("copy that node's checkpoint of step %lld into '%s', or resume by hand with --resume CKPT",
                   (long long)agreed, dir);
    }
    if (st == TIPC_OK && pick) *path = xstrdup(pick);
    for (int i = 0; i < n; i++) free(c[i].path);
    free(c);
    return st;
}

enum tipc_status resume_check_precision(const char *path, const struct ckpt_meta *m, const struct amp_policy *amp,
                                        bool automatic, int rank)
{
    const char *run = precision_name(amp->prec), *ck = precision_name((enum precision)m->precision);
    if (m->has_scaler && m->precision == (int32_t)amp->prec) {
        if (rank == 0)
            printf("AMP: %s loss scaler restored from '%s': scale %g, %.0f finite steps since its last change, %.0f "
                   "steps skipped so far%s\n", run, path, amp->ls.dynamic ? m->scaler[AMP_SCALE] : amp->ls.init_scale,
                   m->scaler[AMP_GOOD], m->scaler[AMP_SKIPPED], amp->ls.dynamic ? "" : " (static scale: this run's)");
        return TIPC_OK;
    }
    if (m->has_scaler && automatic) {
        error_msg(TIPC_EUSAGE, "rank %d: checkpoint '%s' was written by an %s mixed-precision run, but this run trains "
                               "%s: it is another run's checkpoint, and resuming from it would not continue this run",
                  rank, path, ck, amp->prec == PREC_FP32 ? "fp32" : run);
        error_hint("move the other run's checkpoints out of the output folder, or continue from this one on purpose "
                   "with --resume '%s' (the loss scaler then starts afresh)", path);
        return TIPC_EUSAGE;
    }
    if (rank != 0) return TIPC_OK;
    if (m->has_scaler)   /* given by hand: a deliberate change of precision */
        printf("AMP: checkpoint '%s' is from an %s mixed-precision run; this run is %s: its loss scaler is not used%s\n",
               path, ck, run, amp->prec == PREC_FP32 ? "" : ", the scale starts afresh");
    else if (amp->prec != PREC_FP32)
        printf("AMP: checkpoint '%s' holds no loss scaler (an fp32 run's, or an AMP run's from before checkpoint "
               "version 3): the %s loss scale starts afresh at %g\n", path, run, amp->ls.init_scale);
    return TIPC_OK;
}
