/* steps.c: what `tipc run` does around and between the commands, for the dialects (dialect.h):
 * cd before a command, a train's status from the train.log it left, PaddleClas's links, PaddleDetection's
 * copy, PaddleSeg's weights token, and `--prepare`'s repo script. */
#include "steps.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../plan/plan.h"
#include "proc.h"
#include "../../core/check.h"
#include "../../core/banned.h"

/* The original `cd`s before some commands (PaddleClas: deploy/); a failed cd is skipped, as the
 * shell goes on. Returns the folder to come back to (-1: nothing changed). */
int cwd_enter(char *const cwd[2])
{
    if (!cwd[0]) return -1;
    int here = open(".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (here < 0) tipc_die_msg(TIPC_EIO, "cannot open the current folder: %s", strerror(errno));
    for (int c = 0; c < 2; c++)
        if (cwd[c] && chdir(cwd[c]) != 0)
            fprintf(stderr, "tipc: cd %s: %s (the command runs where it is, as in the original)\n", cwd[c],
                    strerror(errno));
    return here;
}

void cwd_leave(int here)
{
    if (here < 0) return;
    if (fchdir(here) != 0) tipc_die_msg(TIPC_EIO, "cannot return to the starting folder: %s", strerror(errno));
    close(here);
}

enum tipc_status append_line(const char *path, const char *line)
{
    FILE *f = fopen(path, "a");
    if (!f || fprintf(f, "%s\n", line) < 0 || fclose(f) != 0) {
        int e = errno;
        if (f) fclose(f);
        return error_at(TIPC_EIO, path, 0, "cannot append to results log: %s", strerror(e));
    }
    return TIPC_OK;
}

/* PB_MODEL_TOKEN in `s` replaced by `name` (a copy of s when there is none). */
char *subst_model(const char *s, const char *name)
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

/* `cat SRC >> DST` as the status of a train (PaddleClas, PaddleOCR f773): DST is created even
 * when SRC is missing; the status is 1 when SRC cannot be read. */
int status_from_file(const char *src, const char *dst)
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
void stage_links(const char *dir)
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
void stage_copy(const char *src, const char *dst)
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
enum tipc_status run_repo_prepare(const char *config, const char *mode, const char *self)
{
    static const char script[] = "test_tipc/prepare.sh";
    struct stat st;
    if (stat(script, &st) != 0 || !S_ISREG(st.st_mode))
        return error_msg(TIPC_EUSAGE, "--prepare: %s: %s; run tipc from the repo root, where the harness runs",
                         script, strerror(errno ? errno : ENOENT));
    struct cmdline cl = {0};
    const char *argv[] = {"bash", script, config, mode};
    cl.argc = 4;
    cl.argv = xcalloc(5, sizeof *cl.argv);
    for (int i = 0; i < 4; i++) cl.argv[i] = xstrdup(argv[i]);
    printf("prepare: bash %s %s %s\n", script, config, mode);
    fflush(stdout);
    proc_signals_init();
    const char *none[1] = {NULL};
    struct proc_env env = {self, none, none, -1, -1, 0};
    int status = proc_run(&cl, &env, NULL);
    cmdline_free(&cl);
    if (status != 0)
        return error_msg(TIPC_EDATA, "--prepare: bash %s %s %s exited with status %d; nothing else was run", script,
                         config, mode, status);
    return TIPC_OK;
}
