/* mobilenet_v3.c: the block table of torchvision's mobilenet_v3_small (models/mobilenetv3.py,
 * _mobilenet_v3_conf "mobilenet_v3_small") turned into a layer list. BN eps 1e-3, momentum
 * 0.01 as torchvision. Not here: the layer mechanics (net.c). */
#include "mobilenet_v3.h"
#include "../../core/check.h"
#include "../../core/banned.h"

/* torchvision _make_divisible(v, 8) */
static int make_divisible(double v)
{
    int nv = (int)(v + 4) / 8 * 8;
    if (nv < 8) nv = 8;
    if (nv < 0.9 * v) nv += 8;
    return nv;
}

struct block { int in, k, exp, out; bool se; enum act_kind act; int stride; };

static const struct block SMALL[] = {
    {16, 3, 16, 16, true, ACT_RELU, 2},       {16, 3, 72, 24, false, ACT_RELU, 2},
    {24, 3, 88, 24, false, ACT_RELU, 1},      {24, 5, 96, 40, true, ACT_HARDSWISH, 2},
    {40, 5, 240, 40, true, ACT_HARDSWISH, 1}, {40, 5, 240, 40, true, ACT_HARDSWISH, 1},
    {40, 5, 120, 48, true, ACT_HARDSWISH, 1}, {48, 5, 144, 48, true, ACT_HARDSWISH, 1},
    {48, 5, 288, 96, true, ACT_HARDSWISH, 2}, {96, 5, 576, 96, true, ACT_HARDSWISH, 1},
    {96, 5, 576, 96, true, ACT_HARDSWISH, 1},
};

static int conv_bn_act(struct net *net, int x, int Co, int K, int stride, int groups, enum act_kind act)
{
    x = net_add_conv(net, x, Co, K, stride, groups);
    x = net_add_bn(net, x, 1e-3f, 0.01f);
    return act == ACT_NONE ? x : net_add_act(net, x, act);
}

static int squeeze_excite(struct net *net, int x, int C)
{
    int sq = make_divisible(C / 4);
    int g = net_add_pool(net, x);
    g = net_add_linear(net, g, sq, true);
    net->layers[net->nlayers - 1].kaiming = true;
    g = net_add_act(net, g, ACT_RELU);
    g = net_add_linear(net, g, C, true);
    net->layers[net->nlayers - 1].kaiming = true;
    g = net_add_act(net, g, ACT_HARDSIGMOID);
    return net_add_scale(net, x, g);
}

void mobilenet_v3_small_build(struct net *net, const struct mbv3_config *cfg, int N, struct backend be)
{
    double wm = cfg->width_mult;
    net_init(net, be, N, cfg->resolution, cfg->resolution, 3);
    int x = conv_bn_act(net, 0, make_divisible(16 * wm), 3, 2, 1, ACT_HARDSWISH);
    int last_in = 0;
    for (size_t i = 0; i < sizeof SMALL / sizeof SMALL[0]; i++) {
        const struct block *b = &SMALL[i];
        int in = make_divisible(b->in * wm), exp = make_divisible(b->exp * wm);
        int out = make_divisible(b->out * wm);
        int y = x;
        if (exp != in) y = conv_bn_act(net, y, exp, 1, 1, 1, b->act);
        y = conv_bn_act(net, y, exp, b->k, b->stride, exp, b->act);
        if (b->se) y = squeeze_excite(net, y, exp);
        y = conv_bn_act(net, y, out, 1, 1, 1, ACT_NONE);
        if (b->stride == 1 && in == out) y = net_add_add(net, y, x);
        x = y;
        last_in = out;
    }
    x = conv_bn_act(net, x, 6 * last_in, 1, 1, 1, ACT_HARDSWISH);
    x = net_add_pool(net, x);
    x = net_add_linear(net, x, make_divisible(1024 * wm), true);
    x = net_add_act(net, x, ACT_HARDSWISH);
    x = net_add_dropout(net, x, cfg->dropout);
    net_add_linear(net, x, cfg->num_classes, true);
    net->amp = cfg->amp;
    net_alloc(net);
}
