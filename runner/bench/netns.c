/* netns.c: the namespace star of `bench scaling --netns` (see netns.h). */
#include "netns.h"

#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../../core/check.h"
#include "../../core/spawn.h"
#include "../../core/banned.h"

#define PREFIX "tipcsc"
#define NETNS_RUN_DIR "/run/netns"

/* Run argv (ip or tc) to its end; its stderr and stdout go to `out` (cut to size). Returns the
 * exit status as a shell reports it (127: not found). Waits for this child only: the caller may
 * have others (the launchers) running. */
static int tool(char *const *argv, char *out, size_t size)
{
    int p[2];
    out[0] = 0;
    if (pipe(p)) return 126;
    struct spawn s = SPAWN_INIT;
    s.argv = argv;
    s.out_fd = s.err_fd = p[1];
    s.stdin_null = true;
    s.pdeathsig = SIGKILL;
    if (spawn_start(&s)) {
        snprintf(out, size, "cannot start %s: %s", argv[0], strerror(errno));
        close(p[0]), close(p[1]);
        return 126;
    }
    close(p[1]);
    size_t len = 0;
    char buf[512];
    for (;;) {
        ssize_t k = read(p[0], buf, sizeof buf);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) break;
        for (ssize_t i = 0; i < k && len + 1 < size; i++) out[len++] = buf[i];
    }
    out[len] = 0;
    while (len && (out[len - 1] == '\n' || out[len - 1] == ' ')) out[--len] = 0;
    close(p[0]);
    int status = 0;
    while (waitpid(s.pid, &status, 0) < 0)
        if (errno != EINTR) return 1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/* argv from a NULL-terminated list of words; "%d"-style values come in already formatted */
#define RUN(err, ...) tool_v(err, (const char *[]){__VA_ARGS__, NULL})
static int tool_v(char *err, const char **words)
{
    return tool((char *const *)words, err, 512);
}

/* a number followed by one of the units; *v in the unit's scale factor */
static bool number_unit(const char *s, const char *const *units, const double *scale, double *v)
{
    char *end;
    errno = 0;
    double x = strtod(s, &end);
    if (errno || end == s || !(x > 0)) return false;
    for (int i = 0; units[i]; i++)
        if (!strcmp(end, units[i])) {
            *v = x * scale[i];
            return true;
        }
    return false;
}

static bool delay_us(const char *s, double *us)
{
    static const char *const u[] = {"us", "ms", "s", NULL};
    static const double f[] = {1, 1e3, 1e6};
    return number_unit(s, u, f, us) && *us >= 1 && *us <= 10e6;
}

static bool rate_bits(const char *s, double *bits)
{
    static const char *const u[] = {"bit", "kbit", "mbit", "gbit", "tbit", NULL};
    static const double f[] = {1, 1e3, 1e6, 1e9, 1e12};
    return number_unit(s, u, f, bits) && *bits >= 8e3 && *bits <= 1e12;
}

enum tipc_status netns_check_link(const struct netns_link *l)
{
    double v;
    if (l->delay && !delay_us(l->delay, &v))
        return error_msg(TIPC_EUSAGE, "bench: --link-delay '%s': want a time from 1us to 10s with a unit "
                                      "(us, ms, s), e.g. 1ms", l->delay);
    if (l->rate && !rate_bits(l->rate, &v))
        return error_msg(TIPC_EUSAGE, "bench: --link-rate '%s': want a rate from 8kbit to 1tbit with a unit "
                                      "(bit, kbit, mbit, gbit, tbit), e.g. 10gbit", l->rate);
    return TIPC_OK;
}

void netns_addr(int i, char *buf, size_t size) { snprintf(buf, size, "10.77.0.%d", i + 1); }

/* ip/tc said the host does not allow or provide it (not a mistake of ours) */
static bool not_here(int rc, const char *err)
{
    return rc == 127 || strstr(err, "ermission") || strstr(err, "not permitted") || strstr(err, "nknown") ||
           strstr(err, "not supported") || strstr(err, "No such file or directory");
}

static enum tipc_status failed(const char *what, int rc, const char *err)
{
    const char *q = strstr(what, "qdisc ");
    if (q && strstr(err, "qdisc kind is unknown")) {
        char kind[16];
        snprintf(kind, sizeof kind, "%.*s", (int)strcspn(q + 6, ")"), q + 6);
        return error_msg(TIPC_ENOTBUILT, "bench --netns: %s: this kernel has no '%s' qdisc (tc: %s; kernel option "
                                         "CONFIG_NET_SCH_%s)%s", what, kind, err, !strcmp(kind, "netem") ? "NETEM" : "TBF",
                         !strcmp(kind, "netem") ? ": --link-delay needs it; --link-rate alone uses tbf" : "");
    }
    if (not_here(rc, err))
        return error_msg(TIPC_ENOTBUILT, "bench --netns: %s is not possible on this host: %s. Network namespaces "
                                         "need root and a kernel with veth, a bridge and the qdisc (netem for "
                                         "--link-delay, tbf for --link-rate alone); or run without --netns",
                         what, rc == 127 ? "ip/tc (iproute2) not found: run scripts/install-deps.sh" : err);
    return error_msg(TIPC_EDIST, "bench --netns: %s failed (exit %d): %s", what, rc, err);
}

