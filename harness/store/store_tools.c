/* store_tools.c: leak records, heap peaks and their stacks into the db, one IMMEDIATE transaction per cell.
 * It must never leave a transaction open on return, success or failure. */
#include <sqlite3.h>
#include <stdio.h>
#include <string.h>

#include "db_col.h"
#include "store_tools.h"

static int fail(sqlite3 *h, mlk_error *err, const char *what, int64_t cell_id)
{
    mlk_fail(err, MLK_E_DB, "db: %s of cell %lld: %s", what, (long long)cell_id, sqlite3_errmsg(h));
    sqlite3_exec(h, "ROLLBACK", NULL, NULL, NULL);
    return MLK_E_DB;
}

/* Delete the cell's rows, inside the caller's transaction. */
static int clear(sqlite3 *h, int64_t cell_id)
{
    static const char *const sql[] = {"DELETE FROM tool_frames WHERE cell_id = ?1",
                                      "DELETE FROM leaks WHERE cell_id = ?1",
                                      "DELETE FROM heap_peak_sites WHERE cell_id = ?1",
                                      "DELETE FROM heap_peaks WHERE cell_id = ?1",
                                      "DELETE FROM tool_exec WHERE cell_id = ?1"};
    for (size_t i = 0; i < sizeof sql / sizeof *sql; i++) {
        sqlite3_stmt *st;
        if (sqlite3_prepare_v2(h, sql[i], -1, &st, NULL) != SQLITE_OK)
            return -1;
        sqlite3_bind_int64(st, 1, cell_id);
        int done = sqlite3_step(st) == SQLITE_DONE;
        sqlite3_finalize(st);
        if (!done)
            return -1;
    }
    return 0;
}

int db_tool_clear(db_store *db, int64_t cell_id, mlk_error *err)
{
    sqlite3 *h = db_sqlite(db);
    if (sqlite3_exec(h, "BEGIN IMMEDIATE", NULL, NULL, NULL) != SQLITE_OK || clear(h, cell_id) ||
        sqlite3_exec(h, "COMMIT", NULL, NULL, NULL) != SQLITE_OK)
        return fail(h, err, "clearing the tool findings", cell_id);
    return MLK_OK;
}

static int frames_insert(sqlite3_stmt *st, int64_t cell_id, const char *source, int seq, const mlk_frame *f, int n)
{
    for (int d = 0; d < n; d++) {
        sqlite3_reset(st);
        sqlite3_bind_int64(st, 1, cell_id);
        sqlite3_bind_text(st, 2, source, -1, SQLITE_STATIC);
        sqlite3_bind_int(st, 3, seq);
        sqlite3_bind_int(st, 4, d);
        db_bind_text(st, 5, f[d].fn);
        db_bind_text(st, 6, f[d].file);
        if (f[d].line > 0)
            sqlite3_bind_int(st, 7, f[d].line);
        else
            sqlite3_bind_null(st, 7);
        db_bind_text(st, 8, f[d].obj);
        if (sqlite3_step(st) != SQLITE_DONE)
            return -1;
    }
    return 0;
}

static const char *const frame_sql =
    "INSERT INTO tool_frames(cell_id, source, seq, depth, fn, file, line, obj) VALUES (?,?,?,?,?,?,?,?)";

int db_leaks_store(db_store *db, int64_t cell_id, const char *tool, const mlk_leak_report *r, mlk_error *err)
{
    sqlite3 *h = db_sqlite(db);
    sqlite3_stmt *leak = NULL, *frame = NULL;
    int bad = sqlite3_exec(h, "BEGIN IMMEDIATE", NULL, NULL, NULL) != SQLITE_OK || clear(h, cell_id) ||
              sqlite3_prepare_v2(h, "INSERT INTO leaks(cell_id, seq, tool, kind, bytes, total_bytes, blocks, "
                                    "in_engine) VALUES (?,?,?,?,?,?,?,?)", -1, &leak, NULL) != SQLITE_OK ||
              sqlite3_prepare_v2(h, frame_sql, -1, &frame, NULL) != SQLITE_OK;
    for (int i = 0; !bad && i < r->n; i++) {
        const mlk_leak *l = &r->leaks[i];
        sqlite3_reset(leak);
        sqlite3_bind_int64(leak, 1, cell_id);
        sqlite3_bind_int(leak, 2, i);
        sqlite3_bind_text(leak, 3, tool, -1, SQLITE_STATIC);
        sqlite3_bind_text(leak, 4, mlk_leak_kind_name(l->kind), -1, SQLITE_STATIC);
        sqlite3_bind_int64(leak, 5, l->bytes);
        sqlite3_bind_int64(leak, 6, l->total_bytes);
        sqlite3_bind_int64(leak, 7, l->blocks);
        sqlite3_bind_int(leak, 8, l->in_engine);
        bad = sqlite3_step(leak) != SQLITE_DONE || frames_insert(frame, cell_id, "leak", i, l->frames, l->n_frames);
    }
    int rc = bad ? fail(h, err, "storing the leaks", cell_id) : MLK_OK;
    sqlite3_finalize(leak);
    sqlite3_finalize(frame);
    if (!rc && sqlite3_exec(h, "COMMIT", NULL, NULL, NULL) != SQLITE_OK)
        rc = fail(h, err, "committing the leaks", cell_id);
    return rc;
}

