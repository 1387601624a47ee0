/* round.c: how a job's attempt ends. Success: every node's ranks exited 0 (done/N), each
 * node says it leaves (left/N), node 0 keeps the store up until they have. Failure: the job's
 * notice (fail) stops every node; with restarts left (`--max_restarts`, torchrun's semantics:
 * the count of failures the job survives), and no node marked the failure final (an interrupt, a
 * lost launcher), every node re-forms the job in the next round: the same world, fresh keys
 * under rK/ (docs/distributed.md "Protocol"), the ranks restarted with TIPC_RESTART_COUNT=K, and `tipc train` resumes from
 * its newest complete checkpoint (engine/model/resume.h). The round moves on the store: the
 * first failure of round K (the fail key, created once) is what every node reads as the cause. */
#include "internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../core/check.h"
#include "../../core/interrupt.h"
#include "../../engine/io/metrics.h"
#include "../../core/time.h"
#include "../../core/banned.h"

static char *node_key(const char *kind, int n) { return xasprintf("%s/%d", kind, n); }

/* Node 0: keep the store up, at most `secs`, until every node that joined has left (or, once
 * heartbeats run, gone silent for 2 s), so the others read the outcome instead of a dead server;
 * then stop it. */
static void linger(struct launch_job *J, double secs, bool heartbeats)
{
    if (!J->server) return;
    double deadline = now_seconds() + secs;
    for (int i = 1; i < J->o->nnodes; i++) {
        char *n = job_key(J, "node", i), *l = job_key(J, "left", i), *a = job_key(J, "alive", i);
        while (now_seconds() < deadline && rdzv_server_key_age(J->server, n) >= 0 && rdzv_server_key_age(J->server, l) < 0) {
            double age = rdzv_server_key_age(J->server, a);
            if (heartbeats && (age > 2.0 || (age < 0 && rdzv_server_key_age(J->server, n) > 2.0))) break;
            usleep(50 * 1000);
        }
        free(n), free(l), free(a);
    }
    rdzv_server_stop(J->server);
    J->server = NULL;
}

/* Wait until every node has key kind/i (or a notice arrives, or the deadline passes). */
static bool wait_all(struct launch_job *J, const char *kind, double deadline, bool stop_on_notice)
{
    for (int i = 0; i < J->o->nnodes; i++) {
        char *k = node_key(kind, i);
        bool found = false;
        while (!found && now_seconds() < deadline) {
            if (stop_on_notice && (J->notice || interrupted())) break;
            if (rdzv_get(&J->cl, k, 300, true, &found, NULL, NULL) != TIPC_OK) break;
        }
        free(k);
        if (!found) return false;
    }
    return true;
}

enum tipc_status job_wait_done(struct launch_job *J)
{
    const struct launch_opts *o = J->o;
    if (!store_alive(J))
        return error_msg(TIPC_EDIST, "launch: %s: this node's ranks finished, but the rendezvous store is unreachable", J->where);
    char *k = node_key("done", o->node_rank);
    rdzv_put(&J->cl, k, "1", 1, false, NULL);
    free(k);
    while (!wait_all(J, "done", now_seconds() + 3600, true)) {   /* all succeed or all fail */
        char *n = job_take_notice(J);
        if (!n && interrupted()) {
            char *msg = xasprintf("node %d (%s) was interrupted while waiting for the other nodes", o->node_rank, o->self_ip);
            job_post_final(J, msg);
            error_msg(TIPC_EINTR, "launch: %s", msg);
            free(msg);
            return TIPC_EINTR;
        }
        if (n) {
            error_msg(TIPC_EDIST, "launch: %s: this node's ranks finished, but the job failed: %s", J->where, n);
            free(n);
            return TIPC_EDIST;
        }
        if (J->cl.last_http == 0)
            return error_msg(TIPC_EDIST, "launch: %s: lost the rendezvous server before every node finished", J->where);
    }
    return TIPC_OK;
}

void job_leave(struct launch_job *J, bool ok)
{
    bool alive = store_alive(J);
    job_stop_watcher(J);
    char *k = node_key("left", J->o->node_rank);
    if (alive) rdzv_put(&J->cl, k, "1", 1, false, NULL);
    free(k);
    linger(J, ok ? 10 : 5, true);
}

void job_abort_join(struct launch_job *J)
{
    job_stop_watcher(J);
    if (!J->cl.base) return;
    char *k = node_key("left", J->o->node_rank);
    /* only a node that joined says it left: one refused at the door (another job's, a duplicate
     * node) writes nothing into the store of the job that holds it */
    if (J->published) rdzv_put(&J->cl, k, "1", 1, false, NULL);
    free(k);
    if (!J->server) return;
    linger(J, 3, false);   /* no heartbeats before the ranks start */
}

/* ---- restarts ------------------------------------------------------------------------------- */
char *job_restart_cause(struct launch_job *J)
{
    if (J->o->max_restarts <= J->round || interrupted()) return NULL;
    bool found = false;
    char *cause = NULL;
    J->cl.connect_timeout_ms = 1000;
    /* the store decides, so every node decides alike: a failure notice of this round, not final */
    if (rdzv_get(&J->cl, "final", 0, true, &found, NULL, NULL) != TIPC_OK || found) return NULL;
    if (rdzv_get(&J->cl, "fail", 0, true, &found, &cause, NULL) != TIPC_OK || !found) {
        free(cause);
        return NULL;
    }
    return cause;
}

enum tipc_status job_next_round(struct launch_job *J, const char *cause)
{
    job_stop_watcher(J);
    pthread_mutex_lock(&J->mu);
    free(J->notice);
    J->notice = NULL;
    pthread_mutex_unlock(&J->mu);
    char b[64];
    while (read(J->watch_pipe[0], b, sizeof b) > 0) {}
    J->round++;
    fprintf(stderr, "launch: %s: restart %d of %d (--max_restarts): %s; the job re-forms (rendezvous round %d) and "
                    "training resumes from its newest complete checkpoint\n",
            J->where, J->round, J->o->max_restarts, cause, J->round);
    return job_join_round(J);
}

void launch_note_restart(const struct launch_opts *o, int round, const char *cause)
{
    if (!o->metrics || !*o->metrics) return;
    struct metrics m;
    if (metrics_open(&m, o->metrics, o->stage) != TIPC_OK) return;   /* said; the restart goes on */
    metrics_emit(&m, "restart", json_pack("{s:i, s:i, s:i, s:s}", "restart", round, "max_restarts", o->max_restarts,
                                          "node", o->node_rank, "cause", cause));
    metrics_close(&m);
}
