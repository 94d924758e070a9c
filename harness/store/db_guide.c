/* db_guide.c: the guide report's queries (db_guide.h): the run's scenario text, and per cell its step figures, the
 * samples right after each compile and its infer latencies. It must never write to the db. */
#include "db_col.h"
#include "db_guide.h"

static int fail(db_store *db, mlk_error *err, const char *what, int64_t id)
{
    return mlk_fail(err, MLK_E_DB, "guide: %s %lld: %s", what, (long long)id, sqlite3_errmsg(db_sqlite(db)));
}

static int prepare(db_store *db, const char *sql, int64_t id, sqlite3_stmt **st, mlk_error *err, const char *what)
{
    if (sqlite3_prepare_v2(db_sqlite(db), sql, -1, st, NULL) != SQLITE_OK)
        return fail(db, err, what, id);
    sqlite3_bind_int64(*st, 1, id);
    return MLK_OK;
}

/* After the last sqlite3_step: MLK_OK, or why it stopped (a row left means memory ran out). */
static int finish(db_store *db, sqlite3_stmt *st, int rc, bool oom, mlk_error *err, const char *what, int64_t id)
{
    int out = MLK_OK;
    if (oom || rc == SQLITE_ROW)
        out = mlk_fail(err, MLK_E_NOMEM, "guide: out of memory %s %lld", what, (long long)id);
    else if (rc != SQLITE_DONE)
        out = fail(db, err, what, id);
    sqlite3_finalize(st);
    return out;
}

static int load_steps(db_store *db, db_guide_cell *c, mlk_error *err)
{
    /* rise: the step's own VmHWM above VmRSS just before it (the sample before it), the most over measured iterations */
    const char *sql = "SELECT s.step, s.peak_kib, s.heap_peak_bytes, s.mapped_peak_bytes, s.wall_ms_median, "
                      "(SELECT MAX(r) FROM (SELECT x.phase AS ph, x.step AS st, x.vm_hwm_kib - LAG(x.vm_rss_kib) "
                      "OVER (ORDER BY x.seq) AS r FROM samples x WHERE x.cell_id = s.cell_id) "
                      "WHERE ph = 'measure' AND st = s.step) "
                      "FROM step_stats s WHERE s.cell_id = ?1 ORDER BY "
                      "(SELECT MIN(seq) FROM samples x WHERE x.cell_id = s.cell_id AND x.step = s.step), s.step";
    sqlite3_stmt *st = NULL;
    int rc = prepare(db, sql, c->id, &st, err, "reading the steps of cell");
    if (rc)
        return rc;
    int cap = 0;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        db_guide_step *p = db_grow(c->steps, c->n_steps, &cap, sizeof *p);
        if (!p)
            break;
        c->steps = p;
        db_guide_step *x = &c->steps[c->n_steps++];
        db_col_copy(st, 0, x->step, sizeof x->step);
        x->peak_kib = db_col_real(st, 1);
        x->heap_peak_bytes = db_col_real(st, 2);
        x->mapped_peak_bytes = db_col_real(st, 3);
        x->wall_ms_median = db_col_real(st, 4);
        x->rise_kib = db_col_real(st, 5);
    }
    return finish(db, st, rc, false, err, "reading the steps of cell", c->id);
}

static int load_compiles(db_store *db, db_guide_cell *c, mlk_error *err)
{
    const char *sql = "SELECT iteration, phase = 'measure', vm_rss_kib, rss_anon_kib, rss_file_kib FROM samples "
                      "WHERE cell_id = ?1 AND step = 'compile_model' AND iteration IS NOT NULL ORDER BY seq";
    sqlite3_stmt *st = NULL;
    int rc = prepare(db, sql, c->id, &st, err, "reading the compiles of cell");
    if (rc)
        return rc;
    int cap = 0;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        db_guide_compile *p = db_grow(c->compiles, c->n_compiles, &cap, sizeof *p);
        if (!p)
            break;
        c->compiles = p;
        c->compiles[c->n_compiles++] = (db_guide_compile){sqlite3_column_int(st, 0), sqlite3_column_int(st, 1) != 0,
                                                          db_col_real(st, 2), db_col_real(st, 3), db_col_real(st, 4)};
    }
    return finish(db, st, rc, false, err, "reading the compiles of cell", c->id);
}

