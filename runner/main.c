/* main.c: the `tipc` executable. A git-style command table {name, fn, summary}; every subcommand
 * lives in runner/cmd_<name>.c. The exit code is the enum tipc_status the command returns
 * (core/status.h), so the table in `tipc help` is the whole contract. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cmds.h"                   /* defines: cmd_* and usage_* */
#include "../core/check.h"   /* defines: error_msg */
#include "../core/banned.h"

struct cmd {
    const char *name;
    int (*fn)(int argc, char **argv);
    const char *summary;
    const char *usage;
};

static const struct cmd commands[] = {
    {"run", cmd_run, "run a TIPC config's chain (train, eval, export, infer) for one MODE", usage_run},
    {"prepare", cmd_prepare, "get a MODE's dataset and weights (download, verify, extract, or synthesize)", usage_prepare},
    {"launch", cmd_launch, "start one rank per device on this node and rendezvous with the others", usage_launch},
    {"train", cmd_train, "train MobileNetV3-small (the bundled engine)", usage_train},
    {"export", cmd_export, "export a trained checkpoint as an inference model and ONNX", usage_export},
    {"infer", cmd_infer, "run an exported model on images", usage_infer},
    {"bench", cmd_bench, "measure training or inference speed on synthetic data", usage_bench},
    {"version", cmd_version, "print the version and the features compiled in", usage_version},
    {"help", cmd_help, "show help for tipc or one command", usage_help},
};

static const struct cmd *find_cmd(const char *name)
{
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        if (!strcmp(commands[i].name, name)) return &commands[i];
    return NULL;
}

static const char exit_codes[] =
    "exit codes:\n"
    "  0    every stage passed\n"
    "  1    a stage failed (`tipc run`: the other stages still ran; see results_python.log)\n"
    "  2    bad command line or config file (file:line in the message); nothing was run\n"
    "  3    data preparation failed (download, checksum, extraction, unreadable image or list)\n"
    "  4    distributed set-up failed (rendezvous timeout, missing node, a peer died)\n"
    "  5    a file could not be read or written (checkpoint, model, log)\n"
    "  6    training diverged (NaN or inf loss)\n"
    "  7    the feature was not compiled in (e.g. CUDA); rebuild with it\n"
    "  70   internal error (a bug; please report the BUG line)\n"
    "  130  interrupted (SIGINT/SIGTERM)\n";

static void print_overview(FILE *f)
{
    fprintf(f, "usage: tipc <command> [<args>]\n\ncommands:\n");
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        fprintf(f, "  %-8s %s\n", commands[i].name, commands[i].summary);
    fprintf(f, "\nmain use:\n  tipc run configs/mobilenet_v3_small/train_fleet_infer.txt lite_train_lite_infer\n");
    fprintf(f, "\n'tipc help <command>' shows a command's options.\n\n%s", exit_codes);
}

const char usage_help[] = "usage: tipc help [<command>]\n";

int cmd_help(int argc, char **argv)
{
    if (argc < 2) {
        print_overview(stdout);
        return 0;
    }
    const struct cmd *c = find_cmd(argv[1]);
    if (!c) return error_msg(TIPC_EUSAGE, "unknown command '%s'; see 'tipc help'", argv[1]);
    fputs(c->usage, stdout);
    fprintf(stdout, "\n%s", exit_codes);
    return 0;
}

int cmd_usage_error(const char *name)
{
    const struct cmd *c = find_cmd(name);
    if (c) fputs(c->usage, stderr);
    return TIPC_EUSAGE;
}

/* git's run_builtin: a failed write to stdout (full disk, closed pipe) must not look like success. */
static int finish_stdout(int rc)
{
    if (fflush(stdout) != 0 || ferror(stdout)) {
        if (errno == EPIPE) return rc;
        error_msg(TIPC_EIO, "cannot write to standard output: %s", strerror(errno));
        return rc ? rc : TIPC_EIO;
    }
    return rc;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        print_overview(stderr);
        return TIPC_EUSAGE;
    }
    const char *name = argv[1];
    if (!strcmp(name, "--help") || !strcmp(name, "-h")) name = "help";
    if (!strcmp(name, "--version")) name = "version";
    const struct cmd *c = find_cmd(name);
    if (!c) {
        error_msg(TIPC_EUSAGE, "'%s' is not a tipc command; see 'tipc help'", argv[1]);
        return TIPC_EUSAGE;
    }
    /* `tipc CMD --help` is the same as `tipc help CMD`. */
    for (int i = 2; i < argc; i++) {
        if (!strcmp(argv[i], "--")) break;
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            fputs(c->usage, stdout);
            return finish_stdout(0);
        }
    }
    return finish_stdout(c->fn(argc - 1, argv + 1));
}
