/* cmd_infer.c: `tipc infer`, Step6 deploy/inference_python/infer.py's flags: load
 * DIR/inference.tipc, preprocess (resize short side, center crop, normalise), run, print
 * `image_name: P, class_id: C, prob: X` and the top-k; with --benchmark an AutoLog-style
 * summary (preprocess / inference / postprocess ms, ips). --input-raw/--output-raw move
 * float32 tensors in and out (used to check the ONNX export against ONNX Runtime). */
#include <dirent.h>
#include <omp.h>
#include <stdarg.h>
#include <strings.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <time.h>

#include "../cmds.h"
#include "../../core/version.h"
#include "../../core/check.h"
#include "../../core/options.h"
#include "engine_settings.h"
#include "../../core/regfile.h"
#include "../../core/staged.h"
#include "../../core/time.h"
#include "../../core/fs.h"     /* defines: self_exe_path */
#include "../../engine/data/jpeg.h"
#include "../../engine/infer/infer.h"
#include "../../core/banned.h"

static const char about[] = "Classify images with an exported model (DIR/inference.tipc from `tipc export`).\n";
static const char footer[] =
    "Output per image: 'image_name: P, class_id: C, prob: X' then 'top-K: id (prob), ...'.\n"
    "Exit codes: 0 ok, 2 usage, 3 unreadable or damaged image, 5 model unreadable/corrupt, 6 a weight\n"
    "or an output is not finite, 7 gpu not built or no CUDA device, 70 a CUDA call failed.\n"
    "TIPC_INFER_PER_OP=1 runs the op-by-op schedule on the CPU too (A/B checks); TIPC_CUDA_TF32=1\n"
    "allows TF32 tensor cores on the GPU.\n";

struct infer_flags {
    const char *model_dir, *img_path, *in_raw, *out_raw, *device, *precision;
    enum precision prec;
    int batch, threads, resize, crop, warmup, topk, max_batch;
    bool use_gpu, benchmark;
};

/* Image list: one file, or the sorted JPEGs of a directory. */
static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }
static enum tipc_status list_images(const char *path, char ***out, int *n)
{
    struct stat st;
    if (stat(path, &st)) {
        error_msg(TIPC_EDATA, "image '%s' not found", path);
        error_hint("pass --img-path FILE.jpg (Step6's default ./images/demo.jpg comes with the repository)");
        return TIPC_EDATA;
    }
    size_t cap = 0;
    *n = 0, *out = NULL;
    if (!S_ISDIR(st.st_mode)) {
        *out = xgrow(*out, sizeof **out, 1, &cap);
        (*out)[(*n)++] = xstrdup(path);
        return TIPC_OK;
    }
    DIR *d = opendir(path);
    if (!d) return error_msg(TIPC_EDATA, "cannot read directory '%s'", path);
    for (struct dirent *e; (e = readdir(d));) {
        const char *dot = strrchr(e->d_name, '.');
        if (!dot || (strcasecmp(dot, ".jpg") && strcasecmp(dot, ".jpeg"))) continue;
        *out = xgrow(*out, sizeof **out, (size_t)*n + 1, &cap);
        (*out)[(*n)++] = xasprintf("%s/%s", path, e->d_name);
    }
    closedir(d);
    if (!*n) return error_msg(TIPC_EDATA, "no JPEG images in '%s'", path);
    qsort(*out, (size_t)*n, sizeof **out, cmp_str);
    return TIPC_OK;
}

static void print_result(const char *name, const float *p, int K, int topk)
{
    int best = 0;
    for (int k = 1; k < K; k++)
        if (p[k] > p[best]) best = k;
    printf("image_name: %s, class_id: %d, prob: %g\n", name, best, (double)p[best]);
    if (topk < 1) return;
    if (topk > K) topk = K;
    int idx[64];
    if (topk > 64) topk = 64;
    printf("top-%d:", topk);
    for (int t = 0; t < topk; t++) { /* selection of the t-th largest (K is small) */
        int b = -1;
        for (int k = 0; k < K; k++) {
            bool used = false;
            for (int u = 0; u < t; u++) used |= idx[u] == k;
            if (!used && (b < 0 || p[k] > p[b])) b = k;
        }
        idx[t] = b;
        printf("%s %d (%.5f)", t ? "," : "", b, (double)p[b]);
    }
    printf("\n");
}

