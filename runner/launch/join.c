/* join.c: the launcher's side of the job's rendezvous. Node 0 serves the KV store; every
 * node publishes its view (node/N), waits for all views, checks they agree, then keeps a watcher
 * thread that sends heartbeats (alive/N) and long-polls the job's failure notice (fail). Node 0's
 * watcher also declares a node dead when its heartbeats stop. Keys: docs/distributed.md "Protocol". */
#include "internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../../core/check.h"
#include "../../core/rng.h"
#include "../../core/interrupt.h"
#include "../../core/time.h"
#include "../../core/banned.h"

/* A key as the clients name it (their base adds the round's rK/); job_key() names it as the server
 * stores it. */
static char *node_key(const char *kind, int n) { return xasprintf("%s/%d", kind, n); }

char *job_key(const struct launch_job *J, const char *kind, int n)
{
    char r[24] = "";
    if (J->round > 0) snprintf(r, sizeof r, "r%d/", J->round);
    return n < 0 ? xasprintf("%s%s", r, kind) : xasprintf("%s%s/%d", r, kind, n);
}

struct view { int nnodes, nproc, restarts, pid; char ip[256], fp[40], run[24], host[64]; const char *cmd; };

static bool parse_view(const char *s, struct view *v)
{
    memset(v, 0, sizeof *v);
    const char *fp = strstr(s, " fp="), *cmd = strstr(s, " cmd="), *rs = strstr(s, " restarts=");
    const char *pid = strstr(s, " pid="), *host = strstr(s, " host=");
    v->cmd = cmd ? cmd + 5 : "?";
    if (rs && (!cmd || rs < cmd)) sscanf(rs + 10, "%d", &v->restarts);
    if (pid && (!cmd || pid < cmd)) sscanf(pid + 5, "%d", &v->pid);
    if (!host || (cmd && host > cmd) || sscanf(host + 6, "%63s", v->host) != 1) snprintf(v->host, sizeof v->host, "?");
    const char *run = strstr(s, " run=");
    if (run && (!cmd || run < cmd)) sscanf(run + 5, "%23[0-9a-f]", v->run);
    return sscanf(s, "nnodes=%d nproc=%d ip=%255s", &v->nnodes, &v->nproc, v->ip) == 3 && fp &&
           sscanf(fp, " fp=%39s", v->fp) == 1;
}

/* The command, printable and short, for messages naming both sides of a mismatch. */
static char *cmd_text(const struct launch_opts *o)
{
    char *s = xstrdup("");
    for (int i = 0; i < o->ncmd && strlen(s) < 160; i++) {
        char *t = xasprintf("%s%s%s", s, i ? " " : "", o->cmd[i]);
        free(s);
        s = t;
    }
    if (strlen(s) > 160) memcpy(s + 157, "...", 4);
    for (char *p = s; *p; p++)
        if ((unsigned char)*p < 0x20 || *p == 0x7f) *p = '?';
    return s;
}

/* While a node waits for others: a line every WAIT_NOTE_SECONDS naming whom it waits for, so a
 * person watching knows it is not hung and which node to look at. */
#define WAIT_NOTE_SECONDS 5.0

/* Wait for the server to answer at all (node 0 may start later than we do). */
static enum tipc_status wait_for_server(struct launch_job *J, double deadline)
{
    double t0 = now_seconds(), next_note = t0 + WAIT_NOTE_SECONDS;
    for (;;) {
        bool found;
        enum tipc_status st = rdzv_get(&J->cl, "node/0", 0, true, &found, NULL, NULL);
        if (st == TIPC_OK) return TIPC_OK;
        if (J->cl.last_http != 0) return st;   /* 403, unknown job: printed already */
        if (interrupted()) return TIPC_EINTR;
        if (now_seconds() > deadline) {
            error_msg(TIPC_EDIST, "launch: %s: the rendezvous server %s:%d (node 0) did not answer within %d s",
                      J->where, J->o->master_host, J->port, J->o->join_timeout_s);
            error_hint("start `tipc launch` on node 0 (%s) with the same --ips/--master; check the port and firewall",
                       J->o->master_host);
            return TIPC_EDIST;
        }
        if (now_seconds() >= next_note) {
            fprintf(stderr, "launch: %s: waiting for the rendezvous server %s:%d (node 0): %.0f s of %d s\n",
                    J->where, J->o->master_host, J->port, now_seconds() - t0, J->o->join_timeout_s);
            next_note += WAIT_NOTE_SECONDS;
        }
        usleep(200 * 1000);
    }
}

