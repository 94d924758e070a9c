/* pool.h: the intra-op thread pool: a fixed set of workers that split one loop at a time.
 * It must never allocate after creation: dispatching a loop is allocation-free so infer stays so. */
#ifndef REF_POOL_H
#define REF_POOL_H

#include <stdbool.h>
#include <stdint.h>
#include "refengine.h"

typedef struct ref_pool ref_pool;

/* A pool running loops on n_threads threads in all (the caller's plus n_threads-1 workers).
 * n_threads <= 1 gives a pool that runs everything on the caller; more than 4096 is REF_E_INVALID. */
int ref_pool_new(int n_threads, ref_pool **out, ref_error *err);
/* Joins the workers. NULL is fine. */
void ref_pool_free(ref_pool *p);
/* Threads a loop runs on; 1 for NULL, and during a run the pool sends to the caller alone (ref_pool_run_begin):
 * operators split their loops by this, so scratch sized for the pool's threads must also fit one. */
int ref_pool_threads(const ref_pool *p);

/* fn(arg, begin, end, tid) over disjoint ranges covering [0, n), tid in [0, threads): tid indexes
 * per-thread scratch. Ranges are at least `grain` long except the last of each thread's home range (its
 * n/threads share, run first and mostly by that thread); a thread may run several, and which ones varies
 * with timing, so a task's result must depend on its indices alone. The caller runs pieces itself and never
 * waits for a worker that has not started on the loop (one descheduled by a busy machine): it waits only for
 * pieces already running. In a run the arbiter gives the caller alone (ref_pool_run_begin) the loop is one task over
 * [0, n). Returns when all are done. Not reentrant: a task must not call ref_parallel_for on the same pool. */
/* Work worth a share of a loop, in FLOP of GEMM. A worker still spinning from the previous loop (pool.c, ~80 us) picks
 * a loop up in about a microsecond, so back-to-back operators pay to split from ~0.5 MFLOP a share (a few us); only the
 * first loop after a pause wakes a sleeping worker (60-85 us). Raising it to 4-8 MFLOP left MobileNetV2's small layers
 * on one thread (2 threads: 6.9 -> 6.4 ms when lowered). */
#define REF_POOL_SHARE_FLOPS 5e5

/* A loop of fewer than this many grains runs on the caller alone while every worker sleeps: waking one costs
 * 60-85 us here, more than the few shares could save (a grain is about a REF_POOL_SHARE_FLOPS share). */
#define REF_POOL_WAKE_SHARES 16

typedef void (*ref_task_fn)(void *arg, int64_t begin, int64_t end, int tid);
void ref_parallel_for(ref_pool *p, int64_t n, int64_t grain, ref_task_fn fn, void *arg);

/* One top-level inference: between these, the pool times the run and may run all of its loops on the caller alone
 * (pool_runs.h: per kind of run, whichever of the two modes has been faster lately, the other probed now and then).
 * kind: runs of the same kind are compared (a hash of the input shapes). ok false: the run failed and is not
 * timed. Nested begins (a subgraph's run) are ignored; NULL is fine. */
void ref_pool_run_begin(ref_pool *p, uint64_t kind);
void ref_pool_run_end(ref_pool *p, bool ok);
/* ref_pool_run_begin also keeps the workers off the caller's CPU when every thread can have one of its own (a woken
 * worker otherwise lands on the caller's CPU whenever no CPU is idle, e.g. beside a nice 19 job). For tests: the CPU
 * they were last kept off, -1 when none. */
int ref_pool_steered_cpu(const ref_pool *p);
/* Runs timed with the workers and on the caller alone so far (0 and 0 for a pool of one thread). */
void ref_pool_run_counts(const ref_pool *p, int64_t *workers, int64_t *solo);

/* For tests: while hold is set no worker joins a new loop, as if every worker were descheduled; loops still
 * finish, on the caller. */
void ref_pool_hold_workers(ref_pool *p, bool hold);

#endif
