/* mobilenet_v3.h: torchvision's mobilenet_v3_small as a layer list (2,542,856 parameters at
 * 1000 classes, width 1.0). Parameter order = torchvision's named_parameters() order, BN
 * running stats in state_dict order, so fixtures and checkpoints map one to one. */
#ifndef TIPC_MOBILENET_V3_H
#define TIPC_MOBILENET_V3_H
#include "net.h"

struct mbv3_config {
    int num_classes;    /* 1000 */
    float width_mult;   /* 1.0 */
    int resolution;     /* input side, 224 */
    float dropout;      /* classifier dropout, 0.2 */
    struct amp_policy amp; /* zeroed: fp32 */
};
#define MBV3_CONFIG_DEFAULT {.num_classes = 1000, .width_mult = 1.0f, .resolution = 224, .dropout = 0.2f}

/* Plan and allocate the network for batches of up to N images; parameters are zero until
 * net_init_params() or a checkpoint load. */
void mobilenet_v3_small_build(struct net *net, const struct mbv3_config *cfg, int N, struct backend be);

#endif
