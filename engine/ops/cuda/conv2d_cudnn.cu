/* conv2d_cudnn.cu: the general grouped convolution (the stem, grouped convs, depthwise kernels our
 * own kernels do not cover) through cuDNN's convolution API on NHWC tensors. Per shape, one plan:
 * descriptors plus the forward / backward-data / backward-filter algorithms, picked once
 * (cudnnGet_v7 heuristics, so a seed repeats bit for bit; TIPC_CUDNN_FIND=1 times them with
 * cudnnFind, which may pick differently from run to run) and cached in the context.
 * Backward algorithms are deterministic ones (no atomics) when cuDNN offers one, with a warning
 * when it does not. Without TIPC_CUDA_TF32=1 algorithms run with FMA math (true fp32, no TF32
 * tensor cores), so results match the CPU reference; a warning says when that is impossible.
 * Weights stay in PyTorch's (Cout, Cin/g, K, K) layout; cuDNN's NHWC filter is (Cout, K, K,
 * Cin/g), so they are transposed into the workspace per call (the stem's is 432 floats). Not here: pointwise (cuBLAS) and
 * depthwise (own kernels) paths, conv2d.cu.
 * Reduced precision (conv2d_forward_cudnn_lp, inference only): fp16 / bf16 tensors and filter with
 * an fp32 convolution (cuDNN's PSEUDO_HALF / PSEUDO_BFLOAT16 configurations: fp32 accumulation),
 * tensor-core math allowed, planned and cached per (shape, precision). */
#include <string.h>

#include "cuda_common.cuh"
#include "conv2d_cudnn.h"
extern "C" {
#include "../../../core/check.h"
}

#define WS_LIMIT ((size_t)1 << 30) /* never pick an algorithm needing more than 1 GiB of workspace */

/* Element i of a (Cout, Cg, KK) weight tensor, at its place in (Cout, KK, Cg) */
__device__ __forceinline__ unsigned krsc_index(unsigned i, int Cg, int KK)
{
    unsigned k = i % (unsigned)KK, r = i / (unsigned)KK;
    unsigned ci = r % (unsigned)Cg, co = r / (unsigned)Cg;
    return (co * KK + k) * Cg + ci;
}
/* dst (Cout, KK, Cg) = src (Cout, Cg, KK) */
__global__ void kcrs_to_krsc_kernel(float *dst, const float *src, int Cout, int Cg, int KK)
{
    size_t n = (size_t)Cout * Cg * KK;
    GRID_STRIDE(i, n) dst[krsc_index(i, Cg, KK)] = src[i];
}
/* dw (Cout, Cg, KK) += dwt (Cout, KK, Cg) */
__global__ void krsc_add_to_kcrs_kernel(float *dw, const float *dwt, int Cout, int Cg, int KK)
{
    size_t n = (size_t)Cout * Cg * KK;
    GRID_STRIDE(i, n) dw[i] += dwt[krsc_index(i, Cg, KK)];
}

/* The first usable result (results come fastest first): success, workspace within the limit,
 * and a workspace query that accepts it under the math type we run it with. Passes: 0 FMA math
 * (true fp32; any math with TF32 allowed) and deterministic when `det`; 1 FMA math, any
 * determinism; 2 the result's own math type (may be TF32), with a warning. *math and *ws get
 * the choice; -1 if none. ws(algo, &bytes) queries the workspace with the descriptor's math set. */
template <typename Perf, typename WsFn>
static int choose(struct backend_ctx *cx, struct conv_plan *pl, const Perf *p, int n, int det, WsFn ws,
                  cudnnMathType_t *math, size_t *bytes)
{
    for (int pass = 0; pass < 3; pass++)
        for (int i = 0; i < n; i++) {
            if (p[i].status != CUDNN_STATUS_SUCCESS || p[i].memory > WS_LIMIT) continue;
            if (pass == 0 && det && p[i].determinism != CUDNN_DETERMINISTIC) continue;
            /* 16-bit tensors: the algorithm's own math (tensor cores; the accumulation stays fp32) */
            *math = cx->tf32 || pass == 2 || pl->lp != PREC_FP32 ? p[i].mathType : CUDNN_FMA_MATH;
            CUDNN_CHECK(cudnnSetConvolutionMathType(pl->conv, *math));
            if (ws(p[i].algo, bytes) != CUDNN_STATUS_SUCCESS || *bytes > WS_LIMIT) continue;
            if (pass > 0)
                warning_msg("cuDNN: no %s algorithm for a %dx%d conv %d->%d (groups %d); using algorithm %d",
                            pass == 1 ? "deterministic" : "fp32-exact (FMA)", pl->d.K, pl->d.K, pl->d.Cin,
                            pl->d.Cout, pl->d.groups, (int)p[i].algo);
            return i;
        }
    return -1;
}