static double rss_mb(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    double kb = 0;
    while (f && fgets(line, sizeof line, f))
        if (!strncmp(line, "VmRSS:", 6)) kb = strtod(line + 6, NULL);
    if (f) fclose(f);
    return kb / 1024.0;
}

static void autolog_line(const char *fmt, ...) TIPC_PRINTF(1, 2);
static void autolog_line(const char *fmt, ...)
{
    char ts[32];
    time_t t = time(NULL);
    strftime(ts, sizeof ts, "%Y/%m/%d %H:%M:%S", localtime(&t));
    printf("[%s] root INFO: ", ts);
    va_list ap;
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    printf("\n");
}

static void autolog_report(const struct infer_flags *f, int n_images, const double tm[3], int runs)
{
    struct utsname u;
    uname(&u);
    autolog_line("%s", "");
    autolog_line("---------------------- Env info ----------------------");
    autolog_line(" OS_version: %s %s", u.sysname, u.release);
    autolog_line(" CUDA_version: None");
    autolog_line(" CUDNN_version: None");
    autolog_line(" drivier_version: None");
    autolog_line("---------------------- Paddle info ----------------------");
    /* Paddle's log parsers read these keys and expect a version string: no Paddle ran, so the
     * version a Paddle source build reports (0.0.0); tipc names itself on a key of its own. */
    autolog_line(" paddle_version: 0.0.0");
    autolog_line(" paddle_commit: None");
    autolog_line(" log_api_version: 1.0");
    autolog_line(" tipc_version: %s", TIPC_VERSION);
    autolog_line("----------------------- Conf info -----------------------");
    autolog_line(" runtime_device: %s", f->use_gpu ? "gpu" : "cpu");
    autolog_line(" ir_optim: True");
    autolog_line(" enable_memory_optim: True");
    autolog_line(" enable_tensorrt: False");
    autolog_line(" enable_mkldnn: False");
    autolog_line(" cpu_math_library_num_threads: %d", f->threads);
    autolog_line("----------------------- Model info ----------------------");
    autolog_line(" model_name: classification");
    autolog_line(" precision: %s", precision_name(f->prec));
    autolog_line("----------------------- Data info -----------------------");
    autolog_line(" batch_size: %d", f->batch);
    autolog_line(" input_shape: dynamic");
    autolog_line(" data_num: %d", n_images);
    autolog_line("----------------------- Perf info -----------------------");
    autolog_line(" cpu_rss(MB): %.4f, gpu_rss(MB): None, gpu_util: None%%", rss_mb());
    double total = (tm[0] + tm[1] + tm[2]);
    autolog_line(" total time spent(s): %.4f", total);
    autolog_line(" preprocess_time(ms): %.4f, inference_time(ms): %.4f, postprocess_time(ms): %.4f",
                 tm[0] * 1e3 / runs, tm[1] * 1e3 / runs, tm[2] * 1e3 / runs);
    autolog_line(" ips: %.4f images/sec", tm[1] > 0 ? n_images / tm[1] : 0.0);
}

static enum tipc_status load_image(const char *path, int resize, int crop, uint8_t *out)
{
    return image_load_eval(path, resize, crop, out);
}

/* A NaN or inf output is a broken model, never a result (engine/model/finite.h): exit 6, nothing
 * printed or written for it. `input` >= 0: the input's index in the raw file `name`; else `name`
 * is the image. */
static enum tipc_status outputs_not_finite(const char *name, int input, bool probs, float v)
{
    char what[48] = "image";
    if (input >= 0) snprintf(what, sizeof what, "input %d of", input);
    error_msg(TIPC_ENUMERIC, "infer: the %s for %s '%s' are not finite (%g)", probs ? "probabilities" : "logits", what,
              name, (double)v);
    if (input >= 0) error_hint("the model is broken (exported from a diverged training), or that input is far outside a "
                               "normalised image's range");
    else error_hint("the model is broken (exported from a diverged training): its answers mean nothing");
    return TIPC_ENUMERIC;
}

