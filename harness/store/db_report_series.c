/* db_report_series.c: the figures the report's plots draw: a cell's memory per iteration, a config's metric across
 * runs (the metric's step_stats expression lives here, one per name of names.h), and one step across the run's
 * cells for the matrix. It must never write to the db, and never read a figure that was not measured as 0. */
#include "db_col.h"
#include "db_open_ro.h"
#include "db_report.h"

static int fail(db_store *db, mlk_error *err, const char *what, const char *which)
{
    return mlk_fail(err, MLK_E_DB, "report: %s %s: %s", what, which, sqlite3_errmsg(db_sqlite(db)));
}

/* ---- memory over iterations ---- */

int db_report_memory(db_store *db, int64_t cell_id, db_report_iter **out, int *n, mlk_error *err)
{
    /* Per iteration: RSS and live heap after it, and its peak (the max of its steps' own VmHWM). A db of schema 5 or
     * older, read without migrating it, has no shim_bytes: NULL there. */
    bool shim = db_has_column(db_sqlite(db), "samples", "shim_bytes");
    char sql[1280];
    snprintf(sql, sizeof sql,
             "SELECT iteration, phase = 'measure', MAX(CASE WHEN step = 'iteration' THEN vm_rss_kib END), "
             "MAX(vm_hwm_kib), MAX(CASE WHEN step = 'iteration' THEN heap_live_bytes END), "
             "MAX(CASE WHEN step = 'iteration' THEN rss_anon_kib END), "
             "MAX(CASE WHEN step = 'iteration' AND alloc_held >= 0 THEN alloc_held END), "
             "MAX(CASE WHEN step = 'iteration' THEN vm_size_kib END), "
             "MAX(CASE WHEN step = 'iteration' AND fds >= 0 THEN fds END), "
             "MAX(CASE WHEN step = 'iteration' THEN threads END), "
             "MAX(CASE WHEN step = 'iteration' AND mappings >= 0 THEN mappings END), "
             "MAX(CASE WHEN step = 'iteration' AND alloc_bytes >= 0 THEN alloc_bytes END), "
             "MAX(CASE WHEN step = 'iteration' THEN %s END) "
             "FROM samples WHERE cell_id = ? AND iteration IS NOT NULL GROUP BY iteration ORDER BY iteration",
             shim ? "shim_bytes" : "NULL");
    char which[32];
    snprintf(which, sizeof which, "cell %lld", (long long)cell_id);
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(db_sqlite(db), sql, -1, &st, NULL) != SQLITE_OK)
        return fail(db, err, "reading the samples of", which);
    sqlite3_bind_int64(st, 1, cell_id);
    db_report_iter *v = NULL;
    int rc = SQLITE_DONE, k = 0, cap = 0;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        db_report_iter *p = db_grow(v, k, &cap, sizeof *p);
        if (!p)
            break;
        v = p;
        v[k++] = (db_report_iter){sqlite3_column_int(st, 0), sqlite3_column_int(st, 1) != 0, db_col_real(st, 2),
                                  db_col_real(st, 3), db_col_real(st, 4), db_col_real(st, 5), db_col_real(st, 6),
                                  db_col_real(st, 7), db_col_real(st, 8), db_col_real(st, 9), db_col_real(st, 10),
                                  db_col_real(st, 11), db_col_real(st, 12)};
    }
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE) {
        free(v);
        return rc == SQLITE_ROW ? mlk_fail(err, MLK_E_NOMEM, "report: out of memory reading the samples of %s", which)
                                : fail(db, err, "reading the samples of", which);
    }
    *out = v;
    *n = k;
    return MLK_OK;
}

/* ---- one config's metric across runs ---- */

/* Each metric's step_stats expression, in its unit of names.h; a metric missing here does not compile. */
#define EXPR_PEAK "s.peak_kib"
#define EXPR_FINAL_RSS "s.final_rss_kib"
#define EXPR_FINAL_ANON "s.final_anon_kib"
#define EXPR_FINAL_HEAP "s.final_heap_bytes"
#define EXPR_GROWTH "COALESCE(s.heap_growth_per_iter, s.rss_growth_per_iter)"
#define EXPR_WALL "s.wall_ms_median"
#define EXPR_REQ_HEAP "s.heap_peak_bytes"
#define EXPR_REQ_MAPPED "s.mapped_peak_bytes"

