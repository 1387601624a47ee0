/* comm_verdict.h: which rank holds the job up, and in what, from every rank's last heartbeat
 * (docs/distributed.md "Stuck ranks"). The judge is whoever collects the beats: node 0's `tipc
 * launch` from its nodes' alive/N, or, under another launcher, rank 0 from the beats the ranks
 * publish in the job's store (comm_watch.c). The rule:
 *   - a rank silent for W s (its whole process stopped: SIGSTOP, a debugger, swapped out) is stuck;
 *   - else, when ranks have waited W s in one collective, the ranks not in it (still computing: a
 *     hung GPU kernel, a deadlock, a step slower than W) are stuck; if every rank is in it, the
 *     collective itself (the transport) is.
 * The verdict names the rank, its node and pid, what it was last doing, and who waits in what. */
#ifndef TIPC_COMM_VERDICT_H
#define TIPC_COMM_VERDICT_H

/* One rank's last heartbeat: collectives issued (seq), the one it is in (op, "-" for none), the
 * step, seconds in it or since the last (secs), seconds since the beat (age, the judge's clock),
 * and its process state from /proc ('T' stopped, 'R'/'S' running, '?' unknown: another host). */
struct comm_beat { int rank, node, pid; unsigned long seq; char op[24]; long step; double secs, age; char state; };

/* The verdict over n beats of a world of `world` ranks with watchdog w seconds (malloc'ed), or NULL
 * when nobody is stuck. */
char *comm_verdict(const struct comm_beat *b, int n, int world, double w);

#endif
