/* test_pool.c: the intra-op thread pool: every index runs exactly once, thread ids stay in range, a loop
 * dispatched right after creation cannot hang, and workers held out of loops (as if descheduled) leave them to
 * the caller instead of holding it up. It must never rely on timing to pass. */
#include <stdatomic.h>
#include <string.h>

#include "check.h"
#include "pool.h"

#define N 10007

typedef struct {
    _Atomic int hits[N];
    _Atomic int bad_tid;
    _Atomic int worker_calls; /* calls on a thread other than the caller's */
    int threads;
} loop_arg;

static void body(void *v, int64_t begin, int64_t end, int tid)
{
    loop_arg *a = v;
    if (tid < 0 || tid >= a->threads)
        atomic_fetch_add(&a->bad_tid, 1);
    if (tid != 0)
        atomic_fetch_add(&a->worker_calls, 1);
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
    run_once(NULL, 1, N, 16);
    CHECK(ref_pool_threads(NULL) == 1);
    ref_pool_free(NULL);
    ref_alloc_get_stats(&s1);
    CHECK(s1.live_bytes == s0.live_bytes);
    return check_summary();
}
