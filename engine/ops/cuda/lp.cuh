/* lp.cuh: the 16-bit storage types of the reduced-precision inference pass (fp16: __half, bf16:
 * __nv_bfloat16) and their conversions to and from float (round to nearest even, as
 * ops/precision.h's reference). Kernels are templated on the storage type T; the host picks the
 * instantiation from enum precision with LP_DISPATCH. Arithmetic is fp32 (load, convert, compute,
 * round once on store). */
#ifndef TIPC_LP_CUH
#define TIPC_LP_CUH

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "cuda_common.cuh"

__device__ __forceinline__ float lp_f(__half h) { return __half2float(h); }
__device__ __forceinline__ float lp_f(__nv_bfloat16 h) { return __bfloat162float(h); }
__device__ __forceinline__ float lp_f(float h) { return h; }
template <typename T> __device__ __forceinline__ T lp_from(float x);
template <> __device__ __forceinline__ __half lp_from<__half>(float x) { return __float2half_rn(x); }
template <> __device__ __forceinline__ __nv_bfloat16 lp_from<__nv_bfloat16>(float x) { return __float2bfloat16_rn(x); }
template <> __device__ __forceinline__ float lp_from<float>(float x) { return x; }

/* cuBLAS / cuDNN names of the storage type */
static inline cudaDataType_t lp_cuda_type(enum precision p) { return p == PREC_BF16 ? CUDA_R_16BF : CUDA_R_16F; }
static inline cudnnDataType_t lp_cudnn_type(enum precision p)
{
    return p == PREC_BF16 ? CUDNN_DATA_BFLOAT16 : CUDNN_DATA_HALF;
}

/* Run STMT with T the storage type of precision p (fp16 or bf16; anything else is a bug). */
#define LP_DISPATCH(p, STMT)                                                                \
    do {                                                                                    \
        if ((p) == PREC_FP16) {                                                             \
            typedef __half T;                                                               \
            STMT;                                                                           \
        } else {                                                                            \
            CUDA_REQUIRE((p) == PREC_BF16, "a reduced-precision op called for fp32");       \
            typedef __nv_bfloat16 T;                                                        \
            STMT;                                                                           \
        }                                                                                   \
    } while (0)

#endif
