/* db_report.c: the report's run from the store: opening a db for a report, finding the run, and loading it with
 * its cells, the findings of its newest comparison and its configs' change points. It must never write to the db,
 * and never read NULL as 0. */
#include <errno.h>
#include <sys/stat.h>

#include "db_col.h"
#include "db_open_ro.h"
#include "db_report.h"

int db_report_open(const char *path, db_store **out, mlk_error *err)
{
    /* Look before db_open_readonly does, and name the cause: a read-only folder or no descriptors left is not
     * "not a memleak db". */
    sqlite3 *h = NULL;
    sqlite3_stmt *st = NULL;
    int rc = db_sqlite_open_ro(path, &h, err);
    if (!rc)
        rc = db_check_memleak(h, path, err);
    if (!rc && sqlite3_prepare_v2(h, "SELECT 1 FROM runs, cells, samples, step_stats LIMIT 0", -1, &st, NULL) !=
                   SQLITE_OK) {
        char why[512];
        rc = mlk_fail(err, MLK_E_PARSE, "%s is not a memleak db: %s", path, db_cause(h, path, why, sizeof why));
    }
    sqlite3_finalize(st);
    sqlite3_close(h);
    if (rc)
        return mlk_fail_prefix(err, "report: ");
    db_store *db = NULL;
    if ((rc = db_open_readonly(path, &db, err)))
        return rc;
    *out = db;
    return MLK_OK;
}

static int fail(db_store *db, mlk_error *err, const char *what)
{
    return mlk_fail(err, MLK_E_DB, "report: %s: %s", what, sqlite3_errmsg(db_sqlite(db)));
}

static bool table_exists(db_store *db, const char *name)
{
    sqlite3_stmt *st = NULL;
    bool yes = false;
    if (sqlite3_prepare_v2(db_sqlite(db), "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", -1, &st,
                           NULL) == SQLITE_OK) {
        sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
        yes = sqlite3_step(st) == SQLITE_ROW;
    }
    sqlite3_finalize(st);
    return yes;
}

int db_report_find_run(db_store *db, const char *spec, int64_t *run_id, mlk_error *err)
{
    bool latest = !spec || !strcmp(spec, "latest");
    char *end = NULL;
    long long id = latest ? 0 : strtoll(spec, &end, 10);
    bool numeric = !latest && *spec && !*end;
    const char *sql = latest    ? "SELECT id FROM runs ORDER BY started_at DESC, id DESC LIMIT 1"
                      : numeric ? "SELECT id FROM runs WHERE id = ?"
                                : "SELECT id FROM runs WHERE uuid = ?";
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(db_sqlite(db), sql, -1, &st, NULL) != SQLITE_OK)
        return fail(db, err, "finding the run");
    if (numeric)
        sqlite3_bind_int64(st, 1, id);
    else if (!latest)
        sqlite3_bind_text(st, 1, spec, -1, SQLITE_STATIC);
    int rc = sqlite3_step(st);
    if (rc == SQLITE_ROW)
        *run_id = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    if (rc == SQLITE_ROW)
        return MLK_OK;
    if (rc != SQLITE_DONE)
        return fail(db, err, "finding the run");
    if (latest)
        return mlk_fail(err, MLK_E_NOTFOUND, "report: the db holds no run yet");
    return mlk_fail(err, MLK_E_NOTFOUND, "report: no run with %s '%s' in the db", numeric ? "id" : "uuid", spec);
}

static int load_run(db_store *db, db_report_run *r, mlk_error *err)
{
    const char *sql = "SELECT uuid, scenario_name, commit_sha, branch, host, started_at, finished_at, status "
                      "FROM runs WHERE id = ?";
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(db_sqlite(db), sql, -1, &st, NULL) != SQLITE_OK)
        return fail(db, err, "reading the run");
    sqlite3_bind_int64(st, 1, r->id);
    int rc = sqlite3_step(st);
    bool oom = false;
    if (rc == SQLITE_ROW) {
        char **f[] = {&r->uuid, &r->scenario, &r->commit, &r->branch, &r->host, &r->started_at, &r->finished_at,
                      &r->status};
        for (int i = 0; i < 8; i++)
            *f[i] = db_col_dup(st, i, &oom);
    }
    sqlite3_finalize(st);
    if (oom)
        return mlk_fail(err, MLK_E_NOMEM, "report: out of memory reading run %lld", (long long)r->id);
    if (rc == SQLITE_DONE)
        return mlk_fail(err, MLK_E_NOTFOUND, "report: no run with id %lld", (long long)r->id);
    return rc == SQLITE_ROW ? MLK_OK : fail(db, err, "reading the run");
}

