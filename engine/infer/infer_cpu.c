/* infer_cpu.c: the CPU schedule of an inference pass. At batch 1 a layer is 2-100 us of work,
 * so how the threads meet between layers decides whether a second core helps at all:
 *
 * - every layer is cut into parts (ops.h "parts"; more parts than threads for big layers)
 *   that the threads CLAIM with an atomic counter, and a layer's parts start once all parts of
 *   the layer before are done (a per-layer done counter, no team barrier);
 * - so a thread that loses its core to another process delays only a part it has already
 *   claimed: the caller finishes the rest and returns without waiting for it (an OpenMP region
 *   per pass or per op ends in a barrier that waits for every thread: on a busy 2-core box a
 *   pass went from 2 to 15 ms);
 * - the helper threads are our own (T-1 pthreads, made on the first pass), spin briefly
 *   between passes and sleep on a condition variable when idle.
 *
 * Each layer's counters are one 64-bit word: pass number << 32 | parts << 16 | count. A late
 * helper still walking an old pass sees a foreign pass number on its next check and drops out,
 * and since the part count travels in the same word as the count, it can never claim a part
 * of the new pass, nor one past the end of an old layer. Weights the kernels want re-laid out
 * are packed once, before the first pass. Not here: the graph (infer.c), the kernels (ops/cpu). */
#include <omp.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "infer.h"
#include "../../core/check.h"
#include "../../core/banned.h"

/* about this many multiply-adds per part (a few microseconds), and at most PARTS_PER_THREAD
 * parts per thread (MAX_PARTS in all: a claim word holds two 8-bit counts), so that claiming
 * costs little and a slow thread leaves parts behind */
#define WORK_PER_PART 40000.0
#define PARTS_PER_THREAD 4
#define MAX_PARTS 255
/* idle helpers spin this many checks for the next pass before they sleep */
#define IDLE_SPINS 20000
/* a waiting thread yields its core after this many spins (its peer may need the core) */
#define WAIT_SPINS 2000

struct infer_team {
    struct infer_model *m;
    int nt;                          /* threads, the caller included */
    pthread_t *th;
    pthread_mutex_t mu;
    pthread_cond_t wake;
    _Atomic int sleepers;            /* changed under mu */
    _Atomic uint64_t pass;           /* current pass number (0: none yet) */
    _Atomic int quit;
    _Atomic int n;                   /* batch of the pass */
    _Atomic int helpers;             /* helper threads started (each takes the next number) */
    _Atomic uint64_t *claim, *done;  /* (nlayers) pass << 32 | parts << 16 | claimed / finished */
};

static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
}

static void pack_weights(struct infer_model *m)
{
    m->pack_off = xcalloc((size_t)m->nlayers, sizeof *m->pack_off);
    size_t total = 0;
    for (int i = 0; i < m->nlayers; i++) {
        const struct infer_layer *l = &m->layers[i];
        m->pack_off[i] = total;
        if (l->kind != INF_CONV) continue;
        struct conv2d_desc d = infer_conv_desc(m, l, 1);
        total += (conv2d_packed_floats(&d) + 15) & ~(size_t)15;
    }
    m->packed = m->be.ops->alloc(m->be.ctx, total);
    for (int i = 0; i < m->nlayers; i++) {
        const struct infer_layer *l = &m->layers[i];
        if (l->kind != INF_CONV) continue;
        struct conv2d_desc d = infer_conv_desc(m, l, 1);
        conv2d_pack_cpu(m->packed + m->pack_off[i], m->weights + l->w_off, m->weights + l->b_off, &d);
    }
}

/* Layer i, part p of np, on the calling thread. A conv without parts (general grouped) runs
 * whole as part 0 (its OpenMP loops may use other cores). */
void infer_layer_part_cpu(struct infer_model *m, int i, int n, int p, int np)
{
    if (!m->packed) pack_weights(m);
    const struct infer_layer *l = &m->layers[i];
    const struct infer_slot *si = &m->slots[l->in];
    float *x = m->acts + m->slot_off[l->in], *y = m->acts + m->slot_off[l->out];
    const float *w = m->weights + l->w_off, *b = m->weights + l->b_off;
    const float *x2 = l->in2 >= 0 ? m->acts + m->slot_off[l->in2] : NULL;
    size_t cnt = (size_t)n * si->H * si->W * si->C;
    enum act_kind act = (enum act_kind)l->act;
    switch ((enum infer_kind)l->kind) {
    case INF_CONV: {
        struct conv2d_desc d = infer_conv_desc(m, l, n);
        if (conv2d_has_parts(&d)) {
            conv2d_bias_act_part_cpu(y, x, m->packed + m->pack_off[i], b, act, &d, p, np);
        } else if (p == 0) {
            conv2d_forward_cpu(m->be.ctx, y, x, w, &d, m->scratch);
            bias_act_forward_cpu(m->be.ctx, y, b, (size_t)n * d.Ho * d.Wo, d.Cout, act);
        }
        break;
    }
    case INF_LINEAR: linear_act_part_cpu(y, x, w, b, act, n, si->C, l->Co, p, np); break;
    case INF_ACT: act_forward_part_cpu(y, x, cnt, act, p, np); break;
    case INF_POOL: avgpool_forward_part_cpu(y, x, n, si->H * si->W, si->C, p, np); break;
    case INF_SCALE: scale_forward_part_cpu(y, x, x2, n, si->H * si->W, si->C, p, np); break;
    case INF_ADD: add_forward_part_cpu(y, x, x2, cnt, p, np); break;
    case INF_SOFTMAX: softmax_forward_part_cpu(y, x, n, si->C, p, np); break;
    case INF_KIND_COUNT: BUG("inference layer kind");
    }
}

