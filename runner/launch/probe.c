/* probe.c: before any rank starts, every node checks that it can open a TCP connection to
 * every other node's address, the one its ranks will use for the collectives (anchors #6: a
 * non-routable NIC, NAT or a firewall otherwise shows up later as a hung or refused Gloo/NCCL init).
 * Each node listens on its own address, publishes the port (probe/N), connects to the others,
 * publishes its verdict (probed/N) and keeps listening until every node has published one. */
#include "internal.h"

#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "../../core/check.h"
#include "../../core/interrupt.h"
#include "../../core/time.h"
#include "../../core/parse.h"
#include "../../core/banned.h"

static int listen_any_port(const char *ip, int *port, int *err)
{
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM, .ai_flags = AI_PASSIVE}, *ai;
    *err = 0;
    if (getaddrinfo(ip, "0", &hints, &ai)) return *err = EADDRNOTAVAIL, -1;
    int fd = socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0 || bind(fd, ai->ai_addr, ai->ai_addrlen) || listen(fd, SOMAXCONN) ||
        fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)) {
        *err = errno;
        if (fd >= 0) close(fd);
        freeaddrinfo(ai);
        return -1;
    }
    freeaddrinfo(ai);
    struct sockaddr_storage ss;
    socklen_t sl = sizeof ss;
    getsockname(fd, (struct sockaddr *)&ss, &sl);
    char ps[16];
    getnameinfo((struct sockaddr *)&ss, sl, NULL, 0, ps, sizeof ps, NI_NUMERICSERV);
    parse_int(ps, 1, 65535, port);
    return fd;
}

/* Take and close what waits on the probe's socket: a peer's probe needs only the handshake, and a
 * queue nobody empties would let anyone who finds the port fill it and fail the job's probe. */
static void drain(int fd)
{
    for (int i = 0, c; i < 4096 && (c = accept4(fd, NULL, NULL, SOCK_CLOEXEC)) >= 0; i++) close(c);
}

/* 0, or the errno of a TCP connect to ip:port that did not complete within timeout_ms. */
static int try_connect(const char *ip, int port, int timeout_ms)
{
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM}, *ai;
    char ps[16];
    snprintf(ps, sizeof ps, "%d", port);
    if (getaddrinfo(ip, ps, &hints, &ai)) return EHOSTUNREACH;
    int fd = socket(ai->ai_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0), err = 0;
    if (fd < 0) err = errno;
    else if (connect(fd, ai->ai_addr, ai->ai_addrlen) && errno != EINPROGRESS) err = errno;
    else {
        struct pollfd p = {.fd = fd, .events = POLLOUT};
        socklen_t el = sizeof err;
        if (poll(&p, 1, timeout_ms) != 1) err = ETIMEDOUT;
        else getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &el);
    }
    if (fd >= 0) close(fd);
    freeaddrinfo(ai);
    return err;
}

/* Connect to every other node's probe; returns a malloc'ed description of the first failure or NULL. */
static char *probe_peers(struct launch_job *J, int lfd, double deadline, enum tipc_status *st)
{
    const struct launch_opts *o = J->o;
    for (int i = 0; i < o->nnodes && !*st; i++) {
        if (i == o->node_rank) continue;
        char *k = xasprintf("probe/%d", i), *val = NULL;
        bool found = false;
        while (!found && !*st && now_seconds() < deadline) {
            drain(lfd);
            *st = rdzv_get(&J->cl, k, 500, false, &found, &val, NULL);
            if (!*st && interrupted()) *st = TIPC_EINTR;
        }
        free(k);
        if (*st) break;
        int port = 0;
        if (!found || !parse_int(val, 1, 65535, &port)) {
            free(val);
            return xasprintf("node %d (%s) never published its probe port", i, J->peer_ips[i]);
        }
        free(val);
        drain(lfd);
        int err = try_connect(J->peer_ips[i], port, 3000);
        if (err)
            return xasprintf("node %d (%s) cannot open a TCP connection to node %d at %s:%d: %s", o->node_rank,
                             o->self_ip, i, J->peer_ips[i], port, strerror(err));
    }
    return NULL;
}

/* Wait until every node published probed/N; the first non-"ok" verdict is the job's failure. */
static enum tipc_status wait_verdicts(struct launch_job *J, int lfd, double deadline)
{
    for (int i = 0; i < J->o->nnodes; i++) {
        char *k = xasprintf("probed/%d", i), *val = NULL;
        bool found = false;
        enum tipc_status st = TIPC_OK;
        while (!found && !st && now_seconds() < deadline) {
            drain(lfd);
            st = rdzv_get(&J->cl, k, 500, false, &found, &val, NULL);
            if (!st && interrupted()) st = TIPC_EINTR;
        }
        free(k);
        if (st) return st;
        if (!found) return error_msg(TIPC_EDIST, "launch: %s: node %d did not finish its network probe in time", J->where, i);
        if (strcmp(val, "ok")) {
            error_msg(TIPC_EDIST, "launch: %s: %s", J->where, val);
            error_hint("ranks connect to each other directly on the --ips addresses: open TCP between the nodes "
                       "(firewall), and list addresses of the network the nodes share");
            free(val);
            return TIPC_EDIST;
        }
        free(val);
    }
    return TIPC_OK;
}

enum tipc_status job_probe(struct launch_job *J)
{
    const struct launch_opts *o = J->o;
    if (o->nnodes < 2) return TIPC_OK;
    int port = 0, err = 0, fd = listen_any_port(o->self_ip, &port, &err);
    if (fd < 0) {
        char *msg = xasprintf("node %d cannot listen on its own address '%s': %s", o->node_rank, o->self_ip, strerror(err));
        job_post_failure(J, msg);
        error_msg(TIPC_EDIST, "launch: %s", msg);
        error_hint("the collectives bind this address: its entry of --ips (or --node_ip) must be an address of this "
                   "host, not a NAT or public one");
        free(msg);
        return TIPC_EDIST;
    }
    double deadline = now_seconds() + o->join_timeout_s;
    char ps[16];
    snprintf(ps, sizeof ps, "%d", port);
    char *k = xasprintf("probe/%d", o->node_rank), *v = xasprintf("probed/%d", o->node_rank);
    enum tipc_status st = rdzv_put(&J->cl, k, ps, strlen(ps), false, NULL);
    char *bad = st ? NULL : probe_peers(J, fd, deadline, &st);
    if (!st) {
        const char *verdict = bad ? bad : "ok";
        st = rdzv_put(&J->cl, v, verdict, strlen(verdict), false, NULL);
        if (bad) job_post_failure(J, bad);
    }
    if (!st) st = wait_verdicts(J, fd, deadline);   /* keep listening until everyone has probed */
    close(fd);
    free(k), free(v), free(bad);
    return st;
}
