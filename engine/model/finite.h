/* finite.h: "finite or fail". A model whose weights, BN statistics, logits or outputs hold a NaN or
 * an infinity is broken, whatever its checksum says: saving, exporting, evaluating and serving it
 * is a failure (TIPC_ENUMERIC, exit 6) naming the tensor and the step, never a pass. A huge
 * learning rate can make the weights NaN in the very step whose loss was still finite, so the
 * loss check alone (train_step.h) does not see it.
 *
 * The scans run on host copies: once per checkpoint save or load, per epoch end and per export
 * (a few MB each), and per batch on the logits (n x classes). */
#ifndef TIPC_FINITE_H
#define TIPC_FINITE_H
#include <stdbool.h>
#include <stddef.h>

#include "net.h"

/* Index of the first NaN or infinity in x[0..n), or -1 when every value is finite. */
long first_nonfinite(const float *x, size_t n);

/* The net's tensors from host copies (params and stats required, mom may be NULL): true when
 * all are finite; else false and `what` names the first bad value, e.g. "layer 12 (bn) running
 * var [3] = nan". */
bool net_tensors_finite(const struct net *net, const float *params, const float *mom, const float *stats,
                        char *what, size_t n);
/* The same on the net's own buffers (copied to the host first: device memory on a GPU). */
bool net_finite(const struct net *net, char *what, size_t n);

#endif
