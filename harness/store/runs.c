/* runs.c: read-only queries over stored runs: run lookup, per-step figures, latency samples, recent runs of a config
 * and a config's series across runs. It must never write: results of compare and history are stored by them. */
#include <math.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db_col.h"
#include "runs.h"

/* The step_stats expression of each metric, in mlk_metric's order (checked below). The queries that need one are
 * static strings per metric, built from these at compile time: a column cannot be a bound parameter. */
#define METRIC_SQL(X)                                                                                              \
    X(PEAK, "s.peak_kib")                                                                                          \
    X(FINAL_RSS, "s.final_rss_kib")                                                                                \
    X(FINAL_ANON, "s.final_anon_kib")                                                                              \
    X(FINAL_HEAP, "s.final_heap_bytes")                                                                            \
    X(GROWTH, "COALESCE(s.heap_growth_per_iter, s.rss_growth_per_iter)")                                          \
    X(WALL, "s.wall_ms_median")                                                                                    \
    X(REQ_HEAP, "s.heap_peak_bytes")                                                                               \
    X(REQ_MAPPED, "s.mapped_peak_bytes")

enum {
#define X_(e, expr) DBM_##e,
    METRIC_SQL(X_)
#undef X_
    DBM_COUNT
};
_Static_assert((int)DBM_COUNT == (int)MLK_M_COUNT, "every metric of names.h has its expression here");
#define X_(e, expr) _Static_assert((int)DBM_##e == (int)MLK_M_##e, "METRIC_SQL is in mlk_metric's order");
METRIC_SQL(X_)
#undef X_

#define RUN_COLS "id, uuid, commit_sha, branch, status, started_at, scenario_name"

static void read_run(sqlite3_stmt *st, mlk_run_info *r)
{
    r->id = sqlite3_column_int64(st, 0);
    db_col_copy(st, 1, r->uuid, sizeof r->uuid);
    db_col_copy(st, 2, r->commit, sizeof r->commit);
    db_col_copy(st, 3, r->branch, sizeof r->branch);
    db_col_copy(st, 4, r->status, sizeof r->status);
    db_col_copy(st, 5, r->started_at, sizeof r->started_at);
    db_col_copy(st, 6, r->scenario, sizeof r->scenario);
}

int mlk_runs_find(db_store *db, const char *spec, mlk_run_info *out, mlk_error *err)
{
    bool latest = !spec || !strcmp(spec, "latest");
    char *end = NULL;
    long long id = latest ? 0 : strtoll(spec, &end, 10);
    if (!latest && (!end || *end || id <= 0))
        return mlk_fail(err, MLK_E_USAGE, "'%s' is not a run id or 'latest'", spec);
    sqlite3_stmt *st;
    const char *sql = latest ? "SELECT " RUN_COLS " FROM runs ORDER BY started_at DESC, id DESC LIMIT 1"
                             : "SELECT " RUN_COLS " FROM runs WHERE id = ?";
    if (sqlite3_prepare_v2(db_sqlite(db), sql, -1, &st, NULL) != SQLITE_OK)
        return db_fail_sql(db, err, "finding the run");
    if (!latest)
        sqlite3_bind_int64(st, 1, id);
    int rc = MLK_OK;
    if (sqlite3_step(st) == SQLITE_ROW)
        read_run(st, out);
    else
        rc = mlk_fail(err, MLK_E_NOTFOUND, latest ? "the db holds no run" : "no run %s", spec ? spec : "");
    sqlite3_finalize(st);
    return rc;
}

/* Every metric's expression as one more column. */
#define FIG_COL_(e, expr) ", " expr
static const char *const figures_sql =
    "SELECT c.id, c.config_key, s.step, COALESCE((SELECT group_concat(j.key || '=' || j.value, ' ') "
    "FROM json_each(CASE WHEN json_valid(c.axes) THEN c.axes ELSE '{}' END) j), '')" METRIC_SQL(FIG_COL_)
    ", c.status FROM step_stats s JOIN cells c ON c.id = s.cell_id WHERE c.run_id = ?1 "
    "AND c.status NOT IN ('pending', 'running') ORDER BY c.idx, s.step";
#undef FIG_COL_

