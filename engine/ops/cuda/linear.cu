/* linear.cu: fully connected layer y = x W^T + b through cuBLAS, the CUDA twin of
 * ops/cpu/linear.c (also the 1x1 convs of squeeze-excite on pooled (N, C) vectors).
 * Not here: the GEMM helper (ctx.cu's gemm_cuda, row-major like gemm_cpu). */
#include "cuda_common.cuh"

__global__ void add_bias_kernel(float *out, const float *b, size_t n, int Co)
{
    GRID_STRIDE(i, n) out[i] += b[i % (unsigned)Co];
}

/* db[o] += sum_n dout[n, o], rows added in order (deterministic) */
__global__ void bias_grad_kernel(float *db, const float *dout, int N, int Co)
{
    for (int o = blockIdx.x * blockDim.x + threadIdx.x; o < Co; o += gridDim.x * blockDim.x) {
        float s = 0.0f;
        for (int n = 0; n < N; n++) s += dout[(size_t)n * Co + o];
        db[o] += s;
    }
}

extern "C" void linear_forward_cuda(struct backend_ctx *cx, float *out, const float *in, const float *w, const float *b,
                                    int N, int Ci, int Co)
{
    /* out (N, Co) = in (N, Ci) . w^T (Ci, Co) */
    gemm_cuda(cx, 0, 1, N, Co, Ci, in, Ci, w, Ci, 0.0f, out, Co);
    if (!b) return;
    size_t n = (size_t)N * Co;
    add_bias_kernel<<<grid_for(n, 256, cx), 256, 0, cx->stream>>>(out, b, n, Co);
    LAUNCH_CHECK();
}

extern "C" void linear_backward_cuda(struct backend_ctx *cx, float *din, float *dw, float *db, const float *dout,
                                     const float *in, const float *w, int N, int Ci, int Co, int acc)
{
    /* dw (Co, Ci) += dout^T (Co, N) . in (N, Ci) */
    gemm_cuda(cx, 1, 0, Co, Ci, N, dout, Co, in, Ci, 1.0f, dw, Ci);
    if (db) {
        bias_grad_kernel<<<(Co + 255) / 256, 256, 0, cx->stream>>>(db, dout, N, Co);
        LAUNCH_CHECK();
    }
    /* din (N, Ci) (+)= dout (N, Co) . w (Co, Ci) */
    if (din) gemm_cuda(cx, 0, 0, N, Ci, Co, dout, Co, w, Ci, acc ? 1.0f : 0.0f, din, Ci);
}
