/* pool.c: a fixed pool of worker threads; each loop is cut into one static range per thread. Workers spin for a
 * short while after a loop before they sleep, because waking a sleeping thread costs 60-85 us on this kind of VM,
 * more than many operators take. It must never allocate while dispatching, and never leave a worker running
 * after ref_pool_free. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>

#include "alloc.h"
#include "pool.h"
#include "status.h"

/* About 30-60 us of polling on current x86 cores (a pause is tens of cycles). */
#define REF_POOL_SPINS 4000

struct ref_pool {
    int n_threads;
    pthread_t *workers;
    int n_started;
    pthread_mutex_t mu;
    pthread_cond_t wake, done;
    _Atomic uint64_t generation; /* bumped per loop; workers run when it changes */
    _Atomic int pending;         /* workers still busy with the current loop */
    _Atomic bool stop;
    /* the current loop: written before generation is bumped, read after it is seen */
    ref_task_fn fn;
    void *arg;
    int64_t n, chunk;
};

typedef struct {
    ref_pool *p;
    int tid;
} worker_arg;

static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
}

static void run_range(ref_pool *p, int tid)
{
    int64_t begin = p->chunk * tid;
    if (begin >= p->n)
        return;
    int64_t end = begin + p->chunk < p->n ? begin + p->chunk : p->n;
    p->fn(p->arg, begin, end, tid);
}

/* Wait for a generation other than seen (spin, then sleep); returns it, or seen when stopping. */
static uint64_t wait_for_loop(ref_pool *p, uint64_t seen)
{
    uint64_t g = seen;
    for (int i = 0; i < REF_POOL_SPINS && !atomic_load(&p->stop); i++) {
        if ((g = atomic_load_explicit(&p->generation, memory_order_acquire)) != seen)
            return g;
        cpu_relax();
    }
    pthread_mutex_lock(&p->mu);
    while ((g = atomic_load(&p->generation)) == seen && !atomic_load(&p->stop))
        pthread_cond_wait(&p->wake, &p->mu);
    pthread_mutex_unlock(&p->mu);
    return g;
}

static void *worker_main(void *v)
{
    ref_pool *p = ((worker_arg *)v)->p;
    int tid = ((worker_arg *)v)->tid;
    ref_free(v);
    /* Start from generation 0, not from what is current when this thread first runs: a loop may have
     * been dispatched before it got here, and it must still take its share of that loop. */
    uint64_t seen = 0;
    for (;;) {
        uint64_t g = wait_for_loop(p, seen);
        if (atomic_load(&p->stop))
            break;
        seen = g;
        run_range(p, tid);
        if (atomic_fetch_sub(&p->pending, 1) == 1) {
            pthread_mutex_lock(&p->mu); /* the dispatcher may be between its check and its wait */
            pthread_cond_signal(&p->done);
            pthread_mutex_unlock(&p->mu);
        }
    }
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
    atomic_store(&p->stop, true);
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
    p->fn = fn;
    p->arg = arg;
    p->n = n;
    p->chunk = chunk;
    atomic_store(&p->pending, p->n_started);
    /* Bumped under the mutex, so a worker about to sleep cannot miss it. */
    pthread_mutex_lock(&p->mu);
    atomic_fetch_add_explicit(&p->generation, 1, memory_order_release);
    pthread_cond_broadcast(&p->wake);
    pthread_mutex_unlock(&p->mu);
    run_range(p, 0);
    for (int i = 0; i < REF_POOL_SPINS && atomic_load(&p->pending) > 0; i++)
        cpu_relax();
    if (atomic_load(&p->pending) > 0) {
        pthread_mutex_lock(&p->mu);
        while (atomic_load(&p->pending) > 0)
            pthread_cond_wait(&p->done, &p->mu);
        pthread_mutex_unlock(&p->mu);
    }
}
