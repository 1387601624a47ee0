/* dialect.c: the dialect table and how a config's repo is recognised (see dialect.h). */
#include "dialect.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../../core/check.h"
#include "../../core/banned.h"

static const struct dialect table[DIALECT_COUNT] = {
    {DIALECT_REF, "reference", "Step6 (PaddlePaddle/models 8042c21b) for 32-line configs, PaddleOCR 038a9330 for 51-line ones",
     NULL, NULL, false, false},
    {DIALECT_CLAS, "clas", "PaddleClas d178931f", "ppcls", "Global.print_mem_info=True", true, true},
    {DIALECT_DET, "det", "PaddleDetection 666f597f", "ppdet", "source test_tipc/utils_func.sh", false, false},
    {DIALECT_SEG, "seg", "PaddleSeg d7975e7c", "paddleseg", "parse_extra_args", false, true},
    {DIALECT_OCR, "ocr", "PaddleOCR f773f2c9", "ppocr", "python_infer_gpu_gpus_${_gpu}_usetrt", false, true},
    {DIALECT_TMPL, "tmpl", "PaddlePaddle/models template 8042c21b", NULL, "klquant_whole_infer", false, false},
};

const struct dialect *dialect_get(enum dialect_id id) { return &table[id]; }

const struct dialect *dialect_by_name(const char *name)
{
    for (int i = 0; i < DIALECT_COUNT; i++)
        if (!strcmp(name, table[i].name)) return &table[i];
    return NULL;
}

const char *dialect_names(void) { return "reference, clas, det, seg, ocr, tmpl"; }

static bool is_dir(const char *dir, const char *sub)
{
    char *p = xasprintf("%s/%s", dir, sub);
    struct stat st;
    bool ok = stat(p, &st) == 0 && S_ISDIR(st.st_mode);
    free(p);
    return ok;
}

/* Does `dir`/test_tipc/test_train_inference_python.sh contain `needle`? Reads at most 256 KB. */
static bool harness_says(const char *dir, const char *needle)
{
    char *p = xasprintf("%s/test_tipc/test_train_inference_python.sh", dir);
    FILE *f = fopen(p, "rb");
    free(p);
    if (!f) return false;
    char *buf = xmalloc(256 * 1024 + 1);
    size_t n = fread(buf, 1, 256 * 1024, f);
    fclose(f);
    buf[n] = 0;
    bool hit = memchr(buf, 0, n) == NULL && strstr(buf, needle) != NULL;
    free(buf);
    return hit;
}

/* The models repo's template harness lives in {tutorials,docs}/tipc/train_infer_python/template/test. */
static bool is_template_dir(const char *dir)
{
    const char *t = "/tipc/train_infer_python/template";
    const char *hit = strstr(dir, t);
    return hit && (hit[strlen(t)] == 0 || hit[strlen(t)] == '/');
}

/* One folder: a marker folder, the template path, or the harness's own text. */
static const struct dialect *detect_in(const char *dir, char *why, size_t whylen)
{
    for (int i = 1; i < DIALECT_COUNT; i++)
        if (table[i].marker && is_dir(dir, table[i].marker)) {
            snprintf(why, whylen, "%s/%s/ exists (a %s checkout)", dir, table[i].marker, table[i].repo);
            return &table[i];
        }
    if (is_template_dir(dir)) {
        snprintf(why, whylen, "%s is the PaddlePaddle/models TIPC template folder", dir);
        return &table[DIALECT_TMPL];
    }
    for (int i = 1; i < DIALECT_COUNT; i++)
        if (table[i].signature && harness_says(dir, table[i].signature)) {
            snprintf(why, whylen, "%s/test_tipc/test_train_inference_python.sh is %s's harness (it contains '%s')",
                     dir, table[i].repo, table[i].signature);
            return &table[i];
        }
    return NULL;
}

const struct dialect *dialect_choose(const char *config_path, const char *override, char *why, size_t whylen)
{
    if (override && strcmp(override, "auto") != 0) {
        const struct dialect *d = dialect_by_name(override);
        if (!d) {
            error_msg(TIPC_EUSAGE, "unknown dialect '%s': expected auto, %s", override, dialect_names());
            return NULL;
        }
        snprintf(why, whylen, "--dialect %s", override);
        return d;
    }
    char cwd[PATH_MAX];
    if (getcwd(cwd, sizeof cwd)) {
        const struct dialect *d = detect_in(cwd, why, whylen);
        if (d) return d;
    }
    /* Each folder above the config, nearest first. */
    char *abs = realpath(config_path, NULL);
    if (abs) {
        char *slash;
        while ((slash = strrchr(abs, '/')) != NULL && slash != abs) {
            *slash = 0;
            const struct dialect *d = detect_in(abs, why, whylen);
            if (d) {
                free(abs);
                return d;
            }
        }
        free(abs);
    }
    snprintf(why, whylen, "no repo marker (ppcls/, ppdet/, paddleseg/, ppocr/, models template) or known "
             "harness found in the current folder or above the config");
    return &table[DIALECT_REF];
}
