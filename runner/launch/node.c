/* node.c: launch_resolve(): from the parsed flags (flags.c) and the environment, find this
 * node's index, the master endpoint, the job id, this node's address and the token. The running part
 * (join, spawn, watch) is agent.c.
 * Precedence of every setting is documented in docs/distributed.md, section "Finding the node". */
#include "launch.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "../../core/check.h"
#include "../../core/parse.h"
#include "../../core/strv.h"
#include "../../core/banned.h"

static enum tipc_status parse_int_flag(const char *flag, const char *v, int min, int max, int *out)
{
    if (!parse_int(v, min, max, out))
        return error_msg(TIPC_EUSAGE, "launch: %s '%s' is not an integer in [%d, %d]", flag, v, min, max);
    return TIPC_OK;
}

/* Node index from an address given by the user (--node_ip / POD_IP): must be in --ips once. */
static enum tipc_status node_from_ip(struct launch_opts *o, const char *ip, const char *src)
{
    char *one[2] = {(char *)ip, NULL};
    int idx = -1, hits = 0;
    for (int i = 0; i < o->nips; i++)
        if (!strcmp(o->ips[i], ip) || launch_host_is_one_of(o->ips[i], one)) idx = i, hits++;
    if (hits == 1) {
        o->node_rank = idx;
        return TIPC_OK;
    }
    char *l = strv_join(o->ips, o->nips, ",");
    error_msg(TIPC_EDIST, "launch: %s '%s' %s --ips=%s", src, ip, hits ? "appears more than once in" : "is not in", l);
    free(l);
    error_hint("--node_ip (or POD_IP) must be exactly one of the --ips entries");
    return TIPC_EDIST;
}

static enum tipc_status node_from_ifaddrs(struct launch_opts *o)
{
    char **addrs = launch_host_addrs();
    int idx = launch_match_node(o->ips, o->nips, addrs);
    if (idx >= 0) {
        o->node_rank = idx;
        strv_free(addrs);
        return TIPC_OK;
    }
    char *mine = strv_join(addrs, -1, ","), *l = strv_join(o->ips, o->nips, ",");
    if (idx == -1)
        error_msg(TIPC_EDIST, "launch: none of this host's addresses (%s) is in --ips=%s", mine, l);
    else
        error_msg(TIPC_EDIST, "launch: this host's addresses (%s) match more than one entry of --ips=%s", mine, l);
    error_hint("give --node_ip=ADDR (or env POD_IP) to say which entry of --ips is this node");
    free(mine), free(l), strv_free(addrs);
    return TIPC_EDIST;
}

static enum tipc_status find_node(struct launch_opts *o)
{
    const char *ip = o->node_ip ? o->node_ip : getenv("POD_IP");
    const char *src = o->node_ip ? "--node_ip" : "POD_IP";
    if (ip && *ip && o->nips) return node_from_ip(o, ip, src);
    if (o->sched_rank >= 0) return o->node_rank = o->sched_rank, TIPC_OK;   /* sched.c */
    if (o->nips) return node_from_ifaddrs(o);
    if (o->nnodes == 1) return o->node_rank = 0, TIPC_OK;
    return error_msg(TIPC_EUSAGE, "launch: cannot tell which of the %d nodes this is; give --ips or --node_rank",
                     o->nnodes);
}

/* The node index: flags, then POD_IP, the scheduler, this host's addresses; a scheduler that says
 * otherwise than a flag or POD_IP is an error (two tasks would claim one node, or none a node). */
static enum tipc_status resolve_node(struct launch_opts *o)
{
    bool given = o->node_rank >= 0;
    if (!given) TRY(find_node(o));
    if (o->sched_rank >= 0 && o->node_rank != o->sched_rank) {
        error_msg(TIPC_EUSAGE, "launch: %s says this is node %d but %s says node %d", o->sched_rank_src, o->sched_rank,
                  given ? "--node_rank" : o->node_ip ? "--node_ip" : "POD_IP", o->node_rank);
        error_hint("drop the flag, or set TIPC_SCHEDULER=none to ignore the scheduler's variables");
        return TIPC_EUSAGE;
    }
    return TIPC_OK;
}

/* The address this host uses to reach `host` (connect a UDP socket, read its local address). */
static char *route_addr_to(const char *host)
{
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_DGRAM}, *ai;
    if (getaddrinfo(host, "9", &hints, &ai)) return NULL;
    char *res = NULL;
    int fd = socket(ai->ai_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    struct sockaddr_storage ss;
    socklen_t sl = sizeof ss;
    char buf[NI_MAXHOST];
    if (fd >= 0 && connect(fd, ai->ai_addr, ai->ai_addrlen) == 0 &&
        getsockname(fd, (struct sockaddr *)&ss, &sl) == 0 &&
        getnameinfo((struct sockaddr *)&ss, sl, buf, sizeof buf, NULL, 0, NI_NUMERICHOST) == 0)
        res = xstrdup(buf);
    if (fd >= 0) close(fd);
    freeaddrinfo(ai);
    return res;
}

