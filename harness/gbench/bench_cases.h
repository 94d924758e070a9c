/* bench_cases.h: memleak-bench's benchmark functions: infer latency and compile time of one engine, model and
 * option set, each publishing its memory figures as Google Benchmark user counters.
 * It must never report a memory figure it did not measure: an unmeasured counter is absent, never 0. */
#ifndef MLK_BENCH_CASES_H
#define MLK_BENCH_CASES_H

#include <stdbool.h>

#include "engine.h"
#include "gbench.h"
#include "inputs.h"
#include "probe.h"

/* What every case shares. One case at a time holds engine objects (live): a case sets itself up on its first run
 * and keeps them for its later runs; the next case releases them first. */
typedef struct mlk_bench_env {
    mlk_probe *probe;      /* borrowed */
    mlk_inputs *inputs;    /* borrowed: deterministic input values */
    bool peak_resets;      /* /proc/self/clear_refs works: VmHWM can be reset before a run */
    struct mlk_bench_case *live;
    int n_failed;          /* runs that ended with skip_with_error */
} mlk_bench_env;

typedef enum { MLK_BENCH_INFER = 0, MLK_BENCH_COMPILE } mlk_bench_kind;

typedef struct mlk_bench_case {
    mlk_bench_env *env;
    mlk_bench_kind kind;
    const engine_api *api;   /* borrowed: the plugin stays loaded for the whole run */
    const engine_kv *opts;   /* borrowed from the plan's cell */
    int n_opts;
    const char *model_path;  /* borrowed from the plan */
    /* live engine objects (NULL when released) */
    engine_ctx *ctx;
    engine_model *model;
    engine_compiled *compiled;
    engine_request *request;
} mlk_bench_case;

/* The Google Benchmark function of every case: ctx is an mlk_bench_case. Timed loop: one infer on a request
 * created once (infer), or one compile_model (its release untimed) per iteration (compile). Counters, set after
 * the loop over the run:
 *   peak_rss_kib, peak_rss_delta_kib   VmHWM over the timed loop (reset just before), and it minus VmRSS at the
 *                                      start; absent when the kernel refuses the reset
 *   heap_bytes_per_iter, allocs_per_iter   bytes and blocks allocated per iteration     (heap shim preloaded only)
 *   heap_growth_per_iter               change of live heap bytes per iteration        (heap shim only)
 *   heap_peak_delta_bytes              peak live heap over the loop minus live at its start (heap shim only)
 *   heap_live_bytes                    live heap bytes at the end of the run          (heap shim only)
 * A failing engine call ends the run with skip_with_error (the engine's message) and counts in env->n_failed. */
void mlk_bench_run(mlk_gb_state *st, void *ctx);

/* Release the case's engine objects (no-op when it holds none). */
void mlk_bench_release(mlk_bench_case *c);

#endif