/* Whether the run's newest comparison flagged the figure (?5: the metric's name). */
#define FLAG_SQL                                                                                                  \
    "EXISTS (SELECT 1 FROM findings f WHERE f.cell_id = c.id AND f.step = s.step AND f.metric = ?5 "              \
    "AND f.kind = 'regression' AND f.comparison_id = (SELECT id FROM comparisons WHERE run_id = ru.id "           \
    "ORDER BY created_at DESC, id DESC LIMIT 1))"
/* ?1 config, ?2 step, ?3 the reported run, ?4 how many runs at most; the newest first. */
#define TREND_SQL(expr, flag)                                                                                     \
    "SELECT ru.uuid, ru.commit_sha, " expr ", " flag " FROM runs ru JOIN cells c ON c.run_id = ru.id "            \
    "JOIN step_stats s ON s.cell_id = c.id WHERE c.config_key = ?1 AND s.step = ?2 AND "                          \
    "((ru.status = 'done' AND ru.started_at < (SELECT started_at FROM runs WHERE id = ?3)) OR ru.id = ?3) "       \
    "ORDER BY ru.started_at DESC, ru.id DESC, c.idx DESC LIMIT ?4"

static const struct {
    const char *flagged, *plain; /* with the findings' flag, and for a db without findings (flag 0) */
} trend_sql[MLK_M_COUNT] = {
#define TREND_(e, name, label, unit) [MLK_M_##e] = {TREND_SQL(EXPR_##e, FLAG_SQL), TREND_SQL(EXPR_##e, "0")},
    MLK_METRIC_LIST(TREND_)
#undef TREND_
};

static bool have_findings(db_store *db)
{
    sqlite3_stmt *st = NULL;
    bool yes = sqlite3_prepare_v2(db_sqlite(db), "SELECT 1 FROM findings, comparisons LIMIT 0", -1, &st, NULL) ==
               SQLITE_OK;
    sqlite3_finalize(st);
    return yes;
}

int db_report_trend(db_store *db, int64_t run_id, const char *config_key, const char *step, int metric, int max,
                    db_report_point *pts, int *n, mlk_error *err)
{
    if (metric < 0 || metric >= MLK_M_COUNT)
        return mlk_fail(err, MLK_E_INTERNAL, "report: no metric %d", metric);
    bool flag = have_findings(db);
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(db_sqlite(db), flag ? trend_sql[metric].flagged : trend_sql[metric].plain, -1, &st,
                           NULL) != SQLITE_OK)
        return fail(db, err, "reading the history of", config_key);
    sqlite3_bind_text(st, 1, config_key, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 2, step, -1, SQLITE_STATIC);
    sqlite3_bind_int64(st, 3, run_id);
    sqlite3_bind_int(st, 4, max);
    if (flag)
        sqlite3_bind_text(st, 5, mlk_metric_name(metric), -1, SQLITE_STATIC);
    int rc, k = 0;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW && k < max) {
        db_report_point *p = &pts[k++];
        db_col_copy(st, 0, p->uuid, sizeof p->uuid);
        db_col_copy(st, 1, p->commit, sizeof p->commit);
        p->v = db_col_real(st, 2);
        p->flagged = sqlite3_column_int(st, 3) != 0;
    }
    sqlite3_finalize(st);
    if (rc != SQLITE_ROW && rc != SQLITE_DONE)
        return fail(db, err, "reading the history of", config_key);
    for (int i = 0; i < k / 2; i++) { /* newest first from the query: put oldest first */
        db_report_point t = pts[i];
        pts[i] = pts[k - 1 - i];
        pts[k - 1 - i] = t;
    }
    *n = k;
    return MLK_OK;
}

/* ---- one step across the run's cells ---- */

/* The names as a JSON array into out; false when one holds a character it would have to escape. */
static bool json_names(const char *const *names, int n, char *out, size_t len)
{
    size_t k = (size_t)snprintf(out, len, "[");
    for (int i = 0; i < n && k < len; i++) {
        for (const char *c = names[i]; *c; c++)
            if (*c == '"' || *c == '\\' || (unsigned char)*c < 0x20)
                return false;
        k += (size_t)snprintf(out + k, len - k, "%s\"%s\"", i ? ", " : "", names[i]);
    }
    if (k < len)
        k += (size_t)snprintf(out + k, len - k, "]");
    return k < len;
}

