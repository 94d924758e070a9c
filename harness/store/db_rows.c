/* db_rows.c: rows read back as stored (db_rows.h). It must never turn NULL into 0: text stays NULL, figures NaN. */
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>

#include "db_col.h"
#include "db_rows.h"

int db_row_counts_get(db_store *db, db_row_counts *out, mlk_error *err)
{
#define COUNT_(t) "(SELECT count(*) FROM " t ")"
    static const char *const sql =
        "SELECT " COUNT_("runs") ", " COUNT_("cells") ", " COUNT_("samples") ", " COUNT_("metrics") ", "
        COUNT_("step_stats") ", " COUNT_("baselines") ", " COUNT_("comparisons") ", " COUNT_("findings") ", "
        COUNT_("change_points") ", " COUNT_("leaks") ", " COUNT_("heap_peaks") ", " COUNT_("heap_peak_sites") ", "
        COUNT_("tool_frames");
#undef COUNT_
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(db_sqlite(db), sql, -1, &st, NULL) != SQLITE_OK)
        return db_fail_sql(db, err, "counting rows");
    int rc = sqlite3_step(st) == SQLITE_ROW ? MLK_OK : db_fail_sql(db, err, "counting rows");
    if (!rc) {
        int64_t *f[] = {&out->runs,          &out->cells,    &out->samples,    &out->metrics,
                        &out->step_stats,    &out->baselines, &out->comparisons, &out->findings,
                        &out->change_points, &out->leaks,    &out->heap_peaks, &out->heap_peak_sites,
                        &out->tool_frames};
        for (int i = 0; i < (int)(sizeof f / sizeof *f); i++)
            *f[i] = sqlite3_column_int64(st, i);
    }
    sqlite3_finalize(st);
    return rc;
}

void db_run_row_deinit(db_run_row *r)
{
    if (!r)
        return;
    char **f[] = {&r->uuid, &r->scenario_name, &r->scenario_path, &r->scenario_text, &r->commit_sha, &r->branch,
                  &r->host, &r->cpu, &r->kernel, &r->glibc, &r->tool_version, &r->argv, &r->started_at,
                  &r->finished_at, &r->status};
    for (int i = 0; i < (int)(sizeof f / sizeof *f); i++) {
        free(*f[i]);
        *f[i] = NULL;
    }
}

int db_run_row_get(db_store *db, int64_t run_id, db_run_row *out, mlk_error *err)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(db_sqlite(db),
                           "SELECT id, uuid, scenario_name, scenario_path, scenario_text, commit_sha, branch, host, "
                           "cpu, kernel, glibc, tool_version, argv, started_at, finished_at, status "
                           "FROM runs WHERE id = ?1",
                           -1, &st, NULL) != SQLITE_OK)
        return db_fail_sql(db, err, "reading a run");
    sqlite3_bind_int64(st, 1, run_id);
    int rc = MLK_OK;
    db_run_row r;
    memset(&r, 0, sizeof r);
    if (sqlite3_step(st) == SQLITE_ROW) {
        bool oom = false;
        r.id = sqlite3_column_int64(st, 0);
        char **f[] = {&r.uuid, &r.scenario_name, &r.scenario_path, &r.scenario_text, &r.commit_sha, &r.branch,
                      &r.host, &r.cpu, &r.kernel, &r.glibc, &r.tool_version, &r.argv, &r.started_at,
                      &r.finished_at, &r.status};
        for (int i = 0; i < (int)(sizeof f / sizeof *f); i++)
            *f[i] = db_col_dup(st, 1 + i, &oom);
        if (oom)
            rc = mlk_fail(err, MLK_E_NOMEM, "%s: reading a run: out of memory", db_path(db));
    } else {
        rc = mlk_fail(err, MLK_E_NOTFOUND, "%s: no run %lld", db_path(db), (long long)run_id);
    }
    sqlite3_finalize(st);
    if (rc)
        db_run_row_deinit(&r);
    else
        *out = r;
    return rc;
}

static void cell_row_deinit(db_cell_row *c)
{
    char *f[] = {c->engine, c->model, c->axes, c->config_key, c->allocator, c->status, c->error, c->detail,
                 c->started_at, c->finished_at};
    for (int i = 0; i < (int)(sizeof f / sizeof *f); i++)
        free(f[i]);
}

