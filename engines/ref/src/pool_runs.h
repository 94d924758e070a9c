/* pool_runs.h: the run-level arbiter: for each kind of inference it times runs with the workers and runs on the
 * caller alone, and picks the faster (the workers only when clearly so), probing the other now and then. It must
 * never allocate after creation. */
#ifndef REF_POOL_RUNS_H
#define REF_POOL_RUNS_H

#include <stdbool.h>
#include <stdint.h>

#include "status.h"

/* Why a run-level choice on top of the per-loop guard in pool.c: beside a busy core a 2-thread run has three runnable
 * threads on two cores, so a worker spinning or working can share the caller's core, or the caller the busy one.
 * Those costs fall between loops and inside the caller's own pieces, where the guard's clock cannot tell them from
 * work; only the whole run's wall time shows them. A run is one top-level inference; its kind is the caller's
 * (a hash of the input shapes), so inferences of different sizes are timed apart. */
typedef struct ref_runs ref_runs;

typedef enum { REF_RUN_WORKERS = 0, REF_RUN_SOLO = 1 } ref_run_mode;

int ref_runs_new(ref_runs **out, ref_error *err);
void ref_runs_free(ref_runs *r);
/* The mode of the run of this kind starting at time now (ns, any monotonic clock). */
ref_run_mode ref_runs_begin(ref_runs *r, uint64_t kind, int64_t now);
/* The current run ended at time now; ok false: it failed and its time is not booked. */
void ref_runs_end(ref_runs *r, int64_t now, bool ok);
/* For tests and diagnostics: runs booked in each mode so far, over every kind. */
void ref_runs_counts(const ref_runs *r, int64_t *workers, int64_t *solo);

#endif
