/* runs.c: read-only queries over stored runs: run lookup, per-step figures, latency samples, recent runs of a config
 * and a config's series across runs. It must never write: results of compare and history are stored by them. */
#include <math.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runs.h"

/* The step_stats expression of each metric. */
static const char *const metric_sql[MLK_M_COUNT] = {
    "s.peak_kib", "s.final_rss_kib", "s.final_anon_kib", "s.final_heap_bytes",
    "COALESCE(s.heap_growth_per_iter, s.rss_growth_per_iter)", "s.wall_ms_median"};

static int q_fail(db_store *db, mlk_error *err, const char *what)
{
    return mlk_fail(err, MLK_E_DB, "%s: %s", what, sqlite3_errmsg(db_handle(db)));
}

static void copy_col(sqlite3_stmt *st, int i, char *out, size_t len)
{
    const unsigned char *t = sqlite3_column_text(st, i);
    snprintf(out, len, "%s", t ? (const char *)t : "");
}

static double col_or_nan(sqlite3_stmt *st, int i)
{
    return sqlite3_column_type(st, i) == SQLITE_NULL ? NAN : sqlite3_column_double(st, i);
}

#define RUN_COLS "id, uuid, commit_sha, branch, status, started_at, scenario_name"

static void read_run(sqlite3_stmt *st, mlk_run_info *r)
{
    r->id = sqlite3_column_int64(st, 0);
    copy_col(st, 1, r->uuid, sizeof r->uuid);
    copy_col(st, 2, r->commit, sizeof r->commit);
    copy_col(st, 3, r->branch, sizeof r->branch);
    copy_col(st, 4, r->status, sizeof r->status);
    copy_col(st, 5, r->started_at, sizeof r->started_at);
    copy_col(st, 6, r->scenario, sizeof r->scenario);
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
    if (sqlite3_prepare_v2(db_handle(db), sql, -1, &st, NULL) != SQLITE_OK)
        return q_fail(db, err, "finding the run");
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

int mlk_runs_figures(db_store *db, int64_t run_id, mlk_step_figures **out, int *n, mlk_error *err)
{
    char sql[1024];
    int len = snprintf(sql, sizeof sql,
                       "SELECT c.id, c.config_key, s.step, COALESCE((SELECT group_concat(j.key || '=' || j.value, ' ') "
                       "FROM json_each(CASE WHEN json_valid(c.axes) THEN c.axes ELSE '{}' END) j), '')");
    for (int m = 0; m < MLK_M_COUNT; m++)
        len += snprintf(sql + len, sizeof sql - (size_t)len, ", %s", metric_sql[m]);
    snprintf(sql + len, sizeof sql - (size_t)len,
             " FROM step_stats s JOIN cells c ON c.id = s.cell_id WHERE c.run_id = ? "
             "AND c.status NOT IN ('pending', 'running') ORDER BY c.idx, s.step");
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(db_handle(db), sql, -1, &st, NULL) != SQLITE_OK)
        return q_fail(db, err, "reading step figures");
    sqlite3_bind_int64(st, 1, run_id);
    int cap = 64, k = 0;
    mlk_step_figures *v = malloc(sizeof *v * (size_t)cap);
    while (v && sqlite3_step(st) == SQLITE_ROW) {
        if (k == cap) {
            mlk_step_figures *p = realloc(v, sizeof *v * (size_t)(cap *= 2));
            if (!p) {
                free(v);
                v = NULL;
                break;
            }
            v = p;
        }
        mlk_step_figures *f = &v[k++];
        f->cell_id = sqlite3_column_int64(st, 0);
        copy_col(st, 1, f->config_key, sizeof f->config_key);
        copy_col(st, 2, f->step, sizeof f->step);
        copy_col(st, 3, f->label, sizeof f->label);
        if (!f->label[0])
            snprintf(f->label, sizeof f->label, "%.255s", f->config_key);
        for (int m = 0; m < MLK_M_COUNT; m++)
            f->v[m] = col_or_nan(st, 4 + m);
    }
    sqlite3_finalize(st);
    if (!v)
        return mlk_fail(err, MLK_E_NOMEM, "out of memory");
    *out = v;
    *n = k;
    return MLK_OK;
}

