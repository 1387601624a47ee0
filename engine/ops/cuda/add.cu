/* add.cu: the residual add, CUDA twin of ops/cpu/add.c; float4 when the buffers are 16-byte
 * aligned (elementwise.cuh). */
#include "elementwise.cuh"

struct add_fwd {
    float *out;
    const float *a, *b;
    __device__ void one(unsigned i) const { out[i] = a[i] + b[i]; }
    __device__ void vec4(unsigned j) const
    {
        float4 x = ld4(a, j), y = ld4(b, j);
        st4(out, j, make_float4(x.x + y.x, x.y + y.y, x.z + y.z, x.w + y.w));
    }
};

/* da (=|+=) dout, db (=|+=) dout */
template <int ACC_A, int ACC_B> struct add_bwd {
    float *da, *db;
    const float *dout;
    __device__ void one(unsigned i) const
    {
        float g = dout[i];
        da[i] = ACC_A ? da[i] + g : g;
        db[i] = ACC_B ? db[i] + g : g;
    }
    __device__ void vec4(unsigned j) const
    {
        float4 g = ld4(dout, j), a = g, b = g;
        if (ACC_A) {
            float4 t = ld4(da, j);
            a = make_float4(t.x + g.x, t.y + g.y, t.z + g.z, t.w + g.w);
        }
        if (ACC_B) {
            float4 t = ld4(db, j);
            b = make_float4(t.x + g.x, t.y + g.y, t.z + g.z, t.w + g.w);
        }
        st4(da, j, a);
        st4(db, j, b);
    }
};

extern "C" void add_forward_cuda(struct backend_ctx *cx, float *out, const float *a, const float *b, size_t n)
{
    ew_launch(cx, add_fwd{out, a, b}, n, aligned16(out) && aligned16(a) && aligned16(b));
}
extern "C" void add_backward_cuda(struct backend_ctx *cx, float *da, float *db, const float *dout, size_t n, int acc_a,
                                  int acc_b)
{
    bool vec = aligned16(da) && aligned16(db) && aligned16(dout);
    switch ((acc_a ? 2 : 0) + (acc_b ? 1 : 0)) {
    case 0: ew_launch(cx, add_bwd<0, 0>{da, db, dout}, n, vec); break;
    case 1: ew_launch(cx, add_bwd<0, 1>{da, db, dout}, n, vec); break;
    case 2: ew_launch(cx, add_bwd<1, 0>{da, db, dout}, n, vec); break;
    default: ew_launch(cx, add_bwd<1, 1>{da, db, dout}, n, vec); break;
    }
}