/* Node i's view against this node's. `newcomer`: this node has not published its own view yet (it
 * reads node 0's first): when node 0 runs another job, this launch alone stops, and writes nothing
 * into that job's store; the job that holds the store runs on (a second job never harms the first). */
static enum tipc_status check_view(struct launch_job *J, int i, const char *val, bool newcomer)
{
    const struct launch_opts *o = J->o;
    struct view v;
    if (!parse_view(val, &v))
        return error_msg(TIPC_EDIST, "launch: %s: node %d published a view tipc cannot read: '%s'", J->where, i, val);
    if (!J->peer_ips) J->peer_ips = xcalloc((size_t)o->nnodes, sizeof *J->peer_ips);
    free(J->peer_ips[i]);
    J->peer_ips[i] = xstrdup(v.ip);
    if (i == 0 && v.run[0]) snprintf(J->run_id, sizeof J->run_id, "%s", v.run);   /* the job's: node 0's */
    if (i == 0) snprintf(J->node0, sizeof J->node0, "pid %d on %s", v.pid, v.host);
    char *fp = launch_fingerprint(o);
    if (strcmp(fp, v.fp)) {   /* another job: first, whatever its world */
        char *mine = cmd_text(o);
        char *msg = xasprintf("two different jobs met on one rendezvous store (job id '%s'): node %d (%s, pid %d on %s) "
                              "runs '%s' (job fingerprint %s) but node %d (%s) runs '%s' (job fingerprint %s)",
                              o->job_id, i, v.ip, v.pid, v.host, v.cmd, v.fp, o->node_rank, o->self_ip, mine, fp);
        if (!newcomer) job_post_failure(J, msg);
        error_msg(TIPC_EDIST, "launch: %s: %s%s", J->where, msg,
                  newcomer ? "; this launch stops here and leaves the running job alone" : "");
        error_hint("start every node of a job with the same command; give different jobs their own --master "
                   "port or --job_id (`tipc run` derives the job id from its config, mode and stage)");
        free(msg), free(mine), free(fp);
        return TIPC_EDIST;
    }
    free(fp);
    if (v.nnodes == o->nnodes && v.nproc == o->nproc && v.restarts != o->max_restarts) {
        char *msg = xasprintf("node %d (%s) allows %d restarts (--max_restarts) but node %d (%s) allows %d: the nodes "
                              "would disagree on whether a failure ends the job", i, v.ip, v.restarts, o->node_rank,
                              o->self_ip, o->max_restarts);
        job_post_failure(J, msg);
        error_msg(TIPC_EDIST, "launch: %s: %s", J->where, msg);
        error_hint("start every node with the same --max_restarts");
        free(msg);
        return TIPC_EDIST;
    }
    if (v.nnodes == o->nnodes && v.nproc == o->nproc) return TIPC_OK;
    char *msg = xasprintf("world size mismatch: node %d (%s) has nnodes=%d nproc_per_node=%d (world %d) but "
                          "node %d (%s) has nnodes=%d nproc_per_node=%d (world %d)",
                          i, v.ip, v.nnodes, v.nproc, v.nnodes * v.nproc, o->node_rank, o->self_ip,
                          o->nnodes, o->nproc, o->nnodes * o->nproc);
    job_post_failure(J, msg);
    error_msg(TIPC_EDIST, "launch: %s: %s", J->where, msg);
    error_hint("start every node with the same --ips/--nnodes and --gpus/--nproc_per_node");
    free(msg);
    return TIPC_EDIST;
}

static enum tipc_status check_notice(struct launch_job *J)
{
    bool found;
    char *v = NULL;
    if (rdzv_get(&J->cl, "fail", 0, true, &found, &v, NULL) == TIPC_OK && found) {
        error_msg(TIPC_EDIST, "launch: %s: the job failed while joining: %s", J->where, v);
        free(v);
        return TIPC_EDIST;
    }
    return TIPC_OK;
}

