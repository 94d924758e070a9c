/* db_inputs.c: a cell's row of cell_inputs (issue 22): the input shapes it ran with.
 * It must never touch a cell other than the one named. */
#include <stdlib.h>
#include <string.h>

#include "db_col.h"
#include "db_inputs.h"

int db_cell_inputs_store(db_store *db, int64_t run_id, int idx, const char *shapes, mlk_error *err)
{
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(db_sqlite(db),
                           "INSERT OR REPLACE INTO cell_inputs(cell_id, shapes) "
                           "SELECT id, ?3 FROM cells WHERE run_id = ?1 AND idx = ?2",
                           -1, &st, NULL) != SQLITE_OK)
        return db_fail_sql(db, err, "preparing a cell's input shapes");
    sqlite3_bind_int64(st, 1, run_id);
    sqlite3_bind_int(st, 2, idx);
    sqlite3_bind_text(st, 3, shapes, -1, SQLITE_STATIC);
    int rc = sqlite3_step(st) == SQLITE_DONE ? MLK_OK : db_fail_sql(db, err, "storing a cell's input shapes");
    sqlite3_finalize(st);
    return rc;
}

int db_cell_inputs_load(db_store *db, int64_t run_id, int idx, char **out, mlk_error *err)
{
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(db_sqlite(db),
                           "SELECT i.shapes FROM cell_inputs i JOIN cells c ON c.id = i.cell_id "
                           "WHERE c.run_id = ?1 AND c.idx = ?2",
                           -1, &st, NULL) != SQLITE_OK)
        return db_fail_sql(db, err, "preparing to read a cell's input shapes");
    sqlite3_bind_int64(st, 1, run_id);
    sqlite3_bind_int(st, 2, idx);
    int rc = MLK_OK, step = sqlite3_step(st);
    char *s = NULL;
    if (step == SQLITE_ROW) {
        const char *t = (const char *)sqlite3_column_text(st, 0);
        if (t && !(s = strdup(t)))
            rc = mlk_fail(err, MLK_E_NOMEM, "out of memory");
    } else if (step != SQLITE_DONE) {
        rc = db_fail_sql(db, err, "reading a cell's input shapes");
    }
    sqlite3_finalize(st);
    if (!rc)
        *out = s;
    return rc;
}