static int load_infers(db_store *db, db_guide_cell *c, mlk_error *err)
{
    const char *sql = "SELECT iteration, wall_ns FROM samples WHERE cell_id = ?1 AND step = 'infer' AND "
                      "phase = 'measure' ORDER BY seq";
    sqlite3_stmt *st = NULL;
    int rc = prepare(db, sql, c->id, &st, err, "reading the infers of cell");
    if (rc)
        return rc;
    int cap = 0, last_iteration = -1;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        db_guide_infer *p = db_grow(c->infers, c->n_infers, &cap, sizeof *p);
        if (!p)
            break;
        c->infers = p;
        int it = sqlite3_column_int(st, 0);
        double ns = db_col_real(st, 1);
        c->infers[c->n_infers++] = (db_guide_infer){it, it != last_iteration, ns / 1e6};
        last_iteration = it;
    }
    return finish(db, st, rc, false, err, "reading the infers of cell", c->id);
}

static int load_cells(db_store *db, db_guide_run *r, mlk_error *err)
{
    const char *sql = "SELECT id, idx, engine, model, allocator, allocator_active, status, detail, error FROM cells "
                      "WHERE run_id = ?1 ORDER BY idx";
    sqlite3_stmt *st = NULL;
    int rc = prepare(db, sql, r->id, &st, err, "reading the cells of run");
    if (rc)
        return rc;
    int cap = 0;
    bool oom = false;
    while (!oom && (rc = sqlite3_step(st)) == SQLITE_ROW) {
        db_guide_cell *p = db_grow(r->cells, r->n_cells, &cap, sizeof *p);
        if (!p)
            break;
        r->cells = p;
        db_guide_cell *c = &r->cells[r->n_cells++];
        memset(c, 0, sizeof *c);
        c->id = sqlite3_column_int64(st, 0);
        c->idx = sqlite3_column_int(st, 1);
        c->engine = db_col_dup(st, 2, &oom);
        c->model = db_col_dup(st, 3, &oom);
        c->allocator = db_col_dup(st, 4, &oom);
        c->allocator_active = db_col_dup(st, 5, &oom);
        c->status = db_col_dup(st, 6, &oom);
        c->detail = db_col_dup(st, 7, &oom);
        c->error = db_col_dup(st, 8, &oom);
    }
    if ((rc = finish(db, st, rc, oom, err, "reading the cells of run", r->id)))
        return rc;
    for (int i = 0; i < r->n_cells && !rc; i++) {
        db_guide_cell *c = &r->cells[i];
        if (!(rc = load_steps(db, c, err)) && !(rc = load_compiles(db, c, err)) && !(rc = load_infers(db, c, err)))
            rc = db_report_memory(db, c->id, &c->iters, &c->n_iters, err);
    }
    return rc;
}

int db_guide_load(db_store *db, int64_t run_id, db_guide_run **out, mlk_error *err)
{
    db_guide_run *r = calloc(1, sizeof *r);
    if (!r)
        return mlk_fail(err, MLK_E_NOMEM, "guide: out of memory");
    r->id = run_id;
    sqlite3_stmt *st = NULL;
    int rc = prepare(db, "SELECT scenario_name, scenario_text, status, commit_sha FROM runs WHERE id = ?1", run_id, &st,
                     err, "reading run");
    bool oom = false;
    if (!rc) {
        int s = sqlite3_step(st);
        if (s == SQLITE_ROW) {
            r->scenario_name = db_col_dup(st, 0, &oom);
            r->scenario_text = db_col_dup(st, 1, &oom);
            r->status = db_col_dup(st, 2, &oom);
            r->commit = db_col_dup(st, 3, &oom);
            s = SQLITE_DONE;
        } else if (s == SQLITE_DONE) {
            rc = mlk_fail(err, MLK_E_NOTFOUND, "guide: no run %lld", (long long)run_id);
        }
        int f = finish(db, st, s, oom, err, "reading run", run_id);
        rc = rc ? rc : f;
    }
    if (!rc)
        rc = load_cells(db, r, err);
    if (rc) {
        db_guide_free(r);
        return rc;
    }
    *out = r;
    return MLK_OK;
}

void db_guide_free(db_guide_run *r)
{
    if (!r)
        return;
    for (int i = 0; i < r->n_cells; i++) {
        db_guide_cell *c = &r->cells[i];
        free(c->engine);
        free(c->model);
        free(c->allocator);
        free(c->allocator_active);
        free(c->status);
        free(c->detail);
        free(c->error);
        free(c->steps);
        free(c->compiles);
        free(c->infers);
        free(c->iters);
    }
    free(r->cells);
    free(r->scenario_name);
    free(r->scenario_text);
    free(r->status);
    free(r->commit);
    free(r);
}