/* an element of an elementwise layer (activation, SE scale, add) costs about as much time as
 * this many multiply-adds of a conv (memory against arithmetic: 50K elements took 13 us, 50K
 * multiply-adds about 1.5 us, AVX2); so a 56x56x16 SE scale is cut in parts, not run alone */
#define ELEMENT_WORK 8.0

/* multiply-adds (or their equivalent) of layer i at batch n: sizes its parts */
static double layer_work(const struct infer_model *m, int i, int n)
{
    const struct infer_layer *l = &m->layers[i];
    const struct infer_slot *si = &m->slots[l->in], *so = &m->slots[l->out];
    double out = (double)n * so->H * so->W * so->C;
    if (l->kind == INF_CONV) return out * l->K * l->K * (si->C / l->groups);
    if (l->kind == INF_LINEAR) return (double)n * si->C * l->Co;
    if (l->kind == INF_SOFTMAX) return 0; /* one part: rows are few */
    if (l->kind == INF_POOL) return (double)n * si->H * si->W * si->C;
    return ELEMENT_WORK * n * si->H * si->W * si->C;
}

static int layer_parts(const struct infer_model *m, int i, int n, int nt)
{
    const struct infer_layer *l = &m->layers[i];
    if (l->kind == INF_CONV) {
        struct conv2d_desc d = infer_conv_desc(m, l, n);
        if (!conv2d_has_parts(&d)) return 1;
    }
    double parts = layer_work(m, i, n) / WORK_PER_PART;
    int max = nt * PARTS_PER_THREAD < MAX_PARTS ? nt * PARTS_PER_THREAD : MAX_PARTS;
    return parts < 1 ? 1 : parts > max ? max : (int)parts;
}

static inline uint64_t word(uint64_t pass, int parts) { return pass << 32 | (uint64_t)parts << 16; }
static inline uint32_t word_pass(uint64_t w) { return (uint32_t)(w >> 32); }
static inline int word_parts(uint64_t w) { return (int)(w >> 16 & 0xffff); }
static inline int word_count(uint64_t w) { return (int)(w & 0xffff); }
/* a claim word's count is two: parts taken from the front (low byte) and from the back */
static inline int claim_front(uint64_t w) { return (int)(w & 0xff); }
static inline int claim_back(uint64_t w) { return (int)(w >> 8 & 0xff); }

/* Walk pass P: claim and run parts layer by layer. Returns false when P is no longer the
 * current pass (this thread fell behind and the pass finished without it). The first half of
 * the threads take parts from a layer's front, the rest from its back: with two threads each
 * keeps to its end of every layer (its rows, or its channels), so a layer mostly reads what the
 * same core wrote into its own L2 the layer before (claimed in arrival order, every layer's
 * halves went to either core: half of each layer's input came over from the other core). */
static bool walk(struct infer_team *t, uint64_t P, bool from_back)
{
    struct infer_model *m = t->m;
    int n = atomic_load_explicit(&t->n, memory_order_relaxed);
    for (int i = 0; i < m->nlayers; i++) {
        if (i > 0)
            for (long spins = 0;; spins++) {
                uint64_t d = atomic_load_explicit(&t->done[i - 1], memory_order_acquire);
                if (word_pass(d) != P) return false;
                if (word_count(d) == word_parts(d)) break;
                cpu_relax();
                if (spins >= WAIT_SPINS) sched_yield();
            }
        for (;;) {
            uint64_t v = atomic_load_explicit(&t->claim[i], memory_order_relaxed);
            if (word_pass(v) != P) return false;
            int f = claim_front(v), b = claim_back(v), np = word_parts(v);
            if (f + b >= np) break;
            if (!atomic_compare_exchange_weak_explicit(&t->claim[i], &v, v + (from_back ? 1u << 8 : 1u),
                                                       memory_order_acquire, memory_order_relaxed))
                continue;
            infer_layer_part_cpu(m, i, n, from_back ? np - 1 - b : f, np);
            atomic_fetch_add_explicit(&t->done[i], 1, memory_order_release);
        }
    }
    return true;
}

