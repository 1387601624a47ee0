/* backend_cuda.c: the CUDA backend: its table (the kernels of ops/cuda; ctx = the struct
 * backend_ctx of ops/cuda/cuda_common.cuh), and its set-up. In builds without CUDA only
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

const struct backend_ops backend_cuda_ops = {
    .name = "cuda", .host_memory = false, .graphs = true,
    .alloc = cuda_alloc, .free = cuda_free, .zero = cuda_zero, .upload = cuda_upload, .download = cuda_download,
    .sync = cuda_sync,
    .conv2d_forward = conv2d_forward_cuda, .conv2d_backward = conv2d_backward_cuda,
    .batchnorm_forward = batchnorm_forward_cuda, .batchnorm_backward = batchnorm_backward_cuda,
    .batchnorm_act_forward = batchnorm_act_forward_cuda, .batchnorm_act_backward = batchnorm_act_backward_cuda,
    .act_forward = act_forward_cuda, .act_backward = act_backward_cuda,
    .bias_act_forward = bias_act_forward_cuda, .softmax_forward = softmax_forward_cuda,
    .normalize_u8 = normalize_u8_cuda, .add_forward = add_forward_cuda, .add_backward = add_backward_cuda,
    .scale_forward = scale_forward_cuda, .scale_backward = scale_backward_cuda,
    .avgpool_forward = avgpool_forward_cuda, .avgpool_backward = avgpool_backward_cuda,
    .linear_forward = linear_forward_cuda, .linear_backward = linear_backward_cuda,
    .dropout_forward = dropout_forward_cuda, .dropout_backward = dropout_backward_cuda,
    .xent_forward = xent_forward_cuda, .xent_backward = xent_backward_cuda,
    .sgd_step = sgd_step_cuda,
    .normalize_u8_dev = normalize_u8_dev_cuda, .xent_forward_dev = xent_forward_dev_cuda,
    .xent_backward_dev = xent_backward_dev_cuda, .dropout_forward_dev = dropout_forward_dev_cuda,
    .sgd_step_dev = sgd_step_dev_cuda, .stage_put = cuda_stage_put, .stage_release = cuda_stage_release,
    .amp_round = amp_round_cuda, .amp_scale = amp_scale_cuda, .amp_unscale_check = amp_unscale_check_cuda,
    .sgd_step_amp = sgd_step_amp_cuda, .amp_update = amp_update_cuda,
    /* its inference schedule (infer_cuda.c): fp32 walks the layers through the ops above, fp16 /
     * bf16 run on 16-bit activations; backend_graph_* replays either */
    .infer_forward = infer_forward_cuda, .infer_release = infer_release_cuda,
    .infer_precision = infer_precision_cuda,
};

enum tipc_status backend_cuda_init(struct backend *b, int device, const struct backend_settings *set)
{
    struct backend_ctx *cx;
    memset(b, 0, sizeof *b);
    enum tipc_status st = cuda_ctx_create(&cx, device, set->tf32, set->cudnn_find);
    if (st == TIPC_ENOTBUILT) error_hint("run on a machine with an NVIDIA GPU and driver, or use --device cpu");
    if (st != TIPC_OK) return st;
    b->ops = &backend_cuda_ops;
    b->ctx = cx;
    b->set = *set;
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
    if (!b->ops || !b->ops->graphs) return false;
    cuda_graph_begin(b->ctx);
    return true;
}
void backend_graph_end(struct backend *b)
{
    char why[256];
    if (b->ops && b->ops->graphs && !cuda_graph_end(b->ctx, 0, why, sizeof why))
        tipc_die_msg(TIPC_EINTERNAL, "tipc: error: CUDA Graph capture failed: %s", why);
}
void backend_graph_launch(struct backend *b) { backend_graph_launch_id(b, 0); }
bool backend_graph_end_id(struct backend *b, int id, char *why, size_t n)
{
    if (!b->ops || !b->ops->graphs) {
        snprintf(why, n, "the %s backend has no graphs", b->ops ? b->ops->name : "(none)");
        return false;
    }
    return cuda_graph_end(b->ctx, id, why, n);
}
void backend_graph_launch_id(struct backend *b, int id)
{
    if (b->ops && b->ops->graphs) cuda_graph_launch(b->ctx, id);
}
bool backend_graph_valid(const struct backend *b, int id)
{
    return b->ops && b->ops->graphs && cuda_graph_valid(b->ctx, id);
}

void *backend_stream(const struct backend *b)
{
    return b->ops == &backend_cuda_ops ? cuda_ctx_stream(b->ctx) : NULL;
}

void backend_cuda_describe(const struct backend *b, char *buf, size_t n)
{
    const struct backend_ctx *cx = b->ctx;
    int k = snprintf(buf, n, "cuda:%d (", backend_device_from_env());
    if (k < 0 || (size_t)k >= n) return;
    cuda_ctx_describe(cx, buf + k, n - (size_t)k);
    size_t len = strlen(buf);
    if (len + 1 < n) buf[len] = ')', buf[len + 1] = 0;
}

int backend_gpu_count(void)
{
    const char *why = NULL;
    return cuda_device_count(&why);
}

#else /* !TIPC_HAVE_CUDA */

int backend_gpu_count(void) { return 0; }

enum tipc_status backend_cuda_init(struct backend *b, int device, const struct backend_settings *set)
{
    (void)device, (void)set;
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
void *backend_stream(const struct backend *b)
{
    (void)b;
    return NULL;
}
bool backend_graph_end_id(struct backend *b, int id, char *why, size_t n)
{
    (void)b, (void)id;
    snprintf(why, n, "this tipc was built without CUDA");
    return false;
}
void backend_graph_launch_id(struct backend *b, int id) { (void)b, (void)id; }
bool backend_graph_valid(const struct backend *b, int id)
{
    (void)b, (void)id;
    return false;
}
void backend_cuda_describe(const struct backend *b, char *buf, size_t n)
{
    (void)b;
    snprintf(buf, n, "cuda (not built)");
}

#endif
