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

/* the staged step's update (ops.h sgd_step_dev): lr read from device memory; a non-finite loss
 * leaves p and m as they are (every thread reads the same value, so the whole grid skips) */
__global__ void sgd_dev_kernel(float *p, float *m, const float *g, size_t n, const float *lr, float mu, float wd,
                               const float *loss)
{
    if (!isfinite(*loss)) return;
    float r = *lr;
    GRID_STRIDE(i, n) {
        float d = g[i] + wd * p[i];
        float v = mu * m[i] + d;
        m[i] = v;
        p[i] -= r * v;
    }
}
extern "C" void sgd_step_dev_cuda(struct backend_ctx *cx, float *p, float *m, const float *g, size_t n, const float *lr,
                                  float mu, float wd, const float *loss)
{
    if (n) LAUNCH1(sgd_dev_kernel, n, p, m, g, n, lr, mu, wd, loss);
}
