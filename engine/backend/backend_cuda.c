/* backend_cuda.c: the CUDA backend: struct backend_ops entries that forward to the kernels in
 * ops/cuda (ctx = struct cuda_ctx), and its set-up. In builds without CUDA only
 * backend_cuda_init() exists, returning TIPC_ENOTBUILT with what to do. Not here: the kernels. */
#include <stdio.h>
#include <string.h>

#include "backend.h"
#include "../../core/check.h"
#ifdef TIPC_HAVE_CUDA
#include "../ops/cuda/ops_cuda.h"
#endif
#include "../../core/banned.h"

#ifdef TIPC_HAVE_CUDA

#define CX ((struct cuda_ctx *)ctx)

static float *cu_alloc(void *ctx, size_t n) { return cuda_alloc(CX, n); }
static void cu_free(void *ctx, float *p) { cuda_free(CX, p); }
static void cu_zero(void *ctx, float *p, size_t n) { cuda_zero(CX, p, n); }
static void cu_upload(void *ctx, float *dst, const float *host, size_t n) { cuda_upload(CX, dst, host, n); }
static void cu_download(void *ctx, float *host, const float *src, size_t n) { cuda_download(CX, host, src, n); }
static void cu_sync(void *ctx) { cuda_sync(CX); }

/* the CPU's scratch is not used: the CUDA ops take their workspace from the context */
static void cu_conv2d_forward(void *ctx, float *out, const float *in, const float *w, const struct conv2d_desc *d,
                              float *scratch)
{
    (void)scratch;
    conv2d_forward_cuda(CX, out, in, w, d);
}
static void cu_conv2d_backward(void *ctx, float *din, float *dw, const float *dout, const float *in, const float *w,
                               const struct conv2d_desc *d, float *scratch, int acc)
{
    (void)scratch;
    conv2d_backward_cuda(CX, din, dw, dout, in, w, d, acc);
}
static void cu_bn_forward(void *ctx, float *out, float *sm, float *sr, const float *in, const float *g, const float *b,
                          float *rm, float *rv, const struct bn_desc *d)
{
    batchnorm_forward_cuda(CX, out, sm, sr, in, g, b, rm, rv, d);
}
static void cu_bn_backward(void *ctx, float *din, float *dg, float *db, const float *dout, const float *in,
                           const float *sm, const float *sr, const float *g, const float *rv, const struct bn_desc *d,
                           int acc)
{
    batchnorm_backward_cuda(CX, din, dg, db, dout, in, sm, sr, g, rv, d, acc);
}
static void cu_act_forward(void *ctx, float *out, const float *in, size_t n, enum act_kind k)
{
    act_forward_cuda(CX, out, in, n, k);
}
static void cu_act_backward(void *ctx, float *din, const float *dout, const float *in, size_t n, enum act_kind k,
                            int acc)
{
    act_backward_cuda(CX, din, dout, in, n, k, acc);
}
static void cu_bias_act(void *ctx, float *y, const float *b, size_t M, int C, enum act_kind k)
{
    bias_act_forward_cuda(CX, y, b, M, C, k);
}
static void cu_softmax(void *ctx, float *out, const float *in, int N, int K) { softmax_forward_cuda(CX, out, in, N, K); }
static void cu_normalize(void *ctx, float *out, const uint8_t *img, size_t npix)
{
    normalize_u8_cuda(CX, out, img, npix);
}
static void cu_add_forward(void *ctx, float *out, const float *a, const float *b, size_t n)
{
    add_forward_cuda(CX, out, a, b, n);
}
static void cu_add_backward(void *ctx, float *da, float *db, const float *dout, size_t n, int aa, int ab)
{
    add_backward_cuda(CX, da, db, dout, n, aa, ab);
}
static void cu_scale_forward(void *ctx, float *out, const float *x, const float *g, int N, int P, int C)
{
    scale_forward_cuda(CX, out, x, g, N, P, C);
}
static void cu_scale_backward(void *ctx, float *dx, float *dg, const float *dout, const float *x, const float *g,
                              int N, int P, int C, int ax, int ag)
{
    scale_backward_cuda(CX, dx, dg, dout, x, g, N, P, C, ax, ag);
}
static void cu_pool_forward(void *ctx, float *out, const float *in, int N, int P, int C)
{
    avgpool_forward_cuda(CX, out, in, N, P, C);
}
static void cu_pool_backward(void *ctx, float *din, const float *dout, int N, int P, int C, int acc)
{
    avgpool_backward_cuda(CX, din, dout, N, P, C, acc);
}
static void cu_linear_forward(void *ctx, float *out, const float *in, const float *w, const float *b, int N, int Ci,
                              int Co)
{
    linear_forward_cuda(CX, out, in, w, b, N, Ci, Co);
}
static void cu_linear_backward(void *ctx, float *din, float *dw, float *db, const float *dout, const float *in,
                               const float *w, int N, int Ci, int Co, int acc)
{
    linear_backward_cuda(CX, din, dw, db, dout, in, w, N, Ci, Co, acc);
}
static void cu_dropout_forward(void *ctx, float *out, float *mask, const float *in, size_t n, float p, uint64_t seed)
{
    dropout_forward_cuda(CX, out, mask, in, n, p, seed);
}
static void cu_dropout_backward(void *ctx, float *din, const float *dout, const float *mask, size_t n, int acc)
{
    dropout_backward_cuda(CX, din, dout, mask, n, acc);
}
static float cu_xent_forward(void *ctx, float *probs, const float *logits, const int32_t *labels, int N, int K,
                             float eps)
{
    return xent_forward_cuda(CX, probs, logits, labels, N, K, eps);
}
static void cu_xent_backward(void *ctx, float *dl, const float *probs, const int32_t *labels, int N, int K, float eps)
{
    xent_backward_cuda(CX, dl, probs, labels, N, K, eps);
}
static void cu_sgd(void *ctx, float *p, float *m, const float *g, size_t n, float lr, float mu, float wd)
{
    sgd_step_cuda(CX, p, m, g, n, lr, mu, wd);
}