/* float32 (N,3,R,R) in, probs then logits (N,K) out. */
static enum tipc_status run_raw(const struct infer_flags *f, const char *model_path, struct backend be)
{
    char why[160];
    FILE *in = fopen_regular(f->in_raw, REGFILE_MAX_MODEL, why, sizeof why);
    if (!in) return error_msg(TIPC_EUSAGE, "cannot read '%s': %s", f->in_raw, why);
    fseek(in, 0, SEEK_END);
    long bytes = ftell(in);
    rewind(in);
    struct infer_model m;
    enum tipc_status st = infer_load(&m, model_path, 1, be);
    if (st != TIPC_OK) return fclose(in), st;
    int R = m.slots[0].H, K = m.num_classes;
    size_t per = (size_t)3 * R * R;
    int N = (int)(bytes / (long)(per * 4));
    if (N < 1 || (size_t)bytes != per * 4 * (size_t)N) {
        fclose(in);
        infer_free(&m);
        return error_msg(TIPC_EUSAGE, "'%s': size %ld is not a multiple of 3x%dx%d floats", f->in_raw, bytes, R, R);
    }
    infer_free(&m);
    TRY(infer_load(&m, model_path, N, be));
    infer_set_precision(&m, f->prec);
    float *x = xmalloc(per * N * sizeof(float)), *nhwc = xmalloc(per * N * sizeof(float));
    float *res = xmalloc(2 * (size_t)N * K * sizeof(float)); /* probs then logits */
    bool ok = fread(x, sizeof(float), per * N, in) == per * N;
    fclose(in);
    for (int n = 0; ok && n < N; n++) /* NCHW -> NHWC */
        for (int c = 0; c < 3; c++)
            for (int p = 0; p < R * R; p++) nhwc[((size_t)n * R * R + p) * 3 + c] = x[((size_t)n * 3 + c) * R * R + p];
    infer_set_input_f32(&m, nhwc, N);
    infer_forward(&m, N);
    infer_output_host(&m, res, N);
    infer_logits_host(&m, res + (size_t)N * K, N);
    long bad = infer_outputs_finite(res, 2 * N, K);   /* probs, then logits */
    if (!ok) st = error_msg(TIPC_EIO, "cannot read '%s': %s", f->in_raw, "short read");
    else if (bad >= 0) st = outputs_not_finite(f->in_raw, (int)(bad / K % N), bad / K < N, res[bad]);
    else st = write_file_atomic(f->out_raw, res, sizeof(float) * 2 * (size_t)N * K);
    free(x);
    free(nhwc);
    free(res);
    infer_free(&m);
    return st;
}

static enum tipc_status run_images(const struct infer_flags *f, const char *model_path, struct backend be)
{
    char **paths;
    int n;
    TRY(list_images(f->img_path, &paths, &n));
    struct infer_model m;
    enum tipc_status st = infer_load(&m, model_path, f->batch, be);
    if (st == TIPC_OK) infer_set_precision(&m, f->prec);
    int R = st == TIPC_OK ? m.slots[0].H : 0, crop = f->crop ? f->crop : R;
    int resize = f->resize ? f->resize : (crop * 256 + 112) / 224;
    if (st == TIPC_OK && crop != R)
        st = error_msg(TIPC_EUSAGE, "--crop-size %d does not match the model's input %dx%d", crop, R, R);
    uint8_t *img = st == TIPC_OK ? xmalloc((size_t)f->batch * R * R * 3) : NULL;
    float *probs = st == TIPC_OK ? xmalloc(sizeof(float) * (size_t)f->batch * m.num_classes) : NULL;
    double tm[3] = {0}, t0;
    int runs = 0;
    for (int w = 0; st == TIPC_OK && w < f->warmup; w++) {
        infer_forward(&m, 1);
        infer_sync(&m);
        if (f->benchmark) printf("warmup: %d\n", w);
    }
    for (int i = 0; st == TIPC_OK && i < n; i += f->batch) {
        int b = n - i < f->batch ? n - i : f->batch;
        t0 = now_seconds();
        for (int j = 0; j < b && st == TIPC_OK; j++) st = load_image(paths[i + j], resize, crop, img + (size_t)j * R * R * 3);
        if (st != TIPC_OK) break;
        infer_set_input_u8(&m, img, b);
        double t1 = now_seconds();
        infer_forward(&m, b);
        infer_sync(&m); /* a GPU runs asynchronously: time the work, not its launch */
        double t2 = now_seconds();
        infer_output_host(&m, probs, b);
        long bad = infer_outputs_finite(probs, b, m.num_classes);
        if (bad >= 0) {
            st = outputs_not_finite(paths[i + bad / m.num_classes], -1, true, probs[bad]);
            break;
        }
        for (int j = 0; j < b; j++) print_result(paths[i + j], probs + (size_t)j * m.num_classes, m.num_classes, f->topk);
        double t3 = now_seconds();
        tm[0] += t1 - t0, tm[1] += t2 - t1, tm[2] += t3 - t2;
        runs++;
    }
    if (st == TIPC_OK && f->benchmark) autolog_report(f, n, tm, runs);
    free(img);
    free(probs);
    for (int i = 0; i < n; i++) free(paths[i]);
    free(paths);
    if (m.layers) infer_free(&m);
    return st;
}