/* "node 1 (10.0.0.2, ranks 2-3), ...": every node from first_missing on whose view is missing. */
static char *missing_nodes(struct launch_job *J, int first_missing)
{
    char *names = xstrdup("");
    for (int i = first_missing; i < J->o->nnodes; i++) {
        bool found = false;
        char *k = node_key("node", i);
        rdzv_get(&J->cl, k, 0, true, &found, NULL, NULL);
        free(k);
        if (found) continue;
        int r0 = i * J->o->nproc, r1 = r0 + J->o->nproc - 1;
        char *t = xasprintf("%s%snode %d (%s, rank%s %d%s%.0d)", names, *names ? ", " : "", i,
                            J->o->nips ? J->o->ips[i] : "?", r1 > r0 ? "s" : "", r0, r1 > r0 ? "-" : "",
                            r1 > r0 ? r1 : 0);
        free(names);
        names = t;
    }
    return names;
}

/* Name every node whose view is still missing, post the notice, fail. */
static enum tipc_status join_timed_out(struct launch_job *J, int first_missing)
{
    char *names = missing_nodes(J, first_missing);
    char *msg = xasprintf("%s never joined within %d s (world size %d)", names, J->o->join_timeout_s,
                          J->o->nnodes * J->o->nproc);
    job_post_failure(J, msg);
    error_msg(TIPC_EDIST, "launch: %s: %s", J->where, msg);
    error_hint("start `tipc launch` on those nodes with the same --ips/--master, or raise --join_timeout");
    char from[64];
    unsigned long refused = J->server ? rdzv_server_refused(J->server, from, sizeof from) : 0;
    if (refused)   /* a node of this job with another token looks like a stranger to the store */
        error_hint("the store refused %lu connection%s for a wrong token (the last from %s): a node started with "
                   "another command, job id or TIPC_JOB_TOKEN, or a client of another job", refused,
                   refused == 1 ? "" : "s", from);
    free(msg), free(names);
    return TIPC_EDIST;
}

static enum tipc_status publish_view(struct launch_job *J)
{
    const struct launch_opts *o = J->o;
    char host[256] = "?";
    gethostname(host, sizeof host - 1);
    char *fp = launch_fingerprint(o), *cmd = cmd_text(o);
    char *view = xasprintf("nnodes=%d nproc=%d ip=%s host=%s pid=%d restarts=%d run=%s fp=%s cmd=%s", o->nnodes,
                           o->nproc, o->self_ip, host, (int)getpid(), o->max_restarts, J->run_id, fp, cmd);
    free(fp), free(cmd);
    char *k = node_key("node", o->node_rank);
    bool created = false;
    enum tipc_status st = rdzv_put(&J->cl, k, view, strlen(view), true, &created);
    J->published = !st && created;   /* from now on this node is part of the job (left/N, notices) */
    if (!st && !created) {
        char *other = NULL;
        bool found;
        rdzv_get(&J->cl, k, 0, false, &found, &other, NULL);
        st = error_msg(TIPC_EDIST, "launch: node %d is claimed twice: by '%s' and by this launcher ('%s'); job '%s' "
                       "(its node 0 is %s) has that node already: this launch stops here and leaves it alone",
                       o->node_rank, other ? other : "?", view, o->job_id, *J->node0 ? J->node0 : "(unknown)");
        error_hint("every node needs its own --node_ip / entry of --ips; two runs of one job on one port need their "
                   "own --master port");
        free(other);
    }
    free(k), free(view);
    return st;
}

/* Wait for node i's view (until deadline): *val, TIPC_OK; or the join's failure (timeout, notice).
 * Every WAIT_NOTE_SECONDS (from t0, *next_note) a line names the nodes still missing. */
static enum tipc_status wait_view(struct launch_job *J, int i, double t0, double deadline, double *next_note,
                                  char **val)
{
    char *k = node_key("node", i);
    bool found = false;
    enum tipc_status st = TIPC_OK;
    *val = NULL;
    while (!found && st == TIPC_OK) {
        double left = deadline - now_seconds();
        if (left <= 0) break;
        if (now_seconds() >= *next_note) {
            char *names = missing_nodes(J, i);
            fprintf(stderr, "launch: %s: waiting for %s to join: %.0f s of %d s\n", J->where, names,
                    now_seconds() - t0, J->o->join_timeout_s);
            free(names);
            *next_note += WAIT_NOTE_SECONDS;
        }
        st = rdzv_get(&J->cl, k, left < 0.5 ? (int)(left * 1000) + 1 : 500, false, &found, val, NULL);
        if (!st && !found) st = check_notice(J);
        if (!st && !found && interrupted()) st = TIPC_EINTR;
    }
    free(k);
    return st ? st : found ? TIPC_OK : join_timed_out(J, i);
}

