/* netns.h: a star of network namespaces for `tipc bench scaling --netns` (a model of separate
 * machines on one switch): a hub namespace holding a bridge, and N node namespaces, each joined to
 * the bridge by a veth pair (eth0 = 10.77.0.(i+1)/24 in node i). Each link can be shaped, each
 * direction: `tc qdisc ... netem delay D [rate R]`, or `tbf rate R` when no delay is asked for.
 *
 * Everything is done by the `ip` and `tc` programs (iproute2) run as argv arrays, not libnl:
 * named namespaces are iproute2's convention (a bind mount under /run/netns that `ip netns exec`
 * and an administrator's `ip netns list` see; libnl has no such call), the steps are the commands
 * a person would type to reproduce or inspect the set-up, and their error text is passed on. Names are "tipcsc<pid>h" and "tipcsc<pid>n<i>": unique per process,
 * so concurrent runs do not clash (the addresses live inside the run's own namespaces). What a run
 * made it removes (netns_star_down; removing the hub removes the bridge and the veths); one killed
 * before it could is swept by the next run (netns_sweep_stale: names of processes that are gone). */
#ifndef TIPC_NETNS_H
#define TIPC_NETNS_H
#include <stdbool.h>
#include <stddef.h>

#include "../../core/status.h"

#define NETNS_MAX_NODES 64

/* A link's shape; NULL members: unshaped. Values as tc takes them: delay "500us", "1ms";
 * rate "100mbit", "10gbit". */
struct netns_link { const char *delay, *rate; };

struct netns_star {
    char hub[40];
    char node[NETNS_MAX_NODES][40];
    int n, made;        /* nodes asked for, node namespaces made */
    bool hub_made;
};

/* The values' syntax and range (usage errors, exit 2), before anything is made. */
enum tipc_status netns_check_link(const struct netns_link *l);
/* Make the star of n nodes with links shaped as l. On failure everything made is removed and the
 * status says why: TIPC_ENOTBUILT when this host does not permit it (not root, no namespaces, no
 * veth, the qdisc not in the kernel: the message names what), TIPC_EDIST for other failures. */
enum tipc_status netns_star_up(struct netns_star *s, int n, const struct netns_link *l);
/* Remove what netns_star_up made (safe to call twice). */
void netns_star_down(struct netns_star *s);
/* Node i's address ("10.77.0.1" for node 0). */
void netns_addr(int i, char *buf, size_t size);
/* Remove star namespaces whose maker is gone (a run killed by SIGKILL); returns how many. */
int netns_sweep_stale(void);

#endif
