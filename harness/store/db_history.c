/* db_history.c: config keys, the (config, step) pairs with statistics, and change points in the db (db_history.h).
 * It must never replace a stored change point: INSERT OR IGNORE on its key keeps the first detection. */
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>

#include "db_col.h"
#include "db_history.h"

int db_configs_matching(db_store *db, const char *part, char (*keys)[DB_KEY_LEN], int max, int *n,
                        mlk_error *err)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(db_sqlite(db),
                           "SELECT DISTINCT config_key FROM cells WHERE config_key = ?1 OR instr(config_key, ?1) > 0 "
                           "ORDER BY config_key != ?1, config_key LIMIT ?2",
                           -1, &st, NULL) != SQLITE_OK)
        return db_fail_sql(db, err, "looking config keys up");
    db_bind_text(st, 1, part);
    sqlite3_bind_int(st, 2, max);
    int k = 0;
    while (k < max && sqlite3_step(st) == SQLITE_ROW)
        db_col_copy(st, 0, keys[k++], DB_KEY_LEN);
    sqlite3_finalize(st);
    *n = k;
    return MLK_OK;
}

int db_config_label(db_store *db, const char *config_key, char *out, size_t len, mlk_error *err)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(db_sqlite(db),
                           "SELECT COALESCE((SELECT group_concat(j.key || '=' || j.value, ' ') FROM json_each(CASE "
                           "WHEN json_valid(c.axes) THEN c.axes ELSE '{}' END) j), '') FROM cells c "
                           "WHERE c.config_key = ?1 ORDER BY c.id DESC LIMIT 1",
                           -1, &st, NULL) != SQLITE_OK)
        return db_fail_sql(db, err, "reading a config's axes");
    db_bind_text(st, 1, config_key);
    out[0] = '\0';
    if (sqlite3_step(st) == SQLITE_ROW)
        db_col_copy(st, 0, out, len);
    sqlite3_finalize(st);
    if (!out[0])
        snprintf(out, len, "%s", config_key);
    return MLK_OK;
}

int db_config_steps(db_store *db, db_config_step **out, int *n, mlk_error *err)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(db_sqlite(db),
                           "SELECT DISTINCT c.config_key, s.step FROM step_stats s JOIN cells c ON c.id = s.cell_id "
                           "ORDER BY 1, 2",
                           -1, &st, NULL) != SQLITE_OK)
        return db_fail_sql(db, err, "reading the configs' steps");
    db_config_step *v = NULL;
    int k = 0, cap = 0, rc = MLK_OK;
    while (sqlite3_step(st) == SQLITE_ROW) {
        db_config_step *p = db_grow(v, k, &cap, sizeof *v);
        if (!p) {
            rc = mlk_fail(err, MLK_E_NOMEM, "out of memory");
            break;
        }
        v = p;
        db_col_copy(st, 0, v[k].config_key, sizeof v[k].config_key);
        db_col_copy(st, 1, v[k].step, sizeof v[k].step);
        k++;
    }
    sqlite3_finalize(st);
    if (!rc && !v && !(v = malloc(sizeof *v)))
        rc = mlk_fail(err, MLK_E_NOMEM, "out of memory");
    if (rc) {
        free(v);
        return rc;
    }
    *out = v;
    *n = k;
    return MLK_OK;
}

int db_change_point_store(db_store *db, const db_change_point *cp, bool *is_new, mlk_error *err)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(db_sqlite(db),
                           "INSERT OR IGNORE INTO change_points(config_key, step, metric, run_uuid, commit_sha, "
                           "before, after, t_stat, detected_at) "
                           "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, strftime('%Y-%m-%dT%H:%M:%fZ','now'))",
                           -1, &st, NULL) != SQLITE_OK)
        return db_fail_sql(db, err, "storing a change point");
    db_bind_text(st, 1, cp->config_key);
    db_bind_text(st, 2, cp->step);
    db_bind_text(st, 3, cp->metric);
    db_bind_text(st, 4, cp->run_uuid);
    db_bind_text(st, 5, cp->commit_sha);
    sqlite3_bind_double(st, 6, cp->before);
    sqlite3_bind_double(st, 7, cp->after);
    db_bind_finite(st, 8, cp->t_stat);
    int rc = sqlite3_step(st) == SQLITE_DONE ? MLK_OK : db_fail_sql(db, err, "storing a change point");
    if (!rc)
        *is_new = sqlite3_changes(db_sqlite(db)) > 0;
    sqlite3_finalize(st);
    return rc;
}
