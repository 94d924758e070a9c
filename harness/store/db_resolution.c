/* db_resolution.c: drops the samples of iterations a long cell does not keep, and records the resolution kept.
 * It must never touch a cell other than the one named, nor leave a drop half done (one transaction). */
#include "db_col.h"
#include "db_resolution.h"

int db_samples_drop(db_store *db, int64_t cell_id, const int64_t (*ranges)[2], int n, mlk_error *err)
{
    if (n <= 0)
        return MLK_OK;
    int rc = db_exec(db, "BEGIN IMMEDIATE", err);
    if (rc)
        return rc;
    static const char *const sql[2] = {"DELETE FROM samples WHERE cell_id = ?1 AND seq BETWEEN ?2 AND ?3",
                                       "DELETE FROM metrics WHERE cell_id = ?1 AND seq BETWEEN ?2 AND ?3"};
    for (int t = 0; t < 2 && !rc; t++) {
        sqlite3_stmt *st = NULL;
        if (sqlite3_prepare_v2(db_sqlite(db), sql[t], -1, &st, NULL) != SQLITE_OK) {
            rc = db_fail_sql(db, err, "preparing a sample drop");
            break;
        }
        for (int i = 0; i < n && !rc; i++) {
            sqlite3_bind_int64(st, 1, cell_id);
            sqlite3_bind_int64(st, 2, ranges[i][0]);
            sqlite3_bind_int64(st, 3, ranges[i][1]);
            if (sqlite3_step(st) != SQLITE_DONE)
                rc = db_fail_sql(db, err, "dropping samples of a long cell");
            sqlite3_reset(st);
        }
        sqlite3_finalize(st);
    }
    if (!rc)
        rc = db_exec(db, "COMMIT", err);
    if (rc)
        db_exec(db, "ROLLBACK", NULL);
    return rc;
}

int db_resolution_store(db_store *db, int64_t cell_id, int64_t head_iters, int64_t stride, int64_t tail_from,
                        int64_t iterations, mlk_error *err)
{
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(db_sqlite(db),
                           "INSERT OR REPLACE INTO sample_resolution(cell_id, head_iters, stride, tail_from, iterations) "
                           "VALUES (?1, ?2, ?3, ?4, ?5)",
                           -1, &st, NULL) != SQLITE_OK)
        return db_fail_sql(db, err, "preparing the sample resolution");
    sqlite3_bind_int64(st, 1, cell_id);
    sqlite3_bind_int64(st, 2, head_iters);
    sqlite3_bind_int64(st, 3, stride);
    sqlite3_bind_int64(st, 4, tail_from);
    sqlite3_bind_int64(st, 5, iterations);
    int rc = sqlite3_step(st) == SQLITE_DONE ? MLK_OK : db_fail_sql(db, err, "storing the sample resolution");
    sqlite3_finalize(st);
    return rc;
}