const struct backend_ops backend_cuda_ops = {
    .name = "cuda",
    .alloc = cu_alloc, .free = cu_free, .zero = cu_zero, .upload = cu_upload, .download = cu_download,
    .sync = cu_sync,
    .conv2d_forward = cu_conv2d_forward, .conv2d_backward = cu_conv2d_backward,
    .batchnorm_forward = cu_bn_forward, .batchnorm_backward = cu_bn_backward,
    .act_forward = cu_act_forward, .act_backward = cu_act_backward,
    .bias_act_forward = cu_bias_act, .softmax_forward = cu_softmax,
    .normalize_u8 = cu_normalize, .add_forward = cu_add_forward, .add_backward = cu_add_backward,
    .scale_forward = cu_scale_forward, .scale_backward = cu_scale_backward,
    .avgpool_forward = cu_pool_forward, .avgpool_backward = cu_pool_backward,
    .linear_forward = cu_linear_forward, .linear_backward = cu_linear_backward,
    .dropout_forward = cu_dropout_forward, .dropout_backward = cu_dropout_backward,
    .xent_forward = cu_xent_forward, .xent_backward = cu_xent_backward,
    .sgd_step = cu_sgd,
};

enum tipc_status backend_cuda_init(struct backend *b, int device)
{
    struct cuda_ctx *cx;
    memset(b, 0, sizeof *b);
    enum tipc_status st = cuda_ctx_create(&cx, device);
    if (st == TIPC_ENOTBUILT) error_hint("run on a machine with an NVIDIA GPU and driver, or use --device cpu");
    if (st != TIPC_OK) return st;
    b->ops = &backend_cuda_ops;
    b->ctx = cx;
    return TIPC_OK;
}

void backend_cuda_free(struct backend *b)
{
    if (!b) return;
    cuda_ctx_free(b->ctx);
    b->ctx = NULL;
}

bool backend_graph_begin(struct backend *b)
{
    if (backend_is_cpu(b)) return false;
    cuda_graph_begin(b->ctx);
    return true;
}
void backend_graph_end(struct backend *b)
{
    if (!backend_is_cpu(b)) cuda_graph_end(b->ctx);
}
void backend_graph_launch(struct backend *b)
{
    if (!backend_is_cpu(b)) cuda_graph_launch(b->ctx);
}

void backend_cuda_describe(const struct backend *b, char *buf, size_t n)
{
    const struct cuda_ctx *cx = b->ctx;
    int k = snprintf(buf, n, "cuda:%d (", backend_device_from_env());
    if (k < 0 || (size_t)k >= n) return;
    cuda_ctx_describe(cx, buf + k, n - (size_t)k);
    size_t len = strlen(buf);
    if (len + 1 < n) buf[len] = ')', buf[len + 1] = 0;
}

#else /* !TIPC_HAVE_CUDA */

enum tipc_status backend_cuda_init(struct backend *b, int device)
{
    (void)device;
    memset(b, 0, sizeof *b);
    error_msg(TIPC_ENOTBUILT, "device 'gpu': this tipc was built without CUDA");
    error_hint("rebuild with USE_CUDA=1 (needs nvcc, cuDNN and NCCL; see `make features`), or use --device cpu");
    return TIPC_ENOTBUILT;
}
void backend_cuda_free(struct backend *b) { (void)b; }
bool backend_graph_begin(struct backend *b)
{
    (void)b;
    return false;
}
void backend_graph_end(struct backend *b) { (void)b; }
void backend_graph_launch(struct backend *b) { (void)b; }
void backend_cuda_describe(const struct backend *b, char *buf, size_t n)
{
    (void)b;
    snprintf(buf, n, "cuda (not built)");
}

#endif