int mlk_runs_figures(db_store *db, int64_t run_id, mlk_step_figures **out, int *n, mlk_error *err)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(db_sqlite(db), figures_sql, -1, &st, NULL) != SQLITE_OK)
        return db_fail_sql(db, err, "reading step figures");
    sqlite3_bind_int64(st, 1, run_id);
    int cap = 0, k = 0, rc = MLK_OK;
    mlk_step_figures *v = NULL;
    while (sqlite3_step(st) == SQLITE_ROW) {
        mlk_step_figures *p = db_grow(v, k, &cap, sizeof *v);
        if (!p) {
            rc = mlk_fail(err, MLK_E_NOMEM, "out of memory");
            break;
        }
        v = p;
        mlk_step_figures *f = &v[k++];
        f->cell_id = sqlite3_column_int64(st, 0);
        db_col_copy(st, 1, f->config_key, sizeof f->config_key);
        db_col_copy(st, 2, f->step, sizeof f->step);
        db_col_copy(st, 3, f->label, sizeof f->label);
        if (!f->label[0])
            snprintf(f->label, sizeof f->label, "%.255s", f->config_key);
        for (int m = 0; m < MLK_M_COUNT; m++)
            f->v[m] = db_col_real(st, 4 + m);
        db_col_copy(st, 4 + MLK_M_COUNT, f->status, sizeof f->status);
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

/* The first column of every row, NULLs skipped, into a malloc'd array (never NULL on success). -1: no memory. */
static int column_doubles(sqlite3_stmt *st, double **out, int *n)
{
    int cap = 0, k = 0;
    double *v = NULL;
    while (sqlite3_step(st) == SQLITE_ROW) {
        if (sqlite3_column_type(st, 0) == SQLITE_NULL)
            continue;
        double *p = db_grow(v, k, &cap, sizeof *v);
        if (!p) {
            free(v);
            return -1;
        }
        v = p;
        v[k++] = sqlite3_column_double(st, 0);
    }
    if (!v && !(v = malloc(sizeof *v)))
        return -1;
    *out = v;
    *n = k;
    return 0;
}

int mlk_runs_latency(db_store *db, int64_t cell_id, const char *step, double **out, int *n, mlk_error *err)
{
    /* The whole iteration's latency is the sum of its steps' (its own sample carries none). */
    const char *sql = strcmp(step, "iteration")
                          ? "SELECT wall_ns / 1e6 FROM samples WHERE cell_id = ? AND step = ? AND phase = 'measure' "
                            "ORDER BY seq"
                          : "SELECT sum(wall_ns) / 1e6 FROM samples WHERE cell_id = ? AND step != ? "
                            "AND phase = 'measure' GROUP BY iteration ORDER BY iteration";
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(db_sqlite(db), sql, -1, &st, NULL) != SQLITE_OK)
        return db_fail_sql(db, err, "reading latencies");
    sqlite3_bind_int64(st, 1, cell_id);
    db_bind_text(st, 2, step);
    int rc = column_doubles(st, out, n);
    sqlite3_finalize(st);
    return rc ? mlk_fail(err, MLK_E_NOMEM, "out of memory") : MLK_OK;
}

int mlk_runs_recent(db_store *db, const char *config_key, const char *branch, const mlk_run_info *before, int max,
                    int64_t *run_ids, int64_t *cell_ids, int *n, mlk_error *err)
{
    const char *sql = "SELECT r.id, c.id FROM runs r JOIN cells c ON c.run_id = r.id WHERE c.config_key = ?1 "
                      "AND r.status = 'done' AND c.status IN ('pass', 'leak', 'plateau') "
                      "AND (?2 IS NULL OR r.branch = ?2) AND (?3 IS NULL OR r.uuid != ?3) "
                      "AND (?4 IS NULL OR r.started_at < ?4 OR (r.started_at = ?4 AND r.id < ?5)) "
                      "ORDER BY r.started_at DESC, r.id DESC LIMIT ?6";
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(db_sqlite(db), sql, -1, &st, NULL) != SQLITE_OK)
        return db_fail_sql(db, err, "reading recent runs");
    sqlite3_bind_text(st, 1, config_key, -1, SQLITE_TRANSIENT);
    if (branch)
        sqlite3_bind_text(st, 2, branch, -1, SQLITE_TRANSIENT);
    if (before) {
        sqlite3_bind_text(st, 3, before->uuid, -1, SQLITE_TRANSIENT);
        sqlite3_bind_text(st, 4, before->started_at, -1, SQLITE_TRANSIENT);
        sqlite3_bind_int64(st, 5, before->id);
    }
    sqlite3_bind_int(st, 6, max);
    int k = 0;
    while (k < max && sqlite3_step(st) == SQLITE_ROW) {
        run_ids[k] = sqlite3_column_int64(st, 0);
        cell_ids[k++] = sqlite3_column_int64(st, 1);
    }
    sqlite3_finalize(st);
    *n = k;
    return MLK_OK;
}

