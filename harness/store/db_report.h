/* db_report.h: what `memleak-run report` reads from the store, as plain structs: the run with its cells, the findings
 * of its newest comparison and its configs' change points (db_report.c); the series each plot draws (memory per
 * iteration, a config's metric across runs, one step across the run's cells: db_report_series.c); a tool cell's
 * leak records and heap peak with their stacks (db_report_tool.c). It must never write to the db. */
#ifndef MLK_DB_REPORT_H
#define MLK_DB_REPORT_H

#include <stdbool.h>
#include <stdint.h>

#include "names.h"
#include "store.h"
#include "tool.h"

/* ---- db_report.c: the run --------------------------------------------------------------------------------- */

/* Open the memleak db at path for a report. MLK_E_NOTFOUND when there is no file (none is created) or it is not a
 * memleak db (checked on a read-only connection before anything else touches it); MLK_E_DB when it cannot be opened.
 * The connection it returns refuses writes (PRAGMA query_only). Close it with db_close. */
int db_report_open(const char *path, db_store **out, mlk_error *err);

/* Resolve "latest" (or NULL: the newest run by start), a numeric id or a uuid to a run id. MLK_E_NOTFOUND naming
 * the spec when there is no such run, *run_id untouched; MLK_E_DB. */
int db_report_find_run(db_store *db, const char *spec, int64_t *run_id, mlk_error *err);

typedef struct db_report_cell {
    int64_t id;
    int idx;
    char *label;          /* the axes as "k=v k=v"; malformed axes JSON as it is; "" when the cell has no axes */
    char *axes_json, *config_key, *allocator, *status, *metric, *detail, *error; /* NULL when NULL */
    int signal, exit_code;                     /* -1 when NULL */
    double slope, late_slope, growth, seconds; /* NaN when NULL; seconds from the cell's start to its end */
} db_report_cell;

/* A finding of the run's newest comparison. */
typedef struct db_report_finding {
    int64_t cell_id;
    char *step, *metric, *kind, *detail;
    double current, baseline, delta_rel, delta_abs, p_value; /* NaN when NULL */
} db_report_finding;

/* A change point of a config of the run, detected at this run or an earlier one (never a later one). */
typedef struct db_report_cp {
    char *config_key, *step, *metric, *run_uuid, *commit_sha;
    double before, after, t; /* NaN when NULL */
} db_report_cp;

typedef struct db_report_run {
    int64_t id;
    char *uuid, *scenario, *commit, *branch, *host, *started_at, *finished_at, *status; /* NULL when NULL */
    db_report_cell *cells; /* by idx */
    int n_cells;
    char *baseline;        /* the newest comparison's baseline; NULL when the run was never compared */
    db_report_finding *findings; /* regressions first, the largest relative change first */
    int n_findings;
    db_report_cp *cps;     /* oldest run first */
    int n_cps;
} db_report_run;

/* Load run_id with its cells, the findings of its newest comparison and its configs' change points into a new
 * db_report_run (*out, freed with db_report_free; every string and array its own). A db from before comparisons
 * or change points existed has none. MLK_E_NOTFOUND when there is no such run, MLK_E_DB, MLK_E_NOMEM; *out is
 * untouched on failure. */
int db_report_load(db_store *db, int64_t run_id, db_report_run **out, mlk_error *err);
void db_report_free(db_report_run *r);

/* ---- db_report_series.c: what the plots draw ------------------------------------------------------------- */

/* One iteration of a cell, from its samples. */
typedef struct db_report_iter {
    int iteration;
    bool measured;     /* sampled in the measured phase */
    double rss_kib;    /* VmRSS after the iteration; NaN when not measured */
    double hwm_kib;    /* its peak: the max of its steps' own VmHWM */
    double heap_bytes; /* live heap after the iteration; NaN without the heap shim */
    /* Appended: what the judged signals read after the iteration (issue 9), NaN when not measured. */
    double anon_kib, alloc_held, vm_size_kib, fds, threads, mappings;
    double alloc_bytes; /* heap: off: the allocator's own count of bytes in use */
    double shim_bytes;  /* the heap shim's own tables resident after it (schema 6); NaN when not measured */
} db_report_iter;

/* Every iteration cell_id sampled, in order, into *out (malloc'd, NULL when none). MLK_E_DB, MLK_E_NOMEM. */
int db_report_memory(db_store *db, int64_t cell_id, db_report_iter **out, int *n, mlk_error *err);

/* A config's figure in one run. */
typedef struct db_report_point {
    char uuid[256];   /* the run's; a --run-key may be longer than a generated uuid */
    char commit[64];  /* "" when the run has none */
    double v;         /* the metric in its unit (names.h: MLK_METRIC_LIST); NaN when not measured */
    bool flagged;     /* the newest comparison of that run found it a regression */
} db_report_point;

/* metric (mlk_metric) of step in config_key's cells across runs: run_id and every finished run that started
 * before it, at most max of them, the newest; oldest first into pts (room for max). MLK_E_INTERNAL for a metric
 * out of range, MLK_E_DB. */
int db_report_trend(db_store *db, int64_t run_id, const char *config_key, const char *step, int metric, int max,
                    db_report_point *pts, int *n, mlk_error *err);

/* One bar of a matrix plot: a cell of the run at one step. */
typedef struct db_report_bar {
    char *group;    /* the allocator and every axis not among the series axes: "glibc fault=none" */
    char *series;   /* the series axes as "k=v k=v"; "all" when the cell has none of them */
    double peak_kib, wall_ms; /* the step's peak HWM and median latency; NaN when not measured */
} db_report_bar;

/* The run's cells that measured step, by idx, into *out (malloc'd; free with db_report_bars_free). series_axes
 * (n_axes names, each without '"' or '\\') name the axes that make the series; bad axes JSON gives the cell a
 * group of its own. MLK_E_USAGE for a name it cannot take, MLK_E_DB, MLK_E_NOMEM. */
int db_report_matrix(db_store *db, int64_t run_id, const char *step, const char *const *series_axes, int n_axes,
                     db_report_bar **out, int *n, mlk_error *err);
void db_report_bars_free(db_report_bar *b, int n);

/* Whether some cell of the run measured step. MLK_E_DB. */
int db_report_run_has_step(db_store *db, int64_t run_id, const char *step, bool *yes, mlk_error *err);
/* How many engines the run's cells use. MLK_E_DB. */
int db_report_n_engines(db_store *db, int64_t run_id, int *n, mlk_error *err);

/* ---- db_report_tool.c: a tool cell's findings ------------------------------------------------------------ */

typedef struct db_report_tool {
    char tool[16];         /* "memcheck" or "lsan", who reported the leaks (one tool per cell); "" without leaks */
    mlk_leak_report leaks; /* the first max_leaks records, most severe kind first, then the largest with what they
                              own, then in the tool's order; each with its stack, innermost frame first */
    int n_leaks;           /* every record of the cell, loaded or not */
    mlk_heap_peak peak;    /* massif's peak with its stored sites (snapshot, bytes; found false when none) */
} db_report_tool;

/* Load cell_id's tool findings into *out (zeroed first; release with db_report_tool_deinit, also on failure).
 * max_leaks < 0 loads every record. A plain cell, or a db from before tool cells, has none. MLK_E_DB, NOMEM. */
int db_report_tool_load(db_store *db, int64_t cell_id, int max_leaks, db_report_tool *out, mlk_error *err);
void db_report_tool_deinit(db_report_tool *t);

#endif
