/* sgd.cu: the momentum SGD update, one kernel over the whole contiguous parameter buffer, CUDA
 * twin of ops/cpu/sgd.c. */
#include "cuda_common.cuh"

/* g' = g + wd*p; m = mu*m + g'; p -= lr*m (PyTorch SGD, dampening 0, not Nesterov) */
__global__ void sgd_kernel(float *p, float *m, const float *g, size_t n, float lr, float mu, float wd)
{
    GRID_STRIDE(i, n) {
        float d = g[i] + wd * p[i];
        float v = mu * m[i] + d;
        m[i] = v;
        p[i] -= lr * v;
    }
}
extern "C" void sgd_step_cuda(struct backend_ctx *cx, float *p, float *m, const float *g, size_t n, float lr, float mu,
                              float wd)
{
    if (n) LAUNCH1(sgd_kernel, n, p, m, g, n, lr, mu, wd);
}
