/* report_data.c: loads what a report shows about one run: the run, its cells and verdicts, the findings of its
 * newest comparison and its configs' change points. It must never write to the db, and never treat NULL as 0. */
#include <math.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>

#include "report.h"

static int db_fail(sqlite3 *db, mlk_error *err, const char *what)
{
    return mlk_fail(err, MLK_E_DB, "report: %s: %s", what, sqlite3_errmsg(db));
}

/* Copy column i (NULL stays NULL). Returns -1 when memory runs out. */
static int col_str(sqlite3_stmt *st, int i, char **out)
{
    const unsigned char *s = sqlite3_column_text(st, i);
    *out = NULL;
    if (!s)
        return 0;
    *out = strdup((const char *)s);
    return *out ? 0 : -1;
}

static double col_num(sqlite3_stmt *st, int i)
{
    return sqlite3_column_type(st, i) == SQLITE_NULL ? NAN : sqlite3_column_double(st, i);
}

static int col_int(sqlite3_stmt *st, int i)
{
    return sqlite3_column_type(st, i) == SQLITE_NULL ? -1 : sqlite3_column_int(st, i);
}

static bool table_exists(sqlite3 *db, const char *name)
{
    sqlite3_stmt *st = NULL;
    bool yes = false;
    if (sqlite3_prepare_v2(db, "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", -1, &st, NULL) ==
        SQLITE_OK) {
        sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
        yes = sqlite3_step(st) == SQLITE_ROW;
    }
    sqlite3_finalize(st);
    return yes;
}

int mlk_rep_find_run(sqlite3 *db, const char *spec, int64_t *run_id, mlk_error *err)
{
    bool latest = !spec || !strcmp(spec, "latest");
    char *end = NULL;
    long long id = latest ? 0 : strtoll(spec, &end, 10);
    bool numeric = !latest && *spec && !*end;
    const char *sql = latest    ? "SELECT id FROM runs ORDER BY started_at DESC, id DESC LIMIT 1"
                      : numeric ? "SELECT id FROM runs WHERE id = ?"
                                : "SELECT id FROM runs WHERE uuid = ?";
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
        return db_fail(db, err, "finding the run");
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
        return db_fail(db, err, "finding the run");
    if (latest)
        return mlk_fail(err, MLK_E_NOTFOUND, "report: the db holds no run yet");
    return mlk_fail(err, MLK_E_NOTFOUND, "report: no run with %s '%s' in the db", numeric ? "id" : "uuid", spec);
}

static int load_run(sqlite3 *db, mlk_report *r, mlk_error *err)
{
    const char *sql = "SELECT uuid, scenario_name, commit_sha, branch, host, started_at, finished_at, status "
                      "FROM runs WHERE id = ?";
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
        return db_fail(db, err, "reading the run");
    sqlite3_bind_int64(st, 1, r->run_id);
    int rc = sqlite3_step(st);
    if (rc == SQLITE_ROW) {
        char **f[] = {&r->uuid, &r->scenario, &r->commit, &r->branch, &r->host, &r->started_at, &r->finished_at,
                      &r->status};
        for (int i = 0; i < 8; i++)
            if (col_str(st, i, f[i])) {
                sqlite3_finalize(st);
                return mlk_fail(err, MLK_E_NOMEM, "report: out of memory reading run %lld", (long long)r->run_id);
            }
    }
    sqlite3_finalize(st);
    if (rc == SQLITE_DONE)
        return mlk_fail(err, MLK_E_NOTFOUND, "report: no run with id %lld", (long long)r->run_id);
    return rc == SQLITE_ROW ? MLK_OK : db_fail(db, err, "reading the run");
}

