/* gbench.h: a C interface to Google Benchmark (Debian's libbenchmark 1.7.1, which has only a C++ API): register a
 * benchmark as a C function plus a context, publish user counters, run with argv. It must never let a C++ exception
 * reach C: every call catches and returns a status instead. */
#ifndef MLK_GBENCH_H
#define MLK_GBENCH_H

#include <stdbool.h>
#include <stdint.h>

#include "status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* One run of a benchmark (a benchmark::State): valid only inside the benchmark function it is passed to. */
typedef struct mlk_gb_state mlk_gb_state;
/* A registered benchmark family: valid until mlk_gb_clear (or the end of the process). */
typedef struct mlk_gb_bench mlk_gb_bench;

/* The benchmark function: called once per run (Google Benchmark calls it several times per benchmark to size the
 * iteration count, then once per repetition). It must loop `while (mlk_gb_keep_running(st))` around the timed code,
 * or call mlk_gb_skip_with_error and return. ctx is the pointer given at registration. */
typedef void (*mlk_gb_fn)(mlk_gb_state *st, void *ctx);

typedef enum { MLK_GB_NS = 0, MLK_GB_US, MLK_GB_MS, MLK_GB_S } mlk_gb_unit;

/* Counter flags (benchmark::Counter::Flags): how Google Benchmark turns the value set into the value reported. */
enum {
    MLK_GB_COUNTER_PLAIN = 0,           /* reported as set */
    MLK_GB_COUNTER_RATE = 1u << 0,      /* divided by the run's time: a rate per second */
    MLK_GB_COUNTER_AVG_THREADS = 1u << 1,
    MLK_GB_COUNTER_ITER_INVARIANT = 1u << 2, /* multiplied by the iterations */
    MLK_GB_COUNTER_AVG_ITERS = 1u << 3, /* divided by the iterations: a figure per iteration */
    MLK_GB_COUNTER_INVERT = 1u << 4,    /* inverted (1/x), after the above */
    MLK_GB_COUNTER_1024 = 1u << 8,      /* display with k = 1024 (bytes) instead of 1000 */
};

/* Register benchmark name (copied) calling fn(state, ctx). ctx stays the caller's and must outlive the run.
 * Returns the handle, or NULL when name is NULL or empty, fn is NULL, or memory runs out (err says which; err may
 * be NULL). */
mlk_gb_bench *mlk_gb_register(const char *name, mlk_gb_fn fn, void *ctx, mlk_error *err);

/* Settings of a registered benchmark. Each returns 0, or MLK_E_USAGE for a NULL handle or a value out of range
 * (iterations, repetitions < 1; min_time <= 0; args count not matching earlier args of the same family),
 * MLK_E_NOMEM. */
int mlk_gb_set_unit(mlk_gb_bench *b, int unit); /* an mlk_gb_unit; an int so a bad value is refused, not UB */
int mlk_gb_use_real_time(mlk_gb_bench *b);             /* wall time decides the iteration count */
int mlk_gb_measure_process_cpu_time(mlk_gb_bench *b);  /* CPU time of every thread, not only the caller's */
int mlk_gb_set_iterations(mlk_gb_bench *b, int64_t n); /* exactly n iterations per run (no sizing) */
int mlk_gb_set_repetitions(mlk_gb_bench *b, int n);    /* overrides --benchmark_repetitions */
int mlk_gb_set_min_time(mlk_gb_bench *b, double seconds);
/* One instance per call, with args[0..n) readable as mlk_gb_range(st, i). Every call on one family passes the same
 * n (at most 8). */
int mlk_gb_add_args(mlk_gb_bench *b, const int64_t *args, int n);

/* True while the timed loop should go on; false once the run has its iterations (or after skip_with_error). */
bool mlk_gb_keep_running(mlk_gb_state *st);
/* Argument i of this instance (mlk_gb_add_args); 0 when it has none. */
int64_t mlk_gb_range(const mlk_gb_state *st, int i);
/* Iterations the timed loop ran (valid after it ended). */
int64_t mlk_gb_iterations(const mlk_gb_state *st);
/* Stop the clock around untimed work inside the loop (costly: a few hundred ns each). */
void mlk_gb_pause_timing(mlk_gb_state *st);
void mlk_gb_resume_timing(mlk_gb_state *st);
/* Mark this run failed with msg (copied): the report shows error_occurred and the message, no timings. The
 * timed loop must be left (keep_running returns false afterwards). */
void mlk_gb_skip_with_error(mlk_gb_state *st, const char *msg);
/* Set user counter name (copied) to value for this run; flags from MLK_GB_COUNTER_*. It appears in the JSON as a
 * top-level key of the benchmark entry. Returns 0, MLK_E_USAGE (NULL state or name), MLK_E_NOMEM. */
int mlk_gb_set_counter(mlk_gb_state *st, const char *name, double value, unsigned flags);
/* A free-text label shown next to the run (JSON "label"). Returns 0, MLK_E_USAGE or MLK_E_NOMEM. */
int mlk_gb_set_label(mlk_gb_state *st, const char *label);

/* Google Benchmark's own --help text (the --benchmark_* flags) on stdout. */
void mlk_gb_print_help(void);

/* Parse and remove Google Benchmark's flags from argv (Initialize), refuse what is left (argv[0] aside), run every
 * registered benchmark the filter selects, then Shutdown. Call it once per process. Returns how many benchmarks
 * matched (0: none, Google Benchmark says so on stderr), or MLK_E_USAGE when arguments are left over (each named on
 * stderr; nothing ran), MLK_E_INTERNAL when the library threw. A flag value the library refuses, such as
 * --benchmark_min_time=0.5s in 1.7.1, stays in argv and is refused here; so is a --benchmark_format,
 * --benchmark_out_format or --benchmark_time_unit value the library does not know, or an empty --benchmark_color
 * (1.7.1 would print its help and exit 0). --help in argv: the library prints its help and exits the process. */
int mlk_gb_run(int *argc, char **argv, mlk_error *err);

/* Forget every registered benchmark and free their handles. */
void mlk_gb_clear(void);

#ifdef __cplusplus
}
#endif

#endif