#define CELL_FIG_(e, expr) [DBM_##e] = "SELECT " expr " FROM step_stats s WHERE s.cell_id = ?1 AND s.step = ?2",
static const char *const cell_figure_sql[MLK_M_COUNT] = {METRIC_SQL(CELL_FIG_)};
#undef CELL_FIG_

/* The one real of sql for (cell, step), NaN when absent. */
static double cell_real(db_store *db, const char *sql, int64_t cell_id, const char *step)
{
    sqlite3_stmt *st;
    double v = NAN;
    if (sqlite3_prepare_v2(db_sqlite(db), sql, -1, &st, NULL) != SQLITE_OK)
        return v;
    sqlite3_bind_int64(st, 1, cell_id);
    db_bind_text(st, 2, step);
    if (sqlite3_step(st) == SQLITE_ROW)
        v = db_col_real(st, 0);
    sqlite3_finalize(st);
    return v;
}

double mlk_runs_cell_figure(db_store *db, int64_t cell_id, const char *step, mlk_metric m)
{
    return (int)m < 0 || m >= MLK_M_COUNT ? NAN : cell_real(db, cell_figure_sql[m], cell_id, step);
}

double mlk_runs_cell_cpu_ms(db_store *db, int64_t cell_id, const char *step)
{
    return cell_real(db, "SELECT s.cpu_ms_median FROM step_stats s WHERE s.cell_id = ?1 AND s.step = ?2", cell_id,
                     step);
}

void mlk_series_free(mlk_series *s)
{
    free(s->v);
    free(s->uuid);
    free(s->commit);
    free(s->started);
    memset(s, 0, sizeof *s);
}

#define SERIES_(e, expr)                                                                                           \
    [DBM_##e] = "SELECT " expr ", r.uuid, r.commit_sha, r.started_at FROM step_stats s JOIN cells c ON c.id = "     \
                "s.cell_id JOIN runs r ON r.id = c.run_id WHERE c.config_key = ?1 AND s.step = ?2 AND r.status = "  \
                "'done' AND c.status IN ('pass', 'leak', 'plateau') AND " expr " IS NOT NULL "                      \
                "ORDER BY r.started_at, r.id",
static const char *const series_sql[MLK_M_COUNT] = {METRIC_SQL(SERIES_)};
#undef SERIES_

/* Room for one more point in every array of s; -1 when out of memory (s keeps what it had). */
static int series_grow(mlk_series *s, int *cap)
{
    if (s->n < *cap)
        return 0;
    int c = *cap ? *cap * 2 : 64;
    double *v = realloc(s->v, sizeof *v * (size_t)c);
    if (v)
        s->v = v;
    char(*u)[64] = v ? realloc(s->uuid, sizeof *u * (size_t)c) : NULL;
    if (u)
        s->uuid = u;
    char(*k)[64] = u ? realloc(s->commit, sizeof *k * (size_t)c) : NULL;
    if (k)
        s->commit = k;
    char(*t)[40] = k ? realloc(s->started, sizeof *t * (size_t)c) : NULL;
    if (t)
        s->started = t;
    if (!t)
        return -1;
    *cap = c;
    return 0;
}

int mlk_runs_series(db_store *db, const char *config_key, const char *step, mlk_metric m, mlk_series *out,
                    mlk_error *err)
{
    if ((int)m < 0 || m >= MLK_M_COUNT)
        return mlk_fail(err, MLK_E_INTERNAL, "mlk_runs_series: no metric %d", (int)m);
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(db_sqlite(db), series_sql[m], -1, &st, NULL) != SQLITE_OK)
        return db_fail_sql(db, err, "reading a series");
    db_bind_text(st, 1, config_key);
    db_bind_text(st, 2, step);
    memset(out, 0, sizeof *out);
    int cap = 0, rc = MLK_OK;
    while (sqlite3_step(st) == SQLITE_ROW) {
        if (series_grow(out, &cap)) {
            rc = mlk_fail(err, MLK_E_NOMEM, "out of memory");
            break;
        }
        out->v[out->n] = sqlite3_column_double(st, 0);
        db_col_copy(st, 1, out->uuid[out->n], sizeof out->uuid[0]);
        db_col_copy(st, 2, out->commit[out->n], sizeof out->commit[0]);
        db_col_copy(st, 3, out->started[out->n], sizeof out->started[0]);
        out->n++;
    }
    sqlite3_finalize(st);
    if (rc)
        mlk_series_free(out);
    return rc;
}