static int cell_row(sqlite3_stmt *st, mlk_rep_cell *c)
{
    memset(c, 0, sizeof *c);
    c->id = sqlite3_column_int64(st, 0);
    c->idx = sqlite3_column_int(st, 1);
    c->signal = col_int(st, 8);
    c->exit_code = col_int(st, 9);
    c->slope = col_num(st, 11);
    c->late_slope = col_num(st, 12);
    c->growth = col_num(st, 13);
    c->seconds = col_num(st, 16);
    c->memory_plot = -1;
    if (col_str(st, 2, &c->label) || col_str(st, 3, &c->axes_json) || col_str(st, 4, &c->config_key) ||
        col_str(st, 5, &c->allocator) || col_str(st, 6, &c->status) || col_str(st, 10, &c->metric) ||
        col_str(st, 14, &c->detail) || col_str(st, 15, &c->error))
        return -1;
    if (!c->label || !*c->label) { /* no axes: name the cell by its index */
        free(c->label);
        c->label = malloc(24);
        if (!c->label)
            return -1;
        snprintf(c->label, 24, "cell %d", c->idx);
    }
    return 0;
}

static int load_cells(sqlite3 *db, mlk_report *r, mlk_error *err)
{
    /* The label comes from the axes JSON through SQLite's own parser; malformed JSON shows raw. */
    const char *sql =
        "SELECT id, idx, CASE WHEN json_valid(axes) THEN (SELECT group_concat(j.key || '=' || j.value, ' ') "
        "FROM json_each(cells.axes) j) ELSE axes END, axes, config_key, allocator, status, NULL, signal, "
        "exit_code, metric, slope_per_iter, late_slope_per_iter, growth_bytes, detail, error, "
        "(julianday(finished_at) - julianday(started_at)) * 86400.0 FROM cells WHERE run_id = ? ORDER BY idx";
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
        return db_fail(db, err, "reading the cells");
    sqlite3_bind_int64(st, 1, r->run_id);
    int rc, cap = 0;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        if (r->n_cells == cap) {
            int ncap = cap ? cap * 2 : 16;
            mlk_rep_cell *p = realloc(r->cells, (size_t)ncap * sizeof *p);
            if (!p)
                break;
            r->cells = p;
            cap = ncap;
        }
        if (cell_row(st, &r->cells[r->n_cells++]))
            break;
    }
    sqlite3_finalize(st);
    if (rc == SQLITE_ROW)
        return mlk_fail(err, MLK_E_NOMEM, "report: out of memory reading the cells of run %lld",
                        (long long)r->run_id);
    return rc == SQLITE_DONE ? MLK_OK : db_fail(db, err, "reading the cells");
}

static int cell_index(const mlk_report *r, int64_t cell_id)
{
    for (int i = 0; i < r->n_cells; i++)
        if (r->cells[i].id == cell_id)
            return i;
    return -1;
}

static int cell_of_config(const mlk_report *r, const char *key)
{
    for (int i = 0; i < r->n_cells; i++)
        if (key && r->cells[i].config_key && !strcmp(r->cells[i].config_key, key))
            return i;
    return -1;
}

