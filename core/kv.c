/* kv.c: the client of the job's HTTP key-value store (libcurl). Protocol in kv.h. */
#include "kv.h"

#include <curl/curl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "banned.h"

/* ---- client ---------------------------------------------------------------------------------- */
static pthread_once_t curl_once = PTHREAD_ONCE_INIT;
static void curl_init_once(void) { curl_global_init(CURL_GLOBAL_DEFAULT); }

enum tipc_status rdzv_client_init(struct rdzv_client *c, const char *host, int port, const char *job,
                                  const char *token, const char *where)
{
    memset(c, 0, sizeof *c);
    pthread_once(&curl_once, curl_init_once);
    if (!host || !*host) return error_msg(TIPC_EDIST, "%s: no rendezvous host given", where);
    int v6 = strchr(host, ':') != NULL;
    c->base = xasprintf("http://%s%s%s:%d/kv/%s/", v6 ? "[" : "", host, v6 ? "]" : "", port, job);
    c->token = xstrdup(token);
    c->where = xstrdup(where);
    c->curl = curl_easy_init();
    c->connect_timeout_ms = 3000;
    if (!c->curl) return error_msg(TIPC_EDIST, "%s: curl_easy_init failed", where);
    return TIPC_OK;
}

void rdzv_client_free(struct rdzv_client *c)
{
    if (c->curl) curl_easy_cleanup(c->curl);
    free(c->base);
    free(c->root);
    free(c->token);
    free(c->where);
    memset(c, 0, sizeof *c);
}

void rdzv_client_set_round(struct rdzv_client *c, int round)
{
    if (!c->base) return;
    if (!c->root) c->root = c->base;
    else free(c->base);
    c->base = round > 0 ? xasprintf("%sr%d/", c->root, round) : xstrdup(c->root);
}

struct sink { char *p; size_t n, cap; };
static size_t sink_write(char *data, size_t sz, size_t nm, void *ud)
{
    struct sink *s = ud;
    size_t n = sz * nm;
    if (s->n + n > RDZV_MAX_VALUE) return 0;
    s->p = xgrow(s->p, 1, s->n + n + 1, &s->cap);
    memcpy(s->p + s->n, data, n);
    s->n += n;
    s->p[s->n] = 0;
    return n;
}

/* One request; returns the HTTP code (0 on transport error, message printed unless quiet). */
static long request(struct rdzv_client *c, const char *method, const char *key, const char *query,
                    const void *body, size_t n, long timeout_ms, bool quiet, struct sink *out)
{
    CURL *h = c->curl;
    char *ek = curl_easy_escape(h, key, 0);
    char *url = xasprintf("%s%s%s", c->base, ek, query);
    curl_free(ek);
    for (char *p = url + strlen(c->base); *p; p++)   /* keep '/' in keys readable */
        if (p[0] == '%' && p[1] == '2' && (p[2] == 'F' || p[2] == 'f')) memmove(p + 1, p + 3, strlen(p + 3) + 1), *p = '/';
    char *hdr = xasprintf("%s: %s", RDZV_TOKEN_HEADER, c->token);
    struct curl_slist *hl = curl_slist_append(NULL, hdr);
    hl = curl_slist_append(hl, "Expect:");
    curl_easy_reset(h);
    curl_easy_setopt(h, CURLOPT_URL, url);
    curl_easy_setopt(h, CURLOPT_HTTPHEADER, hl);
    curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(h, CURLOPT_NOPROXY, "*");
    curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, (long)c->connect_timeout_ms);
    curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, timeout_ms);
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, sink_write);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, out);
    if (strcmp(method, "PUT") == 0) {
        curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, "PUT");
        curl_easy_setopt(h, CURLOPT_POSTFIELDS, body ? body : "");
        curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)n);
    }
    CURLcode rc = curl_easy_perform(h);
    long code = 0;
    if (rc == CURLE_OK) curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &code);
    c->last_http = code;
    if (rc != CURLE_OK && !quiet) {
        error_msg(TIPC_EDIST, "%s: cannot reach the rendezvous server at %s: %s", c->where, c->base,
                  curl_easy_strerror(rc));
        error_hint("is node 0's launcher running and reachable? check --master/--ips, the job's port "
                   "and the firewall");
    }
    curl_slist_free_all(hl);
    free(hdr);
    free(url);
    return code;
}

static enum tipc_status bad_reply(struct rdzv_client *c, long code, const char *key, const struct sink *s)
{
    if (code == 403) {   /* the store says which job it serves: another job may hold this port */
        size_t n = s->p ? strcspn(s->p, "\n") : 0;
        error_msg(TIPC_EDIST, "%s: the rendezvous server at %s refused the job token (HTTP 403)%s%.*s", c->where,
                  c->base, n ? ": " : "", (int)(n > 400 ? 400 : n), n ? s->p : "");
        error_hint("set the same TIPC_JOB_TOKEN on every node of the job (or unset it everywhere) and start every "
                   "node with the same command; if another job holds this port, give each job its own --master port");
        return TIPC_EDIST;
    }
    return error_msg(TIPC_EDIST, "%s: rendezvous server at %s answered %ld for key '%s': %s", c->where,
                     c->base, code, key, s->p ? s->p : "");
}

enum tipc_status rdzv_put(struct rdzv_client *c, const char *key, const void *val, size_t n,
                          bool create_only, bool *created)
{
    struct sink s = {0};
    long code = request(c, "PUT", key, create_only ? "?create=1" : "", val, n, 5000, false, &s);
    enum tipc_status st = TIPC_OK;
    if (code == 0) st = TIPC_EDIST;
    else if (code == 200 || (code == 412 && create_only)) {
        if (created) *created = code == 200;
    } else st = bad_reply(c, code, key, &s);
    free(s.p);
    return st;
}

long rdzv_fetch(struct rdzv_client *c, const char *key, char **body)
{
    struct sink s = {0};
    long code = request(c, "GET", key, "?wait=0", NULL, 0, 5000, true, &s);
    *body = s.p;
    return code;
}

enum tipc_status rdzv_get(struct rdzv_client *c, const char *key, int wait_ms, bool quiet, bool *found,
                          char **val, size_t *n)
{
    struct sink s = {0};
    char q[32];
    snprintf(q, sizeof q, "?wait=%d", wait_ms > 0 ? wait_ms : 0);
    long code = request(c, "GET", key, q, NULL, 0, (long)(wait_ms > 0 ? wait_ms : 0) + 5000, quiet, &s);
    *found = false;
    if (code == 200) {
        *found = true;
        if (val) *val = s.p ? s.p : xstrdup("");
        else free(s.p);
        if (n) *n = s.n;
        return TIPC_OK;
    }
    enum tipc_status st = code == 404 && s.p && strcmp(s.p, "no such key\n") == 0 ? TIPC_OK
                        : code == 0 ? TIPC_EDIST
                        : bad_reply(c, code, key, &s);
    free(s.p);
    return st;
}