int db_report_matrix(db_store *db, int64_t run_id, const char *step, const char *const *series_axes, int n_axes,
                     db_report_bar **out, int *n, mlk_error *err)
{
    char axes[512];
    if (!json_names(series_axes, n_axes, axes, sizeof axes))
        return mlk_fail(err, MLK_E_USAGE, "report: cannot take those axes as the matrix's series");
    /* Group: the allocator and any axis not in the series (?3, a JSON array); series: those axes. A missing axis
     * collapses; bad axes JSON puts the cell in its own group. */
    const char *sql =
        "SELECT c.allocator || COALESCE(' ' || (SELECT group_concat(j.key || '=' || j.value, ' ') FROM "
        "json_each(CASE WHEN json_valid(c.axes) THEN c.axes ELSE '{}' END) j WHERE j.key != 'allocator' AND "
        "j.key NOT IN (SELECT value FROM json_each(?3))), ''), COALESCE((SELECT group_concat(j.key || '=' || "
        "j.value, ' ') FROM json_each(CASE WHEN json_valid(c.axes) THEN c.axes ELSE '{}' END) j WHERE j.key IN "
        "(SELECT value FROM json_each(?3))), 'all'), s.peak_kib, s.wall_ms_median FROM cells c "
        "JOIN step_stats s ON s.cell_id = c.id WHERE c.run_id = ?1 AND s.step = ?2 ORDER BY c.idx";
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(db_sqlite(db), sql, -1, &st, NULL) != SQLITE_OK)
        return fail(db, err, "reading the matrix of step", step);
    sqlite3_bind_int64(st, 1, run_id);
    sqlite3_bind_text(st, 2, step, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 3, axes, -1, SQLITE_STATIC);
    db_report_bar *v = NULL;
    int rc = SQLITE_DONE, k = 0, cap = 0;
    bool oom = false;
    while (!oom && (rc = sqlite3_step(st)) == SQLITE_ROW) {
        db_report_bar *p = db_grow(v, k, &cap, sizeof *p);
        if (!p) {
            oom = true;
            break;
        }
        v = p;
        v[k++] = (db_report_bar){db_col_dup(st, 0, &oom), db_col_dup(st, 1, &oom), db_col_real(st, 2),
                                 db_col_real(st, 3)};
    }
    sqlite3_finalize(st);
    if (oom || rc != SQLITE_DONE) {
        db_report_bars_free(v, k);
        return oom ? mlk_fail(err, MLK_E_NOMEM, "report: out of memory reading the matrix of step %s", step)
                   : fail(db, err, "reading the matrix of step", step);
    }
    *out = v;
    *n = k;
    return MLK_OK;
}

void db_report_bars_free(db_report_bar *b, int n)
{
    for (int i = 0; b && i < n; i++)
        free(b[i].group), free(b[i].series);
    free(b);
}

int db_report_run_has_step(db_store *db, int64_t run_id, const char *step, bool *yes, mlk_error *err)
{
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(db_sqlite(db), "SELECT 1 FROM step_stats s JOIN cells c ON c.id = s.cell_id "
                                          "WHERE c.run_id = ? AND s.step = ? LIMIT 1", -1, &st, NULL) != SQLITE_OK)
        return fail(db, err, "looking for step", step);
    sqlite3_bind_int64(st, 1, run_id);
    sqlite3_bind_text(st, 2, step, -1, SQLITE_STATIC);
    int rc = sqlite3_step(st);
    sqlite3_finalize(st);
    if (rc != SQLITE_ROW && rc != SQLITE_DONE)
        return fail(db, err, "looking for step", step);
    *yes = rc == SQLITE_ROW;
    return MLK_OK;
}

int db_report_n_engines(db_store *db, int64_t run_id, int *n, mlk_error *err)
{
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(db_sqlite(db), "SELECT count(DISTINCT engine) FROM cells WHERE run_id = ?", -1, &st,
                           NULL) != SQLITE_OK)
        return fail(db, err, "counting the engines of", "the run");
    sqlite3_bind_int64(st, 1, run_id);
    int rc = sqlite3_step(st);
    if (rc == SQLITE_ROW)
        *n = sqlite3_column_int(st, 0);
    sqlite3_finalize(st);
    return rc == SQLITE_ROW ? MLK_OK : fail(db, err, "counting the engines of", "the run");
}
