/* db_series.c: the per-series verdicts of a cell (series_results): written once per cell, replaced whole.
 * It must never leave a cell with half its series: one transaction, rolled back on any failure. */
#include <math.h>

#include "db_col.h"
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
