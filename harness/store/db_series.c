/* db_series.c: the per-series verdicts of a cell (series_results): written once per cell, replaced whole.
 * It must never leave a cell with half its series: one transaction, rolled back on any failure. */
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "db_col.h"
#include "names.h"
#include "store.h"

int db_series_results_store(db_store *db, int64_t cell_id, const db_series_result *r, int n, mlk_error *err)
{
    sqlite3 *h = db_sqlite(db);
    sqlite3_stmt *del = NULL, *ins = NULL;
    int rc = db_exec(db, "BEGIN IMMEDIATE", err);
    if (rc)
        return rc;
    if (sqlite3_prepare_v2(h, "DELETE FROM series_results WHERE cell_id = ?1", -1, &del, NULL) != SQLITE_OK ||
        sqlite3_prepare_v2(h,
                           "INSERT INTO series_results(cell_id, series, unit, verdict, slope_per_iter, "
                           "late_slope_per_iter, mk_p, growth, floor_per_iter, quantum, noise, n, detail) "
                           "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)",
                           -1, &ins, NULL) != SQLITE_OK) {
        rc = db_fail_sql(db, err, "preparing the series results");
        goto done;
    }
    sqlite3_bind_int64(del, 1, cell_id);
    if (sqlite3_step(del) != SQLITE_DONE) {
        rc = db_fail_sql(db, err, "clearing the series results");
        goto done;
    }
    for (int i = 0; i < n && !rc; i++) {
        const db_series_result *x = &r[i];
        sqlite3_reset(ins);
        sqlite3_bind_int64(ins, 1, cell_id);
        db_bind_text(ins, 2, x->series);
        db_bind_text(ins, 3, x->unit);
        db_bind_text(ins, 4, x->verdict);
        const double v[] = {x->slope, x->late_slope, x->mk_p, x->growth, x->floor, x->quantum, x->noise};
        for (int k = 0; k < 7; k++)
            db_bind_finite(ins, 5 + k, v[k]);
        sqlite3_bind_int(ins, 12, x->n);
        db_bind_text(ins, 13, x->detail);
        if (sqlite3_step(ins) != SQLITE_DONE)
            rc = db_fail_sql(db, err, "storing a series result");
    }
done:
    sqlite3_finalize(del);
    sqlite3_finalize(ins);
    if (!rc)
        rc = db_exec(db, "COMMIT", err);
    if (rc)
        db_exec(db, "ROLLBACK", NULL);
    return rc;
}

int db_series_results_load(db_store *db, int64_t cell_id, db_series_row **out, int *n, mlk_error *err)
{
    *out = NULL;
    *n = 0;
    sqlite3_stmt *st = NULL;
    /* A db from before schema 2 has no such table: nothing to show, not an error. */
    if (sqlite3_prepare_v2(db_sqlite(db), "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'series_results'",
                           -1, &st, NULL) != SQLITE_OK)
        return db_fail_sql(db, err, "looking for series_results");
    bool have = sqlite3_step(st) == SQLITE_ROW;
    sqlite3_finalize(st);
    if (!have)
        return MLK_OK;
    if (sqlite3_prepare_v2(db_sqlite(db),
                           "SELECT series, unit, verdict, slope_per_iter, late_slope_per_iter, growth, floor_per_iter, "
                           "detail FROM series_results WHERE cell_id = ?1",
                           -1, &st, NULL) != SQLITE_OK)
        return db_fail_sql(db, err, "reading series_results");
    sqlite3_bind_int64(st, 1, cell_id);
    db_series_row *rows = NULL;
    int count = 0, cap = 0, rc = MLK_OK;
    while (!rc && sqlite3_step(st) == SQLITE_ROW) {
        if (count == cap) {
            int ncap = cap ? cap * 2 : 8;
            db_series_row *g = realloc(rows, sizeof *g * (size_t)ncap);
            if (!g) {
                rc = mlk_fail(err, MLK_E_NOMEM, "db: out of memory");
                break;
            }
            rows = g;
            cap = ncap;
        }
        db_series_row *x = &rows[count++];
        memset(x, 0, sizeof *x);
        db_col_copy(st, 0, x->series, sizeof x->series);
        db_col_copy(st, 1, x->unit, sizeof x->unit);
        db_col_copy(st, 2, x->verdict, sizeof x->verdict);
        x->slope = db_col_real(st, 3);
        x->late_slope = db_col_real(st, 4);
        x->growth = db_col_real(st, 5);
        x->floor = db_col_real(st, 6);
        db_col_copy(st, 7, x->detail, sizeof x->detail);
    }
    sqlite3_finalize(st);
    if (rc) {
        free(rows);
        return rc;
    }
    /* In the order of harness/core/names.h, whatever the table's. */
    for (int i = 1; i < count; i++)
        for (int j = i; j > 0 && mlk_series_from_name(rows[j].series) < mlk_series_from_name(rows[j - 1].series); j--) {
            db_series_row t = rows[j];
            rows[j] = rows[j - 1];
            rows[j - 1] = t;
        }
    *out = rows;
    *n = count;
    return MLK_OK;
}