static void plan_init(struct backend_ctx *cx, struct conv_plan *pl, const struct conv2d_desc *d, enum precision lp)
{
    memset(pl, 0, sizeof *pl);
    pl->d = *d;
    pl->lp = lp;
    cudnnDataType_t t = lp == PREC_FP16 ? CUDNN_DATA_HALF : lp == PREC_BF16 ? CUDNN_DATA_BFLOAT16 : CUDNN_DATA_FLOAT;
    CUDNN_CHECK(cudnnCreateTensorDescriptor(&pl->x));
    CUDNN_CHECK(cudnnCreateTensorDescriptor(&pl->y));
    CUDNN_CHECK(cudnnCreateFilterDescriptor(&pl->w));
    CUDNN_CHECK(cudnnCreateConvolutionDescriptor(&pl->conv));
    CUDNN_CHECK(cudnnSetTensor4dDescriptor(pl->x, CUDNN_TENSOR_NHWC, t, d->N, d->Cin, d->H, d->W));
    CUDNN_CHECK(cudnnSetTensor4dDescriptor(pl->y, CUDNN_TENSOR_NHWC, t, d->N, d->Cout, d->Ho, d->Wo));
    CUDNN_CHECK(cudnnSetFilter4dDescriptor(pl->w, t, CUDNN_TENSOR_NHWC, d->Cout, d->Cin / d->groups, d->K, d->K));
    CUDNN_CHECK(cudnnSetConvolution2dDescriptor(pl->conv, d->pad, d->pad, d->stride, d->stride, 1, 1,
                                                CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT));
    CUDNN_CHECK(cudnnSetConvolutionGroupCount(pl->conv, d->groups));
    CUDNN_CHECK(cudnnSetConvolutionMathType(pl->conv, cx->tf32 || lp != PREC_FP32 ? CUDNN_DEFAULT_MATH : CUDNN_FMA_MATH));
    int n, c, h, w;
    CUDNN_CHECK(cudnnGetConvolution2dForwardOutputDim(pl->conv, pl->x, pl->w, &n, &c, &h, &w));
    CUDA_REQUIRE(n == d->N && c == d->Cout && h == d->Ho && w == d->Wo, "cuDNN output shape differs from ops.h's");
}

static struct conv_plan *plan_get(struct backend_ctx *cx, const struct conv2d_desc *d, enum precision lp)
{
    for (int i = 0; i < cx->nplans; i++)
        if (!memcmp(&cx->plans[i].d, d, sizeof *d) && cx->plans[i].lp == (int)lp) return &cx->plans[i];
    if (cx->nplans == cx->cap_plans) {
        cx->cap_plans = cx->cap_plans ? 2 * cx->cap_plans : 8;
        cx->plans = (struct conv_plan *)xrealloc(cx->plans, sizeof *cx->plans * (size_t)cx->cap_plans);
    }
    struct conv_plan *pl = &cx->plans[cx->nplans++];
    plan_init(cx, pl, d, lp);
    return pl;
}

static void find_fwd(struct backend_ctx *cx, struct conv_plan *pl)
{
    cudnnConvolutionFwdAlgoPerf_t p[CUDNN_CONVOLUTION_FWD_ALGO_COUNT];
    int n = 0;
    if (cx->find)
        CUDNN_CHECK(cudnnFindConvolutionForwardAlgorithm(cx->cudnn, pl->x, pl->w, pl->conv, pl->y,
                                                         CUDNN_CONVOLUTION_FWD_ALGO_COUNT, &n, p));
    else
        CUDNN_CHECK(cudnnGetConvolutionForwardAlgorithm_v7(cx->cudnn, pl->x, pl->w, pl->conv, pl->y,
                                                           CUDNN_CONVOLUTION_FWD_ALGO_COUNT, &n, p));
    auto ws = [&](cudnnConvolutionFwdAlgo_t a, size_t *b) {
        return cudnnGetConvolutionForwardWorkspaceSize(cx->cudnn, pl->x, pl->w, pl->conv, pl->y, a, b);
    };
    int i = choose(cx, pl, p, n, 0, ws, &pl->fwd_math, &pl->ws_fwd);
    if (i < 0 && pl->lp != PREC_FP32) { /* the caller has its own kernel for 16-bit tensors */
        pl->have_fwd = -1;
        return;
    }
    CUDA_REQUIRE(i >= 0, "cuDNN offers no forward algorithm for this convolution");
    pl->fwd = p[i].algo;
    pl->have_fwd = 1;
}

