/* dry_run.c: `tipc run --dry-run`: the plan as the run would execute it, one numbered line per
 * command with what happens around it (cd, status files, CUDA_VISIBLE_DEVICES, this node), and
 * nothing run. */
#include "dry_run.h"

#include <stdio.h>
#include <stdlib.h>

#include "steps.h"             /* defines: subst_model */
#include "../plan/plan.h"      /* defines: struct plan, struct stage, plan_count_runs */
#include "../../core/strv.h"   /* defines: strv_join */
#include "../../core/banned.h"

void run_print_plan(const struct plan *p, const struct run_opts *a)
{
    printf("# tipc run %s %s (dry run): %d commands, %d-line layout, python:%s\n", a->config, a->mode,
           plan_count_runs(p), (int)p->family, p->ours ? "tipc" : "(as in the config)");
    printf("# dialect: %s (%s): %s\n", p->dialect->name, p->family == CFG_STEP6 ? "Step6's harness for 32-line configs"
           : p->dialect->repo, p->dialect_why);
    printf("# output: %s\n", p->log_dir);
    if (p->save_log) printf("# benchmark logs and speed records: %s (train_log/, index/, benchmark_log/)\n", p->save_log);
    if (p->env.n) {   /* benchmark_train: the section's flags line, for every stage */
        char *env = strv_join(p->env.v, (long)p->env.n, " ");
        printf("# env: %s\n", env);
        free(env);
    }
    if (a->prepare) printf("  0 prepare      bash test_tipc/prepare.sh %s %s\n", a->config, a->mode);
    int k = 0;
    for (int i = 0; i < p->n; i++) {
        const struct stage *s = &p->st[i];
        switch (s->kind) {
        case STAGE_NOTE: printf("         echo: %s\n", s->cmd); continue;
        case STAGE_LINKS: printf("         links: %s/inference.{pdmodel,pdiparams} -> model.* (if that folder exists)\n", s->cmd); continue;
        case STAGE_COPY: printf("         copy: the files of %s into %s/ (if that folder exists)\n", s->cmd, s->append_to); continue;
        case STAGE_APPEND:
            if (s->tee_log && s->timeout_s > 0)
                printf("         output: > %s (timeout %.0fs) (no command)\n", s->tee_log, s->timeout_s);
            else if (s->tee_log) printf("         output: > %s (no command)\n", s->tee_log);
            else printf("         append: %s >> %s (if it exists)\n", s->cmd, s->append_to);
            continue;
        case STAGE_TRAIN: case STAGE_EVAL: case STAGE_EXPORT: case STAGE_INFER: case STAGE_SPEED: break;
        }
        char *shown = subst_model(s->cmd, p->seg_model ? p->seg_model : "");
        printf("%3d %-6s line %-3d %s\n", ++k, stage_kind_name(s->kind), s->line, shown);
        free(shown);
        if (a->skip_gpu && s->needs_gpu) printf("               skipped: needs a GPU: %s (--skip-gpu)\n", a->skip_gpu);
        for (int c = 0; c < 2; c++)
            if (s->cwd[c]) printf("               cd %s (skipped if missing)\n", s->cwd[c]);
        if (s->status_file)
            printf("               status: can %s be read (appended to %s)\n", s->status_file, s->append_to);
        if (s->model_probe)
            printf("               then: if %s/<weights> is missing, the weights become %s\n", s->model_probe,
                   s->model_fallback);
        if (s->tee_log) {
            printf("               output: %s %s", s->tee_append ? ">>" : ">", s->tee_log);
            if (s->timeout_s > 0) printf(" (timeout %.0fs)", s->timeout_s);
            printf("\n");
        }
        if (s->status_log) printf("               status line: %s\n", s->status_log);
        if (s->cvd == CVD_SET) printf("               env CUDA_VISIBLE_DEVICES=%s\n", s->cvd_value);
        else if (s->cvd == CVD_UNSET) printf("               env -u CUDA_VISIBLE_DEVICES\n");
        if (s->ips) {
            if (a->node_ip) printf("               this node: %s (POD_IP) in --ips=%s\n", a->node_ip, s->ips);
            else printf("               this node: found by `tipc launch` among --ips=%s\n", s->ips);
        }
    }
}
