/* amp.h: choosing a net's mixed precision policy from the command line and the recipe, and the
 * log line that says which precision runs (the design: engine/ops/precision.h; the ops: ops.h
 * "mixed precision"; docs/engine.md#mixed-precision-amp). */
#ifndef TIPC_AMP_H
#define TIPC_AMP_H
#include <stdbool.h>

#include "net.h"
#include "../io/recipe.h"
#include "../../core/status.h"

/* The policy from, strongest first: `precision` (--precision fp32|bf16|fp16; NULL: not given),
 * `level` (--amp_level O1|O2, O0/None: off; NULL: not given), then the recipe (r may be NULL):
 * Global.auto_cast (amp: O1, fp16: O2 in fp16, bf16), AMP.use_amp / Global.use_amp with
 * AMP.level, AMP.dtype. Mixed precision without a dtype runs bf16 on the CPU and fp16 on a GPU.
 * fp16's loss scale starts at AMP.scale_loss (0: 32768) and is dynamic unless
 * AMP.use_dynamic_loss_scaling is false; bf16 runs unscaled. `who` prefixes messages ("train").
 * TIPC_EUSAGE naming the flag or key for a bad value. */
enum tipc_status amp_policy_resolve(struct amp_policy *p, const char *who, const char *precision, const char *level,
                                    const struct recipe *r, bool gpu);
/* TIPC_ENOTBUILT with a message when the backend cannot run p (no AMP ops), else TIPC_OK. */
enum tipc_status amp_policy_check(const struct amp_policy *p, const struct backend *be, const char *who);
/* The line that says which precision runs, e.g. "precision: bf16 mixed (AMP O2): ...", on stdout. */
void amp_describe(const struct amp_policy *p, const struct backend *be);

#endif