/* Meet the other nodes in round J->round: check node 0's view (it holds the store: a node of
 * another job stops here, before it writes anything), publish this node's, check everyone's. */
enum tipc_status job_join_round(struct launch_job *J)
{
    struct launch_opts *o = J->o;
    rdzv_client_set_round(&J->cl, J->round);
    double t0 = now_seconds(), deadline = t0 + o->join_timeout_s, next_note = t0 + WAIT_NOTE_SECONDS;
    char *val = NULL;
    TRY(wait_for_server(J, deadline));
    if (o->node_rank != 0) {
        TRY(wait_view(J, 0, t0, deadline, &next_note, &val));
        enum tipc_status st = check_view(J, 0, val, !J->published);
        free(val);
        TRY(st);
    }
    TRY(publish_view(J));
    for (int i = 0; i < o->nnodes; i++) {
        TRY(wait_view(J, i, t0, deadline, &next_note, &val));
        enum tipc_status st = check_view(J, i, val, false);
        free(val);
        TRY(st);
    }
    TRY(check_notice(J));
    return job_probe(J);
}

/* Node 0 found its port taken: if a tipc store answers there, name the job that holds it (its
 * node 0's view when it is this very job started twice, else what its store says of itself). */
static void name_port_holder(struct launch_job *J)
{
    const struct launch_opts *o = J->o;
    struct rdzv_client c;
    char *body = NULL;
    if (rdzv_client_init(&c, o->master_host, o->master_port, o->job_id, o->token, J->where) != TIPC_OK) {
        rdzv_client_free(&c);
        return;
    }
    c.connect_timeout_ms = 1000;
    long code = rdzv_fetch(&c, "node/0", &body);
    struct view v;
    if (code == 200 && body && parse_view(body, &v))
        error_msg(TIPC_EDIST, "launch: %s: the port is held by another launch of this same job (job id '%s'): its "
                  "node 0 (pid %d on %s) runs '%s'; this launch stops here and leaves it alone", J->where, o->job_id,
                  v.pid, v.host, v.cmd);
    else if (code == 403 && body && *body)
        error_msg(TIPC_EDIST, "launch: %s: the port is held by another tipc job: %s; this launch stops here and "
                  "leaves it alone", J->where, body);
    free(body);
    rdzv_client_free(&c);
}

enum tipc_status job_join(struct launch_job *J)
{
    struct launch_opts *o = J->o;
    J->port = o->master_port;
    random_hex(J->run_id, 8);   /* a fresh one per launch, kept for its restarts; node 0's is the job's */
    if (o->node_rank == 0) {
        /* on loopback every node's clients share one address: room for all of them (launcher main
         * and watcher, one per rank and its watchdog's notice) */
        int world = o->nnodes * o->nproc;
        enum tipc_status st = rdzv_server_start_for(&J->server, o->master_host, o->master_port, o->job_id, o->token,
                                                    3 * o->nnodes + 2 * world + 16);
        if (st == TIPC_EDIST && errno == EADDRINUSE) name_port_holder(J);
        TRY(st);
        J->port = rdzv_server_port(J->server);
        /* what the store tells a client with another token: which job holds this port */
        char host[256] = "?", *fp = launch_fingerprint(o);
        gethostname(host, sizeof host - 1);
        char *about = xasprintf("this store serves job '%s' (job fingerprint %s): its node 0 is tipc launch pid %d "
                                "on %s", o->job_id, fp, (int)getpid(), host);
        rdzv_server_set_about(J->server, about);
        free(about), free(fp);
    }
    TRY(rdzv_client_init(&J->cl, o->master_host, J->port, o->job_id, o->token, J->where));
    return job_join_round(J);
}