static void cell_row(sqlite3_stmt *st, db_report_cell *c, bool *oom)
{
    memset(c, 0, sizeof *c);
    c->id = sqlite3_column_int64(st, 0);
    c->idx = sqlite3_column_int(st, 1);
    c->signal = (int)db_col_int_or(st, 7, -1);
    c->exit_code = (int)db_col_int_or(st, 8, -1);
    c->slope = db_col_real(st, 10);
    c->late_slope = db_col_real(st, 11);
    c->growth = db_col_real(st, 12);
    c->seconds = db_col_real(st, 15);
    char **s[] = {&c->label, &c->axes_json, &c->config_key, &c->allocator, &c->status};
    for (int i = 0; i < 5; i++)
        *s[i] = db_col_dup(st, 2 + i, oom);
    c->metric = db_col_dup(st, 9, oom);
    c->detail = db_col_dup(st, 13, oom);
    c->error = db_col_dup(st, 14, oom);
}

static int load_cells(db_store *db, db_report_run *r, mlk_error *err)
{
    /* The label comes from the axes JSON through SQLite's own parser; malformed JSON shows raw. */
    const char *sql =
        "SELECT id, idx, CASE WHEN json_valid(axes) THEN (SELECT group_concat(j.key || '=' || j.value, ' ') "
        "FROM json_each(cells.axes) j) ELSE axes END, axes, config_key, allocator, status, signal, "
        "exit_code, metric, slope_per_iter, late_slope_per_iter, growth_bytes, detail, error, "
        "(julianday(finished_at) - julianday(started_at)) * 86400.0 FROM cells WHERE run_id = ? ORDER BY idx";
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(db_sqlite(db), sql, -1, &st, NULL) != SQLITE_OK)
        return fail(db, err, "reading the cells");
    sqlite3_bind_int64(st, 1, r->id);
    int rc = SQLITE_DONE, cap = 0;
    bool oom = false;
    while (!oom && (rc = sqlite3_step(st)) == SQLITE_ROW) {
        db_report_cell *p = db_grow(r->cells, r->n_cells, &cap, sizeof *p);
        if (!p) {
            oom = true;
            break;
        }
        r->cells = p;
        cell_row(st, &r->cells[r->n_cells++], &oom);
    }
    sqlite3_finalize(st);
    if (oom)
        return mlk_fail(err, MLK_E_NOMEM, "report: out of memory reading the cells of run %lld", (long long)r->id);
    return rc == SQLITE_DONE ? MLK_OK : fail(db, err, "reading the cells");
}

static int load_findings(db_store *db, db_report_run *r, mlk_error *err)
{
    if (!table_exists(db, "comparisons") || !table_exists(db, "findings"))
        return MLK_OK; /* a db from before comparisons existed: never compared */
    const char *sql =
        "SELECT cm.baseline, f.cell_id, f.step, f.metric, f.kind, f.detail, f.current, f.baseline, f.delta_rel, "
        "f.delta_abs, f.p_value FROM comparisons cm LEFT JOIN findings f ON f.comparison_id = cm.id "
        "WHERE cm.id = (SELECT id FROM comparisons WHERE run_id = ? ORDER BY created_at DESC, id DESC LIMIT 1) "
        "ORDER BY f.kind DESC, abs(f.delta_rel) DESC";
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(db_sqlite(db), sql, -1, &st, NULL) != SQLITE_OK)
        return fail(db, err, "reading the findings");
    sqlite3_bind_int64(st, 1, r->id);
    int rc = SQLITE_DONE, cap = 0;
    bool oom = false;
    while (!oom && (rc = sqlite3_step(st)) == SQLITE_ROW) {
        if (!r->baseline)
            r->baseline = db_col_dup(st, 0, &oom);
        if (oom || sqlite3_column_type(st, 1) == SQLITE_NULL)
            continue; /* a comparison that found nothing */
        db_report_finding *p = db_grow(r->findings, r->n_findings, &cap, sizeof *p);
        if (!p) {
            oom = true;
            continue;
        }
        r->findings = p;
        db_report_finding *f = &r->findings[r->n_findings++];
        f->cell_id = sqlite3_column_int64(st, 1);
        f->step = db_col_dup(st, 2, &oom);
        f->metric = db_col_dup(st, 3, &oom);
        f->kind = db_col_dup(st, 4, &oom);
        f->detail = db_col_dup(st, 5, &oom);
        f->current = db_col_real(st, 6);
        f->baseline = db_col_real(st, 7);
        f->delta_rel = db_col_real(st, 8);
        f->delta_abs = db_col_real(st, 9);
        f->p_value = db_col_real(st, 10);
    }
    sqlite3_finalize(st);
    if (oom)
        return mlk_fail(err, MLK_E_NOMEM, "report: out of memory reading the findings");
    return rc == SQLITE_DONE ? MLK_OK : fail(db, err, "reading the findings");
}

