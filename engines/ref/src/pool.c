/* pool.c: a fixed pool of worker threads; each loop gives every thread a home range, which it runs in a large first
 * piece and a few small ones, and a thread done early takes the pieces another has not started (a vCPU descheduled
 * mid-loop no longer holds the others up). Workers spin a while after a loop before they sleep, because waking a
 * sleeping thread costs 60-85 us on this kind of VM. It must never allocate while dispatching, and never leave a
 * worker running after ref_pool_free. */
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
    int64_t n, chunk, grain;
    _Atomic int64_t *cursor; /* per thread, CURSOR_STRIDE apart: the next unclaimed index of its home range */
};

#define CURSOR_STRIDE 8 /* int64s: one cache line per cursor */

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

/* Home range of thread t: [t*chunk, min(n, (t+1)*chunk)). */
static void home_of(const ref_pool *p, int t, int64_t *start, int64_t *end)
{
    *start = p->chunk * t < p->n ? p->chunk * t : p->n;
    *end = *start + p->chunk < p->n ? *start + p->chunk : p->n;
}

/* Thread tid's share of the loop: pieces of its own range, then of the others' while any are left. A piece is three
 * quarters of a range when none of it is taken yet, an eighth after (never under grain), so a thread alone runs its
 * range in three calls. Which thread runs which index never changes a result (every operator's tasks are
 * independent), only how long the loop takes. */
static void run_share(ref_pool *p, int tid)
{
    for (int k = 0; k < p->n_threads; k++) {
        int o = (tid + k) % p->n_threads;
        int64_t start, end;
        home_of(p, o, &start, &end);
        int64_t len = end - start, big = len - len / 4, small = len / 8;
        big = big < p->grain ? p->grain : big;
        small = small < p->grain ? p->grain : small;
        _Atomic int64_t *cur = &p->cursor[(size_t)o * CURSOR_STRIDE];
        for (int64_t at = atomic_load(cur); at < end;) {
            int64_t stop = at + (at == start ? big : small);
            stop = stop < end ? stop : end;
            if (atomic_compare_exchange_weak(cur, &at, stop)) {
                p->fn(p->arg, at, stop, tid);
                at = atomic_load(cur);
            }
        }
    }
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
        run_share(p, tid);
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
        p->cursor = ref_calloc((size_t)n_threads * CURSOR_STRIDE, sizeof *p->cursor);
        if (!p->workers || !p->cursor)
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
    ref_free((void *)p->cursor);
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
    p->grain = grain;
    for (int t = 0; t < threads; t++) {
        int64_t start, end;
        home_of(p, t, &start, &end);
        atomic_store(&p->cursor[(size_t)t * CURSOR_STRIDE], start);
    }
    atomic_store(&p->pending, p->n_started);
    /* Bumped under the mutex, so a worker about to sleep cannot miss it. */
    pthread_mutex_lock(&p->mu);
    atomic_fetch_add_explicit(&p->generation, 1, memory_order_release);
    pthread_cond_broadcast(&p->wake);
    pthread_mutex_unlock(&p->mu);
    run_share(p, 0);
    for (int i = 0; i < REF_POOL_SPINS && atomic_load(&p->pending) > 0; i++)
        cpu_relax();
    if (atomic_load(&p->pending) > 0) {
        pthread_mutex_lock(&p->mu);
        while (atomic_load(&p->pending) > 0)
            pthread_cond_wait(&p->done, &p->mu);
        pthread_mutex_unlock(&p->mu);
    }
}
