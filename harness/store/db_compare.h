/* db_compare.h: the store's side of compare and baseline: existing dbs, stored scenarios, pinned baselines, the
 * cells to compare and the comparisons' findings. It must never create a db: those commands only read runs. */
#ifndef MLK_DB_COMPARE_H
#define MLK_DB_COMPARE_H

#include <stdint.h>

#include "runs.h"
#include "scenario.h"
#include "store.h"

/* Open an existing memleak db; MLK_E_NOTFOUND when the file is missing. */
int db_open_db(const char *path, db_store **out, mlk_error *err);

/* Parse the scenario stored with run_id (its thresholds judge the run). */
int db_run_scenario(db_store *db, int64_t run_id, mlk_scenario **out, mlk_error *err);

/* The newest run pinned for branch other than exclude_run, or 0. */
int db_pinned_baseline(db_store *db, const char *branch, int64_t exclude_run, int64_t *run_id, mlk_error *err);

/* The finished cell of config_key in run_id, if any (*n 0 or 1). */
int db_cell_in_run(db_store *db, int64_t run_id, const char *config_key, int64_t *cells, int *n, mlk_error *err);

/* The cell of engine in the same run with the same axes as cell_id (*n 0 or 1). */
int db_engine_peer(db_store *db, int64_t run_id, int64_t cell_id, const char *engine, int64_t *cells, int *n,
                        mlk_error *err);

/* *has: run_id has a cell of engine; *names (the caller frees it): the run's engines, "opencv, ort, ref". MLK_E_DB. */
int db_run_engines(db_store *db, int64_t run_id, const char *engine, bool *has, char **names, mlk_error *err);

/* Start a comparison of run_id against baseline (a description); *id gets its id. MLK_E_DB. */
int db_begin_comparison(db_store *db, int64_t run_id, const char *baseline, int64_t *id, mlk_error *err);
/* Store (or replace) one finding of comparison_id about f's cell and step. NaN rel, abs and p store NULL. MLK_E_DB. */
int db_store_finding(db_store *db, int64_t comparison_id, const mlk_step_figures *f, const char *metric,
                          const char *kind, double cur, double base, double rel, double abs, double p,
                          const char *detail, mlk_error *err);

/* Pin the run run_uuid as the baseline of branch (NULL: ""), now. The caller checks that the run is done. */
int db_baseline_pin(db_store *db, const char *run_uuid, const char *branch, mlk_error *err);

/* One pin: its branch, its run (run_id 0 when the run is not in this db) and when it was pinned. */
typedef struct db_baseline {
    char branch[128], commit[64], pinned_at[40]; /* "" for NULL */
    int64_t run_id;
} db_baseline;

/* Every pin, by branch, newest first within a branch. *out is malloc'd (never NULL on success). MLK_E_DB, NOMEM. */
int db_baselines_list(db_store *db, db_baseline **out, int *n, mlk_error *err);

#endif
