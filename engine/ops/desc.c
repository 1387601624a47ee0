/* desc.c: see desc.h. */
#include "desc.h"
#include "../../core/check.h"
#include "../../core/banned.h"

void conv2d_desc_init(struct conv2d_desc *d, int N, int H, int W, int Cin, int Cout, int K, int stride,
                      int pad, int groups)
{
    int divisible = groups > 0 && Cin % groups == 0 && Cout % groups == 0;
    CHECK(divisible, "groups %d, Cin %d, Cout %d", groups, Cin, Cout);
    CHECK(K > 0 && stride > 0 && pad >= 0, "K %d stride %d pad %d", K, stride, pad);
    *d = (struct conv2d_desc){.N = N, .H = H, .W = W, .Cin = Cin, .Cout = Cout, .K = K,
                              .stride = stride, .pad = pad, .groups = groups};
    d->Ho = (H + 2 * pad - K) / stride + 1;
    d->Wo = (W + 2 * pad - K) / stride + 1;
    CHECK(d->Ho > 0 && d->Wo > 0, "conv output %dx%d", d->Ho, d->Wo);
}

const char *act_name(enum act_kind k)
{
    switch (k) {
    case ACT_NONE: return "none";
    case ACT_RELU: return "relu";
    case ACT_HARDSWISH: return "hardswish";
    case ACT_HARDSIGMOID: return "hardsigmoid";
    }
    return "?";
}
