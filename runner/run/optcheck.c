/* optcheck.c: tipc's own command lines in a plan, checked against their option tables (optcheck.h).
 * A flag mistyped in a config (`--epoch:lite_train_lite_infer=5`) used to pass --dry-run and fail
 * the stage; now the run stops before anything runs, naming the line. */
#include "optcheck.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../plan/config.h"
#include "../plan/plan.h"
#include "../../core/check.h"
#include "../../core/options.h"
#include "../../core/banned.h"

/* Parse argv[0..argc) with its command's table in check mode; *rest: where a launcher's CMD starts,
 * *bad: the wrong word. quiet: the parser's messages go nowhere (the first pass, which finds the line). */
static enum tipc_status check_words(run_find_cmd find, int argc, char **argv, bool quiet, int *rest, const char **bad)
{
    run_cmd_fn fn = find(argv[0]);
    *rest = argc, *bad = NULL;
    if (!fn) return TIPC_OK;   /* not a tipc command: the stage says so when it runs */
    int saved = -1;
    if (quiet) {
        fflush(stderr);
        int null = open("/dev/null", O_WRONLY | O_CLOEXEC);
        saved = null >= 0 ? dup(2) : -1;
        if (saved >= 0) dup2(null, 2);
        if (null >= 0) close(null);
    }
    opt_check_mode(true);
    enum tipc_status st = (enum tipc_status)fn(argc, argv);
    opt_check_mode(false);
    if (saved >= 0) {
        dup2(saved, 2);
        close(saved);
    }
    *rest = opt_check_result()->rest;
    *bad = opt_check_result()->bad;
    return st;
}

/* One command line (argv[0] is the tipc command's name); launch: then the command it starts. */
static enum tipc_status check_command(const struct tipc_config *cfg, run_find_cmd find, int argc, char **argv,
                                      int line)
{
    int rest;
    const char *bad;
    if (check_words(find, argc, argv, true, &rest, &bad) != TIPC_OK) {
        char *where = xasprintf("%s:%d: ", cfg->path, cfg_line_of(cfg, bad, line));
        tipc_set_msg_prefix(where);   /* the parser's message and hint again, at that line */
        enum tipc_status st = check_words(find, argc, argv, false, &rest, &bad);
        tipc_set_msg_prefix(NULL);
        free(where);
        return st != TIPC_OK ? st : TIPC_EUSAGE;
    }
    if (!strcmp(argv[0], "launch") && rest < argc) return check_command(cfg, find, argc - rest, argv + rest, line);
    return TIPC_OK;
}

enum tipc_status run_check_options(const struct plan *p, const struct tipc_config *cfg, run_find_cmd find)
{
    if (!p->ours || !find) return TIPC_OK;
    for (int i = 0; i < p->n; i++) {
        const struct stage *s = &p->st[i];
        if (s->kind > STAGE_INFER || s->cl.argc < 2 || strcmp(s->cl.argv[0], "tipc")) continue;
        TRY(check_command(cfg, find, s->cl.argc - 1, s->cl.argv + 1, s->line));
    }
    return TIPC_OK;
}