static enum tipc_status resolve_master(struct launch_opts *o)
{
    bool from_env = false;
    const char *tm = o->env_master;   /* TIPC_MASTER: how `tipc run` passes --master down */
    if (!o->master_host && tm && *tm) TRY(launch_parse_hostport("TIPC_MASTER", tm, &o->master_host, &o->master_port));
    if (o->master_port < 0 && o->sched_port >= 0 && o->nnodes > 1) o->master_port = o->sched_port;
    if (!o->master_host) {
        const char *ma = getenv("MASTER_ADDR");
        if (o->sched_master && o->nnodes > 1) o->master_host = xstrdup(o->sched_master);
        else if (o->nips) o->master_host = xstrdup(o->ips[0]);
        else if (o->nnodes == 1) o->master_host = xstrdup("127.0.0.1");   /* not an outer job's MASTER_ADDR */
        else if (ma && *ma) o->master_host = xstrdup(ma), from_env = true;
        else return error_msg(TIPC_EUSAGE, "launch: no master for %d nodes; give --ips, --master or MASTER_ADDR",
                              o->nnodes);
    }
    if (o->master_port < 0 && from_env && getenv("MASTER_PORT"))
        TRY(parse_int_flag("MASTER_PORT", getenv("MASTER_PORT"), 0, 65535, &o->master_port));
    if (o->master_port < 0) o->master_port = o->nnodes == 1 ? 0 : LAUNCH_DEFAULT_PORT;
    if (o->master_port == 0 && o->nnodes > 1)
        return error_msg(TIPC_EUSAGE, "launch: master port 0 (auto) only works on one node; the other "
                                      "nodes could not find it; give --master=HOST:PORT");
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM}, *ai;
    int rc = getaddrinfo(o->master_host, NULL, &hints, &ai);
    if (rc) {   /* never fall back to localhost: each node would form its own world (anchors #3) */
        error_msg(TIPC_EDIST, "launch: node %d: cannot resolve master host '%s': %s", o->node_rank,
                  o->master_host, gai_strerror(rc));
        error_hint("use an address every node can reach (--master=IP:PORT or the first entry of --ips)");
        return TIPC_EDIST;
    }
    freeaddrinfo(ai);
    return TIPC_OK;
}

enum tipc_status launch_resolve(struct launch_opts *o)
{
    TRY(launch_apply_cluster(o));
    if (o->standalone && (o->nips > 1 || o->nnodes > 1 || o->master_host))
        return error_msg(TIPC_EUSAGE, "launch: --standalone runs one node with its own store; drop --ips/--nnodes/--master");
    if (o->nips) {
        if (o->nnodes > 0 && o->nnodes != o->nips)
            return error_msg(TIPC_EUSAGE, "launch: --nnodes=%d but --ips lists %d nodes", o->nnodes, o->nips);
        o->nnodes = o->nips;
    } else if (o->nnodes < 0) {
        o->nnodes = 1;
    }
    if (o->ngpus) {
        if (o->nproc > 0 && o->nproc != o->ngpus)
            return error_msg(TIPC_EUSAGE, "launch: --nproc_per_node=%d but --gpus lists %d devices", o->nproc, o->ngpus);
        o->nproc = o->ngpus;
    } else {
        if (o->nproc < 0) o->nproc = 1;
        o->gpus = xcalloc((size_t)o->nproc, sizeof *o->gpus);
        for (int i = 0; i < o->nproc; i++) o->gpus[i] = i;
        o->ngpus = o->nproc;
    }
    TRY(resolve_node(o));
    if (o->node_rank >= o->nnodes)
        return error_msg(TIPC_EUSAGE, "launch: node index %d is out of range for %d nodes", o->node_rank, o->nnodes);
    if (!o->job_id) o->job_id = xstrdup("default");   /* --job_id, else TIPC_JOB_ID (launch_parse) */
    for (const char *p = o->job_id; *p; p++)
        if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') || strchr("._-", *p)))
            return error_msg(TIPC_EUSAGE, "launch: job id '%s' may only hold letters, digits, '.', '_' and '-'", o->job_id);
    TRY(resolve_master(o));
    if (!o->log_dir) o->log_dir = xstrdup("log");   /* --log_dir, else TIPC_LOG_DIR (launch_parse) */
    if (o->nips) o->self_ip = xstrdup(o->ips[o->node_rank]);
    else if (o->node_ip) o->self_ip = xstrdup(o->node_ip);
    else if (o->node_rank == 0) o->self_ip = xstrdup(o->master_host);
    else o->self_ip = route_addr_to(o->master_host);
    if (!o->self_ip) return error_msg(TIPC_EDIST, "launch: node %d: no route to master '%s'", o->node_rank, o->master_host);
    /* the watchdog must speak before the collectives' own timeout ends the waiting ranks, which
     * would only name the ranks that waited */
    const char *ct = getenv("TIPC_COMM_TIMEOUT");
    int cts = 0;
    if (ct && parse_int(ct, 1, 86400, &cts) && o->watchdog_s > 0 && o->watchdog_s > cts - 5)
        o->watchdog_s = cts - 5 >= 10 ? cts - 5 : 0;   /* a timeout this short ends a stall first itself */
    return launch_secret(o);
}
