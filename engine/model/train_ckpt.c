/* train_ckpt.c: see train_ckpt.h. */
#include "train_ckpt.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "resume.h"
#include "train_log.h"
#include "../../core/check.h"
#include "../../core/fs.h"
#include "../../core/staged.h"
#include "../../core/banned.h"

enum tipc_status train_output_ready(const struct train_opts *o)
{
    if (o->local_rank != 0) return TIPC_OK;
    TRY(mkdir_p(o->r.output_dir));
    TRY(dir_check_writable(o->r.output_dir, "output folder (Global.output_dir / --output-dir)"));
    temp_sweep(o->r.output_dir);
    return TIPC_OK;
}

/* OUTPUT/NAME := the net and m (ckpt_save writes it atomically). */
static enum tipc_status save_as(const struct train_opts *o, const char *name, const struct ckpt_meta *m,
                                const struct net *net)
{
    char *p = xasprintf("%s/%s", o->r.output_dir, name);
    enum tipc_status st = ckpt_save(p, m, net);
    free(p);
    return st;
}

enum tipc_status train_save_epoch(const struct train_opts *o, const struct ckpt_meta *m, const struct net *net,
                                  bool best)
{
    if (o->local_rank != 0) return TIPC_OK;
    char name[32];
    snprintf(name, sizeof name, "epoch_%d.ckpt", m->epoch);
    enum tipc_status st = save_as(o, name, m, net);
    if (st == TIPC_OK) st = save_as(o, "latest.ckpt", m, net);
    if (st == TIPC_OK && best) st = save_as(o, "best.ckpt", m, net);
    return st;
}

enum tipc_status train_save_step(const struct train_opts *o, const struct ckpt_meta *m, const struct net *net,
                                 int64_t kept[2])
{
    if (o->local_rank != 0) return TIPC_OK;
    char name[48];
    snprintf(name, sizeof name, "step_%lld.ckpt", (long long)m->step);
    enum tipc_status st = save_as(o, name, m, net);
    if (st == TIPC_OK) st = save_as(o, "latest.ckpt", m, net);
    if (st != TIPC_OK) return st;
    if (kept[0] >= 0) {
        char *p = xasprintf("%s/step_%lld.ckpt", o->r.output_dir, (long long)kept[0]);
        unlink(p);
        free(p);
    }
    kept[0] = kept[1], kept[1] = m->step;
    if (o->log) train_log_clear(o->log);   /* a line of its own, not glued to the bar */
    if (o->rank == 0)
        printf("saved '%s/step_%lld.ckpt' (epoch %d, %d of %d steps) and latest.ckpt\n", o->r.output_dir,
               (long long)m->step, m->epoch, m->step_in_epoch, m->steps_per_epoch);
    return TIPC_OK;
}

static bool same_file(const char *a, const struct stat *b)
{
    struct stat s;
    return b && stat(a, &s) == 0 && s.st_dev == b->st_dev && s.st_ino == b->st_ino;
}

/* Remove our checkpoint names from `dir` (the generation previous_run/ held). */
static void clear_old_generation(const char *dir)
{
    DIR *d = opendir(dir);
    for (struct dirent *e; d && (e = readdir(d));) {
        if (!ckpt_name_ours(e->d_name, true)) continue;
        char *p = xasprintf("%s/%s", dir, e->d_name);
        if (unlink(p) != 0 && errno != ENOENT) warning_msg("cannot remove '%s': %s", p, strerror(errno));
        free(p);
    }
    if (d) closedir(d);
}

void train_set_aside_others(const struct train_opts *o, const char *run_id, const char *keep)
{
    if (o->local_rank != 0) return;
    const char *out = o->r.output_dir;
    struct stat ks, *kp = keep && stat(keep, &ks) == 0 ? &ks : NULL;
    DIR *d = opendir(out);
    char **names = NULL, other[CKPT_RUN_ID_MAX] = "";
    size_t n = 0, cap = 0;
    for (struct dirent *e; d && (e = readdir(d));) {
        if (!ckpt_name_ours(e->d_name, true)) continue;
        char *p = xasprintf("%s/%s", out, e->d_name);
        struct ckpt_meta m;
        memset(&m, 0, sizeof m);
        bool ours = ckpt_read_meta(p, &m) == TIPC_OK && !strcmp(m.run_id, run_id);
        if (!ours && !same_file(p, kp)) {
            if (!other[0]) snprintf(other, sizeof other, "%s", m.run_id[0] ? m.run_id : "-");
            names = xgrow(names, sizeof *names, n + 1, &cap);
            names[n++] = xstrdup(e->d_name);
        }
        free(p);
    }
    if (d) closedir(d);
    if (!n) return;
    char *prev = xasprintf("%s/previous_run", out);
    int moved = 0;
    if (mkdir_p(prev) == TIPC_OK) {
        clear_old_generation(prev);
        for (size_t i = 0; i < n; i++) {
            char *from = xasprintf("%s/%s", out, names[i]), *to = xasprintf("%s/%s", prev, names[i]);
            if (rename(from, to) == 0) moved++;
            else if (errno != ENOENT)   /* ENOENT: another node on a shared folder moved it first */
                warning_msg("cannot move '%s' to '%s': %s", from, to, strerror(errno));
            free(from);
            free(to);
        }
    }
    if (moved && o->rank == 0)
        printf("moved %d checkpoint%s of an earlier run (run id %s) from '%s' to '%s/': this training (run id %s) "
               "starts from the beginning; --resume CKPT continues an earlier run on purpose\n", moved,
               moved == 1 ? "" : "s", strcmp(other, "-") ? other : "none, an older tipc's", out, prev, run_id);
    for (size_t i = 0; i < n; i++) free(names[i]);
    free(names);
    free(prev);
}
