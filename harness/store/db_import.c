/* db_import.c: an imported run, its cells, step statistics and samples in one IMMEDIATE transaction (db_import.h).
 * It must never leave a partial run nor a transaction open: any failure rolls everything back. */
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>

#include "db_col.h"
#include "db_import.h"

typedef struct {
    db_store *db;
    sqlite3 *h;
    int64_t run_id;
    char *started; /* the run's started_at, for its cells */
    sqlite3_stmt *cell, *stats, *sample;
} importer;

static const char *or_null(const char *s) { return s && *s ? s : NULL; }

/* 1 with the run's id when uuid is stored already, 0 when not, negative on error. */
static int find_run(importer *w, const char *uuid, int64_t *id, mlk_error *err)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(w->h, "SELECT id FROM runs WHERE uuid = ?1", -1, &st, NULL) != SQLITE_OK)
        return db_fail_sql(w->db, err, "looking the run up");
    db_bind_text(st, 1, uuid);
    int found = sqlite3_step(st) == SQLITE_ROW;
    if (found)
        *id = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    return found;
}

static int insert_run(importer *w, const db_import_run *r, mlk_error *err)
{
    const char *sql = "INSERT INTO runs(uuid, scenario_name, scenario_path, scenario_text, commit_sha, branch, host, "
                      "cpu, tool_version, argv, started_at, finished_at, status) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, "
                      "?8, ?9, ?10, COALESCE(strftime('%Y-%m-%dT%H:%M:%fZ', ?11), "
                      "strftime('%Y-%m-%dT%H:%M:%fZ', 'now')), strftime('%Y-%m-%dT%H:%M:%fZ', 'now'), 'done') "
                      "RETURNING id, started_at";
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(w->h, sql, -1, &st, NULL) != SQLITE_OK)
        return db_fail_sql(w->db, err, "storing the run");
    const char *f[] = {r->uuid, r->scenario_name, r->scenario_path, r->scenario_text, r->commit_sha, r->branch,
                       r->host, r->cpu, r->tool_version, r->argv, r->date};
    for (int i = 0; i < 11; i++)
        db_bind_text(st, i + 1, or_null(f[i]));
    int rc = MLK_OK;
    if (sqlite3_step(st) != SQLITE_ROW) {
        rc = db_fail_sql(w->db, err, "storing the run");
    } else {
        bool oom = false;
        w->run_id = sqlite3_column_int64(st, 0);
        w->started = db_col_dup(st, 1, &oom);
        if (!w->started)
            rc = mlk_fail(err, MLK_E_NOMEM, "%s: storing the run: out of memory", db_path(w->db));
    }
    sqlite3_finalize(st);
    return rc;
}

static int prepare(importer *w, mlk_error *err)
{
    const char *cell = "INSERT INTO cells(run_id, idx, engine, model, axes, config_key, allocator, heap_shim, status, "
                       "error, detail, started_at, finished_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, "
                       "?12, ?12)";
    const char *stats = "INSERT INTO step_stats(cell_id, step, n, peak_kib, rss_growth_per_iter, "
                        "heap_growth_per_iter, wall_ms_median, wall_ms_p90, cpu_ms_median, final_rss_kib, "
                        "final_heap_bytes) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)";
    const char *sample = "INSERT INTO samples(cell_id, seq, phase, iteration, step, wall_ns, cpu_ns, vm_hwm_kib, "
                         "heap_live_bytes) VALUES (?1, ?2, 'measure', ?2, ?3, ?4, ?5, ?6, ?7)";
    if (sqlite3_prepare_v2(w->h, cell, -1, &w->cell, NULL) != SQLITE_OK ||
        sqlite3_prepare_v2(w->h, stats, -1, &w->stats, NULL) != SQLITE_OK ||
        sqlite3_prepare_v2(w->h, sample, -1, &w->sample, NULL) != SQLITE_OK)
        return db_fail_sql(w->db, err, "preparing the inserts");
    return MLK_OK;
}

/* The cell's figures; false on a failed insert. */
static bool insert_figures(importer *w, int64_t cell_id, const db_import_cell *c)
{
    for (int i = 0; i < c->n_samples; i++) {
        const db_import_sample *x = &c->samples[i];
        sqlite3_stmt *st = w->sample;
        sqlite3_reset(st);
        sqlite3_bind_int64(st, 1, cell_id);
        sqlite3_bind_int(st, 2, i);
        db_bind_text(st, 3, c->sample_step);
        db_bind_finite(st, 4, x->wall_ns);
        db_bind_finite(st, 5, x->cpu_ns);
        db_bind_finite(st, 6, x->vm_hwm_kib);
        db_bind_finite(st, 7, x->heap_live_bytes);
        if (sqlite3_step(st) != SQLITE_DONE)
            return false;
    }
    sqlite3_stmt *st = w->stats;
    sqlite3_reset(st);
    sqlite3_bind_int64(st, 1, cell_id);
    db_bind_text(st, 2, c->step);
    sqlite3_bind_int(st, 3, c->n);
    const double v[] = {c->peak_kib,      c->rss_growth,    c->heap_growth,   c->wall_ms_median,
                        c->wall_ms_p90,   c->cpu_ms_median, c->final_rss_kib, c->final_heap_bytes};
    for (int i = 0; i < 8; i++)
        db_bind_finite(st, 4 + i, v[i]);
    return sqlite3_step(st) == SQLITE_DONE;
}

static int insert_cell(importer *w, int idx, const db_import_cell *c, mlk_error *err)
{
    sqlite3_stmt *st = w->cell;
    sqlite3_reset(st);
    sqlite3_bind_int64(st, 1, w->run_id);
    sqlite3_bind_int(st, 2, idx);
    const char *f[] = {c->engine, c->model, c->axes_json, c->config_key, c->allocator};
    for (int i = 0; i < 5; i++)
        db_bind_text(st, 3 + i, f[i]);
    db_bind_opt_int(st, 8, c->heap_shim, true);
    db_bind_text(st, 9, c->status);
    db_bind_text(st, 10, c->error);
    db_bind_text(st, 11, c->detail);
    db_bind_text(st, 12, w->started);
    if (sqlite3_step(st) != SQLITE_DONE)
        return db_fail_sql(w->db, err, "storing a cell");
    if (c->has_stats && !insert_figures(w, sqlite3_last_insert_rowid(w->h), c))
        return db_fail_sql(w->db, err, "storing a cell's figures");
    return MLK_OK;
}

int db_import_store(db_store *db, const db_import_run *r, const db_import_cell *c, int n, int64_t *run_id,
                    bool *existed, mlk_error *err)
{
    importer w = {.db = db, .h = db_sqlite(db)};
    int rc = db_exec(db, "BEGIN IMMEDIATE", err);
    if (rc)
        return rc;
    int64_t id = 0;
    int found = find_run(&w, r->uuid, &id, err);
    if (found < 0)
        rc = found;
    else if (!found && !(rc = insert_run(&w, r, err)) && !(rc = prepare(&w, err)))
        for (int i = 0; i < n && !rc; i++)
            rc = insert_cell(&w, i, &c[i], err);
    sqlite3_finalize(w.cell);
    sqlite3_finalize(w.stats);
    sqlite3_finalize(w.sample);
    free(w.started);
    if (!rc)
        rc = db_exec(db, "COMMIT", err);
    if (rc) {
        db_exec(db, "ROLLBACK", NULL);
        return rc;
    }
    *run_id = found ? id : w.run_id;
    *existed = found;
    return MLK_OK;
}
