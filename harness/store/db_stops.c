/* db_stops.c: a cell's row of cell_stops (issue 23): the iterations `iterations: auto` used and why it stopped.
 * It must never touch a cell other than the one named. */
#include "db_col.h"
#include "db_stops.h"

int db_cell_stop_store(db_store *db, int64_t cell_id, int iterations, const char *reason, int points,
                       const char *undecided, mlk_error *err)
{
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(db_sqlite(db),
                           "INSERT OR REPLACE INTO cell_stops(cell_id, iterations, reason, points, undecided) "
                           "VALUES (?1, ?2, ?3, ?4, ?5)",
                           -1, &st, NULL) != SQLITE_OK)
        return db_fail_sql(db, err, "preparing a cell's stop");
    sqlite3_bind_int64(st, 1, cell_id);
    sqlite3_bind_int(st, 2, iterations);
    sqlite3_bind_text(st, 3, reason, -1, SQLITE_STATIC);
    sqlite3_bind_int(st, 4, points);
    if (undecided && undecided[0])
        sqlite3_bind_text(st, 5, undecided, -1, SQLITE_STATIC);
    else
        sqlite3_bind_null(st, 5);
    int rc = sqlite3_step(st) == SQLITE_DONE ? MLK_OK : db_fail_sql(db, err, "storing a cell's stop");
    sqlite3_finalize(st);
    return rc;
}
