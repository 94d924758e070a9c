/* db_import.h: a finished run made outside memleak-run (a Google Benchmark report: gbench_import.h) stored whole:
 * the run, its cells, one step_stats row and a sample per repetition for each cell. It must never store half a
 * run nor the same run twice: one IMMEDIATE transaction, and a uuid already stored writes nothing. */
#ifndef MLK_DB_IMPORT_H
#define MLK_DB_IMPORT_H

#include <stdbool.h>
#include <stdint.h>

#include "status.h"
#include "store.h"

typedef struct db_import_run {
    const char *uuid; /* the run's identity: a uuid already stored writes nothing */
    const char *scenario_name, *scenario_path, *scenario_text;
    const char *commit_sha, *branch, *host, *cpu, *tool_version, *argv; /* NULL or "": not known, stored NULL */
    const char *date; /* when it ran, any time SQLite's strftime reads (an offset is turned into UTC); NULL, "" or
                       * unreadable: now */
} db_import_run;

/* One repetition: a sample of phase measure whose seq and iteration are its index. Not finite: NULL. */
typedef struct db_import_sample {
    double wall_ns, cpu_ns, vm_hwm_kib, heap_live_bytes;
} db_import_sample;

typedef struct db_import_cell {
    const char *engine, *model, *axes_json, *config_key, *allocator;
    int heap_shim;                       /* 1 or 0; -1 stores NULL (not known) */
    const char *status, *error, *detail; /* error and detail may be NULL */
    /* With figures (has_stats): one step_stats row for step, and the samples under sample_step. */
    bool has_stats;
    const char *step, *sample_step;
    int n; /* step_stats.n */
    double peak_kib, rss_growth, heap_growth, wall_ms_median, wall_ms_p90, cpu_ms_median, final_rss_kib,
        final_heap_bytes; /* not finite: NULL (not measured) */
    const db_import_sample *samples;
    int n_samples;
} db_import_cell;

/* Store run r, status done, with the cells c[0..n) (idx: their index), each started and finished when the run
 * started. *run_id gets the run's id; *existed is true when r->uuid was stored already: then nothing is written
 * and *run_id is that run's. MLK_E_DB, MLK_E_NOMEM; on failure nothing is stored and the outputs are untouched. */
int db_import_store(db_store *db, const db_import_run *r, const db_import_cell *c, int n, int64_t *run_id,
                    bool *existed, mlk_error *err);

#endif
