/* rdzv_store.c: the rendezvous store's keys, limits and request logic (no sockets; rdzv_server.c
 * serves it over HTTP). Contract and limits: rdzv_store.h. */
#include "rdzv_store.h"

#include <openssl/crypto.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../../core/check.h"
#include "../../core/parse.h"
#include "../../core/time.h"
#include "../../core/banned.h"

struct kv_entry { char *key; char *val; size_t n; double t; };

struct rdzv_store {
    char *job, *token;
    char *about;                /* what a client with another token is told (rdzv_store_set_about) */
    size_t token_len;
    pthread_mutex_t mu;
    pthread_cond_t cv;          /* signalled on every PUT and on stop */
    struct kv_entry *kv;
    size_t nkv, capkv, bytes;
    long max_wait_ms;
    int stopping;
};

struct rdzv_store *rdzv_store_new(const char *job, const char *token)
{
    struct rdzv_store *S = xcalloc(1, sizeof *S);
    S->job = xstrdup(job);
    S->token = xstrdup(token);
    S->token_len = strlen(token);
    S->max_wait_ms = 3600L * 1000;
    pthread_mutex_init(&S->mu, NULL);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&S->cv, &ca);
    pthread_condattr_destroy(&ca);
    return S;
}

void rdzv_store_stop(struct rdzv_store *S)
{
    pthread_mutex_lock(&S->mu);
    S->stopping = 1;
    pthread_cond_broadcast(&S->cv);
    pthread_mutex_unlock(&S->mu);
}

void rdzv_store_limit_wait(struct rdzv_store *S, long max_ms) { S->max_wait_ms = max_ms; }

void rdzv_store_free(struct rdzv_store *S)
{
    if (!S) return;
    for (size_t i = 0; i < S->nkv; i++) free(S->kv[i].key), free(S->kv[i].val);
    free(S->kv);
    pthread_cond_destroy(&S->cv);
    pthread_mutex_destroy(&S->mu);
    free(S->job);
    free(S->token);
    free(S->about);
    free(S);
}

void rdzv_store_set_about(struct rdzv_store *S, const char *about)
{
    pthread_mutex_lock(&S->mu);
    free(S->about);
    S->about = about ? xstrdup(about) : NULL;
    pthread_mutex_unlock(&S->mu);
}

unsigned rdzv_store_refuse(struct rdzv_store *S, struct rdzv_reply *out)
{
    pthread_mutex_lock(&S->mu);
    char *msg = S->about ? xasprintf("wrong job token; %s\n", S->about) : xasprintf("wrong job token\n");
    pthread_mutex_unlock(&S->mu);
    out->code = 403;
    out->body = msg;
    out->n = strlen(msg);
    return 403;
}

bool rdzv_store_token_ok(const struct rdzv_store *S, const char *token)
{
    /* the length is no secret; the bytes are compared without an early exit */
    return token && strlen(token) == S->token_len && CRYPTO_memcmp(token, S->token, S->token_len) == 0;
}

static struct kv_entry *kv_find(struct rdzv_store *S, const char *key)
{
    for (size_t i = 0; i < S->nkv; i++)
        if (strcmp(S->kv[i].key, key) == 0) return &S->kv[i];
    return NULL;
}

/* 0 stored, 412 exists (create_only), 507 a limit would be passed. Caller holds mu. */
static unsigned kv_set(struct rdzv_store *S, const char *key, const char *val, size_t n, bool create_only)
{
    struct kv_entry *e = kv_find(S, key);
    if (e && create_only) return 412;
    size_t kl = strlen(key), after = S->bytes - (e ? e->n : 0) + n + (e ? 0 : kl);
    if ((!e && S->nkv >= RDZV_MAX_KEYS) || after > RDZV_MAX_BYTES) return 507;
    if (!e) {
        S->kv = xgrow(S->kv, sizeof *S->kv, S->nkv + 1, &S->capkv);
        e = &S->kv[S->nkv++];
        e->key = xstrdup(key);
        e->val = NULL;
        e->n = 0;
    }
    free(e->val);
    e->val = xmalloc(n + 1);
    if (n) memcpy(e->val, val, n);
    e->val[n] = 0;
    e->n = n;
    e->t = now_seconds();
    S->bytes = after;
    pthread_cond_broadcast(&S->cv);
    return 0;
}

double rdzv_store_key_age(struct rdzv_store *S, const char *key)
{
    pthread_mutex_lock(&S->mu);
    struct kv_entry *e = kv_find(S, key);
    double age = e ? now_seconds() - e->t : -1;
    pthread_mutex_unlock(&S->mu);
    return age;
}

char *rdzv_store_get_copy(struct rdzv_store *S, const char *key)
{
    pthread_mutex_lock(&S->mu);
    struct kv_entry *e = kv_find(S, key);
    char *v = e ? xstrdup(e->val) : NULL;
    pthread_mutex_unlock(&S->mu);
    return v;
}