static void find_bwd(struct backend_ctx *cx, struct conv_plan *pl)
{
    cudnnConvolutionBwdDataAlgoPerf_t pd[CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT];
    cudnnConvolutionBwdFilterAlgoPerf_t pf[CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT];
    int nd = 0, nf = 0;
    CUDNN_CHECK(cudnnSetConvolutionMathType(pl->conv, cx->tf32 ? CUDNN_DEFAULT_MATH : CUDNN_FMA_MATH));
    if (cx->find) {
        CUDNN_CHECK(cudnnFindConvolutionBackwardDataAlgorithm(cx->cudnn, pl->w, pl->y, pl->conv, pl->x,
                                                              CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT, &nd, pd));
        CUDNN_CHECK(cudnnFindConvolutionBackwardFilterAlgorithm(cx->cudnn, pl->x, pl->y, pl->conv, pl->w,
                                                                CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT, &nf, pf));
    } else {
        CUDNN_CHECK(cudnnGetConvolutionBackwardDataAlgorithm_v7(cx->cudnn, pl->w, pl->y, pl->conv, pl->x,
                                                                CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT, &nd, pd));
        CUDNN_CHECK(cudnnGetConvolutionBackwardFilterAlgorithm_v7(cx->cudnn, pl->x, pl->y, pl->conv, pl->w,
                                                                  CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT, &nf, pf));
    }
    auto wsd = [&](cudnnConvolutionBwdDataAlgo_t a, size_t *b) {
        return cudnnGetConvolutionBackwardDataWorkspaceSize(cx->cudnn, pl->w, pl->y, pl->conv, pl->x, a, b);
    };
    auto wsf = [&](cudnnConvolutionBwdFilterAlgo_t a, size_t *b) {
        return cudnnGetConvolutionBackwardFilterWorkspaceSize(cx->cudnn, pl->x, pl->y, pl->conv, pl->w, a, b);
    };
    int i = choose(cx, pl, pd, nd, 1, wsd, &pl->data_math, &pl->ws_data);
    int j = choose(cx, pl, pf, nf, 1, wsf, &pl->filter_math, &pl->ws_filter);
    CUDA_REQUIRE(i >= 0 && j >= 0, "cuDNN offers no backward algorithm for this convolution");
    pl->bwd_data = pd[i].algo;
    pl->bwd_filter = pf[j].algo;
    pl->have_bwd = 1;
}

static size_t align256(size_t b) { return (b + 255) & ~(size_t)255; }

void conv2d_forward_cudnn(struct backend_ctx *cx, float *out, const float *in, const float *w,
                          const struct conv2d_desc *d)
{
    struct conv_plan *pl = plan_get(cx, d, PREC_FP32);
    if (!pl->have_fwd) find_fwd(cx, pl);
    int Cg = d->Cin / d->groups, KK = d->K * d->K;
    size_t wbytes = align256(sizeof(float) * (size_t)d->Cout * Cg * KK);
    char *ws = (char *)cuda_ws(cx, wbytes + pl->ws_fwd);
    float *wt = (float *)ws;
    size_t nw = (size_t)d->Cout * Cg * KK;
    kcrs_to_krsc_kernel<<<grid_for(nw, 256, cx), 256, 0, cx->stream>>>(wt, w, d->Cout, Cg, KK);
    LAUNCH_CHECK();
    const float one = 1.0f, zero = 0.0f;
    CUDNN_CHECK(cudnnSetConvolutionMathType(pl->conv, pl->fwd_math));
    CUDNN_CHECK(cudnnConvolutionForward(cx->cudnn, &one, pl->x, in, pl->w, wt, pl->conv, pl->fwd, ws + wbytes,
                                        pl->ws_fwd, &zero, pl->y, out));
}

