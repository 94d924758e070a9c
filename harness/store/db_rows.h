/* db_rows.h: stored rows read back as they are, NULL kept as NULL or NaN: how many rows each table holds, a run's
 * record, its cells and their step statistics. For tests that check what an import or a run stored, and for tools
 * that show a run. It must never write: these are reads. */
#ifndef MLK_DB_ROWS_H
#define MLK_DB_ROWS_H

#include <stdint.h>

#include "status.h"
#include "store.h"

typedef struct db_row_counts {
    int64_t runs, cells, samples, metrics, step_stats, baselines, comparisons, findings, change_points;
    int64_t leaks, heap_peaks, heap_peak_sites, tool_frames;
} db_row_counts;

/* How many rows each table holds. MLK_E_DB. */
int db_row_counts_get(db_store *db, db_row_counts *out, mlk_error *err);

/* A run's record; every string malloc'd, NULL where the column is NULL. */
typedef struct db_run_row {
    int64_t id;
    char *uuid, *scenario_name, *scenario_path, *scenario_text, *commit_sha, *branch, *host, *cpu, *kernel, *glibc,
        *tool_version, *argv, *started_at, *finished_at, *status;
} db_run_row;

/* The record of run_id into *out (free with db_run_row_deinit). MLK_E_NOTFOUND, MLK_E_DB, MLK_E_NOMEM. */
int db_run_row_get(db_store *db, int64_t run_id, db_run_row *out, mlk_error *err);
void db_run_row_deinit(db_run_row *r); /* NULL, or a zeroed row, is fine */

/* A cell's record (the verdict's figures aside); strings malloc'd, NULL where the column is NULL. */
typedef struct db_cell_row {
    int64_t id;
    int idx;
    int heap_shim; /* 1, 0, or -1 when NULL (not known) */
    char *engine, *model, *axes, *config_key, *allocator, *status, *error, *detail, *started_at, *finished_at;
} db_cell_row;

/* The cells of run_id by idx. *out is malloc'd (never NULL on success; free with db_cell_rows_free).
 * MLK_E_DB, MLK_E_NOMEM. */
int db_cell_rows(db_store *db, int64_t run_id, db_cell_row **out, int *n, mlk_error *err);
void db_cell_rows_free(db_cell_row *v, int n);

/* A step_stats row as stored: every figure a double, NaN where NULL (an import may store a fraction). */
typedef struct db_step_row {
    char step[32];
    int n;
    double peak_kib, rss_growth, heap_growth, heap_delta_median, rss_delta_median, wall_ms_median, wall_ms_p90,
        cpu_ms_median, final_rss_kib, final_anon_kib, final_heap_bytes;
} db_step_row;

/* The step_stats rows of cell_id by step name. *out is malloc'd (never NULL on success). MLK_E_DB, MLK_E_NOMEM. */
int db_step_rows(db_store *db, int64_t cell_id, db_step_row **out, int *n, mlk_error *err);

#endif
