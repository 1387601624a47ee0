/* se.cu: the squeeze-excite channel scale, CUDA twin of ops/cpu/se.c, on (N, P = H*W, C)
 * activations. The gate gradient (a per-image channel reduction) uses one block per (32
 * channels, image): 8 lanes stride over the pixels and are added in shared memory in a fixed
 * order (deterministic, no atomics). Not here: SE's pooling (pool.cu) and 1x1 convs (linear.cu). */
#include "cuda_common.cuh"

#define LANES 8

__global__ void scale_forward_kernel(float *out, const float *x, const float *g, size_t n, int P, int C)
{
    GRID_STRIDE(i, n) {
        unsigned c = i % (unsigned)C, b = i / ((unsigned)P * (unsigned)C);
        out[i] = x[i] * g[(size_t)b * C + c];
    }
}

/* grid (C tiles, N), block (32, LANES): dg[b, c] (+)= sum_p dout*x; dx = dout*g[b, c] (or +=) */
__global__ void scale_backward_kernel(float *dx, float *dg, const float *dout, const float *x, const float *g, int P,
                                      int C, int acc_x, int acc_g)
{
    __shared__ float sh[LANES][32];
    int c = blockIdx.x * 32 + threadIdx.x, b = blockIdx.y;
    float s = 0.0f;
    if (c < C) {
        float gc = g[(size_t)b * C + c];
        for (int p = threadIdx.y; p < P; p += LANES) {
            size_t o = ((size_t)b * P + p) * C + c;
            float d = dout[o];
            s += d * x[o];
            if (dx) dx[o] = acc_x ? dx[o] + d * gc : d * gc;
        }
    }
    sh[threadIdx.y][threadIdx.x] = s;
    __syncthreads();
    if (threadIdx.y == 0 && c < C) {
        for (int l = 1; l < LANES; l++) s += sh[l][threadIdx.x];
        float *o = dg + (size_t)b * C + c;
        *o = acc_g ? *o + s : s;
    }
}

extern "C" void scale_forward_cuda(struct backend_ctx *cx, float *out, const float *x, const float *g, int N, int P, int C)
{
    size_t n = (size_t)N * P * C;
    if (!n) return;
    scale_forward_kernel<<<grid_for(n, 256, cx), 256, 0, cx->stream>>>(out, x, g, n, P, C);
    LAUNCH_CHECK();
}

extern "C" void scale_backward_cuda(struct backend_ctx *cx, float *dx, float *dg, const float *dout, const float *x,
                                    const float *g, int N, int P, int C, int acc_x, int acc_g)
{
    if (N <= 0 || C <= 0) return;
    scale_backward_kernel<<<dim3((C + 31) / 32, N), dim3(32, LANES), 0, cx->stream>>>(dx, dg, dout, x, g, P, C, acc_x,
                                                                                    acc_g);
    LAUNCH_CHECK();
}
