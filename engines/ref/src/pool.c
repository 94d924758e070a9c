/* pool.c: a fixed pool of worker threads; each loop gives every thread a home range, which it runs in a large first
 * piece and a few small ones, and a thread done early takes the pieces another has not started. The caller never waits
 * for a worker that has not joined a loop (a descheduled vCPU costs nothing), only for pieces already running. Whole
 * runs go to the caller alone when that has been faster lately (pool_runs.h). Workers spin a while after a loop before
 * they sleep; a small loop while they sleep runs on the caller alone. It must never allocate while dispatching, and
 * never leave a worker running after ref_pool_free. */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <time.h>

#include "alloc.h"
#include "pool.h"
#include "pool_runs.h"
#include "status.h"

/* About 0.3-0.6 ms of polling on current x86 cores (a pause is tens of cycles): resnet18's convs at 2 threads are
 * separated by serial steps longer than 60 us, and a worker that slept in between joined each loop a wake later
 * (refengine run, generated resnet18, 2 threads, quiet: 14.2-20.5 ms with 4000 spins, 11.1-11.3 ms with 40000; 1
 * thread 20 ms). Beside a busy core the arbiter sends whole runs to the caller alone, and the workers then sleep. */
#define REF_POOL_SPINS 40000

/* The loop guard that stood here (per loop, the time the workers saved against the time waited for them; below a
 * loss, solo spells of 50 ms to 1 s) is gone: a cold first run on a quiet machine could trip it, and its spells then
 * kept a 2-thread process at 1-thread speed (memleak-run, generated resnet18, 2 threads, 8 iterations: 2 of 12 cells
 * ran every infer at 20 ms instead of 12, none of 12 without it). The run-level arbiter sees what it saw, and more. */

/* The loop word: serial << STATE_SHIFT | OPEN while threads may still join | threads joined and not yet left. The
 * caller rewrites the loop's fields only once it has closed the loop and seen no thread inside, so a worker that
 * joined (a CAS on this word, the loop's serial and OPEN in it) reads a whole loop, never half of the next one. */
#define STATE_SHIFT 20
#define STATE_OPEN ((uint64_t)1 << 19)
#define STATE_JOINED (STATE_OPEN - 1)