static int column_doubles(sqlite3_stmt *st, double **out, int *n)
{
    int cap = 128, k = 0;
    double *v = malloc(sizeof *v * (size_t)cap);
    while (v && sqlite3_step(st) == SQLITE_ROW) {
        if (sqlite3_column_type(st, 0) == SQLITE_NULL)
            continue;
        if (k == cap) {
            double *p = realloc(v, sizeof *v * (size_t)(cap *= 2));
            if (!p) {
                free(v);
                return -1;
            }
            v = p;
        }
        v[k++] = sqlite3_column_double(st, 0);
    }
    if (!v)
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
    if (sqlite3_prepare_v2(db_handle(db), sql, -1, &st, NULL) != SQLITE_OK)
        return q_fail(db, err, "reading latencies");
    sqlite3_bind_int64(st, 1, cell_id);
    sqlite3_bind_text(st, 2, step, -1, SQLITE_TRANSIENT);
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
    if (sqlite3_prepare_v2(db_handle(db), sql, -1, &st, NULL) != SQLITE_OK)
        return q_fail(db, err, "reading recent runs");
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

double mlk_runs_cell_figure(db_store *db, int64_t cell_id, const char *step, mlk_metric m)
{
    char sql[256];
    snprintf(sql, sizeof sql, "SELECT %s FROM step_stats s WHERE s.cell_id = ? AND s.step = ?", metric_sql[m]);
    sqlite3_stmt *st;
    double v = NAN;
    if (sqlite3_prepare_v2(db_handle(db), sql, -1, &st, NULL) != SQLITE_OK)
        return v;
    sqlite3_bind_int64(st, 1, cell_id);
    sqlite3_bind_text(st, 2, step, -1, SQLITE_TRANSIENT);
    if (sqlite3_step(st) == SQLITE_ROW)
        v = col_or_nan(st, 0);
    sqlite3_finalize(st);
    return v;
}

void mlk_series_free(mlk_series *s)
{
    free(s->v);
    free(s->uuid);
    free(s->commit);
    free(s->started);
    memset(s, 0, sizeof *s);
}

int mlk_runs_series(db_store *db, const char *config_key, const char *step, mlk_metric m, mlk_series *out,
                    mlk_error *err)
{
    char sql[512];
    snprintf(sql, sizeof sql,
             "SELECT %s, r.uuid, r.commit_sha, r.started_at FROM step_stats s JOIN cells c ON c.id = s.cell_id "
             "JOIN runs r ON r.id = c.run_id WHERE c.config_key = ? AND s.step = ? AND r.status = 'done' "
             "AND c.status IN ('pass', 'leak', 'plateau') AND %s IS NOT NULL ORDER BY r.started_at, r.id",
             metric_sql[m], metric_sql[m]);
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(db_handle(db), sql, -1, &st, NULL) != SQLITE_OK)
        return q_fail(db, err, "reading a series");
    sqlite3_bind_text(st, 1, config_key, -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(st, 2, step, -1, SQLITE_TRANSIENT);
    memset(out, 0, sizeof *out);
    int cap = 0, rc = MLK_OK;
    while (sqlite3_step(st) == SQLITE_ROW) {
        if (out->n == cap) {
            cap = cap ? cap * 2 : 64;
            double *v = realloc(out->v, sizeof *v * (size_t)cap);
            char(*u)[64] = v ? realloc(out->uuid, sizeof *u * (size_t)cap) : NULL;
            if (v)
                out->v = v;
            if (u)
                out->uuid = u;
            char(*c)[64] = u ? realloc(out->commit, sizeof *c * (size_t)cap) : NULL;
            if (c)
                out->commit = c;
            char(*t)[40] = c ? realloc(out->started, sizeof *t * (size_t)cap) : NULL;
            if (t)
                out->started = t;
            if (!t) {
                rc = mlk_fail(err, MLK_E_NOMEM, "out of memory");
                break;
            }
        }
        out->v[out->n] = sqlite3_column_double(st, 0);
        copy_col(st, 1, out->uuid[out->n], sizeof out->uuid[0]);
        copy_col(st, 2, out->commit[out->n], sizeof out->commit[0]);
        copy_col(st, 3, out->started[out->n], sizeof out->started[0]);
        out->n++;
    }
    sqlite3_finalize(st);
    if (rc)
        mlk_series_free(out);
    return rc;
}
