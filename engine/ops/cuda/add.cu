/* add.cu: the residual add, CUDA twin of ops/cpu/add.c. */
#include "cuda_common.cuh"

__global__ void add_forward_kernel(float *out, const float *a, const float *b, size_t n)
{
    GRID_STRIDE(i, n) out[i] = a[i] + b[i];
}
__global__ void add_backward_kernel(float *da, float *db, const float *dout, size_t n, int acc_a, int acc_b)
{
    GRID_STRIDE(i, n) {
        float g = dout[i];
        da[i] = acc_a ? da[i] + g : g;
        db[i] = acc_b ? db[i] + g : g;
    }
}
extern "C" void add_forward_cuda(struct backend_ctx *cx, float *out, const float *a, const float *b, size_t n)
{
    if (n) LAUNCH1(add_forward_kernel, n, out, a, b, n);
}
extern "C" void add_backward_cuda(struct backend_ctx *cx, float *da, float *db, const float *dout, size_t n, int acc_a,
                                  int acc_b)
{
    if (n) LAUNCH1(add_backward_kernel, n, da, db, dout, n, acc_a, acc_b);
}
