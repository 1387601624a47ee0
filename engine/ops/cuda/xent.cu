/* xent.cu: softmax and softmax cross-entropy with label smoothing (PyTorch's CrossEntropyLoss,
 * mean over the batch), the CUDA twins of ops/cpu/xent.c with its numerics (exponentials and
 * sums in double). One block per row; per-row losses are added in row order by one thread, so
 * the loss is deterministic, and only that one double crosses to the host.
 * Not here: the SGD update (act.cu, with the other elementwise kernels). */
#include "cuda_common.cuh"

#define ROW_THREADS 256

/* Sum (op 0) or max (op 1) of v over the block; every thread gets the result. */
template <int OP> __device__ double block_reduce(double v)
{
    __shared__ double sh[ROW_THREADS];
    sh[threadIdx.x] = v;
    __syncthreads();
    for (int s = ROW_THREADS / 2; s > 0; s >>= 1) {
        if (threadIdx.x < s) sh[threadIdx.x] = OP ? fmax(sh[threadIdx.x], sh[threadIdx.x + s]) : sh[threadIdx.x] + sh[threadIdx.x + s];
        __syncthreads();
    }
    double r = sh[0];
    __syncthreads();
    return r;
}

/* Row statistics of z (K): max, sum exp(z - max), sum z. */
__device__ void row_stats(const float *z, int K, float *mx, double *s, double *sumz)
{
    float m = -INFINITY;
    for (int k = threadIdx.x; k < K; k += ROW_THREADS) m = fmaxf(m, z[k]);
    *mx = (float)block_reduce<1>((double)m);
    double e = 0, t = 0;
    for (int k = threadIdx.x; k < K; k += ROW_THREADS) {
        e += exp((double)z[k] - *mx);
        t += z[k];
    }
    *s = block_reduce<0>(e);
    *sumz = block_reduce<0>(t);
}

__global__ void softmax_kernel(float *out, const float *in, int K)
{
    const float *z = in + (size_t)blockIdx.x * K;
    float *p = out + (size_t)blockIdx.x * K;
    float mx;
    double s, sumz;
    row_stats(z, K, &mx, &s, &sumz);
    for (int k = threadIdx.x; k < K; k += ROW_THREADS) p[k] = (float)(exp((double)z[k] - mx) / s);
}

__global__ void xent_forward_kernel(float *probs, double *row_loss, const float *logits, const int32_t *labels, int K,
                                    float eps)
{
    int n = blockIdx.x;
    const float *z = logits + (size_t)n * K;
    float *p = probs + (size_t)n * K;
    float mx;
    double s, sumz;
    row_stats(z, K, &mx, &s, &sumz);
    double lse = mx + log(s);
    for (int k = threadIdx.x; k < K; k += ROW_THREADS) p[k] = (float)exp((double)z[k] - lse);
    if (threadIdx.x == 0) {
        double nll = lse - z[labels[n]], smooth = lse - sumz / K;
        row_loss[n] = (1.0 - eps) * nll + eps * smooth;
    }
}

__global__ void loss_sum_kernel(double *loss, const double *row_loss, int N)
{
    if (blockIdx.x || threadIdx.x) return;
    double t = 0;
    for (int n = 0; n < N; n++) t += row_loss[n];
    *loss = t / N;
}

__global__ void xent_backward_kernel(float *dlogits, const float *probs, const int32_t *labels, int N, int K, float eps)
{
    size_t total = (size_t)N * K;
    float inv = 1.0f / (float)N;
    GRID_STRIDE(i, total) {
        int k = (int)(i % (unsigned)K), n = (int)(i / (unsigned)K);
        float t = eps / (float)K + (k == labels[n] ? 1.0f - eps : 0.0f);
        dlogits[i] = (probs[i] - t) * inv;
    }
}

