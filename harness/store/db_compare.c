/* db_compare.c: what the cross-run commands (compare, history, baseline) ask of the store: opening an existing db, a
 * run's stored scenario, pinned baselines, a config's cell in another run, and comparisons with their findings.
 * It must never create a db file: a typo in --db is an error, not a new empty store. */
#include <math.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "db_col.h"
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

/* The first column of the first row of sql with ?1 = a, ?2 = s1 and (has_b) ?3 = b: *n is 1 with *out, or 0. */
static int one_id(db_store *db, const char *sql, int64_t a, const char *s1, bool has_b, int64_t b, int64_t *out,
                  int *n, mlk_error *err)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(db_sqlite(db), sql, -1, &st, NULL) != SQLITE_OK)
        return db_fail_sql(db, err, "looking a cell or run up");
    sqlite3_bind_int64(st, 1, a);
    db_bind_text(st, 2, s1);
    if (has_b)
        sqlite3_bind_int64(st, 3, b);
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
                  exclude_run, branch ? branch : "", false, 0, run_id, &n, err);
}

int db_cell_in_run(db_store *db, int64_t run_id, const char *config_key, int64_t *cells, int *n, mlk_error *err)
{
    return one_id(db,
                  "SELECT id FROM cells WHERE run_id = ?1 AND config_key = ?2 AND status IN ('pass','leak','plateau')",
                  run_id, config_key, false, 0, cells, n, err);
}

int db_engine_peer(db_store *db, int64_t run_id, int64_t cell_id, const char *engine, int64_t *cells, int *n,
                        mlk_error *err)
{
    /* The same run and axes (an engine axis aside), the other engine. */
    return one_id(db,
                  "SELECT p.id FROM cells p, cells c WHERE c.id = ?3 AND p.run_id = ?1 "
                  "AND p.engine = ?2 AND p.id != c.id AND p.status IN ('pass','leak','plateau') "
                  "AND json_remove(p.axes, '$.engine') = json_remove(c.axes, '$.engine')",
                  run_id, engine, true, cell_id, cells, n, err);
}

int db_run_engines(db_store *db, int64_t run_id, const char *engine, bool *has, char **names, mlk_error *err)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(db_sqlite(db),
                           "SELECT group_concat(engine, ', '), coalesce(sum(engine = ?2), 0) FROM "
                           "(SELECT DISTINCT engine FROM cells WHERE run_id = ?1 ORDER BY engine)",
                           -1, &st, NULL) != SQLITE_OK)
        return db_fail_sql(db, err, "listing the run's engines");
    sqlite3_bind_int64(st, 1, run_id);
    sqlite3_bind_text(st, 2, engine, -1, SQLITE_STATIC);
    int rc = MLK_OK;
    if (sqlite3_step(st) != SQLITE_ROW)
        rc = db_fail_sql(db, err, "listing the run's engines");
    else {
        const char *s = (const char *)sqlite3_column_text(st, 0);
        *has = sqlite3_column_int(st, 1) > 0;
        if (!(*names = strdup(s ? s : "")))
            rc = mlk_fail(err, MLK_E_NOMEM, "out of memory");
    }
    sqlite3_finalize(st);
    return rc;
}

/* Prepare sql, let bind fill it, step it to the end: MLK_OK or MLK_E_DB naming what. */
static int write_one(db_store *db, const char *sql, const char *what, void (*bind)(sqlite3_stmt *, const void *),
                     const void *arg, mlk_error *err)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(db_sqlite(db), sql, -1, &st, NULL) != SQLITE_OK)
        return db_fail_sql(db, err, what);
    bind(st, arg);
    int rc = sqlite3_step(st) == SQLITE_DONE ? MLK_OK : db_fail_sql(db, err, what);
    sqlite3_finalize(st);
    return rc;
}

typedef struct {
    int64_t id;
    const char *s;
} id_text;

static void bind_id_text(sqlite3_stmt *st, const void *v)
{
    const id_text *a = v;
    sqlite3_bind_int64(st, 1, a->id);
    db_bind_text(st, 2, a->s);
}

