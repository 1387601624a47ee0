/* sgd.cu: the momentum SGD update, one kernel over the whole contiguous parameter buffer, CUDA
 * twin of ops/cpu/sgd.c; float4 when the buffers are 16-byte aligned (elementwise.cuh). */
#include "elementwise.cuh"

/* g' = g + wd*p; m = mu*m + g'; p -= lr*m (PyTorch SGD, dampening 0, not Nesterov) */
struct sgd_fn {
    float *p, *m;
    const float *g;
    float lr, mu, wd;
    __device__ float upd(float &pp, float &mm, float gg) const
    {
        float d = gg + wd * pp;
        mm = mu * mm + d;
        pp -= lr * mm;
        return pp;
    }
    __device__ void one(unsigned i) const
    {
        float pp = p[i], mm = m[i];
        upd(pp, mm, g[i]);
        p[i] = pp, m[i] = mm;
    }
    __device__ void vec4(unsigned j) const
    {
        float4 pp = ld4(p, j), mm = ld4(m, j), gg = ld4(g, j);
        upd(pp.x, mm.x, gg.x), upd(pp.y, mm.y, gg.y), upd(pp.z, mm.z, gg.z), upd(pp.w, mm.w, gg.w);
        st4(p, j, pp);
        st4(m, j, mm);
    }
};

extern "C" void sgd_step_cuda(struct backend_ctx *cx, float *p, float *m, const float *g, size_t n, float lr, float mu,
                              float wd)
{
    ew_launch(cx, sgd_fn{p, m, g, lr, mu, wd}, n, aligned16(p) && aligned16(m) && aligned16(g));
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
