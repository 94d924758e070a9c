/* pool.c: a fixed pool of worker threads; each loop is cut into one static range per thread.
 * It must never allocate while dispatching, and never leave a worker running after ref_pool_free. */
#include <pthread.h>
#include <stdbool.h>

#include "alloc.h"
#include "pool.h"
#include "status.h"

struct ref_pool {
    int n_threads;
    pthread_t *workers;
    int n_started;
    pthread_mutex_t mu;
    pthread_cond_t wake, done;
    uint64_t generation; /* bumped per loop; workers run when it changes */
    int pending;         /* workers still busy with the current loop */
    bool stop;
    /* the current loop */
    ref_task_fn fn;
    void *arg;
    int64_t n, chunk;
};

typedef struct {
    ref_pool *p;
    int tid;
} worker_arg;

static void run_range(ref_pool *p, int tid)
{
    int64_t begin = p->chunk * tid;
    if (begin >= p->n)
        return;
    int64_t end = begin + p->chunk < p->n ? begin + p->chunk : p->n;
    p->fn(p->arg, begin, end, tid);
}

static void *worker_main(void *v)
{
    ref_pool *p = ((worker_arg *)v)->p;
    int tid = ((worker_arg *)v)->tid;
    ref_free(v);
    /* Start from generation 0, not from what is current when this thread first runs: a loop may have
     * been dispatched before it got here, and it must still take its share of that loop. */
    uint64_t seen = 0;
    pthread_mutex_lock(&p->mu);
    for (;;) {
        while (!p->stop && p->generation == seen)
            pthread_cond_wait(&p->wake, &p->mu);
        if (p->stop)
            break;
        seen = p->generation;
        pthread_mutex_unlock(&p->mu);
        run_range(p, tid);
        pthread_mutex_lock(&p->mu);
        if (--p->pending == 0)
            pthread_cond_signal(&p->done);
    }
    pthread_mutex_unlock(&p->mu);
    return NULL;
}

int ref_pool_new(int n_threads, ref_pool **out, ref_error *err)
{
    if (n_threads < 1)
        n_threads = 1;
    ref_pool *p = ref_calloc(1, sizeof *p);
    if (!p)
        return ref_fail(err, REF_E_NOMEM, "thread pool: out of memory");
    p->n_threads = n_threads;
    pthread_mutex_init(&p->mu, NULL);
    pthread_cond_init(&p->wake, NULL);
    pthread_cond_init(&p->done, NULL);
    if (n_threads > 1) {
        p->workers = ref_calloc((size_t)n_threads, sizeof *p->workers);
        if (!p->workers)
            goto nomem;
        for (int t = 1; t < n_threads; t++) {
            worker_arg *a = ref_malloc(sizeof *a);
            if (!a)
                goto nomem;
            a->p = p;
            a->tid = t;
            int rc = pthread_create(&p->workers[t], NULL, worker_main, a);
            if (rc) {
                ref_free(a);
                ref_pool_free(p);
                return ref_fail(err, REF_E_NOMEM, "thread pool: cannot start thread %d of %d (errno %d)",
                                t, n_threads, rc);
            }
            p->n_started = t;
        }
    }
    *out = p;
    return REF_OK;
nomem:
    ref_pool_free(p);
    return ref_fail(err, REF_E_NOMEM, "thread pool: out of memory");
}

void ref_pool_free(ref_pool *p)
{
    if (!p)
        return;
    pthread_mutex_lock(&p->mu);
    p->stop = true;
    pthread_cond_broadcast(&p->wake);
    pthread_mutex_unlock(&p->mu);
    for (int t = 1; t <= p->n_started; t++)
        pthread_join(p->workers[t], NULL);
    pthread_mutex_destroy(&p->mu);
    pthread_cond_destroy(&p->wake);
    pthread_cond_destroy(&p->done);
    ref_free(p->workers);
    ref_free(p);
}

int ref_pool_threads(const ref_pool *p) { return p ? p->n_threads : 1; }

void ref_parallel_for(ref_pool *p, int64_t n, int64_t grain, ref_task_fn fn, void *arg)
{
    if (n <= 0)
        return;
    if (grain < 1)
        grain = 1;
    int threads = ref_pool_threads(p);
    if (threads == 1 || n < 2 * grain) {
        fn(arg, 0, n, 0);
        return;
    }
    int64_t chunk = (n + threads - 1) / threads;
    if (chunk < grain)
        chunk = grain;
    pthread_mutex_lock(&p->mu);
    p->fn = fn;
    p->arg = arg;
    p->n = n;
    p->chunk = chunk;
    p->pending = threads - 1;
    p->generation++;
    pthread_cond_broadcast(&p->wake);
    pthread_mutex_unlock(&p->mu);
    run_range(p, 0);
    pthread_mutex_lock(&p->mu);
    while (p->pending > 0)
        pthread_cond_wait(&p->done, &p->mu);
    pthread_mutex_unlock(&p->mu);
}