/* The demo image when --img-path is not given: ./images/demo.jpg (Step6's default, the repository
 * root), else the one installed with this binary (EXE/../share/tipc/images, or EXE/../images for
 * bin/tipc in a checkout), so an installed tipc runs from any directory. malloc'ed. */
static char *default_image(void)
{
    static const char *const REL[] = {"../share/tipc/images/demo.jpg", "../images/demo.jpg"};
    struct stat st;
    if (stat("./images/demo.jpg", &st) == 0) return xstrdup("./images/demo.jpg");
    char *exe = self_exe_path(), *slash = exe ? strrchr(exe, '/') : NULL;
    for (size_t i = 0; slash && i < sizeof REL / sizeof REL[0]; i++) {
        char *p = xasprintf("%.*s/%s", (int)(slash - exe), exe, REL[i]);
        if (stat(p, &st) == 0) {
            free(exe);
            return p;
        }
        free(p);
    }
    free(exe);
    return xstrdup("./images/demo.jpg");   /* not found: list_images says so */
}

int cmd_infer(int argc, char **argv)
{
    struct infer_flags f = {.batch = 1, .topk = 5};
    struct backend_settings eng = {0};
    const struct opt opts[] = {
        {"--model-dir", NULL, OPT_STR, &f.model_dir, NULL, 0, 0, "DIR", "the exported model (required)", NULL, NULL},
        {"--img-path", NULL, OPT_STR, &f.img_path, NULL, 0, 0, "PATH", "a JPEG, or a directory of them (default ./images/demo.jpg, else the\n"
         "installed PREFIX/share/tipc/images/demo.jpg beside this tipc's bin/)", NULL, NULL},
        {"--batch-size", NULL, OPT_INT, &f.batch, NULL, 1, 4096, "N", "images per forward pass (default 1)", NULL, NULL},
        {"--max-batch-size", NULL, OPT_INT, &f.max_batch, NULL, 0, 4096, "N", "accepted for Step6's infer.py; not used", NULL, NULL},
        {"--use-gpu", NULL, OPT_BOOL, &f.use_gpu, NULL, 0, 0, "BOOL", "run on the CUDA device TIPC_DEVICE / LOCAL_RANK (default 0)", NULL, NULL},
        {"--device", NULL, OPT_STR, &f.device, NULL, 0, 0, "cpu|gpu", "the same as --use-gpu False|True (the other commands' spelling)", NULL, NULL},
        {"--cpu-threads", NULL, OPT_INT, &f.threads, NULL, 0, 1024, "T", "CPU threads (default: all cores)", NULL, NULL},
        {"--benchmark", NULL, OPT_BOOL, &f.benchmark, NULL, 0, 0, "BOOL", "print the AutoLog-style timing summary (Step6 infer.py --benchmark)", NULL, NULL},
        {"--resize-size", NULL, OPT_INT, &f.resize, NULL, 0, 4096, "N", "resize the short side to N first (default: crop x 256/224)", NULL, NULL},
        {"--crop-size", NULL, OPT_INT, &f.crop, NULL, 0, 2048, "N", "center crop; must be the model's input size (the default)", NULL, NULL},
        {"--warmup", NULL, OPT_INT, &f.warmup, NULL, 0, 1000000, "W", "untimed forward passes before timing (default 0)", NULL, NULL},
        {"--precision", NULL, OPT_STR, &f.precision, NULL, 0, 0, "fp32|bf16|fp16", "weights, input and every layer's output in this dtype, fp32\n"
         "accumulation (default fp32; the GPU runs 16-bit kernels with fp32 logits,\n"
         "the CPU op by op)", NULL, NULL},
        {"--top-k", NULL, OPT_INT, &f.topk, NULL, 1, 100000, "K", "classes listed per image (default 5)", NULL, NULL},
        {"--input-raw", NULL, OPT_STR, &f.in_raw, NULL, 0, 0, "F", "read float32 (N,3,R,R) normalised input from F instead of images, and", NULL, NULL},
        {"--output-raw", NULL, OPT_STR, &f.out_raw, NULL, 0, 0, "F", "write float32 probs (N,K) then logits (N,K) to F", NULL, NULL},
        ENGINE_SETTINGS_OPTS(eng),
        {0},
    };
    const struct opt_cmd cmd = {.name = "infer", .synopsis = "--model-dir DIR [options]", .about = about,
                                .opts = opts, .footer = footer};
    struct opt_result r;
    TRY(opt_parse(&cmd, argc, argv, NULL, &r));
    if (r.help) return TIPC_OK;
    if (!f.model_dir) {
        error_msg(TIPC_EUSAGE, "infer: --model-dir is required");
        return opt_usage_error(&cmd);
    }
    if (f.batch < 1 || f.batch > 4096 || f.warmup < 0 || f.threads < 0 || f.resize < 0 || f.crop < 0)
        return error_msg(TIPC_EUSAGE, "infer: batch size 1..4096, warmup, threads, sizes >= 0");
    if (!f.in_raw != !f.out_raw) return error_msg(TIPC_EUSAGE, "infer: --input-raw and --output-raw go together");
    if (f.device && strcmp(f.device, "cpu") && strcmp(f.device, "gpu"))
        return error_msg(TIPC_EUSAGE, "infer: --device '%s': expected cpu or gpu", f.device);
    if (f.device) f.use_gpu = !strcmp(f.device, "gpu");
    if (f.precision && !precision_parse(f.precision, &f.prec))
        return error_msg(TIPC_EUSAGE, "infer: --precision must be fp32, bf16 or fp16, not '%s'", f.precision);
    backend_cpu_fix_blas();
    backend_cpu_set_threads(f.threads);
    if (!f.threads) f.threads = omp_get_max_threads();
    struct backend be;
    enum tipc_status st = backend_open(&be, f.use_gpu ? "gpu" : "cpu", !f.benchmark, &eng);
    if (st == TIPC_ENOTBUILT && !f.device)   /* the backend's hint names --device; say this command's */
        error_hint("infer runs on the CPU with --use-gpu False");
    if (st == TIPC_OK && f.prec != PREC_FP32 && !backend_has_amp(&be)) {
        st = error_msg(TIPC_ENOTBUILT, "infer: --precision %s: the %s backend of this build has no mixed precision ops",
                       precision_name(f.prec), f.use_gpu ? "CUDA" : "CPU");
        backend_close(&be);
    }
    if (st) return st;
    char *image = f.img_path ? NULL : default_image();
    if (image) f.img_path = image;
    char *model_path = xasprintf("%s/inference.tipc", f.model_dir);
    st = f.in_raw ? run_raw(&f, model_path, be) : run_images(&f, model_path, be);
    free(model_path);
    free(image);
    backend_close(&be);
    if (fflush(stdout) && st == TIPC_OK) st = TIPC_EIO;
    return st;
}