static int load_findings(sqlite3 *db, mlk_report *r, mlk_error *err)
{
    if (!table_exists(db, "comparisons") || !table_exists(db, "findings"))
        return MLK_OK; /* a db from before comparisons existed: never compared */
    const char *sql =
        "SELECT cm.baseline, f.cell_id, f.step, f.metric, f.kind, f.detail, f.current, f.baseline, f.delta_rel, "
        "f.delta_abs, f.p_value FROM comparisons cm LEFT JOIN findings f ON f.comparison_id = cm.id "
        "WHERE cm.id = (SELECT id FROM comparisons WHERE run_id = ? ORDER BY created_at DESC, id DESC LIMIT 1) "
        "ORDER BY f.kind DESC, abs(f.delta_rel) DESC";
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
        return db_fail(db, err, "reading the findings");
    sqlite3_bind_int64(st, 1, r->run_id);
    int rc, cap = 0;
    bool oom = false;
    while (!oom && (rc = sqlite3_step(st)) == SQLITE_ROW) {
        if (!r->baseline && col_str(st, 0, &r->baseline))
            oom = true;
        if (oom || sqlite3_column_type(st, 1) == SQLITE_NULL)
            continue; /* a comparison that found nothing */
        if (r->n_findings == cap) {
            int ncap = cap ? cap * 2 : 16;
            mlk_rep_finding *p = realloc(r->findings, (size_t)ncap * sizeof *p);
            if (!p) {
                oom = true;
                continue;
            }
            r->findings = p;
            cap = ncap;
        }
        mlk_rep_finding *f = &r->findings[r->n_findings++];
        memset(f, 0, sizeof *f);
        f->cell = cell_index(r, sqlite3_column_int64(st, 1));
        f->current = col_num(st, 6);
        f->baseline = col_num(st, 7);
        f->delta_rel = col_num(st, 8);
        f->delta_abs = col_num(st, 9);
        f->p_value = col_num(st, 10);
        f->plot = -1;
        oom = col_str(st, 2, &f->step) || col_str(st, 3, &f->metric) || col_str(st, 4, &f->kind) ||
              col_str(st, 5, &f->detail);
    }
    sqlite3_finalize(st);
    if (oom)
        return mlk_fail(err, MLK_E_NOMEM, "report: out of memory reading the findings");
    return rc == SQLITE_DONE ? MLK_OK : db_fail(db, err, "reading the findings");
}

static int load_change_points(sqlite3 *db, mlk_report *r, mlk_error *err)
{
    if (!table_exists(db, "change_points"))
        return MLK_OK;
    /* Change points up to the reported run: a report of an old run must not show the future. */
    const char *sql = "SELECT cp.config_key, cp.step, cp.metric, cp.run_uuid, cp.commit_sha, cp.before, cp.after, "
                      "cp.t_stat FROM change_points cp LEFT JOIN runs ru ON ru.uuid = cp.run_uuid "
                      "WHERE cp.config_key IN (SELECT config_key FROM cells WHERE run_id = ?1) "
                      "AND (ru.id IS NULL OR ru.id <= ?1) ORDER BY ru.id, cp.config_key, cp.step, cp.metric";
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
        return db_fail(db, err, "reading the change points");
    sqlite3_bind_int64(st, 1, r->run_id);
    int rc, cap = 0;
    bool oom = false;
    while (!oom && (rc = sqlite3_step(st)) == SQLITE_ROW) {
        if (r->n_cps == cap) {
            int ncap = cap ? cap * 2 : 16;
            mlk_rep_cp *p = realloc(r->cps, (size_t)ncap * sizeof *p);
            if (!p) {
                oom = true;
                continue;
            }
            r->cps = p;
            cap = ncap;
        }
        mlk_rep_cp *c = &r->cps[r->n_cps++];
        memset(c, 0, sizeof *c);
        c->cell = cell_of_config(r, (const char *)sqlite3_column_text(st, 0));
        c->before = col_num(st, 5);
        c->after = col_num(st, 6);
        c->t = col_num(st, 7);
        c->plot = -1;
        oom = col_str(st, 1, &c->step) || col_str(st, 2, &c->metric) || col_str(st, 3, &c->run_uuid) ||
              col_str(st, 4, &c->commit_sha);
        c->this_run = !oom && c->run_uuid && r->uuid && !strcmp(c->run_uuid, r->uuid);
    }
    sqlite3_finalize(st);
    if (oom)
        return mlk_fail(err, MLK_E_NOMEM, "report: out of memory reading the change points");
    return rc == SQLITE_DONE ? MLK_OK : db_fail(db, err, "reading the change points");
}

