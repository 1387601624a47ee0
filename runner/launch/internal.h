/* internal.h: the launcher's shared state (struct launch_job: this node's part of the job; struct
 * rank_proc: one rank) and the calls between its files, bottom to top: notice.c (the failure
 * notice), probe.c, watchdog.c, join.c (the rendezvous and the watcher thread), round.c (how an
 * attempt ends, restarts), agent.c (the ranks: spawn, pump, watch). Internal to launch/. */
#ifndef TIPC_LAUNCH_INT_H
#define TIPC_LAUNCH_INT_H

#include <pthread.h>
#include <stdbool.h>
#include <sys/types.h>

#include "launch.h"
#include "rdzv_server.h"

struct rank_proc {
    int rank, local_rank, device;
    pid_t pid;
    int out_fd;          /* read end of the rank's stdout+stderr pipe, -1 once closed */
    int log_fd;          /* DIR/workerlog.RANK */
    char *line;          /* pending partial line */
    size_t nline, capline;
    int status;          /* waitpid status once reaped */
    bool reaped;
    /* its last heartbeat (comm's watchdog thread, TIPC_STATUS_FD), for the job's watchdog */
    double hb_at;        /* launcher's monotonic time of it; 0: none yet, or the rank left the collectives */
    unsigned long hb_seq;
    char hb_op[24];
    long hb_step;
    double hb_secs;      /* seconds in hb_op, or since the last collective ("-") */
};

enum stop_kind { STOP_NONE, STOP_LOCAL_FAIL, STOP_REMOTE_FAIL, STOP_SIGNAL };

struct launch_job {
    struct launch_opts *o;
    char where[48];              /* "node 1" */
    struct rdzv_server *server;  /* node 0 only */
    struct rdzv_client cl;       /* main thread's client */
    int port;                    /* the master's port (resolved when node 0 chose 0) */
    /* watcher thread: polls the failure notice, sends heartbeats, (node 0) checks other nodes */
    pthread_t watcher;
    bool watcher_on;
    int watch_pipe[2];           /* watcher -> main loop: one byte when notice/loss seen */
    pthread_mutex_t mu;
    char *notice;                /* remote failure text (owned, under mu) */
    volatile int quit;           /* main -> watcher */
    volatile double store_ok_at; /* monotonic time of the watcher's last answered request */
    bool local_done;             /* this node's ranks all exited 0 */
    int status_pipe[2];          /* ranks -> main loop: heartbeats ("hb RANK SEQ OP STEP SECS") */
    char *beats;                 /* this node's ranks' last beats, for alive/N (owned, under mu) */
    char **peer_ips;             /* [nnodes] each node's address, from its view (owned) */
    int round;                   /* the attempt: 0, then one more per restart (keys under rK/) */
    char run_id[24];             /* this launch's run id (TIPC_RUN_ID of every rank of every attempt):
                                    node 0's, from its view; a restart resumes only from its files */
    bool published;              /* this node's view is in the store: it belongs to the job there */
    char node0[96];              /* "pid P on HOST": node 0's launcher, from its view (for messages) */
};

/* notice.c: the job's failure notice. */
/* False once the watcher has not reached the store for 2 s. */
bool store_alive(const struct launch_job *J);
/* Post the first failure notice of the job (create-only: the first one wins). */
void job_post_failure(struct launch_job *J, const char *msg);
/* A failure no restart can mend (an interrupt, a lost launcher): marks the round final, then posts. */
void job_post_final(struct launch_job *J, const char *msg);
/* Copy of the remote notice the watcher saw, or NULL. */
char *job_take_notice(struct launch_job *J);

/* probe.c: TCP reachability between every pair of nodes before ranks start. */
enum tipc_status job_probe(struct launch_job *J);

/* join.c */
enum tipc_status job_join(struct launch_job *J);             /* start server (node 0), join, check views */
enum tipc_status job_join_round(struct launch_job *J);       /* join round J->round (the server runs) */
/* KEY of this round as the server stores it ("r1/alive/2"; n < 0: no "/n"), malloc'ed. */
char *job_key(const struct launch_job *J, const char *kind, int n);
void job_start_watcher(struct launch_job *J);
void job_stop_watcher(struct launch_job *J);
/* round.c: the end of an attempt. */
/* This node's ranks all exited 0: publish done/N, wait for every node's. TIPC_OK, TIPC_EDIST (the
 * job failed: a notice, a lost server) or TIPC_EINTR. */
enum tipc_status job_wait_done(struct launch_job *J);
/* The job is over: stop the watcher, publish left/N, node 0 lingers and stops the server. */
void job_leave(struct launch_job *J, bool ok);
/* Joining failed: publish left/N; node 0 waits (at most 3 s) for the nodes that joined to leave,
 * so they read the failure notice instead of a dead server; then stops the server. */
void job_abort_join(struct launch_job *J);
/* The round failed: its cause (the notice, malloc'ed) when a restart is due (restarts left, not
 * final, not interrupted), else NULL. */
char *job_restart_cause(struct launch_job *J);
/* Stop the watcher, forget the notice, say so on stderr, join round J->round + 1. */
enum tipc_status job_next_round(struct launch_job *J, const char *cause);
/* A "restart" record (restart, max_restarts, node, cause) in the run's metrics (TIPC_METRICS). */
void launch_note_restart(const struct launch_opts *o, int round, const char *cause);
/* watchdog.c: node 0's verdict on the job's heartbeats (alive[n] = node n's alive/N value,
 * NULL if none), w = --watchdog seconds: a message naming the stuck rank(s), or NULL. */
char *watchdog_verdict(const struct launch_opts *o, char **alive, double w);
/* Read this node's ranks' heartbeat lines from J->status_pipe; publish their last beats in J->beats. */
void watchdog_read_beats(struct launch_job *J, struct rank_proc *ranks, int nr);

#endif
