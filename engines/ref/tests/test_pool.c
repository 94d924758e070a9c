/* test_pool.c: the intra-op thread pool: every index runs exactly once, thread ids stay in range, a loop
 * dispatched right after creation cannot hang, workers held out of loops (as if descheduled) leave them to
 * the caller instead of holding it up, a worker that held the caller up for one piece still gets the next loops,
 * a run the arbiter gives the caller alone uses no worker, and no worker runs on the caller's CPU once a run
 * began. It must never rely on timing to pass. */
#include <dirent.h>
#include <sched.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <stdatomic.h>
#include <string.h>
#include <time.h>

#include "check.h"
#include "pool.h"

#define N 10007

typedef struct {
    _Atomic int hits[N];
    _Atomic int bad_tid;
    _Atomic int worker_calls; /* calls on a thread other than the caller's */
    _Atomic int calls;
    int threads;
} loop_arg;

static void body(void *v, int64_t begin, int64_t end, int tid)
{
    loop_arg *a = v;
    if (tid < 0 || tid >= a->threads)
        atomic_fetch_add(&a->bad_tid, 1);
    if (tid != 0)
        atomic_fetch_add(&a->worker_calls, 1);
    atomic_fetch_add(&a->calls, 1);
    for (int64_t i = begin; i < end; i++)
        atomic_fetch_add(&a->hits[i], 1);
}

static loop_arg arg;

static void run_once(ref_pool *p, int threads, int64_t n, int64_t grain)
{
    memset(&arg, 0, sizeof arg);
    arg.threads = threads;
    ref_parallel_for(p, n, grain, body, &arg);
    int once = 1;
    for (int64_t i = 0; i < n; i++)
        once &= atomic_load(&arg.hits[i]) == 1;
    CHECK(once);
    CHECK(atomic_load(&arg.bad_tid) == 0);
}

/* A loop whose worker piece holds the caller up: the caller's first piece waits until a worker is inside one (so
 * a worker surely joined), and the worker's first piece then sleeps 100 ms while the caller has nothing left. */
static _Atomic int worker_in;
static _Atomic int slept;

static void holdup_body(void *v, int64_t begin, int64_t end, int tid)
{
    if (tid == 0) {
        while (!atomic_load(&worker_in))
            sched_yield();
    } else {
        atomic_store(&worker_in, 1);
        if (!atomic_exchange(&slept, 1)) {
            struct timespec ts = {0, 100000000};
            while (nanosleep(&ts, &ts) != 0) {
            }
        }
    }
    body(v, begin, end, tid);
}

/* A worker descheduled inside a piece holds the caller up for that piece only: the loop still runs every index once,
 * and the next loops are still split (no loop-level guard sends them to the caller alone any more). */
static void check_holdup(void)
{
    ref_pool *p = NULL;
    ref_error err = {0};
    CHECK_OK(ref_pool_new(2, &p, &err), &err);
    memset(&arg, 0, sizeof arg);
    arg.threads = 2;
    ref_parallel_for(p, 64, 1, holdup_body, &arg);
    CHECK(atomic_load(&arg.worker_calls) > 0);
    int once = 1;
    for (int64_t i = 0; i < 64; i++)
        once &= atomic_load(&arg.hits[i]) == 1;
    CHECK(once);
    /* bounded so a bug fails instead of hanging */
    struct timespec t0, t;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    int split = 0;
    do {
        run_once(p, 2, N, 1);
        split = atomic_load(&arg.calls) > 1;
        clock_gettime(CLOCK_MONOTONIC, &t);
    } while (!split && t.tv_sec - t0.tv_sec < 30);
    CHECK(split);
    ref_pool_free(p);
}

/* Runs between ref_pool_run_begin and _end: whichever mode the arbiter picks, every index runs once; in a run it
 * sends to the caller alone the pool reports one thread and no worker runs a piece; every run but the first of its
 * kind is booked in one mode; a failed run is not. */
