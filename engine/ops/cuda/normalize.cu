/* normalize.cu: uint8 host pixels to normalised floats on the device, CUDA twin of
 * ops/cpu/normalize.c (bit-identical rounding). */
#include <string.h>

#include "cuda_common.cuh"

/* (x/255 - mean) / std with ImageNet statistics; __fmul_rn/__fsub_rn/__fdiv_rn keep the CPU's
 * rounding (no FMA contraction), so the input matches the CPU's bit for bit. */
__global__ void normalize_u8_kernel(float *out, const uint8_t *in, size_t n)
{
    GRID_STRIDE(i, n) {
        int c = (int)(i % 3);
        float mean = c == 0 ? 0.485f : (c == 1 ? 0.456f : 0.406f);
        float sd = c == 0 ? 0.229f : (c == 1 ? 0.224f : 0.225f);
        out[i] = __fdiv_rn(__fsub_rn(__fmul_rn((float)in[i], 1.0f / 255.0f), mean), sd);
    }
}
/* The batch goes through a pinned buffer: a copy from pageable memory would first wait for all the
 * queued work of the stream; this waits only until the previous batch's upload has read the
 * buffer (the event), so the host can stage the next batch while the GPU computes. */
extern "C" void normalize_u8_cuda(struct backend_ctx *cx, float *out, const uint8_t *host_images, size_t npix)
{
    size_t n = npix * 3;
    if (!n) return;
    if (n > cx->img_bytes) {
        CUDA_CHECK(cudaStreamSynchronize(cx->stream));
        CUDA_CHECK(cudaFree(cx->img));
        CUDA_CHECK(cudaFreeHost(cx->img_host));
        cx->img = NULL, cx->img_host = NULL, cx->img_bytes = 0;
        CUDA_CHECK(cudaMalloc((void **)&cx->img, n));
        CUDA_CHECK(cudaMallocHost((void **)&cx->img_host, n));
        cx->img_bytes = n;
    }
    CUDA_CHECK(cudaEventSynchronize(cx->img_read));
    memcpy(cx->img_host, host_images, n);
    CUDA_CHECK(cudaMemcpyAsync(cx->img, cx->img_host, n, cudaMemcpyHostToDevice, cx->stream));
    CUDA_CHECK(cudaEventRecord(cx->img_read, cx->stream));
    LAUNCH1(normalize_u8_kernel, n, out, cx->img, n);
}

/* The staged step's normalisation (model/train_graph.c): the uint8 batch is already in device
 * memory (copied there on the side stream before the step), so this is one kernel and can be
 * captured. */
extern "C" void normalize_u8_dev_cuda(struct backend_ctx *cx, float *out, const uint8_t *dev_images, size_t npix)
{
    size_t n = npix * 3;
    if (n) LAUNCH1(normalize_u8_kernel, n, out, dev_images, n);
}
