/* bench_internal.h: what bench.c (the scripts' rows, the section) and bench_case.c (the loops, one
 * case's stages) share. Not a public interface: see bench.h. */
#ifndef TIPC_PLAN_BENCH_INTERNAL_H
#define TIPC_PLAN_BENCH_INTERNAL_H
#include <stdbool.h>
#include "bench.h"
#include "bench_text.h"

/* One repo's benchmark_train.sh. Line numbers are physical (sed's); 0: that script edits no such line. */
struct bench_style {
    const char *name;
    bool grep_word;                 /* `grep -n -w` (else substring) for the section header */
    const char *const *fields;      /* the section's lines after the header, in order */
    int l_python, l_gpuid, l_precision, l_epoch, l_bs, l_model_type, l_profile, l_eval, l_export, l_pact, l_fpgm;
    bool mode_prefix;               /* batch size and epoch written as benchmark_train=N */
    const char *devices;            /* default layouts, space-separated; NULL: the config's own */
    bool profile_always;            /* profiles on one card whatever PROFILING_TIMER_ONLY says (PaddleOCR) */
    bool profile_quoted;            /* the profile line written "KEY:VALUE", quotes included */
    double t_profile, t_single, t_multi, t_n4c32;  /* the script's `timeout` (seconds), 0: none */
    int skip_steps;                 /* analysis.py --skip_steps */
    const char *unit_single, *unit_multi;          /* --speed_unit on one card / several */
    const char *keyword;            /* --keyword */
    bool model_type_loop;           /* PaddleClas: model types from the section, one case each */
    bool amp_names;                 /* PaddleOCR: precision fp16 is written amp on the config line */
};

/* One `bash benchmark_train.sh CONFIG benchmark_train [PARAMS]` run: the section's values and the
 * copy of the config as it is edited, case after case (edits persist, as in the file). */
struct bench_run {
    const struct bench_style *style;
    const struct bench_opts *opts;
    const struct plan_opts *popts;
    const char *path;
    bool ours;                      /* python:tipc */
    struct btext text;
    char *model_name;
    char *batch_size, *fp_items, *epoch, *model_type, *num_workers, *repeat_ds, *flags, *profile_option;
    char *param_model_type;         /* PARAMS's first word, or "dynamicTostatic"; NULL: no PARAMS */
    char *run_mode, *devices;       /* DP; space-separated layouts */
    char *trainer_line;             /* our layout: line 14 as the config has it */
    int section_line;
    int num_workers_line;           /* the physical line num_workers was read from */
};

/* Every case of the loops into p (bench_case.c). */
enum tipc_status bench_cases(struct plan *p, struct bench_run *br);

#endif
