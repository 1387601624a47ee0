/* pool.cu: global average pooling (N, P = H*W, C) -> (N, C), CUDA twin of ops/cpu/pool.c. The
 * forward reduction uses one block per (32 channels, image): 8 lanes stride over the pixels and
 * are added in shared memory in a fixed order (deterministic, no atomics). */
#include "cuda_common.cuh"

#define LANES 8

/* grid (C tiles, N), block (32, LANES): out[b, c] = mean_p in */
__global__ void avgpool_forward_kernel(float *out, const float *in, int P, int C)
{
    __shared__ float sh[LANES][32];
    int c = blockIdx.x * 32 + threadIdx.x, b = blockIdx.y;
    float s = 0.0f;
    if (c < C)
        for (int p = threadIdx.y; p < P; p += LANES) s += in[((size_t)b * P + p) * C + c];
    sh[threadIdx.y][threadIdx.x] = s;
    __syncthreads();
    if (threadIdx.y == 0 && c < C) {
        for (int l = 1; l < LANES; l++) s += sh[l][threadIdx.x];
        out[(size_t)b * C + c] = s * (1.0f / (float)P);
    }
}

__global__ void avgpool_backward_kernel(float *din, const float *dout, size_t n, int P, int C, int acc)
{
    GRID_STRIDE(i, n) {
        unsigned c = i % (unsigned)C, b = i / ((unsigned)P * (unsigned)C);
        float v = dout[(size_t)b * C + c] * (1.0f / (float)P);
        din[i] = acc ? din[i] + v : v;
    }
}

extern "C" void avgpool_forward_cuda(struct backend_ctx *cx, float *out, const float *in, int N, int P, int C)
{
    if (N <= 0 || C <= 0) return;
    avgpool_forward_kernel<<<dim3((C + 31) / 32, N), dim3(32, LANES), 0, cx->stream>>>(out, in, P, C);
    LAUNCH_CHECK();
}

extern "C" void avgpool_backward_cuda(struct backend_ctx *cx, float *din, const float *dout, int N, int P, int C, int acc)
{
    size_t n = (size_t)N * P * C;
    if (!n || !din) return;
    avgpool_backward_kernel<<<grid_for(n, 256, cx), 256, 0, cx->stream>>>(din, dout, n, P, C, acc);
    LAUNCH_CHECK();
}
