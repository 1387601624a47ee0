/* normalize.cu: uint8 host pixels to normalised floats on the device, CUDA twin of
 * ops/cpu/normalize.c (bit-identical rounding). */
#include <string.h>

#include "elementwise.cuh"

/* (x/255 - mean) / std with ImageNet statistics for channel c = i % 3; __fmul_rn/__fsub_rn/
 * __fdiv_rn keep the CPU's rounding (no FMA contraction), so the input matches the CPU's bit
 * for bit. */
__device__ __forceinline__ float norm_px(uint8_t v, unsigned i)
{
    unsigned c = i % 3;
    float mean = c == 0 ? 0.485f : (c == 1 ? 0.456f : 0.406f);
    float sd = c == 0 ? 0.229f : (c == 1 ? 0.224f : 0.225f);
    return __fdiv_rn(__fsub_rn(__fmul_rn((float)v, 1.0f / 255.0f), mean), sd);
}
/* four bytes in (one 32-bit load), four floats out (one 16-byte store) */
struct normalize_fn {
    float *out;
    const uint8_t *in;
    __device__ void one(unsigned i) const { out[i] = norm_px(in[i], i); }
    __device__ void vec4(unsigned j) const
    {
        uchar4 v = reinterpret_cast<const uchar4 *>(in)[j];
        unsigned i = j * 4;
        st4(out, j, make_float4(norm_px(v.x, i), norm_px(v.y, i + 1), norm_px(v.z, i + 2), norm_px(v.w, i + 3)));
    }
};
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
    ew_launch(cx, normalize_fn{out, cx->img}, n, aligned16(out)); /* cx->img: cudaMalloc'd, aligned */
}

/* The staged step's normalisation (model/train_graph.c): the uint8 batch is already in device
 * memory (copied there on the side stream before the step), so this is one kernel and can be
 * captured. */
extern "C" void normalize_u8_dev_cuda(struct backend_ctx *cx, float *out, const uint8_t *dev_images, size_t npix)
{
    size_t n = npix * 3;
    ew_launch(cx, normalize_fn{out, dev_images}, n, aligned16(out) && aligned16(dev_images));
}
