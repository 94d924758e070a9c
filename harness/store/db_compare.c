/* db_compare.c: what the cross-run commands (compare, history, baseline) ask of the store: opening an existing db, a
 * run's stored scenario, pinned baselines, a config's cell in another run, and comparisons with their findings.
 * It must never create a db file: a typo in --db is an error, not a new empty store. */
#include <math.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "db_compare.h"

int db_open_db(const char *path, db_store **out, mlk_error *err)
{
    if (access(path, R_OK))
        return mlk_fail(err, MLK_E_NOTFOUND, "no memleak db at %s (give --db PATH)", path);
    return db_open(path, out, err);
}

int db_run_scenario(db_store *db, int64_t run_id, mlk_scenario **out, mlk_error *err)
{
    char *text = NULL, *path = NULL;
    int rc = db_run_load(db, run_id, &text, &path, err);
    if (!rc)
        rc = mlk_scenario_parse(text, strlen(text), path ? path : "(stored scenario)", out, err);
    free(text);
    free(path);
    return rc;
}

static int one_id(db_store *db, const char *sql, int64_t a, const char *s1, const char *s2, int64_t *out, int *n,
                  mlk_error *err)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(db_handle(db), sql, -1, &st, NULL) != SQLITE_OK)
        return mlk_fail(err, MLK_E_DB, "%s", sqlite3_errmsg(db_handle(db)));
    sqlite3_bind_int64(st, 1, a);
    if (s1)
        sqlite3_bind_text(st, 2, s1, -1, SQLITE_TRANSIENT);
    if (s2)
        sqlite3_bind_text(st, 3, s2, -1, SQLITE_TRANSIENT);
    *n = 0;
    if (sqlite3_step(st) == SQLITE_ROW) {
        *out = sqlite3_column_int64(st, 0);
        *n = 1;
    }
    sqlite3_finalize(st);
    return MLK_OK;
}

int db_pinned_baseline(db_store *db, const char *branch, int64_t exclude_run, int64_t *run_id, mlk_error *err)
{
    int n = 0;
    *run_id = 0;
    return one_id(db,
                  "SELECT r.id FROM baselines b JOIN runs r ON r.uuid = b.run_uuid WHERE r.id != ?1 AND b.branch = ?2 "
                  "ORDER BY b.pinned_at DESC, b.id DESC LIMIT 1",
                  exclude_run, branch ? branch : "", NULL, run_id, &n, err);
}

int db_cell_in_run(db_store *db, int64_t run_id, const char *config_key, int64_t *cells, int *n, mlk_error *err)
{
    return one_id(db,
                  "SELECT id FROM cells WHERE run_id = ?1 AND config_key = ?2 AND status IN ('pass','leak','plateau')",
                  run_id, config_key, NULL, cells, n, err);
}

int db_engine_peer(db_store *db, int64_t run_id, int64_t cell_id, const char *engine, int64_t *cells, int *n,
                        mlk_error *err)
{
    char id[32];
    snprintf(id, sizeof id, "%lld", (long long)cell_id);
    /* The same run and axes (an engine axis aside), the other engine. */
    return one_id(db,
                  "SELECT p.id FROM cells p, cells c WHERE c.id = CAST(?3 AS INTEGER) AND p.run_id = ?1 "
                  "AND p.engine = ?2 AND p.id != c.id AND p.status IN ('pass','leak','plateau') "
                  "AND json_remove(p.axes, '$.engine') = json_remove(c.axes, '$.engine')",
                  run_id, engine, id, cells, n, err);
}

int db_begin_comparison(db_store *db, int64_t run_id, const char *baseline, int64_t *id, mlk_error *err)
{
    sqlite3_stmt *st;
    const char *sql = "INSERT INTO comparisons(run_id, baseline, created_at) "
                      "VALUES (?, ?, strftime('%Y-%m-%dT%H:%M:%fZ','now'))";
    if (sqlite3_prepare_v2(db_handle(db), sql, -1, &st, NULL) != SQLITE_OK)
        return mlk_fail(err, MLK_E_DB, "%s", sqlite3_errmsg(db_handle(db)));
    sqlite3_bind_int64(st, 1, run_id);
    sqlite3_bind_text(st, 2, baseline, -1, SQLITE_TRANSIENT);
    int rc = sqlite3_step(st) == SQLITE_DONE ? MLK_OK : mlk_fail(err, MLK_E_DB, "%s", sqlite3_errmsg(db_handle(db)));
    sqlite3_finalize(st);
    if (!rc)
        *id = sqlite3_last_insert_rowid(db_handle(db));
    return rc;
}

static void bind_real(sqlite3_stmt *st, int i, double v)
{
    if (isnan(v))
        sqlite3_bind_null(st, i);
    else
        sqlite3_bind_double(st, i, v);
}

int db_store_finding(db_store *db, int64_t comparison_id, const mlk_step_figures *f, const char *metric,
                          const char *kind, double cur, double base, double rel, double abs, double p,
                          const char *detail, mlk_error *err)
{
    sqlite3_stmt *st;
    const char *sql = "INSERT OR REPLACE INTO findings(comparison_id, cell_id, config_key, step, metric, kind, current, "
                      "baseline, delta_rel, delta_abs, p_value, detail) VALUES (?,?,?,?,?,?,?,?,?,?,?,?)";
    if (sqlite3_prepare_v2(db_handle(db), sql, -1, &st, NULL) != SQLITE_OK)
        return mlk_fail(err, MLK_E_DB, "%s", sqlite3_errmsg(db_handle(db)));
    sqlite3_bind_int64(st, 1, comparison_id);
    sqlite3_bind_int64(st, 2, f->cell_id);
    sqlite3_bind_text(st, 3, f->config_key, -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(st, 4, f->step, -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(st, 5, metric, -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(st, 6, kind, -1, SQLITE_TRANSIENT);
    sqlite3_bind_double(st, 7, cur);
    sqlite3_bind_double(st, 8, base);
    bind_real(st, 9, rel);
    bind_real(st, 10, abs);
    bind_real(st, 11, p);
    sqlite3_bind_text(st, 12, detail, -1, SQLITE_TRANSIENT);
    int rc = sqlite3_step(st) == SQLITE_DONE ? MLK_OK : mlk_fail(err, MLK_E_DB, "%s", sqlite3_errmsg(db_handle(db)));
    sqlite3_finalize(st);
    return rc;
}
