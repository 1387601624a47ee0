/* commands.c: the command table {name, fn, summary} (git's builtin table) and `tipc help`.
 * The exit-code table is printed by `tipc help` and `tipc help exit-codes` only; every exit
 * code is an enum tipc_status (core/status.h), so that table is the whole contract. */
#include <stdio.h>
#include <string.h>

#include "cmds.h"
#include "../core/check.h"
#include "../core/options.h"
#include "../core/banned.h"

const struct cmd tipc_commands[] = {
    {"run", cmd_run, "run a TIPC config's chain (train, eval, export, infer) for one MODE", NULL},
    {"prepare", cmd_prepare, "get a MODE's dataset and weights (download, verify, extract, or synthesize)", NULL},
    {"launch", cmd_launch, "start one rank per device on this node and rendezvous with the others", NULL},
    {"train", cmd_train, "train MobileNetV3-small (the bundled engine)", NULL},
    {"export", cmd_export, "export a trained checkpoint as an inference model and ONNX", NULL},
    {"infer", cmd_infer, "run an exported model on images", NULL},
    {"bench", cmd_bench, "measure training or inference speed on synthetic data", NULL},
    {"speed", cmd_speed, "turn a training log into a speed record (Paddle's benchmark analysis.py)", NULL},
    {"compare", cmd_compare, "compare a run's speed and convergence with a baseline's; exit 1 on a regression", NULL},
    {"version", cmd_version, "print the version and the features compiled in", "--version"},
    {"help", cmd_help, "show help for tipc, one command, or the exit codes", "--help -h"},
    {NULL, NULL, NULL, NULL},
};

const struct cmd *cmd_find(const char *name)
{
    size_t len = strlen(name);
    for (const struct cmd *c = tipc_commands; c->name; c++) {
        if (!strcmp(c->name, name)) return c;
        for (const char *p = c->alias; p && *p;) {
            size_t k = strcspn(p, " ");
            if (k == len && !strncmp(p, name, len)) return c;
            p += k;
            while (*p == ' ') p++;
        }
    }
    return NULL;
}

bool cmd_exists(const char *name) { return cmd_find(name) != NULL; }

int cmd_unknown(const char *name)
{
    const char *names[sizeof tipc_commands / sizeof tipc_commands[0]];
    size_t n = 0;
    for (const struct cmd *c = tipc_commands; c->name; c++) names[n++] = c->name;
    names[n] = NULL;
    error_msg(TIPC_EUSAGE, "'%s' is not a tipc command; see 'tipc help'", name);
    const char *s = opt_suggest(name, names);
    if (s) error_hint("did you mean '%s'?", s);
    return TIPC_EUSAGE;
}

const char tipc_exit_codes[] =
    "exit codes:\n"
    "  0    every stage passed\n"
    "  1    a stage failed (`tipc run`: the other stages still ran; see results_python.log)\n"
    "  2    bad command line or config file (file:line in the message); nothing was run\n"
    "  3    data preparation failed (download, checksum, extraction, unreadable image or list)\n"
    "  4    distributed set-up failed (rendezvous timeout, missing node, a peer died)\n"
    "  5    a file could not be read or written (checkpoint, model, log)\n"
    "  6    not finite: a NaN or inf loss, weight, BN statistic, logit or output (a broken model)\n"
    "  7    the feature was not compiled in (e.g. CUDA; rebuild with it), or this host does not\n"
    "       provide it (no CUDA device; bench scaling --netns: no namespaces, veth or qdisc)\n"
    "  70   internal error (a bug; please report the BUG line)\n"
    "  130  interrupted (SIGINT/SIGTERM)\n";

void cmd_print_overview(void *stream)
{
    FILE *f = stream;
    fprintf(f, "usage: tipc <command> [<args>]\n\ncommands:\n");
    for (const struct cmd *c = tipc_commands; c->name; c++) fprintf(f, "  %-8s %s\n", c->name, c->summary);
    fprintf(f, "\nmain use:\n  tipc run configs/mobilenet_v3_small/train_fleet_infer.txt lite_train_lite_infer\n");
    fprintf(f, "\n'tipc help <command>' (or 'tipc <command> --help') shows a command's options;\n"
               "'tipc help exit-codes' the exit codes alone; 'tipc help man' a man page and\n"
               "'tipc help completion' a bash completion script (both from the option tables).\n\n%s",
            tipc_exit_codes);
}

int cmd_help(int argc, char **argv)
{
    const char *pos[1] = {NULL};
    const struct opt_cmd cmd = {
        .name = "help",
        .synopsis = "[<command> | exit-codes | man | completion]",
        .about = "Without an argument: the commands and the exit codes. With a command: its options\n"
                 "(the same as 'tipc <command> --help'). 'exit-codes': the exit-code table. 'man': a man\n"
                 "page (troff; `tipc help man | man -l -`), 'completion': a bash completion script\n"
                 "(`source <(tipc help completion)`), both generated from every command's option table.\n",
        .max_pos = 1,
    };
    struct opt_result r;
    TRY(opt_parse(&cmd, argc, argv, pos, &r));
    if (r.help) return TIPC_OK;
    if (!r.npos) {
        cmd_print_overview(stdout);
        return TIPC_OK;
    }
    if (!strcmp(pos[0], "exit-codes")) {
        fputs(tipc_exit_codes, stdout);
        return TIPC_OK;
    }
    if (!strcmp(pos[0], "man") || !strcmp(pos[0], "completion")) {
        if (pos[0][0] == 'm') cmd_print_man(stdout);
        else cmd_print_completion(stdout);
        return TIPC_OK;
    }
    const struct cmd *c = cmd_find(pos[0]);
    if (!c) return cmd_unknown(pos[0]);
    char *hv[] = {(char *)c->name, "--help", NULL};
    return c->fn(2, hv);
}