/* labels (host) -> the context's device copy */
static const int32_t *labels_to_device(struct backend_ctx *cx, const int32_t *labels, int N)
{
    if ((size_t)N > cx->label_cap) {
        CUDA_CHECK(cudaStreamSynchronize(cx->stream));
        CUDA_CHECK(cudaFree(cx->labels));
        cx->labels = NULL;
        CUDA_CHECK(cudaMalloc((void **)&cx->labels, sizeof(int32_t) * (size_t)N));
        cx->label_cap = (size_t)N;
    }
    CUDA_CHECK(cudaMemcpyAsync(cx->labels, labels, sizeof(int32_t) * (size_t)N, cudaMemcpyHostToDevice, cx->stream));
    return cx->labels;
}

extern "C" void softmax_forward_cuda(struct backend_ctx *cx, float *out, const float *in, int N, int K)
{
    if (N <= 0) return;
    softmax_kernel<<<N, ROW_THREADS, 0, cx->stream>>>(out, in, K);
    LAUNCH_CHECK();
}

extern "C" float xent_forward_cuda(struct backend_ctx *cx, float *probs, const float *logits, const int32_t *labels,
                                   int N, int K, float eps)
{
    CUDA_REQUIRE(N > 0 && K > 0, "empty batch");
    const int32_t *y = labels_to_device(cx, labels, N);
    double *rows = (double *)cuda_red(cx, sizeof(double) * (size_t)N);
    xent_forward_kernel<<<N, ROW_THREADS, 0, cx->stream>>>(probs, rows, logits, y, K, eps);
    LAUNCH_CHECK();
    loss_sum_kernel<<<1, 1, 0, cx->stream>>>(cx->loss, rows, N);
    LAUNCH_CHECK();
    double loss;
    CUDA_CHECK(cudaMemcpyAsync(&loss, cx->loss, sizeof loss, cudaMemcpyDeviceToHost, cx->stream));
    CUDA_CHECK(cudaStreamSynchronize(cx->stream));
    return (float)loss;
}

extern "C" void xent_backward_cuda(struct backend_ctx *cx, float *dlogits, const float *probs, const int32_t *labels,
                                   int N, int K, float eps)
{
    const int32_t *y = labels_to_device(cx, labels, N);
    size_t n = (size_t)N * K;
    xent_backward_kernel<<<grid_for(n, 256, cx), 256, 0, cx->stream>>>(dlogits, probs, y, N, K, eps);
    LAUNCH_CHECK();
}

/* ---- the staged step's loss (ops.h xent_forward_dev): labels already on the device, the mean
 * loss left on the device as a float (what xent_forward_cuda returns, rounded the same way) ---- */
__global__ void loss_sum_f32_kernel(float *loss, const double *row_loss, int N)
{
    if (blockIdx.x || threadIdx.x) return;
    double t = 0;
    for (int n = 0; n < N; n++) t += row_loss[n];
    *loss = (float)(t / N);
}

extern "C" void xent_forward_dev_cuda(struct backend_ctx *cx, float *probs, float *loss, const float *logits,
                                      const int32_t *labels, int N, int K, float eps)
{
    CUDA_REQUIRE(N > 0 && K > 0, "empty batch");
    double *rows = (double *)cuda_red(cx, sizeof(double) * (size_t)N);
    xent_forward_kernel<<<N, ROW_THREADS, 0, cx->stream>>>(probs, rows, logits, labels, K, eps);
    LAUNCH_CHECK();
    loss_sum_f32_kernel<<<1, 1, 0, cx->stream>>>(loss, rows, N);
    LAUNCH_CHECK();
}

/* xent_backward with the labels in device memory (the table's xent_backward_dev) */
extern "C" void xent_backward_dev_cuda(struct backend_ctx *cx, float *dlogits, const float *probs, const int32_t *labels,
                                       int N, int K, float eps)
{
    size_t n = (size_t)N * K;
    if (n) xent_backward_kernel<<<grid_for(n, 256, cx), 256, 0, cx->stream>>>(dlogits, probs, labels, N, K, eps);
    LAUNCH_CHECK();
}
