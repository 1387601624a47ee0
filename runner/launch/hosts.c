/* hosts.c: which host is which: this host's interface addresses, whether a name or address
 * is one of them, whether two names share an address. Below the node search (node.c) and the
 * scheduler's placement (sched.c), which both ask. */
#include "launch.h"

#include <netdb.h>
#include <string.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <ifaddrs.h>

#include "../../core/check.h"
#include "../../core/strv.h"
#include "../../core/banned.h"

char **launch_host_addrs(void)
{
    struct ifaddrs *ifa = NULL;
    struct strv v = STRV_INIT;
    if (getifaddrs(&ifa) == 0) {
        for (struct ifaddrs *p = ifa; p; p = p->ifa_next) {
            if (!p->ifa_addr || (p->ifa_addr->sa_family != AF_INET && p->ifa_addr->sa_family != AF_INET6))
                continue;
            char buf[NI_MAXHOST];
            socklen_t sl = p->ifa_addr->sa_family == AF_INET ? sizeof(struct sockaddr_in)
                                                             : sizeof(struct sockaddr_in6);
            if (getnameinfo(p->ifa_addr, sl, buf, sizeof buf, NULL, 0, NI_NUMERICHOST)) continue;
            char *pct = strchr(buf, '%');   /* fe80::1%eth0 */
            if (pct) *pct = 0;
            strv_push(&v, buf);
        }
        freeifaddrs(ifa);
    }
    return strv_detach(&v);
}

bool launch_host_is_one_of(const char *host, char **addrs)
{
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM}, *ai, *p;
    if (getaddrinfo(host, NULL, &hints, &ai)) return false;
    bool hit = false;
    for (p = ai; p && !hit; p = p->ai_next) {
        char buf[NI_MAXHOST];
        if (getnameinfo(p->ai_addr, p->ai_addrlen, buf, sizeof buf, NULL, 0, NI_NUMERICHOST)) continue;
        for (char **a = addrs; *a && !hit; a++) hit = !strcmp(buf, *a);
    }
    freeaddrinfo(ai);
    return hit;
}

bool launch_same_host(const char *a, const char *b)
{
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM}, *ai, *p;
    if (getaddrinfo(a, NULL, &hints, &ai)) return false;
    struct strv addrs = STRV_INIT;
    for (p = ai; p; p = p->ai_next) {
        char buf[NI_MAXHOST];
        if (getnameinfo(p->ai_addr, p->ai_addrlen, buf, sizeof buf, NULL, 0, NI_NUMERICHOST)) continue;
        strv_push(&addrs, buf);
    }
    freeaddrinfo(ai);
    bool hit = addrs.n && launch_host_is_one_of(b, addrs.v);
    strv_clear(&addrs);
    return hit;
}

int launch_match_node(char **ips, int nips, char **addrs)
{
    int found = -1;
    for (int i = 0; i < nips; i++) {
        if (!launch_host_is_one_of(ips[i], addrs)) continue;
        if (found >= 0) return -2;
        found = i;
    }
    return found;
}