static void *helper_main(void *arg)
{
    struct infer_team *t = arg;
    uint64_t seen = 0;
    int id = atomic_fetch_add(&t->helpers, 1) + 1; /* the caller is thread 0 */
    for (;;) {
        uint64_t P = atomic_load_explicit(&t->pass, memory_order_acquire);
        for (long spins = 0; P == seen && !atomic_load(&t->quit); spins++) {
            if (spins < IDLE_SPINS) {
                cpu_relax();
            } else {
                pthread_mutex_lock(&t->mu);
                t->sleepers++;
                while (atomic_load(&t->pass) == seen && !atomic_load(&t->quit)) pthread_cond_wait(&t->wake, &t->mu);
                t->sleepers--;
                pthread_mutex_unlock(&t->mu);
            }
            P = atomic_load_explicit(&t->pass, memory_order_acquire);
        }
        if (atomic_load(&t->quit)) return NULL;
        seen = P;
        walk(t, P, 2 * id >= t->nt);
    }
}

static struct infer_team *team_new(struct infer_model *m, int nt)
{
    struct infer_team *t = xcalloc(1, sizeof *t);
    t->m = m;
    t->nt = nt;
    t->claim = xcalloc((size_t)m->nlayers, sizeof *t->claim);
    t->done = xcalloc((size_t)m->nlayers, sizeof *t->done);
    pthread_mutex_init(&t->mu, NULL);
    pthread_cond_init(&t->wake, NULL);
    t->th = xcalloc((size_t)nt, sizeof *t->th);
    for (int k = 1; k < nt; k++)
        if (pthread_create(&t->th[k], NULL, helper_main, t)) {
            warning_msg("infer: could not start helper thread %d of %d; running with %d", k, nt - 1, k);
            t->nt = k;
            break;
        }
    return t;
}

static void team_free(struct infer_model *m)
{
    struct infer_team *t = m->team;
    if (!t) return;
    pthread_mutex_lock(&t->mu);
    atomic_store(&t->quit, 1);
    pthread_cond_broadcast(&t->wake);
    pthread_mutex_unlock(&t->mu);
    for (int k = 1; k < t->nt; k++) pthread_join(t->th[k], NULL);
    pthread_mutex_destroy(&t->mu);
    pthread_cond_destroy(&t->wake);
    free(t->th);
    free((void *)t->claim);
    free((void *)t->done);
    free(t);
    m->team = NULL;
}

void infer_release_cpu(struct backend_ctx *cx, struct infer_model *m)
{
    team_free(m);
    if (m->packed) m->be.ops->free(cx, m->packed);
    free(m->pack_off);
    m->packed = NULL;
    m->pack_off = NULL;
}

/* one thread: an OpenMP team left spinning after it would compete with the pass's helper
 * threads for the cores */
void infer_input_u8_cpu(struct backend_ctx *cx, struct infer_model *m, const uint8_t *images, int n)
{
    (void)cx;
    size_t np = (size_t)n * m->slots[0].H * m->slots[0].W;
    normalize_u8_part_cpu(m->acts + m->slot_off[0], images, np, 0, 1);
}

void infer_forward_cpu(struct backend_ctx *cx, struct infer_model *m, int n)
{
    (void)cx;
    if (!m->packed) pack_weights(m);
    int nt = omp_get_max_threads();
    if (nt <= 1) {
        for (int i = 0; i < m->nlayers; i++) infer_layer_part_cpu(m, i, n, 0, 1);
        return;
    }
    if (m->team && m->team->nt != nt) team_free(m);
    if (!m->team) m->team = team_new(m, nt);
    struct infer_team *t = m->team;
    if (atomic_load(&t->pass) + 1 >= UINT32_MAX) { /* pass numbers are 32 bits: a new team starts over */
        team_free(m);
        t = m->team = team_new(m, nt);
    }
    /* no helper can be inside a part now (the last pass finished), so resetting is safe */
    uint64_t P = atomic_load(&t->pass) + 1;
    atomic_store_explicit(&t->n, n, memory_order_relaxed);
    for (int i = 0; i < m->nlayers; i++) {
        uint64_t w = word(P, layer_parts(m, i, n, t->nt));
        atomic_store_explicit(&t->claim[i], w, memory_order_relaxed);
        atomic_store_explicit(&t->done[i], w, memory_order_relaxed);
    }
    atomic_store_explicit(&t->pass, P, memory_order_release);
    if (atomic_load(&t->sleepers)) { /* seq_cst: a helper counts itself, then re-reads `pass` */
        pthread_mutex_lock(&t->mu);
        pthread_cond_broadcast(&t->wake);
        pthread_mutex_unlock(&t->mu);
    }
    bool ok = walk(t, P, false);
    CHECK(ok, "inference pass %llu lost its tag", (unsigned long long)P);
    /* the caller's walk returns after claiming the last layer's parts; wait for them to finish */
    _Atomic uint64_t *last = &t->done[m->nlayers - 1];
    for (long spins = 0;; spins++) {
        uint64_t d = atomic_load_explicit(last, memory_order_acquire);
        if (word_count(d) == word_parts(d)) break;
        cpu_relax();
        if (spins >= WAIT_SPINS) sched_yield();
    }
}
