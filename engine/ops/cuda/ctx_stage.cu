/* ctx_stage.cu: the staged training step's two input slots (backend.h stage_put / stage_release,
 * used by model/train_graph.c). Each slot is a block of device memory the step reads (the
 * per-step scalars, the labels, the uint8 images) with a pinned host twin. A step's inputs go
 * host -> twin (memcpy) -> device (one copy on copy_stream, a side stream), ordered by events:
 *
 *   host       waits for stage_copied[k]: slot k's previous copy has read the twin
 *   copy       waits for stage_read[k]: the step that last read slot k's block has finished
 *   compute    waits for stage_copied[k] before the step (a captured graph's launch included)
 *
 * so the upload of one slot overlaps the step running on the other, and the host never waits
 * for the compute stream itself. Events never recorded are complete, so the first uses wait for
 * nothing. Not here: what the slots hold (train_graph.c), the context (ctx.cu). */
#include <string.h>

#include "cuda_common.cuh"
extern "C" {
#include "../../backend/backend.h"
}

static void stage_init(struct backend_ctx *cx)
{
    if (cx->copy_stream) return;
    CUDA_CHECK(cudaStreamCreateWithFlags(&cx->copy_stream, cudaStreamNonBlocking));
    for (int k = 0; k < 2; k++) {
        CUDA_CHECK(cudaEventCreateWithFlags(&cx->stage_copied[k], cudaEventDisableTiming));
        CUDA_CHECK(cudaEventCreateWithFlags(&cx->stage_read[k], cudaEventDisableTiming));
    }
}

extern "C" void cuda_stage_put(struct backend_ctx *cx, int k, void *dst, const struct stage_part *parts, int nparts)
{
    CUDA_REQUIRE(k == 0 || k == 1, "stage slot out of range");
    stage_init(cx);
    size_t end = 0;
    for (int i = 0; i < nparts; i++)
        if (parts[i].off + parts[i].bytes > end) end = parts[i].off + parts[i].bytes;
    if (!end) return;
    CUDA_CHECK(cudaEventSynchronize(cx->stage_copied[k]));
    if (end > cx->stage_host_bytes[k]) {
        CUDA_CHECK(cudaFreeHost(cx->stage_host[k]));
        cx->stage_host[k] = NULL;
        CUDA_CHECK(cudaMallocHost((void **)&cx->stage_host[k], end));
        cx->stage_host_bytes[k] = end;
    }
    for (int i = 0; i < nparts; i++) memcpy(cx->stage_host[k] + parts[i].off, parts[i].src, parts[i].bytes);
    CUDA_CHECK(cudaStreamWaitEvent(cx->copy_stream, cx->stage_read[k], 0));
    CUDA_CHECK(cudaMemcpyAsync(dst, cx->stage_host[k], end, cudaMemcpyHostToDevice, cx->copy_stream));
    CUDA_CHECK(cudaEventRecord(cx->stage_copied[k], cx->copy_stream));
    CUDA_CHECK(cudaStreamWaitEvent(cx->stream, cx->stage_copied[k], 0));
}

extern "C" void cuda_stage_release(struct backend_ctx *cx, int k)
{
    CUDA_REQUIRE(k == 0 || k == 1, "stage slot out of range");
    stage_init(cx);
    CUDA_CHECK(cudaEventRecord(cx->stage_read[k], cx->stream));
}

extern "C" void cuda_stage_free(struct backend_ctx *cx)
{
    if (!cx->copy_stream) return;
    cudaStreamSynchronize(cx->copy_stream);
    for (int k = 0; k < 2; k++) {
        cudaFreeHost(cx->stage_host[k]);
        cudaEventDestroy(cx->stage_copied[k]);
        cudaEventDestroy(cx->stage_read[k]);
    }
    cudaStreamDestroy(cx->copy_stream);
    cx->copy_stream = NULL;
}
