/* amp.c: see amp.h. */
#include <stdio.h>
#include <string.h>

#include "amp.h"
#include "../../core/check.h"
#include "../../core/banned.h"

/* "O1" -> 1, "O2" -> 2, "O0"/"None"/"null"/"" -> 0, else -1 */
static int level_parse(const char *s)
{
    if (!*s || !strcmp(s, "O0") || !strcmp(s, "None") || !strcmp(s, "null")) return 0;
    return !strcmp(s, "O1") ? 1 : !strcmp(s, "O2") ? 2 : -1;
}

enum tipc_status amp_policy_resolve(struct amp_policy *p, const char *who, const char *precision, const char *level,
                                    const struct recipe *r, bool gpu)
{
    memset(p, 0, sizeof *p);
    int lv = 0;
    bool have_dtype = false;
    enum precision dt = PREC_FP32;
    if (r) { /* the recipe first, the flags over it */
        const char *ac = r->auto_cast;
        if (!strcmp(ac, "amp")) lv = 1;
        else if (!strcmp(ac, "fp16")) lv = 2, dt = PREC_FP16, have_dtype = true;
        else if (!strcmp(ac, "bf16")) lv = 1, dt = PREC_BF16, have_dtype = true;
        else if (*ac && strcmp(ac, "fp32") && strcmp(ac, "null") && strcmp(ac, "None"))
            return error_msg(TIPC_EUSAGE, "%s: Global.auto_cast '%s': want amp, fp16, bf16, fp32 or null", who, ac);
        if (r->use_amp) {
            int l = level_parse(r->amp_level);
            if (l < 0) return error_msg(TIPC_EUSAGE, "%s: AMP.level '%s': want O0, O1 or O2", who, r->amp_level);
            lv = *r->amp_level ? l : (lv ? lv : 1);
        }
        if (*r->amp_dtype) {
            if (!precision_parse(r->amp_dtype, &dt) || dt == PREC_FP32)
                return error_msg(TIPC_EUSAGE, "%s: AMP.dtype '%s': want float16 or bfloat16", who, r->amp_dtype);
            have_dtype = true;
        }
    }
    if (level) {
        lv = level_parse(level);
        if (lv < 0) return error_msg(TIPC_EUSAGE, "%s: --amp_level must be O0, O1 or O2, not '%s'", who, level);
    }
    if (precision) {
        if (!precision_parse(precision, &dt))
            return error_msg(TIPC_EUSAGE, "%s: --precision must be fp32, bf16 or fp16, not '%s'", who, precision);
        if (dt == PREC_FP32) {
            if (level && lv) warning_msg("%s: --precision fp32 given: --amp_level %s is ignored", who, level);
            return TIPC_OK;
        }
        have_dtype = true;
        if (!lv) lv = 1;
    }
    if (!lv) return TIPC_OK;
    p->prec = have_dtype ? dt : gpu ? PREC_FP16 : PREC_BF16;
    p->level = lv;
    p->ls = amp_scaler_defaults(p->prec);
    if (p->prec == PREC_FP16 && r) {
        if (r->scale_loss > 0) p->ls.init_scale = (float)r->scale_loss;
        p->ls.dynamic = r->use_dynamic_loss_scaling;
    }
    return TIPC_OK;
}

enum tipc_status amp_policy_check(const struct amp_policy *p, const struct backend *be, const char *who)
{
    if (p->prec == PREC_FP32 || backend_has_amp(be)) return TIPC_OK;
    error_msg(TIPC_ENOTBUILT, "%s: %s mixed precision: the %s backend of this build has no mixed precision ops", who,
              precision_name(p->prec), be->ops->name);
    error_hint("run with --precision fp32, or on the CPU");
    return TIPC_ENOTBUILT;
}

void amp_describe(const struct amp_policy *p, const struct backend *be)
{
    if (p->prec == PREC_FP32) {
        printf("precision: fp32 (no mixed precision)\n");
        return;
    }
    char scale[128];
    if (p->prec == PREC_BF16 && p->ls.init_scale == 1 && !p->ls.dynamic)
        snprintf(scale, sizeof scale, "no loss scaling (bf16 has fp32's exponent range)");
    else if (p->ls.dynamic)
        snprintf(scale, sizeof scale, "dynamic loss scale from %g (x%g after %d finite steps, x%g and skip on overflow)",
                 p->ls.init_scale, p->ls.growth_factor, p->ls.growth_interval, p->ls.backoff_factor);
    else
        snprintf(scale, sizeof scale, "static loss scale %g (a non-finite step is skipped)", p->ls.init_scale);
    const char *how = "";
    if (be->ops->host_memory)
        how = p->prec == PREC_FP16 ? "; CPU: fp16 values by F16C rounding, fp32 kernels"
                                       : "; CPU: bf16 values by exact rounding, fp32 kernels";
    printf("precision: %s mixed (AMP O%d): %s activations, activation gradients and conv/linear weights; fp32 "
           "accumulation, master weights and optimizer state; %s%s\n",
           precision_name(p->prec), p->level, precision_name(p->prec), scale, how);
}