/* the qdisc of one end of a link (device dev in namespace ns) */
static enum tipc_status shape(const char *ns, const char *dev, const struct netns_link *l, char *err)
{
    char rate[48], burst[32];
    double bits = 0, us = 0;
    if (l->rate) rate_bits(l->rate, &bits), snprintf(rate, sizeof rate, "%.0fbit", bits);
    if (l->delay) delay_us(l->delay, &us);
    char delay[32];
    snprintf(delay, sizeof delay, "%.0fus", us);
    int rc;
    if (l->delay && l->rate)
        rc = RUN(err, "tc", "-n", ns, "qdisc", "add", "dev", dev, "root", "netem", "delay", delay, "rate", rate,
                 "limit", "100000");
    else if (l->delay)
        rc = RUN(err, "tc", "-n", ns, "qdisc", "add", "dev", dev, "root", "netem", "delay", delay, "limit", "100000");
    else {
        /* tbf: a bucket of 4 ms of traffic, at least 256 KiB (veth sends GSO packets up to 64 KiB) */
        double b = bits / 8 * 0.004;
        snprintf(burst, sizeof burst, "%.0f", b > 262144 ? b : 262144);
        rc = RUN(err, "tc", "-n", ns, "qdisc", "add", "dev", dev, "root", "tbf", "rate", rate, "burst", burst,
                 "latency", "100ms");
    }
    if (rc) {
        char what[160];
        snprintf(what, sizeof what, "shaping %s in %s (tc qdisc %s)", dev, ns, l->delay ? "netem" : "tbf");
        return failed(what, rc, err);
    }
    return TIPC_OK;
}

static enum tipc_status node_up(struct netns_star *s, int i, const struct netns_link *l, char *err)
{
    const char *ns = s->node[i];
    char hubdev[16], addr[40];
    snprintf(hubdev, sizeof hubdev, "h%d", i);
    char a[32];
    netns_addr(i, a, sizeof a);
    snprintf(addr, sizeof addr, "%s/24", a);
    int rc = RUN(err, "ip", "netns", "add", ns);
    if (rc) return failed("creating a network namespace (ip netns add)", rc, err);
    s->made = i + 1;
    if ((rc = RUN(err, "ip", "-n", s->hub, "link", "add", hubdev, "type", "veth", "peer", "name", "eth0", "netns", ns)))
        return failed("a veth pair (ip link add type veth)", rc, err);
    if ((rc = RUN(err, "ip", "-n", s->hub, "link", "set", hubdev, "master", "br0", "up")) ||
        (rc = RUN(err, "ip", "-n", ns, "addr", "add", addr, "dev", "eth0")) ||
        (rc = RUN(err, "ip", "-n", ns, "link", "set", "eth0", "up")) ||
        (rc = RUN(err, "ip", "-n", ns, "link", "set", "lo", "up")))
        return failed("configuring a node's link (ip link set / ip addr add)", rc, err);
    if (l->delay || l->rate) { /* both ends: each direction gets the delay and the rate */
        TRY(shape(ns, "eth0", l, err));
        TRY(shape(s->hub, hubdev, l, err));
    }
    return TIPC_OK;
}

enum tipc_status netns_star_up(struct netns_star *s, int n, const struct netns_link *l)
{
    memset(s, 0, sizeof *s);
    CHECK(n >= 1 && n <= NETNS_MAX_NODES, "netns_star_up: %d nodes", n);
    s->n = n;
    snprintf(s->hub, sizeof s->hub, PREFIX "%ldh", (long)getpid());
    for (int i = 0; i < n; i++) snprintf(s->node[i], sizeof s->node[i], PREFIX "%ldn%d", (long)getpid(), i);
    char err[512];
    int rc = RUN(err, "ip", "netns", "add", s->hub);
    if (rc) return failed("creating a network namespace (ip netns add)", rc, err);
    s->hub_made = true;
    enum tipc_status st = TIPC_OK;
    if ((rc = RUN(err, "ip", "-n", s->hub, "link", "add", "br0", "type", "bridge")) ||
        (rc = RUN(err, "ip", "-n", s->hub, "link", "set", "br0", "up")))
        st = failed("a bridge (ip link add type bridge)", rc, err);
    for (int i = 0; i < n && st == TIPC_OK; i++) st = node_up(s, i, l, err);
    if (st != TIPC_OK) netns_star_down(s);
    return st;
}

static void del_ns(const char *name)
{
    char err[512];
    int rc = RUN(err, "ip", "netns", "del", name);
    if (rc) warning_msg("bench --netns: could not remove network namespace %s (exit %d: %s); remove it with "
                        "'ip netns del %s'", name, rc, err, name);
}

void netns_star_down(struct netns_star *s)
{
    for (int i = s->made - 1; i >= 0; i--) del_ns(s->node[i]);
    s->made = 0;
    if (s->hub_made) del_ns(s->hub);
    s->hub_made = false;
}

int netns_sweep_stale(void)
{
    DIR *d = opendir(NETNS_RUN_DIR);
    if (!d) return 0;
    int removed = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        long pid;
        char kind, rest[8];
        if (strncmp(e->d_name, PREFIX, strlen(PREFIX)) ||
            sscanf(e->d_name + strlen(PREFIX), "%ld%c%7s", &pid, &kind, rest) < 2 || (kind != 'h' && kind != 'n') ||
            pid <= 0 || pid == (long)getpid() || kill((pid_t)pid, 0) == 0 || errno != ESRCH)
            continue;
        fprintf(stderr, "bench --netns: removing network namespace %s left by process %ld, which is gone\n", e->d_name,
                pid);
        del_ns(e->d_name);
        removed++;
    }
    closedir(d);
    return removed;
}