int mlk_rep_load(sqlite3 *db, int64_t run_id, mlk_report **out, mlk_error *err)
{
    mlk_report *r = calloc(1, sizeof *r);
    if (!r)
        return mlk_fail(err, MLK_E_NOMEM, "report: out of memory");
    r->run_id = run_id;
    int rc;
    if ((rc = load_run(db, r, err)) || (rc = load_cells(db, r, err)) || (rc = load_findings(db, r, err)) ||
        (rc = load_change_points(db, r, err))) {
        mlk_rep_free(r);
        return rc;
    }
    for (int i = 0; i < r->n_cells && !rc; i++) /* tool cells' findings (tool_report.c, issue 6) */
        rc = mlk_tool_html(db, r->cells[i].id, &r->cells[i].tool_html, err);
    if (rc) {
        mlk_rep_free(r);
        return rc;
    }
    *out = r;
    return MLK_OK;
}

void mlk_rep_free(mlk_report *r)
{
    if (!r)
        return;
    for (int i = 0; i < r->n_cells; i++) {
        mlk_rep_cell *c = &r->cells[i];
        char *s[] = {c->label,  c->axes_json, c->config_key, c->allocator, c->status,
                     c->metric, c->detail,    c->error,      c->tool_html};
        for (size_t k = 0; k < sizeof s / sizeof *s; k++)
            free(s[k]);
    }
    for (int i = 0; i < r->n_findings; i++) {
        mlk_rep_finding *f = &r->findings[i];
        free(f->step), free(f->metric), free(f->kind), free(f->detail);
    }
    for (int i = 0; i < r->n_cps; i++) {
        mlk_rep_cp *c = &r->cps[i];
        free(c->step), free(c->metric), free(c->run_uuid), free(c->commit_sha);
    }
    for (int i = 0; i < r->n_plots; i++) {
        mlk_rep_plot *p = &r->plots[i];
        free(p->base), free(p->title), free(p->step), free(p->metric), free(p->ylabel);
    }
    char *s[] = {r->uuid, r->scenario, r->commit, r->branch, r->host, r->started_at, r->finished_at, r->status,
                 r->baseline, r->plot_error};
    for (size_t k = 0; k < sizeof s / sizeof *s; k++)
        free(s[k]);
    free(r->cells);
    free(r->findings);
    free(r->cps);
    free(r->plots);
    free(r);
}

static char *dup_or_null(const char *s, bool *oom)
{
    if (!s)
        return NULL;
    char *d = strdup(s);
    if (!d)
        *oom = true;
    return d;
}

int mlk_rep_add_plot(mlk_report *r, int kind, const char *base, const char *title, int cell, const char *step,
                     const char *metric, mlk_error *err)
{
    if (r->n_plots % 16 == 0) {
        mlk_rep_plot *p = realloc(r->plots, (size_t)(r->n_plots + 16) * sizeof *p);
        if (!p)
            return mlk_fail(err, MLK_E_NOMEM, "report: out of memory adding plot %s", base);
        r->plots = p;
    }
    mlk_rep_plot *p = &r->plots[r->n_plots];
    memset(p, 0, sizeof *p);
    bool oom = false;
    p->kind = kind;
    p->cell = cell;
    p->base = dup_or_null(base, &oom);
    p->title = dup_or_null(title, &oom);
    p->step = dup_or_null(step, &oom);
    p->metric = dup_or_null(metric, &oom);
    if (oom) {
        free(p->base), free(p->title), free(p->step), free(p->metric);
        return mlk_fail(err, MLK_E_NOMEM, "report: out of memory adding plot %s", base);
    }
    return r->n_plots++;
}

int mlk_rep_find_trend(const mlk_report *r, int cell, const char *step, const char *metric)
{
    if (cell < 0 || !step || !metric)
        return -1;
    const char *key = r->cells[cell].config_key;
    for (int i = 0; i < r->n_plots; i++) {
        const mlk_rep_plot *p = &r->plots[i];
        if (p->kind == MLK_REP_TREND && !strcmp(p->step, step) && !strcmp(p->metric, metric) &&
            !strcmp(r->cells[p->cell].config_key, key))
            return i;
    }
    return -1;
}
