/* comm_async.c: allreduces that run while the caller goes on (comm.h, "allreduce overlapping
 * backward"): a communication thread with a FIFO of jobs for host buffers (Gloo), or the
 * backend's stream with events for device buffers (NCCL). The thread is the only caller of
 * collectives while jobs are in flight; it runs them through comm_allreduce, so the timeout, the
 * watchdog (which sees the thread's call in progress) and the error messages are the blocking
 * path's. */
#include "comm.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "../../core/check.h"
#include "../../core/time.h"
#include "../../core/banned.h"

struct job {
    void *buf;
    size_t n;
    enum comm_dtype dt;
    enum comm_redop op;
};

struct comm_async {
    struct comm *c;
    void *stream;               /* stream mode when non-NULL */
    pthread_t thread;
    int thread_on;
    pthread_mutex_t mu;
    pthread_cond_t cv;          /* a job queued, a job done, or quit */
    struct job *q;              /* FIFO [head, tail), capacity cap */
    size_t head, tail, cap;
    int running;                /* the thread is inside a job */
    int quit;
    enum tipc_status err;       /* first failure since the last wait */
    double busy;                /* seconds jobs ran since the last wait */
};

static void *comm_thread(void *arg)
{
    struct comm_async *a = arg;
    pthread_mutex_lock(&a->mu);
    for (;;) {
        while (a->head == a->tail && !a->quit) pthread_cond_wait(&a->cv, &a->mu);
        if (a->head == a->tail) break;   /* quit, and nothing left */
        struct job j = a->q[a->head++];
        bool skip = a->err != TIPC_OK;
        a->running = 1;
        pthread_mutex_unlock(&a->mu);
        double t0 = now_seconds();
        enum tipc_status st = skip ? TIPC_OK : comm_allreduce(a->c, j.buf, j.n, j.dt, j.op);
        double dt = now_seconds() - t0;
        pthread_mutex_lock(&a->mu);
        a->running = 0;
        a->busy += dt;
        if (st && !a->err) a->err = st;
        pthread_cond_broadcast(&a->cv);
    }
    pthread_mutex_unlock(&a->mu);
    return NULL;
}

struct comm_async *comm_async_open(struct comm *c, void *stream)
{
    struct comm_async *a = xcalloc(1, sizeof *a);
    a->c = c;
    a->stream = stream && comm_has_streams(c) ? stream : NULL;
    pthread_mutex_init(&a->mu, NULL);
    pthread_cond_init(&a->cv, NULL);
    if (!a->stream) {
        int rc = pthread_create(&a->thread, NULL, comm_thread, a);
        if (rc) tipc_die_msg(TIPC_EINTERNAL, "comm: cannot start the communication thread: %s", strerror(rc));
        a->thread_on = 1;
    }
    return a;
}

int comm_async_on_stream(const struct comm_async *a) { return a->stream != NULL; }

void comm_async_allreduce(struct comm_async *a, void *buf, size_t n, enum comm_dtype dt, enum comm_redop op)
{
    if (a->stream) {   /* enqueue only: the host does not wait */
        double t0 = now_seconds();
        enum tipc_status st = a->err ? TIPC_OK : comm_allreduce_enqueue(a->c, a->stream, buf, n, dt, op);
        a->busy += now_seconds() - t0;
        if (st && !a->err) a->err = st;
        return;
    }
    pthread_mutex_lock(&a->mu);
    if (a->tail == a->cap) {   /* compact, then grow */
        if (a->head) memmove(a->q, a->q + a->head, (a->tail - a->head) * sizeof *a->q);
        a->tail -= a->head, a->head = 0;
        if (a->tail == a->cap) {
            a->cap = a->cap ? 2 * a->cap : 64;
            a->q = xrealloc(a->q, a->cap * sizeof *a->q);
        }
    }
    a->q[a->tail++] = (struct job){buf, n, dt, op};
    pthread_cond_broadcast(&a->cv);
    pthread_mutex_unlock(&a->mu);
}

enum tipc_status comm_async_wait(struct comm_async *a, double *waited_s, double *busy_s)
{
    double t0 = now_seconds();
    enum tipc_status st;
    if (a->stream) {
        st = a->err ? a->err : comm_join_stream(a->c, a->stream);
        a->err = TIPC_OK;
    } else {
        pthread_mutex_lock(&a->mu);
        while (a->head != a->tail || a->running) pthread_cond_wait(&a->cv, &a->mu);
        st = a->err;
        a->err = TIPC_OK;
        a->head = a->tail = 0;
        pthread_mutex_unlock(&a->mu);
    }
    if (waited_s) *waited_s = now_seconds() - t0;
    pthread_mutex_lock(&a->mu);
    if (busy_s) *busy_s = a->busy;
    a->busy = 0;
    pthread_mutex_unlock(&a->mu);
    return st;
}

void comm_async_close(struct comm_async *a)
{
    if (!a) return;
    if (a->thread_on) {
        pthread_mutex_lock(&a->mu);
        a->quit = 1;
        pthread_cond_broadcast(&a->cv);
        pthread_mutex_unlock(&a->mu);
        pthread_join(a->thread, NULL);
    }
    pthread_cond_destroy(&a->cv);
    pthread_mutex_destroy(&a->mu);
    free(a->q);
    free(a);
}
