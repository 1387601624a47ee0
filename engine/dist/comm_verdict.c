/* comm_verdict.c: who holds the job up, from the ranks' last heartbeats (comm_verdict.h). */
#include "comm_verdict.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../core/check.h"
#include "../../core/banned.h"

static const char *state_text(char s)
{
    switch (s) {
    case 'T': return "stopped (SIGSTOP, or a debugger)";
    case 't': return "stopped by a debugger";
    case 'D': return "in uninterruptible sleep (I/O or a driver)";
    case 'Z': return "a zombie";
    case 'R': case 'S': return "running";
    default: return "state unknown";
    }
}

/* What the rank was last doing, from its last beat. */
static char *doing(const struct comm_beat *b)
{
    if (strcmp(b->op, "-"))
        return xasprintf("last seen in %s #%lu at step %ld, %.0f s into it", b->op, b->seq, b->step, b->secs + b->age);
    return xasprintf("last seen computing at step %ld, %.0f s after its collective #%lu", b->step, b->secs + b->age,
                     b->seq);
}

static char *append(char *s, const char *sep, char *t /* owned */)
{
    char *r = xasprintf("%s%s%s", s, *s ? sep : "", t);
    free(s), free(t);
    return r;
}

char *comm_verdict(const struct comm_beat *b, int n, int world, double w)
{
    char *stuck = xstrdup(""), *waiting = xstrdup(""), *msg = NULL;
    for (int i = 0; i < n; i++)
        if (b[i].age > w) {
            char *d = doing(&b[i]);
            stuck = append(stuck, "; ", xasprintf("rank %d (node %d, pid %d) sent no heartbeat for %.0f s, process %s, %s",
                                                  b[i].rank, b[i].node, b[i].pid, b[i].age, state_text(b[i].state), d));
            free(d);
        }
    unsigned long top = 0;
    int nwait = 0;
    for (int i = 0; i < n; i++)
        if (b[i].age <= w && strcmp(b[i].op, "-") && b[i].secs + b[i].age > w) {
            nwait++;
            if (b[i].seq > top) top = b[i].seq;
        }
    for (int i = 0; i < n; i++)   /* who waits, and how long, whatever the verdict */
        if (b[i].age <= w && strcmp(b[i].op, "-"))
            waiting = append(waiting, ", ", xasprintf("rank %d in %s #%lu (step %ld) for %.0f s", b[i].rank, b[i].op,
                                                      b[i].seq, b[i].step, b[i].secs + b[i].age));
    if (!*stuck && nwait) {   /* nobody silent: who has not reached the collective the others wait in? */
        for (int i = 0; i < n; i++) {
            bool in_it = strcmp(b[i].op, "-") && b[i].seq == top;
            if (in_it || b[i].age > w) continue;
            char *d = doing(&b[i]);
            stuck = append(stuck, "; ", xasprintf("rank %d (node %d, pid %d) has not reached collective #%lu: "
                                                  "process %s, %s", b[i].rank, b[i].node, b[i].pid, top,
                                                  state_text(b[i].state), d));
            free(d);
        }
        if (n < world) stuck = append(stuck, "; ", xasprintf("%d rank(s) never reported a heartbeat", world - n));
    }
    if (*stuck)
        msg = xasprintf("watchdog (%.0f s): stuck: %s%s%s", w, stuck, *waiting ? "; waiting: " : "", waiting);
    else if (nwait && nwait == world)
        msg = xasprintf("watchdog (%.0f s): every rank waits in the same collective, none is missing from it: the "
                        "transport between them is stuck; waiting: %s", w, waiting);
    free(stuck), free(waiting);
    return msg;
}
