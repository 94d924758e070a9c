/* store.h: memleak's SQLite store (db_): runs, cells, streamed samples, step statistics, for resume and reports; the
 * only stage with SQL or sqlite3.h, later ones get plain structs. It must never hold a write transaction open across
 * a wait: runs sharing one db stay live with short ones. */
#ifndef MLK_STORE_H
#define MLK_STORE_H

#include <stdbool.h>
#include <stdint.h>

#include "sample.h"
#include "status.h"

#define DB_SCHEMA_VERSION 6

typedef struct db_store db_store;

/* Open (creating if needed) the db at path: schema, WAL, busy timeout, foreign keys. A name SQLite would not keep
 * as a file ("", ":memory:", a "file:" URI) is refused with MLK_E_USAGE before anything is created. */
int db_open(const char *path, db_store **out, mlk_error *err);
/* MLK_E_USAGE, saying why, for a db name SQLite would not keep as a file; 0 for any other. */
int db_check_name(const char *path, mlk_error *err);
/* For --dry-run: whether db_open would take path, changing nothing: a name SQLite keeps, a folder that takes a new
 * file, or an existing file that is writable, a SQLite db (or empty) and of a schema no newer than this one.
 * MLK_E_USAGE naming what is wrong. */
int db_check_usable(const char *path, mlk_error *err);
/* As db_open, for a db that must already exist (--resume): MLK_E_NOTFOUND, and no file made, when it does not. */
int db_open_existing(const char *path, db_store **out, mlk_error *err);
void db_close(db_store *db);
/* Open an existing db for reading only: no schema is created or upgraded, nothing is ever written (an older db
 * stays as it is; queries of tables it lacks fail, so callers look before they read). The sample insert of a
 * read-only store fails. MLK_E_DB naming the file when it cannot be opened. */
int db_open_readonly(const char *path, db_store **out, mlk_error *err);

typedef struct db_run_meta {
    const char *uuid;  /* the run's identity across dbs; a run with this uuid already here is joined (shards) */
    const char *scenario_name, *scenario_path, *scenario_text;
    const char *commit_sha, *branch; /* may be NULL */
    const char *host, *cpu, *kernel, *glibc, *tool_version, *argv;
} db_run_meta;

/* Start a run, or join the one with m->uuid (shards of one batch writing one db). */
int db_run_begin(db_store *db, const db_run_meta *m, int64_t *run_id, mlk_error *err);
/* Mark run_id running again (--resume); an id with no run changes nothing. MLK_E_DB. */
int db_run_reopen(db_store *db, int64_t run_id, mlk_error *err);
/* status: "done", "interrupted" or "failed". */
int db_run_finish(db_store *db, int64_t run_id, const char *status, mlk_error *err);

typedef struct db_cell_def {
    int idx;
    const char *engine, *model, *model_hash, *axes_json, *config_key, *allocator;
} db_cell_def;

/* Insert a pending cell. */
int db_cell_insert(db_store *db, int64_t run_id, const db_cell_def *c, int64_t *cell_id, mlk_error *err);
/* Mark running (and clear samples left by an interrupted attempt). */
int db_cell_start(db_store *db, int64_t cell_id, mlk_error *err);
/* Worker-reported facts. */
int db_cell_set_allocator(db_store *db, int64_t cell_id, const char *active, const char *lib, bool heap_shim,
                          mlk_error *err);

typedef struct db_cell_result {
    const char *status;        /* pass, leak, plateau, crashed, timeout, oom, error */
    int signal, exit_code;     /* -1 when not applicable */
    const char *metric;        /* NULL when no verdict was computed */
    double slope, late_slope, mk_p, growth; /* NaN stores NULL */
    const char *detail, *error; /* may be NULL */
} db_cell_result;
int db_cell_finish(db_store *db, int64_t cell_id, const db_cell_result *r, mlk_error *err);

/* One series' verdict (db/schema.sql, series_results). NaN stores NULL. */
typedef struct db_series_result {
    const char *series, *unit, *verdict, *detail;
    double slope, late_slope, mk_p, growth, floor, quantum, noise;
    int n;
} db_series_result;
/* Replace cell_id's per-series verdicts with r[0..n), in one transaction. MLK_E_DB. */
int db_series_results_store(db_store *db, int64_t cell_id, const db_series_result *r, int n, mlk_error *err);

/* One row of series_results as read back. */
typedef struct db_series_row {
    char series[16], unit[8], verdict[16], detail[256];
    double slope, late_slope, growth, floor; /* NaN when NULL */
} db_series_row;
/* cell_id's series verdicts in names.h's order (*out malloc'd, NULL with *n 0 for none or a db before schema 2). */
int db_series_results_load(db_store *db, int64_t cell_id, db_series_row **out, int *n, mlk_error *err);

/* Insert samples in one transaction; seq continues from *seq and is advanced. */
int db_samples_insert(db_store *db, int64_t cell_id, const mlk_sample *s, int n, int64_t *seq, mlk_error *err);

/* One engine figure of the sample seq of cell_id (arena stats and the like). */
int db_metric_insert(db_store *db, int64_t cell_id, int64_t seq, const char *name, int64_t value, mlk_error *err);

typedef struct db_step_stats {
    int step;
    int n;
    int64_t peak_kib;
    double rss_growth, heap_growth, heap_delta_median, rss_delta_median; /* NaN stores NULL */
    double wall_ms_median, wall_ms_p90, cpu_ms_median;
    int64_t final_rss_kib, final_anon_kib, final_heap_bytes; /* last measured sample; -1 stores NULL */
    /* Appended (issue 12): memory requested within the step, touched or not: the highest live heap and the most
     * mapped (through the shim's mmap/munmap) between its probes, the max over the measured iterations; -1: NULL. */
    int64_t heap_peak_bytes, mapped_peak_bytes;
} db_step_stats;
int db_step_stats_insert(db_store *db, int64_t cell_id, const db_step_stats *s, int n, mlk_error *err);

/* Measured-phase series of one column ("heap_live_bytes", "rss_anon_kib", "vm_rss_kib", "vm_hwm_kib",
 * "wall_ns", "cpu_ns") for one step name, in iteration order. NULL values are skipped. *out is malloc'd. */
int db_series(db_store *db, int64_t cell_id, const char *step, const char *column, double **out, int *n,
              mlk_error *err);

/* For --resume: the run's scenario text and path (malloc'd), and whether it exists. */
int db_run_load(db_store *db, int64_t run_id, char **scenario_text, char **scenario_path, mlk_error *err);
/* Cell id of (run, idx) and its status (malloc'd into *status), or *cell_id = 0 when absent. */
int db_cell_lookup(db_store *db, int64_t run_id, int idx, int64_t *cell_id, char **status, mlk_error *err);

/* The model path and hash cell (run, idx) was stored with (malloc'd; NULL when absent or NULL in the db). */
int db_cell_identity(db_store *db, int64_t run_id, int idx, char **model, char **model_hash, mlk_error *err);

/* PRAGMA integrity_check == "ok". */
int db_integrity_ok(db_store *db, bool *ok, mlk_error *err);

#endif
