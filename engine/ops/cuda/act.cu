/* act.cu: activations, the CUDA twins of ops/cpu/act.c: ReLU / hardswish / hardsigmoid
 * (forward, backward, and the inference bias+activation epilogue). Same formulas and kinks as
 * the CPU (elementwise.cuh). float4 loads/stores when the buffers are 16-byte aligned (bias_act:
 * and C % 4 == 0), scalar tails. Not here: BN + activation (bn.cu). */
#include <string.h>

#include "elementwise.cuh"

template <int K> struct act_fwd {
    float *out;
    const float *in;
    __device__ void one(unsigned i) const { out[i] = act_f<K>(in[i]); }
    __device__ void vec4(unsigned j) const
    {
        float4 v = ld4(in, j);
        st4(out, j, make_float4(act_f<K>(v.x), act_f<K>(v.y), act_f<K>(v.z), act_f<K>(v.w)));
    }
};

template <int K, int ACC> struct act_bwd {
    float *din;
    const float *dout, *in;
    __device__ void one(unsigned i) const
    {
        float v = act_df<K>(in[i], dout[i]);
        din[i] = ACC ? din[i] + v : v;
    }
    __device__ void vec4(unsigned j) const
    {
        float4 x = ld4(in, j), g = ld4(dout, j);
        float4 v = make_float4(act_df<K>(x.x, g.x), act_df<K>(x.y, g.y), act_df<K>(x.z, g.z), act_df<K>(x.w, g.w));
        if (ACC) {
            float4 d = ld4(din, j);
            v = make_float4(d.x + v.x, d.y + v.y, d.z + v.z, d.w + v.w);
        }
        st4(din, j, v);
    }
};

/* y[m, c] = act(y[m, c] + b[c]); vec4 needs C % 4 == 0 (the four share a row) */
template <int K> struct bias_act {
    float *y;
    const float *b;
    unsigned C;
    __device__ void one(unsigned i) const { y[i] = act_f<K>(y[i] + b[i % C]); }
    __device__ void vec4(unsigned j) const
    {
        float4 v = ld4(y, j), bb = ld4(b, (j * 4 % C) / 4);
        st4(y, j, make_float4(act_f<K>(v.x + bb.x), act_f<K>(v.y + bb.y), act_f<K>(v.z + bb.z), act_f<K>(v.w + bb.w)));
    }
};

extern "C" void act_forward_cuda(struct backend_ctx *cx, float *out, const float *in, size_t n, enum act_kind k)
{
    if (!n) return;
    bool vec = aligned16(out) && aligned16(in);
    switch (k) {
    case ACT_NONE:
        if (out != in) CUDA_CHECK(cudaMemcpyAsync(out, in, n * sizeof(float), cudaMemcpyDeviceToDevice, cx->stream));
        break;
    case ACT_RELU: ew_launch(cx, act_fwd<ACT_RELU>{out, in}, n, vec); break;
    case ACT_HARDSWISH: ew_launch(cx, act_fwd<ACT_HARDSWISH>{out, in}, n, vec); break;
    case ACT_HARDSIGMOID: ew_launch(cx, act_fwd<ACT_HARDSIGMOID>{out, in}, n, vec); break;
    }
}

template <int K> static void act_bwd_launch(struct backend_ctx *cx, float *din, const float *dout, const float *in,
                                            size_t n, int acc)
{
    bool vec = aligned16(din) && aligned16(dout) && aligned16(in);
    if (acc)
        ew_launch(cx, act_bwd<K, 1>{din, dout, in}, n, vec);
    else
        ew_launch(cx, act_bwd<K, 0>{din, dout, in}, n, vec);
}

extern "C" void act_backward_cuda(struct backend_ctx *cx, float *din, const float *dout, const float *in, size_t n,
                                  enum act_kind k, int acc)
{
    if (!n || !din) return;
    switch (k) {
    case ACT_NONE: act_bwd_launch<ACT_NONE>(cx, din, dout, in, n, acc); break;
    case ACT_RELU: act_bwd_launch<ACT_RELU>(cx, din, dout, in, n, acc); break;
    case ACT_HARDSWISH: act_bwd_launch<ACT_HARDSWISH>(cx, din, dout, in, n, acc); break;
    case ACT_HARDSIGMOID: act_bwd_launch<ACT_HARDSIGMOID>(cx, din, dout, in, n, acc); break;
    }
}

extern "C" void bias_act_forward_cuda(struct backend_ctx *cx, float *y, const float *b, size_t M, int C, enum act_kind k)
{
    size_t n = M * (size_t)C;
    if (!n) return;
    bool vec = C % 4 == 0 && aligned16(y) && aligned16(b);
    unsigned c = (unsigned)C;
    switch (k) {
    case ACT_NONE: ew_launch(cx, bias_act<ACT_NONE>{y, b, c}, n, vec); break;
    case ACT_RELU: ew_launch(cx, bias_act<ACT_RELU>{y, b, c}, n, vec); break;
    case ACT_HARDSWISH: ew_launch(cx, bias_act<ACT_HARDSWISH>{y, b, c}, n, vec); break;
    case ACT_HARDSIGMOID: ew_launch(cx, bias_act<ACT_HARDSIGMOID>{y, b, c}, n, vec); break;
    }
}