static int peak_row(sqlite3 *h, int64_t cell_id, const mlk_heap_peak *p)
{
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(h, "INSERT INTO heap_peaks(cell_id, peak_bytes, heap_bytes, heap_extra_bytes, "
                              "stacks_bytes, snapshot, n_snapshots, time, time_unit, below_threshold_bytes) "
                              "VALUES (?,?,?,?,?,?,?,?,?,?)", -1, &st, NULL) != SQLITE_OK)
        return -1;
    sqlite3_bind_int64(st, 1, cell_id);
    sqlite3_bind_int64(st, 2, p->heap_bytes + p->extra_bytes);
    sqlite3_bind_int64(st, 3, p->heap_bytes);
    sqlite3_bind_int64(st, 4, p->extra_bytes);
    sqlite3_bind_int64(st, 5, p->stacks_bytes);
    sqlite3_bind_int(st, 6, p->snapshot);
    sqlite3_bind_int(st, 7, p->n_snapshots);
    if (p->time >= 0)
        sqlite3_bind_int64(st, 8, p->time);
    else
        sqlite3_bind_null(st, 8);
    db_bind_text(st, 9, p->time_unit[0] ? p->time_unit : NULL);
    sqlite3_bind_int64(st, 10, p->below_threshold_bytes);
    int bad = sqlite3_step(st) != SQLITE_DONE;
    sqlite3_finalize(st);
    return bad ? -1 : 0;
}

int db_heap_peak_store(db_store *db, int64_t cell_id, const mlk_heap_peak *p, int max_sites, mlk_error *err)
{
    sqlite3 *h = db_sqlite(db);
    sqlite3_stmt *site = NULL, *frame = NULL;
    int bad = sqlite3_exec(h, "BEGIN IMMEDIATE", NULL, NULL, NULL) != SQLITE_OK || clear(h, cell_id);
    if (!bad && p->found)
        bad = peak_row(h, cell_id, p) ||
              sqlite3_prepare_v2(h, "INSERT INTO heap_peak_sites(cell_id, seq, bytes) VALUES (?,?,?)", -1, &site,
                                 NULL) != SQLITE_OK ||
              sqlite3_prepare_v2(h, frame_sql, -1, &frame, NULL) != SQLITE_OK;
    for (int i = 0; !bad && p->found && i < p->n_sites && i < max_sites; i++) {
        sqlite3_reset(site);
        sqlite3_bind_int64(site, 1, cell_id);
        sqlite3_bind_int(site, 2, i);
        sqlite3_bind_int64(site, 3, p->sites[i].bytes);
        bad = sqlite3_step(site) != SQLITE_DONE ||
              frames_insert(frame, cell_id, "peak_site", i, p->sites[i].frames, p->sites[i].n_frames);
    }
    int rc = bad ? fail(h, err, "storing the heap peak", cell_id) : MLK_OK;
    sqlite3_finalize(site);
    sqlite3_finalize(frame);
    if (!rc && sqlite3_exec(h, "COMMIT", NULL, NULL, NULL) != SQLITE_OK)
        rc = fail(h, err, "committing the heap peak", cell_id);
    return rc;
}

int db_tool_exec_store(db_store *db, int64_t cell_id, const char *program, const char *args, const char *env,
                       mlk_error *err)
{
    sqlite3 *h = db_sqlite(db);
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(h, "INSERT OR REPLACE INTO tool_exec(cell_id, program, args, env) VALUES (?1,?2,?3,?4)",
                           -1, &st, NULL) != SQLITE_OK)
        return mlk_fail(err, MLK_E_DB, "db: recording what cell %lld ran: %s", (long long)cell_id, sqlite3_errmsg(h));
    sqlite3_bind_int64(st, 1, cell_id);
    sqlite3_bind_text(st, 2, program, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 3, args, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 4, env, -1, SQLITE_STATIC);
    int rc = sqlite3_step(st) == SQLITE_DONE ? MLK_OK
             : mlk_fail(err, MLK_E_DB, "db: recording what cell %lld ran: %s", (long long)cell_id, sqlite3_errmsg(h));
    sqlite3_finalize(st);
    return rc;
}
