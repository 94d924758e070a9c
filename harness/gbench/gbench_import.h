/* gbench_import.h: stores a Google Benchmark JSON report (ours from memleak-bench, or any other project's) as a
 * memleak run, so its latencies get baselines, compare, change points and trend plots like every other run.
 * It must never store half a report: one transaction per import, and the same file and commit import once.
 *
 * The mapping (a benchmark "family" here is one run_name: a benchmark with its args, all its repetitions):
 *   runs        one per (file content, commit): uuid "gbench-" + FNV-1a 64 of both, so importing again is a no-op;
 *               scenario_name from context.executable's base name (else the file name), scenario_text a scenario
 *               (engine gbench, never runnable) whose description holds the report's context; started_at from
 *               context.date (else now); host and cpu from the context.
 *   cells       one per family, in report order: engine "gbench", model the scenario name, axes
 *               {"benchmark": run_name}, config_key "benchmark=RUN_NAME;engine=gbench;binary=NAME"; status pass, or
 *               error with the report's error_message when a repetition failed; detail a JSON object with the
 *               time unit, iterations, label and every user counter (medians over the repetitions).
 *   step_stats  one row, step "iteration": n = repetitions, wall_ms_median / cpu_ms_median from the "median"
 *               aggregate (else the median of the repetitions; else the "mean" aggregate), wall_ms_p90 over the
 *               repetitions; user counters mapped by name: peak_rss_kib | peak_kib | vm_hwm_kib -> peak_kib,
 *               final_rss_kib | rss_kib -> final_rss_kib, heap_live_bytes | final_heap_bytes -> final_heap_bytes,
 *               heap_growth_per_iter and rss_growth_per_iter as such; the other figures stay NULL.
 *   samples     one per repetition: phase measure, iteration = its index, step "benchmark", wall_ns and cpu_ns per
 *               iteration (fractional nanoseconds kept), vm_hwm_kib and heap_live_bytes from the mapped counters.
 *               compare's Mann-Whitney test reads these as the iteration's latencies.
 * Families with only complexity aggregates (BigO, RMS) have no time to store and are skipped.
 * NaN and Infinity, which Google Benchmark may write for a counter, are read as null (not measured). */
#ifndef MLK_GBENCH_IMPORT_H
#define MLK_GBENCH_IMPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "store.h"

typedef struct mlk_gbench_import_opts {
    const char *commit, *branch; /* NULL: not known */
    const char *argv_text;       /* the command line, stored with the run; may be NULL */
} mlk_gbench_import_opts;

typedef struct mlk_gbench_import_result {
    int64_t run_id;
    bool existed;        /* imported before (same content and commit): nothing was written */
    char uuid[40];
    char name[128];      /* the scenario name */
    int n_cells, n_failed, n_skipped, n_samples;
} mlk_gbench_import_result;

/* Import text (len bytes; name stands for the file in messages and is stored as the scenario path). Returns 0, or
 * MLK_E_PARSE (not JSON, no "benchmarks" array, an entry without a name; the message names the file and the entry),
 * MLK_E_DB, MLK_E_NOMEM; on failure nothing is stored. */
int mlk_gbench_import_text(db_store *db, const char *text, size_t len, const char *name,
                           const mlk_gbench_import_opts *o, mlk_gbench_import_result *out, mlk_error *err);

/* The same for a file (at most 256 MiB); MLK_E_IO when it cannot be read. */
int mlk_gbench_import_file(db_store *db, const char *path, const mlk_gbench_import_opts *o,
                           mlk_gbench_import_result *out, mlk_error *err);

#endif