int db_begin_comparison(db_store *db, int64_t run_id, const char *baseline, int64_t *id, mlk_error *err)
{
    id_text a = {run_id, baseline};
    int rc = write_one(db,
                       "INSERT INTO comparisons(run_id, baseline, created_at) "
                       "VALUES (?1, ?2, strftime('%Y-%m-%dT%H:%M:%fZ','now'))",
                       "storing a comparison", bind_id_text, &a, err);
    if (!rc)
        *id = sqlite3_last_insert_rowid(db_sqlite(db));
    return rc;
}

typedef struct {
    int64_t comparison_id;
    const mlk_step_figures *f;
    const char *metric, *kind, *detail;
    double cur, base, rel, abs, p;
} finding_arg;

static void bind_finding(sqlite3_stmt *st, const void *v)
{
    const finding_arg *a = v;
    sqlite3_bind_int64(st, 1, a->comparison_id);
    sqlite3_bind_int64(st, 2, a->f->cell_id);
    db_bind_text(st, 3, a->f->config_key);
    db_bind_text(st, 4, a->f->step);
    db_bind_text(st, 5, a->metric);
    db_bind_text(st, 6, a->kind);
    sqlite3_bind_double(st, 7, a->cur);
    sqlite3_bind_double(st, 8, a->base);
    db_bind_real(st, 9, a->rel);
    db_bind_real(st, 10, a->abs);
    db_bind_real(st, 11, a->p);
    db_bind_text(st, 12, a->detail);
}

int db_store_finding(db_store *db, int64_t comparison_id, const mlk_step_figures *f, const char *metric,
                          const char *kind, double cur, double base, double rel, double abs, double p,
                          const char *detail, mlk_error *err)
{
    finding_arg a = {comparison_id, f, metric, kind, detail, cur, base, rel, abs, p};
    return write_one(db,
                     "INSERT OR REPLACE INTO findings(comparison_id, cell_id, config_key, step, metric, kind, "
                     "current, baseline, delta_rel, delta_abs, p_value, detail) VALUES (?,?,?,?,?,?,?,?,?,?,?,?)",
                     "storing a finding", bind_finding, &a, err);
}

/* ---- baselines ---- */

static void bind_pin(sqlite3_stmt *st, const void *v)
{
    const char *const *a = v;
    db_bind_text(st, 1, a[0]);
    db_bind_text(st, 2, a[1]);
}

int db_baseline_pin(db_store *db, const char *run_uuid, const char *branch, mlk_error *err)
{
    const char *a[] = {run_uuid, branch ? branch : ""};
    return write_one(db,
                     "INSERT INTO baselines(run_uuid, branch, pinned_at) "
                     "VALUES (?1, ?2, strftime('%Y-%m-%dT%H:%M:%fZ','now'))",
                     "pinning a baseline", bind_pin, a, err);
}

int db_baselines_list(db_store *db, db_baseline **out, int *n, mlk_error *err)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(db_sqlite(db),
                           "SELECT b.branch, r.id, r.commit_sha, b.pinned_at FROM baselines b "
                           "LEFT JOIN runs r ON r.uuid = b.run_uuid ORDER BY b.branch, b.pinned_at DESC",
                           -1, &st, NULL) != SQLITE_OK)
        return db_fail_sql(db, err, "reading the baselines");
    db_baseline *v = NULL;
    int k = 0, cap = 0, rc = MLK_OK;
    while (sqlite3_step(st) == SQLITE_ROW) {
        db_baseline *p = db_grow(v, k, &cap, sizeof *v);
        if (!p) {
            rc = mlk_fail(err, MLK_E_NOMEM, "out of memory");
            break;
        }
        v = p;
        db_baseline *b = &v[k++];
        db_col_copy(st, 0, b->branch, sizeof b->branch);
        b->run_id = db_col_int_or(st, 1, 0);
        db_col_copy(st, 2, b->commit, sizeof b->commit);
        db_col_copy(st, 3, b->pinned_at, sizeof b->pinned_at);
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
