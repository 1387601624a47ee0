/* se.cu: the squeeze-excite channel scale, CUDA twin of ops/cpu/se.c, on (N, P = H*W, C)
 * activations. The gate gradient (a per-image channel reduction) uses one block per (32
 * channels, image): 8 lanes stride over the pixels and are added in shared memory in a fixed
 * order (deterministic, no atomics). Not here: SE's pooling (pool.cu) and 1x1 convs (linear.cu). */
#include "elementwise.cuh"

#define LANES 8

/* out[b, p, c] = x * g[b, c]; vec4 needs C % 4 == 0 (the four share an image and a row) */
struct scale_fwd {
    float *out;
    const float *x, *g;
    unsigned P, C;
    __device__ void one(unsigned i) const
    {
        unsigned c = i % C, b = i / (P * C);
        out[i] = x[i] * g[(size_t)b * C + c];
    }
    __device__ void vec4(unsigned j) const
    {
        unsigned i = j * 4, c = i % C, b = i / (P * C);
        float4 v = ld4(x, j), s = ld4(g + (size_t)b * C + c, 0);
        st4(out, j, make_float4(v.x * s.x, v.y * s.y, v.z * s.z, v.w * s.w));
    }
};

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
    bool vec = C % 4 == 0 && aligned16(out) && aligned16(x) && aligned16(g);
    ew_launch(cx, scale_fwd{out, x, g, (unsigned)P, (unsigned)C}, n, vec);
}

extern "C" void scale_backward_cuda(struct backend_ctx *cx, float *dx, float *dg, const float *dout, const float *x,
                                    const float *g, int N, int P, int C, int acc_x, int acc_g)
{
    if (N <= 0 || C <= 0) return;
    scale_backward_kernel<<<dim3((C + 31) / 32, N), dim3(32, LANES), 0, cx->stream>>>(dx, dg, dout, x, g, P, C, acc_x,
                                                                                    acc_g);
    LAUNCH_CHECK();
}