static int load_change_points(db_store *db, db_report_run *r, mlk_error *err)
{
    if (!table_exists(db, "change_points"))
        return MLK_OK;
    /* Change points up to the reported run: a report of an old run must not show the future. */
    const char *sql = "SELECT cp.config_key, cp.step, cp.metric, cp.run_uuid, cp.commit_sha, cp.before, cp.after, "
                      "cp.t_stat FROM change_points cp LEFT JOIN runs ru ON ru.uuid = cp.run_uuid "
                      "WHERE cp.config_key IN (SELECT config_key FROM cells WHERE run_id = ?1) "
                      "AND (ru.id IS NULL OR ru.id <= ?1) ORDER BY ru.id, cp.config_key, cp.step, cp.metric";
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(db_sqlite(db), sql, -1, &st, NULL) != SQLITE_OK)
        return fail(db, err, "reading the change points");
    sqlite3_bind_int64(st, 1, r->id);
    int rc = SQLITE_DONE, cap = 0;
    bool oom = false;
    while (!oom && (rc = sqlite3_step(st)) == SQLITE_ROW) {
        db_report_cp *p = db_grow(r->cps, r->n_cps, &cap, sizeof *p);
        if (!p) {
            oom = true;
            continue;
        }
        r->cps = p;
        db_report_cp *c = &r->cps[r->n_cps++];
        char **s[] = {&c->config_key, &c->step, &c->metric, &c->run_uuid, &c->commit_sha};
        for (int i = 0; i < 5; i++)
            *s[i] = db_col_dup(st, i, &oom);
        c->before = db_col_real(st, 5);
        c->after = db_col_real(st, 6);
        c->t = db_col_real(st, 7);
    }
    sqlite3_finalize(st);
    if (oom)
        return mlk_fail(err, MLK_E_NOMEM, "report: out of memory reading the change points");
    return rc == SQLITE_DONE ? MLK_OK : fail(db, err, "reading the change points");
}

int db_report_load(db_store *db, int64_t run_id, db_report_run **out, mlk_error *err)
{
    db_report_run *r = calloc(1, sizeof *r);
    if (!r)
        return mlk_fail(err, MLK_E_NOMEM, "report: out of memory");
    r->id = run_id;
    int rc;
    if ((rc = load_run(db, r, err)) || (rc = load_cells(db, r, err)) || (rc = load_findings(db, r, err)) ||
        (rc = load_change_points(db, r, err))) {
        db_report_free(r);
        return rc;
    }
    *out = r;
    return MLK_OK;
}

void db_report_free(db_report_run *r)
{
    if (!r)
        return;
    for (int i = 0; i < r->n_cells; i++) {
        db_report_cell *c = &r->cells[i];
        char *s[] = {c->label, c->axes_json, c->config_key, c->allocator, c->status, c->metric, c->detail, c->error};
        for (size_t k = 0; k < sizeof s / sizeof *s; k++)
            free(s[k]);
    }
    for (int i = 0; i < r->n_findings; i++) {
        db_report_finding *f = &r->findings[i];
        free(f->step), free(f->metric), free(f->kind), free(f->detail);
    }
    for (int i = 0; i < r->n_cps; i++) {
        db_report_cp *c = &r->cps[i];
        free(c->config_key), free(c->step), free(c->metric), free(c->run_uuid), free(c->commit_sha);
    }
    char *s[] = {r->uuid, r->scenario, r->commit, r->branch, r->host, r->started_at, r->finished_at, r->status,
                 r->baseline};
    for (size_t k = 0; k < sizeof s / sizeof *s; k++)
        free(s[k]);
    free(r->cells);
    free(r->findings);
    free(r->cps);
    free(r);
}