static void check_runs(void)
{
    ref_pool *p = NULL;
    ref_error err = {0};
    CHECK_OK(ref_pool_new(2, &p, &err), &err);
    int consistent = 1, solo_runs = 0;
    for (int round = 0; round < 40; round++) {
        ref_pool_run_begin(p, 42);
        ref_pool_run_begin(p, 43); /* nested: ignored */
        int threads = ref_pool_threads(p);
        solo_runs += threads == 1;
        run_once(p, 2, N, 1);
        consistent &= threads == 2 || atomic_load(&arg.worker_calls) == 0;
        ref_pool_run_end(p, true);
        ref_pool_run_end(p, true); /* unmatched: ignored */
        consistent &= ref_pool_threads(p) == 2;
    }
    CHECK(consistent);
    CHECK(solo_runs >= 1); /* the arbiter tries both modes before it settles */
    int64_t w = 0, s = 0;
    ref_pool_run_counts(p, &w, &s);
    CHECK(w + s == 39 && s == solo_runs);
    ref_pool_run_begin(p, 42);
    ref_pool_run_end(p, false);
    int64_t w2 = 0, s2 = 0;
    ref_pool_run_counts(p, &w2, &s2);
    CHECK(w2 == w && s2 == s);
    ref_pool_run_counts(NULL, &w2, &s2);
    CHECK(w2 == 0 && s2 == 0);
    ref_pool_run_begin(NULL, 1);
    ref_pool_run_end(NULL, true);
    ref_pool_free(p);
}

/* After a run begins, no worker may run on the CPU the caller was on (when the process has a CPU per thread). */
static void check_steer(void)
{
    cpu_set_t all;
    if (sched_getaffinity(0, sizeof all, &all) || CPU_COUNT(&all) < 2) {
        printf("check_steer: one CPU, nothing to steer\n");
        return;
    }
    ref_pool *p = NULL;
    ref_error err = {0};
    CHECK_OK(ref_pool_new(2, &p, &err), &err);
    ref_pool_run_begin(p, 9);
    int cpu = ref_pool_steered_cpu(p);
    CHECK(cpu >= 0 && CPU_ISSET(cpu, &all));
    DIR *d = opendir("/proc/self/task");
    CHECK(d != NULL);
    int others = 0, off = 0;
    for (struct dirent *e; d && (e = readdir(d));) {
        pid_t tid = (pid_t)atoi(e->d_name);
        cpu_set_t s;
        if (tid <= 0 || tid == (pid_t)syscall(SYS_gettid) || sched_getaffinity(tid, sizeof s, &s))
            continue;
        others++;
        off += !CPU_ISSET(cpu, &s);
    }
    if (d)
        closedir(d);
    CHECK(others == 1 && off == 1); /* the pool's one worker */
    run_once(p, 2, N, 1);
    ref_pool_run_end(p, true);
    ref_pool_free(p);
    CHECK(ref_pool_steered_cpu(NULL) == -1);
}

int main(void)
{
    ref_alloc_stats s0, s1;
    ref_alloc_get_stats(&s0);
    /* A fresh pool and an immediate loop, many times: the race a late-starting worker could lose. */
    for (int round = 0; round < 300; round++) {
        int threads = 1 + round % 4;
        ref_pool *p = NULL;
        ref_error err = {0};
        CHECK_OK(ref_pool_new(threads, &p, &err), &err);
        CHECK(ref_pool_threads(p) == threads);
        run_once(p, threads, N, 1);
        run_once(p, threads, 7, 1);
        run_once(p, threads, 100, 64); /* below 2*grain: runs serially */
        ref_pool_free(p);
    }
    /* Workers held out: each loop finishes on the caller alone (the old pool waited for every worker to check
     * in, so this hung), then released they join loops again. */
    for (int threads = 2; threads <= 4; threads++) {
        ref_pool *p = NULL;
        ref_error err = {0};
        CHECK_OK(ref_pool_new(threads, &p, &err), &err);
        ref_pool_hold_workers(p, true);
        int only_caller = 1;
        for (int round = 0; round < 50; round++) {
            run_once(p, threads, N, 1);
            only_caller &= atomic_load(&arg.worker_calls) == 0;
        }
        CHECK(only_caller);
        ref_pool_hold_workers(p, false);
        for (int round = 0; round < 50; round++)
            run_once(p, threads, N, 1);
        ref_pool_free(p);
    }
    check_holdup();
    check_runs();
    check_steer();
    run_once(NULL, 1, N, 16);
    CHECK(ref_pool_threads(NULL) == 1);
    ref_pool_free(NULL);
    ref_alloc_get_stats(&s1);
    CHECK(s1.live_bytes == s0.live_bytes);
    return check_summary();
}