struct ref_pool {
    int n_threads;
    pthread_t *workers;
    int n_started;
    pthread_mutex_t mu;
    pthread_cond_t wake, done;
    _Atomic uint64_t state;      /* the loop word above */
    _Atomic int sleepers;        /* workers blocked (or about to block) on wake */
    _Atomic bool caller_waits;   /* the caller blocked (or about to) on done */
    _Atomic int hold;            /* tests: workers join no loop while set (as if descheduled) */
    _Atomic bool stop;
    /* the current loop: written while no thread is inside a loop, read by threads that joined it */
    ref_task_fn fn;
    void *arg;
    int64_t n, chunk, grain;
    _Atomic int64_t *cursor; /* per thread, CURSOR_STRIDE apart: the next unclaimed index of its home range */
    /* the run-level arbiter (pool_runs.h), the caller's alone: runs between ref_pool_run_begin and _end */
    ref_runs *runs;
    bool in_run, run_solo;
    int steer_cpu;               /* the caller's CPU when the workers' CPUs were last set, -1: never */
    bool steered;                /* the workers are kept off steer_cpu (else they have the caller's CPUs) */
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

/* Join the open loop in the state word, if any: true when this thread is now inside it. */
static bool try_join(ref_pool *p, uint64_t *seen)
{
    uint64_t s = atomic_load_explicit(&p->state, memory_order_acquire);
    while ((s & STATE_OPEN) && !atomic_load_explicit(&p->hold, memory_order_relaxed)) {
        if (atomic_compare_exchange_weak_explicit(&p->state, &s, s + 1, memory_order_acquire,
                                                  memory_order_acquire)) {
            *seen = s >> STATE_SHIFT;
            return true;
        }
    }
    *seen = s >> STATE_SHIFT; /* closed: nothing to do in this loop, wait for a later one */
    return false;
}

/* Leave the loop joined; the last thread out of a closed loop wakes a caller that blocked waiting for it. */
static void leave(ref_pool *p)
{
    uint64_t s = atomic_fetch_sub(&p->state, 1) - 1;
    if (!(s & STATE_OPEN) && (s & STATE_JOINED) == 0 && atomic_load(&p->caller_waits)) {
        pthread_mutex_lock(&p->mu); /* the caller may be between its check and its wait */
        pthread_cond_signal(&p->done);
        pthread_mutex_unlock(&p->mu);
    }
}

/* Wait for a loop serial other than seen (spin, then sleep). */
static void wait_for_loop(ref_pool *p, uint64_t seen)
{
    for (int i = 0; i < REF_POOL_SPINS && !atomic_load(&p->stop); i++) {
        if (atomic_load_explicit(&p->state, memory_order_relaxed) >> STATE_SHIFT != seen)
            return;
        cpu_relax();
    }
    pthread_mutex_lock(&p->mu);
    atomic_fetch_add(&p->sleepers, 1); /* then read state: the caller publishes, then reads sleepers */
    while (atomic_load(&p->state) >> STATE_SHIFT == seen && !atomic_load(&p->stop))
        pthread_cond_wait(&p->wake, &p->mu);
    atomic_fetch_sub(&p->sleepers, 1);
    pthread_mutex_unlock(&p->mu);
}

static int64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void *worker_main(void *v)
{
    ref_pool *p = ((worker_arg *)v)->p;
    int tid = ((worker_arg *)v)->tid;
    ref_free(v);
    /* A loop dispatched before this thread got here is still open to it unless the caller has finished it. */
    uint64_t seen = 0;
    while (!atomic_load(&p->stop)) {
        if (try_join(p, &seen)) {
            run_share(p, tid);
            leave(p);
        }
        wait_for_loop(p, seen);
    }
    return NULL;
}

int ref_pool_new(int n_threads, ref_pool **out, ref_error *err)
{
    if (n_threads < 1)
        n_threads = 1;
    if (n_threads > 4096)
        return ref_fail(err, REF_E_INVALID, "thread pool: %d threads asked for, at most 4096", n_threads);
    ref_pool *p = ref_calloc(1, sizeof *p);
    if (!p)
        return ref_fail(err, REF_E_NOMEM, "thread pool: out of memory");
    p->n_threads = n_threads;
    p->steer_cpu = -1;
    pthread_mutex_init(&p->mu, NULL);
    pthread_cond_init(&p->wake, NULL);
    pthread_cond_init(&p->done, NULL);
    if (n_threads > 1) {
        p->workers = ref_calloc((size_t)n_threads, sizeof *p->workers);
        p->cursor = ref_calloc((size_t)n_threads * CURSOR_STRIDE, sizeof *p->cursor);
        if (!p->workers || !p->cursor)
            goto nomem;
        int runs_rc = ref_runs_new(&p->runs, err);
        if (runs_rc) {
            ref_pool_free(p);
            return runs_rc;
        }
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

static void unsteer_workers(ref_pool *p);

void ref_pool_free(ref_pool *p)
{
    if (!p)
        return;
    /* A worker kept off the caller's CPU, still spinning after the last loop beside a busy core, waited up to a
     * scheduler slice there to see stop (release_request 31-63 us -> 2.1-2.9 ms in 2 of 40 runs of
     * e2e_compare_history's history beside a busy loop on CPU 1, with the workers merely given all CPUs back): the
     * workers move to the caller's CPU, idle while it joins them. */
    unsteer_workers(p);
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
    ref_runs_free(p->runs);
    ref_free(p);
}

/* A run on the caller alone reports one thread, so every operator splits its loops as a 1-thread pool would (the
 * same tiles, the same copies): such a run costs what a 1-thread run does. */
int ref_pool_threads(const ref_pool *p) { return p && !p->run_solo ? p->n_threads : 1; }

void ref_pool_hold_workers(ref_pool *p, bool hold)
{
    if (p)
        atomic_store(&p->hold, hold);
}

/* Close the loop to late joiners and wait for the threads inside it to finish their pieces (spin, then block). */
static void close_loop(ref_pool *p)
{
    uint64_t s = atomic_fetch_and(&p->state, ~STATE_OPEN) & ~STATE_OPEN;
    for (int i = 0; i < REF_POOL_SPINS && (s & STATE_JOINED); i++) {
        cpu_relax();
        s = atomic_load_explicit(&p->state, memory_order_acquire);
    }
    if (!(s & STATE_JOINED))
        return;
    pthread_mutex_lock(&p->mu);
    atomic_store(&p->caller_waits, true); /* then read state: a leaving worker decrements, then reads this */
    while (atomic_load(&p->state) & STATE_JOINED)
        pthread_cond_wait(&p->done, &p->mu);
    atomic_store(&p->caller_waits, false);
    pthread_mutex_unlock(&p->mu);
}

void ref_parallel_for(ref_pool *p, int64_t n, int64_t grain, ref_task_fn fn, void *arg)
{
    if (n <= 0)
        return;
    if (grain < 1)
        grain = 1;
    int threads = ref_pool_threads(p);
    /* A loop of a few shares is not worth waking a sleeping worker for (tens of us); a spinning one takes it up in
     * about a microsecond. */
    if (threads == 1 || n < 2 * grain ||
        (n < REF_POOL_WAKE_SHARES * grain &&
         atomic_load_explicit(&p->sleepers, memory_order_relaxed) == p->n_started)) {
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
        atomic_store_explicit(&p->cursor[(size_t)t * CURSOR_STRIDE], start, memory_order_relaxed);
    }
    /* No thread is inside a loop here (the last one closed with none joined), so the word is serial << shift. */
    uint64_t serial = (atomic_load(&p->state) >> STATE_SHIFT) + 1;
    atomic_store(&p->state, serial << STATE_SHIFT | STATE_OPEN); /* seq_cst: ordered before reading sleepers */
    if (atomic_load(&p->sleepers) > 0) {
        pthread_mutex_lock(&p->mu);
        pthread_cond_broadcast(&p->wake);
        pthread_mutex_unlock(&p->mu);
    }
    run_share(p, 0);
    close_loop(p);
}

/* Keep the workers off the CPU the caller runs on, within the CPUs the process may use. A sleeping worker is woken
 * onto the waker's CPU when no CPU is idle, and a CPU running only a nice 19 job is not idle: the worker then shares
 * the caller's core while the other one runs the background job (refengine run, generated resnet18, 2 threads,
 * beside `nice -n 19` busy loop on CPU 1: 21 ms in the runs where both threads sat on CPU 0, 12 where they did not;
 * 1 thread 20 ms). Only when every thread can have a CPU of its own; the caller is never moved. */
static void steer_workers(ref_pool *p)
{
    int cpu = sched_getcpu();
    if (cpu < 0 || cpu == p->steer_cpu || cpu >= CPU_SETSIZE)
        return;
    p->steer_cpu = cpu; /* not again until the caller moves */
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set))
        return;
    bool steer = CPU_ISSET(cpu, &set) && CPU_COUNT(&set) >= p->n_threads;
    if (!steer && !p->steered)
        return;
    if (steer) /* else the caller's CPUs now give no thread a CPU of its own: give the workers all of them back */
        CPU_CLR(cpu, &set);
    for (int t = 1; t <= p->n_started; t++)
        if (pthread_setaffinity_np(p->workers[t], sizeof set, &set))
            return; /* a placement hint: the OS keeps its own on failure */
    p->steered = steer;
}

/* Move steered workers onto the caller's CPU, to exit there. */
static void unsteer_workers(ref_pool *p)
{
    int cpu = sched_getcpu();
    if (!p->steered || cpu < 0 || cpu >= CPU_SETSIZE)
        return;
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    for (int t = 1; t <= p->n_started; t++)
        if (pthread_setaffinity_np(p->workers[t], sizeof set, &set))
            return;
    p->steered = false;
}

void ref_pool_run_begin(ref_pool *p, uint64_t kind)
{
    if (!p || p->n_threads < 2 || p->in_run)
        return;
    steer_workers(p);
    p->in_run = true;
    p->run_solo = ref_runs_begin(p->runs, kind, now_ns()) == REF_RUN_SOLO;
}

void ref_pool_run_end(ref_pool *p, bool ok)
{
    if (!p || !p->in_run)
        return;
    ref_runs_end(p->runs, now_ns(), ok);
    p->in_run = false;
    p->run_solo = false;
}

int ref_pool_steered_cpu(const ref_pool *p) { return p && p->steered ? p->steer_cpu : -1; }

void ref_pool_run_counts(const ref_pool *p, int64_t *workers, int64_t *solo)
{
    *workers = *solo = 0;
    if (p && p->runs)
        ref_runs_counts(p->runs, workers, solo);
}