/* ---- watcher thread ------------------------------------------------------------------------- */
static void notify(struct launch_job *J, char *msg)
{
    pthread_mutex_lock(&J->mu);
    if (!J->notice) J->notice = msg;
    else free(msg);
    pthread_mutex_unlock(&J->mu);
    char b = 'F';
    ssize_t w = write(J->watch_pipe[1], &b, 1);
    (void)w;
}

/* Node 0: a node that joined, is not done/left, and has sent no heartbeat for heartbeat_s is dead. */
static void check_heartbeats(struct launch_job *J, struct rdzv_client *c, double started)
{
    const struct launch_opts *o = J->o;
    if (now_seconds() - started < o->heartbeat_s) return;
    for (int i = 1; i < o->nnodes; i++) {
        char *k = job_key(J, "alive", i), *d = job_key(J, "done", i), *l = job_key(J, "left", i);
        double age = rdzv_server_key_age(J->server, k);
        bool gone = rdzv_server_key_age(J->server, d) >= 0 || rdzv_server_key_age(J->server, l) >= 0;
        if (!gone && (age < 0 || age > o->heartbeat_s)) {
            char *msg = xasprintf("node %d (%s) sent no heartbeat for %d s: its launcher died or the network "
                                  "to it is down", i, o->nips ? o->ips[i] : "?", o->heartbeat_s);
            bool created;   /* a launcher that is gone cannot re-join: no restart */
            rdzv_put(c, "final", "1", 1, true, &created);
            rdzv_put(c, "fail", msg, strlen(msg), true, &created);
            free(msg);
        }
        free(k), free(d), free(l);
    }
}

/* Node 0: judge every node's heartbeats (alive/N); post the verdict as the job's failure notice. */
static void check_stall(struct launch_job *J, struct rdzv_client *c)
{
    const struct launch_opts *o = J->o;
    if (o->watchdog_s <= 0) return;
    char **alive = xcalloc((size_t)o->nnodes, sizeof *alive);
    for (int i = 0; i < o->nnodes; i++) {
        char *k = job_key(J, "alive", i);
        alive[i] = rdzv_server_get_copy(J->server, k);
        free(k);
    }
    char *msg = watchdog_verdict(o, alive, o->watchdog_s);
    if (msg) {
        bool created;
        rdzv_put(c, "fail", msg, strlen(msg), true, &created);
        free(msg);
    }
    for (int i = 0; i < o->nnodes; i++) free(alive[i]);
    free(alive);
}

static void *watcher_main(void *arg)
{
    struct launch_job *J = arg;
    const struct launch_opts *o = J->o;
    struct rdzv_client c;
    char who[64];
    snprintf(who, sizeof who, "%s (watcher)", J->where);
    rdzv_client_init(&c, o->master_host, J->port, o->job_id, o->token, who);
    rdzv_client_set_round(&c, J->round);
    c.connect_timeout_ms = 1000;
    char *alive = node_key("alive", o->node_rank);
    double started = now_seconds(), last_ok = now_seconds();
    while (!J->quit) {
        bool found = false;
        char *v = NULL;
        pthread_mutex_lock(&J->mu);
        char *beats = xstrdup(J->beats && *J->beats ? J->beats : "-");
        pthread_mutex_unlock(&J->mu);
        enum tipc_status st = rdzv_put(&c, alive, beats, strlen(beats), false, NULL);
        free(beats);
        if (!st) st = rdzv_get(&c, "fail", 500, true, &found, &v, NULL);
        if (!st) J->store_ok_at = last_ok = now_seconds();
        if (found) {
            notify(J, v);
            break;
        }
        if (st && now_seconds() - last_ok > 3.0) {
            notify(J, xasprintf("lost the rendezvous server %s:%d for 3 s: node 0's launcher is gone",
                                o->master_host, J->port));
            break;
        }
        if (st) usleep(200 * 1000);
        if (J->server) check_heartbeats(J, &c, started), check_stall(J, &c);
    }
    free(alive);
    rdzv_client_free(&c);
    return NULL;
}

void job_start_watcher(struct launch_job *J)
{
    J->quit = 0;
    J->store_ok_at = now_seconds();
    J->watcher_on = pthread_create(&J->watcher, NULL, watcher_main, J) == 0;
}

void job_stop_watcher(struct launch_job *J)
{
    if (!J->watcher_on) return;
    J->quit = 1;
    pthread_join(J->watcher, NULL);
    J->watcher_on = false;
}