void db_cell_rows_free(db_cell_row *v, int n)
{
    for (int i = 0; v && i < n; i++)
        cell_row_deinit(&v[i]);
    free(v);
}

int db_cell_rows(db_store *db, int64_t run_id, db_cell_row **out, int *n, mlk_error *err)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(db_sqlite(db),
                           "SELECT id, idx, heap_shim, engine, model, axes, config_key, allocator, status, error, "
                           "detail, started_at, finished_at FROM cells WHERE run_id = ?1 ORDER BY idx",
                           -1, &st, NULL) != SQLITE_OK)
        return db_fail_sql(db, err, "reading cells");
    sqlite3_bind_int64(st, 1, run_id);
    db_cell_row *v = NULL;
    int k = 0, cap = 0;
    bool oom = false;
    while (!oom && sqlite3_step(st) == SQLITE_ROW) {
        db_cell_row *p = db_grow(v, k, &cap, sizeof *v);
        if (!p) {
            oom = true;
            break;
        }
        v = p;
        db_cell_row *c = &v[k++];
        c->id = sqlite3_column_int64(st, 0);
        c->idx = sqlite3_column_int(st, 1);
        c->heap_shim = (int)db_col_int_or(st, 2, -1);
        char **f[] = {&c->engine, &c->model, &c->axes, &c->config_key, &c->allocator, &c->status, &c->error,
                      &c->detail, &c->started_at, &c->finished_at};
        for (int i = 0; i < (int)(sizeof f / sizeof *f); i++)
            *f[i] = db_col_dup(st, 3 + i, &oom);
    }
    sqlite3_finalize(st);
    if (!oom && !v && !(v = malloc(sizeof *v)))
        oom = true;
    if (oom) {
        db_cell_rows_free(v, k);
        return mlk_fail(err, MLK_E_NOMEM, "%s: reading cells: out of memory", db_path(db));
    }
    *out = v;
    *n = k;
    return MLK_OK;
}

int db_step_rows(db_store *db, int64_t cell_id, db_step_row **out, int *n, mlk_error *err)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(db_sqlite(db),
                           "SELECT step, n, peak_kib, rss_growth_per_iter, heap_growth_per_iter, heap_delta_median, "
                           "rss_delta_median, wall_ms_median, wall_ms_p90, cpu_ms_median, final_rss_kib, "
                           "final_anon_kib, final_heap_bytes FROM step_stats WHERE cell_id = ?1 ORDER BY step",
                           -1, &st, NULL) != SQLITE_OK)
        return db_fail_sql(db, err, "reading step statistics");
    sqlite3_bind_int64(st, 1, cell_id);
    db_step_row *v = NULL;
    int k = 0, cap = 0, rc = MLK_OK;
    while (sqlite3_step(st) == SQLITE_ROW) {
        db_step_row *p = db_grow(v, k, &cap, sizeof *v);
        if (!p) {
            rc = mlk_fail(err, MLK_E_NOMEM, "%s: reading step statistics: out of memory", db_path(db));
            break;
        }
        v = p;
        db_step_row *s = &v[k++];
        db_col_copy(st, 0, s->step, sizeof s->step);
        s->n = sqlite3_column_int(st, 1);
        double *f[] = {&s->peak_kib,       &s->rss_growth,     &s->heap_growth,   &s->heap_delta_median,
                       &s->rss_delta_median, &s->wall_ms_median, &s->wall_ms_p90,   &s->cpu_ms_median,
                       &s->final_rss_kib,  &s->final_anon_kib, &s->final_heap_bytes};
        for (int i = 0; i < (int)(sizeof f / sizeof *f); i++)
            *f[i] = db_col_real(st, 2 + i);
    }
    sqlite3_finalize(st);
    if (!rc && !v && !(v = malloc(sizeof *v)))
        rc = mlk_fail(err, MLK_E_NOMEM, "%s: reading step statistics: out of memory", db_path(db));
    if (rc) {
        free(v);
        return rc;
    }
    *out = v;
    *n = k;
    return MLK_OK;
}
