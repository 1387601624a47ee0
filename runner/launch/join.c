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
#include "../../core/interrupt.h"
#include "../../core/sha256.h"
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

struct view { int nnodes, nproc, restarts; char ip[256], fp[40]; const char *cmd; };

static bool parse_view(const char *s, struct view *v)
{
    memset(v, 0, sizeof *v);
    const char *fp = strstr(s, " fp="), *cmd = strstr(s, " cmd="), *rs = strstr(s, " restarts=");
    v->cmd = cmd ? cmd + 5 : "?";
    if (rs && (!cmd || rs < cmd)) sscanf(rs + 10, "%d", &v->restarts);
    return sscanf(s, "nnodes=%d nproc=%d ip=%255s", &v->nnodes, &v->nproc, v->ip) == 3 && fp &&
           sscanf(fp, " fp=%39s", v->fp) == 1;
}

/* A flag whose value may differ per node (where this node writes): "--output-dir", "--log_dir",
 * "--save-inference-dir", "-o Global.output_dir=...". */
static bool per_node_flag(const char *w)
{
    if (w[0] != '-' && !strstr(w, "output_dir=")) return false;
    size_t n = strcspn(w, "=");
    for (const char *k = w; k < w + n; k++)
        if (!strncmp(k, "output", 6) || !strncmp(k, "save", 4) || !strncmp(k, "log_dir", 7) || !strncmp(k, "log-dir", 7))
            return true;
    return false;
}

/* The job's fingerprint: what every node must agree on. `tipc run` passes one derived from its
 * config, mode and stage (TIPC_JOB_FINGERPRINT; a user may set one too); otherwise the command's
 * words, except the values of per-node output flags (nodes may each write their own folder).
 * World shape is checked on its own (check_view). */
static char *job_fingerprint(const struct launch_opts *o)
{
    const char *run = getenv("TIPC_JOB_FINGERPRINT");
    struct sha256 h;
    char md[65];
    sha256_init(&h);
    if (run && *run) sha256_update(&h, run, strlen(run) + 1);
    else
        for (int i = 0; i < o->ncmd; i++) {
            const char *w = o->cmd[i];
            bool masked = per_node_flag(w);
            sha256_update(&h, w, masked ? strcspn(w, "=") : strlen(w) + 1);
            if (masked && !strchr(w, '=') && i + 1 < o->ncmd) i++;   /* "--output-dir DIR": skip DIR */
        }
    sha256_final_hex(&h, md);
    return xstrndup(md, 16);
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

/* Wait for the server to answer at all (node 0 may start later than we do). */
static enum tipc_status wait_for_server(struct launch_job *J, double deadline)
{
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
        usleep(200 * 1000);
    }
}

static enum tipc_status check_view(struct launch_job *J, int i, const char *val)
{
    const struct launch_opts *o = J->o;
    struct view v;
    if (!parse_view(val, &v))
        return error_msg(TIPC_EDIST, "launch: %s: node %d published a view tipc cannot read: '%s'", J->where, i, val);
    if (!J->peer_ips) J->peer_ips = xcalloc((size_t)o->nnodes, sizeof *J->peer_ips);
    free(J->peer_ips[i]);
    J->peer_ips[i] = xstrdup(v.ip);
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
    if (v.nnodes == o->nnodes && v.nproc == o->nproc) {
        char *fp = job_fingerprint(o);
        bool same = !strcmp(fp, v.fp);
        if (same) {
            free(fp);
            return TIPC_OK;
        }
        char *mine = cmd_text(o);
        char *msg = xasprintf("two different jobs met on one rendezvous store (job id '%s'): node %d (%s) runs "
                              "'%s' (job fingerprint %s) but node %d (%s) runs '%s' (job fingerprint %s)",
                              o->job_id, i, v.ip, v.cmd, v.fp, o->node_rank, o->self_ip, mine, fp);
        job_post_failure(J, msg);
        error_msg(TIPC_EDIST, "launch: %s: %s", J->where, msg);
        error_hint("start every node of a job with the same command; give different jobs their own --master "
                   "port or --job_id (`tipc run` derives the job id from its config, mode and stage)");
        free(msg), free(mine), free(fp);
        return TIPC_EDIST;
    }
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

/* Name every node whose view is still missing, post the notice, fail. */
static enum tipc_status join_timed_out(struct launch_job *J, int first_missing)
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
    char *msg = xasprintf("%s never joined within %d s (world size %d)", names, J->o->join_timeout_s,
                          J->o->nnodes * J->o->nproc);
    job_post_failure(J, msg);
    error_msg(TIPC_EDIST, "launch: %s: %s", J->where, msg);
    error_hint("start `tipc launch` on those nodes with the same --ips/--master, or raise --join_timeout");
    free(msg), free(names);
    return TIPC_EDIST;
}

static enum tipc_status publish_view(struct launch_job *J)
{
    const struct launch_opts *o = J->o;
    char host[256] = "?";
    gethostname(host, sizeof host - 1);
    char *fp = job_fingerprint(o), *cmd = cmd_text(o);
    char *view = xasprintf("nnodes=%d nproc=%d ip=%s host=%s pid=%d restarts=%d fp=%s cmd=%s", o->nnodes, o->nproc,
                           o->self_ip, host, (int)getpid(), o->max_restarts, fp, cmd);
    free(fp), free(cmd);
    char *k = node_key("node", o->node_rank);
    bool created = false;
    enum tipc_status st = rdzv_put(&J->cl, k, view, strlen(view), true, &created);
    if (!st && !created) {
        char *other = NULL;
        bool found;
        rdzv_get(&J->cl, k, 0, false, &found, &other, NULL);
        st = error_msg(TIPC_EDIST, "launch: node %d is claimed twice: by '%s' and by this launcher ('%s')",
                       o->node_rank, other ? other : "?", view);
        error_hint("every node needs its own --node_ip / entry of --ips");
        free(other);
    }
    free(k), free(view);
    return st;
}

/* Meet the other nodes in round J->round: publish this node's view, check everyone's. */
enum tipc_status job_join_round(struct launch_job *J)
{
    struct launch_opts *o = J->o;
    rdzv_client_set_round(&J->cl, J->round);
    double deadline = now_seconds() + o->join_timeout_s;
    TRY(wait_for_server(J, deadline));
    TRY(publish_view(J));
    for (int i = 0; i < o->nnodes; i++) {
        char *k = node_key("node", i), *val = NULL;
        bool found = false;
        enum tipc_status st = TIPC_OK;
        while (!found && st == TIPC_OK) {
            double left = deadline - now_seconds();
            if (left <= 0) break;
            st = rdzv_get(&J->cl, k, left < 0.5 ? (int)(left * 1000) + 1 : 500, false, &found, &val, NULL);
            if (!st && !found) st = check_notice(J);
            if (!st && !found && interrupted()) st = TIPC_EINTR;
        }
        free(k);
        if (st) return st;
        if (!found) return join_timed_out(J, i);
        st = check_view(J, i, val);
        free(val);
        if (st) return st;
    }
    TRY(check_notice(J));
    return job_probe(J);
}

enum tipc_status job_join(struct launch_job *J)
{
    struct launch_opts *o = J->o;
    J->port = o->master_port;
    if (o->node_rank == 0) {
        /* on loopback every node's clients share one address: room for all of them (launcher main
         * and watcher, one per rank and its watchdog's notice) */
        int world = o->nnodes * o->nproc;
        TRY(rdzv_server_start_for(&J->server, o->master_host, o->master_port, o->job_id, o->token,
                                  3 * o->nnodes + 2 * world + 16));
        J->port = rdzv_server_port(J->server);
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