/* ---- requests ---------------------------------------------------------------------------------- */
/* Fill *out with code and a message (owned); returns code. */
static unsigned say(struct rdzv_reply *out, unsigned code, char *msg)
{
    out->code = code;
    out->body = msg;
    out->n = strlen(msg);
    return code;
}

/* The key of url "/kv/JOB/KEY", or NULL with *out filled. */
static const char *url_key(struct rdzv_store *S, const char *url, struct rdzv_reply *out)
{
    size_t jl = strlen(S->job);
    if (!url || strncmp(url, "/kv/", 4) != 0) {
        say(out, 404, xasprintf("bad path; expected /kv/JOB/KEY\n"));
        return NULL;
    }
    const char *job = url + 4, *slash = strchr(job, '/');
    if (!slash || (size_t)(slash - job) != jl || strncmp(job, S->job, jl) != 0) {
        int l = slash ? (int)(slash - job) : (int)strlen(job);
        say(out, 404, xasprintf("unknown job '%.*s': this store serves job '%s'\n", l > 64 ? 64 : l, job, S->job));
        return NULL;
    }
    const char *key = slash + 1;
    if (!*key) {
        say(out, 404, xasprintf("bad path; expected /kv/JOB/KEY\n"));
        return NULL;
    }
    if (strlen(key) > RDZV_MAX_KEY) {
        say(out, 414, xasprintf("key longer than %u bytes\n", RDZV_MAX_KEY));
        return NULL;
    }
    return key;
}

unsigned rdzv_store_precheck(struct rdzv_store *S, const char *method, const char *url, const char *token,
                             const char *content_length, struct rdzv_reply *out)
{
    memset(out, 0, sizeof *out);
    if (!rdzv_store_token_ok(S, token)) return rdzv_store_refuse(S, out);
    if (!url_key(S, url, out)) return out->code;
    bool put = method && strcmp(method, "PUT") == 0;
    if (!put && !(method && strcmp(method, "GET") == 0)) return say(out, 405, xasprintf("use GET or PUT\n"));
    long len = 0;
    if (put && content_length && (!parse_long(content_length, 0, RDZV_MAX_VALUE, &len)))
        return say(out, 413, xasprintf("value larger than %u bytes\n", RDZV_MAX_VALUE));
    return 0;
}

static void serve_get(struct rdzv_store *S, const char *key, const char *wait, struct rdzv_reply *out)
{
    long wait_ms = 0;
    if (wait && !parse_long(wait, 0, 3600L * 1000, &wait_ms)) {
        say(out, 400, xasprintf("bad wait\n"));
        return;
    }
    if (wait_ms > S->max_wait_ms) wait_ms = S->max_wait_ms;
    double deadline = now_seconds() + (double)wait_ms / 1000.0;
    pthread_mutex_lock(&S->mu);
    struct kv_entry *e;
    while (!(e = kv_find(S, key)) && !S->stopping) {
        double left = deadline - now_seconds();
        if (left <= 0) break;
        struct timespec ts = mono_deadline(left < 0.5 ? left : 0.5);
        pthread_cond_timedwait(&S->cv, &S->mu, &ts);
    }
    if (e) {
        out->code = 200;
        out->body = xmalloc(e->n + 1);
        memcpy(out->body, e->val, e->n + 1);
        out->n = e->n;
    } else if (S->stopping) {
        say(out, 503, xasprintf("server stopping\n"));
    } else {
        say(out, 404, xasprintf("no such key\n"));
    }
    pthread_mutex_unlock(&S->mu);
}

void rdzv_store_handle(struct rdzv_store *S, const char *method, const char *url, const char *token,
                       const char *wait, const char *create, const char *body, size_t n, bool body_too_big,
                       struct rdzv_reply *out)
{
    if (rdzv_store_precheck(S, method, url, token, NULL, out)) return;
    const char *key = url_key(S, url, out);
    if (strcmp(method, "GET") == 0) {
        serve_get(S, key, wait, out);
        return;
    }
    if (body_too_big || n > RDZV_MAX_VALUE) {
        say(out, 413, xasprintf("value larger than %u bytes\n", RDZV_MAX_VALUE));
        return;
    }
    pthread_mutex_lock(&S->mu);
    unsigned r = kv_set(S, key, body ? body : "", n, create && strcmp(create, "1") == 0);
    pthread_mutex_unlock(&S->mu);
    if (r == 412) say(out, 412, xasprintf("exists\n"));
    else if (r == 507)
        say(out, 507, xasprintf("store full: at most %u keys and %u bytes of keys and values\n", RDZV_MAX_KEYS, RDZV_MAX_BYTES));
    else say(out, 200, xasprintf("ok\n"));
}