void conv2d_backward_cudnn(struct backend_ctx *cx, float *din, float *dw, const float *dout, const float *in,
                           const float *w, const struct conv2d_desc *d, int acc)
{
    struct conv_plan *pl = plan_get(cx, d, PREC_FP32);
    if (!pl->have_bwd) find_bwd(cx, pl);
    int Cg = d->Cin / d->groups, KK = d->K * d->K;
    size_t nw = (size_t)d->Cout * Cg * KK, wbytes = align256(sizeof(float) * nw);
    size_t cud = pl->ws_data > pl->ws_filter ? pl->ws_data : pl->ws_filter;
    char *ws = (char *)cuda_ws(cx, 2 * wbytes + cud);
    float *wt = (float *)ws, *dwt = (float *)(ws + wbytes);
    const float one = 1.0f, zero = 0.0f, beta = acc ? 1.0f : 0.0f;
    unsigned g = grid_for(nw, 256, cx);
    /* dW in cuDNN's layout (overwritten), then added into ours: dw accumulates across the step */
    CUDNN_CHECK(cudnnSetConvolutionMathType(pl->conv, pl->filter_math));
    CUDNN_CHECK(cudnnConvolutionBackwardFilter(cx->cudnn, &one, pl->x, in, pl->y, dout, pl->conv, pl->bwd_filter,
                                               ws + 2 * wbytes, pl->ws_filter, &zero, pl->w, dwt));
    krsc_add_to_kcrs_kernel<<<g, 256, 0, cx->stream>>>(dw, dwt, d->Cout, Cg, KK);
    LAUNCH_CHECK();
    if (!din) return;
    kcrs_to_krsc_kernel<<<g, 256, 0, cx->stream>>>(wt, w, d->Cout, Cg, KK);
    LAUNCH_CHECK();
    CUDNN_CHECK(cudnnSetConvolutionMathType(pl->conv, pl->data_math));
    CUDNN_CHECK(cudnnConvolutionBackwardData(cx->cudnn, &one, pl->w, wt, pl->y, dout, pl->conv, pl->bwd_data,
                                             ws + 2 * wbytes, pl->ws_data, &beta, pl->x, din));
}

/* dst (Cout, KK, Cg) = src (Cout, Cg, KK), 16-bit words moved as they are */
__global__ void kcrs_to_krsc_u16_kernel(uint16_t *dst, const uint16_t *src, int Cout, int Cg, int KK)
{
    size_t n = (size_t)Cout * Cg * KK;
    GRID_STRIDE(i, n) dst[krsc_index(i, Cg, KK)] = src[i];
}

int conv2d_forward_cudnn_lp(struct backend_ctx *cx, void *out, const void *in, const void *w,
                            const struct conv2d_desc *d, enum precision p)
{
    CUDA_REQUIRE(p == PREC_FP16 || p == PREC_BF16, "conv2d_forward_cudnn_lp called for fp32");
    struct conv_plan *pl = plan_get(cx, d, p);
    if (!pl->have_fwd) find_fwd(cx, pl);
    if (pl->have_fwd < 0) return 0;
    int Cg = d->Cin / d->groups, KK = d->K * d->K;
    size_t nw = (size_t)d->Cout * Cg * KK, wbytes = align256(sizeof(uint16_t) * nw);
    char *ws = (char *)cuda_ws(cx, wbytes + pl->ws_fwd);
    kcrs_to_krsc_u16_kernel<<<grid_for(nw, 256, cx), 256, 0, cx->stream>>>((uint16_t *)ws, (const uint16_t *)w,
                                                                          d->Cout, Cg, KK);
    LAUNCH_CHECK();
    const float one = 1.0f, zero = 0.0f; /* fp32 scaling factors: the convolution's compute type */
    CUDNN_CHECK(cudnnSetConvolutionMathType(pl->conv, pl->fwd_math));
    CUDNN_CHECK(cudnnConvolutionForward(cx->cudnn, &one, pl->x, in, pl->w, ws, pl->conv, pl->fwd, ws + wbytes,
                                        pl->ws_fwd, &zero, pl->y, out));
    return 1;
}
