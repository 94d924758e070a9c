/* merge_db.c: one input db merged into the output through ATTACH (read-only) and INSERT ... SELECT, in one
 * IMMEDIATE transaction per input. It must never write to the input, nor leave it attached or a transaction open. */
#include <errno.h>
#include <sqlite3.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "db_col.h"
#include "db_open_ro.h"
#include "merge_db.h"
#include "scenario.h"
#include "strbuf.h"

/* A cell still being worked on: a merge may replace it with a finished copy. */
#define UNFINISHED "('pending', 'running')"

static bool uri_on;

void mlk_merge_setup(void)
{
    /* Fails (SQLITE_MISUSE) once SQLite is initialized; Debian's build has URIs on by default anyway. */
    uri_on = sqlite3_config(SQLITE_CONFIG_URI, 1) == SQLITE_OK || sqlite3_compileoption_used("USE_URI");
}

/* ---- opening an input read-only ----------------------------------------------------------------------- */

/* ---- checking an input ---------------------------------------------------------------------------------- */

static int read_version(sqlite3 *h, const char *path, mlk_error *err)
{
    int rc = db_check_memleak(h, path, err);
    if (rc)
        return rc;
    sqlite3_stmt *st = NULL;
    int v = 0;
    if (sqlite3_prepare_v2(h, "SELECT max(version) FROM schema_version", -1, &st, NULL) == SQLITE_OK &&
        sqlite3_step(st) == SQLITE_ROW)
        v = sqlite3_column_int(st, 0);
    sqlite3_finalize(st);
    if (v < DB_SCHEMA_VERSION)
        return mlk_fail(err, MLK_E_PARSE, "%s: schema version %d is older than this memleak-run's (%d)", path, v,
                        DB_SCHEMA_VERSION);
    return MLK_OK;
}

int mlk_merge_check(const char *path, mlk_error *err)
{
    sqlite3 *h = NULL;
    int rc = db_sqlite_open_ro(path, &h, err);
    if (!rc)
        rc = read_version(h, path, err);
    sqlite3_close(h);
    return rc;
}

/* ---- SQL helpers ---------------------------------------------------------------------------------------- */

typedef struct {
    sqlite3 *h;
    const char *path;
    mlk_error *err;
} ctx;

static int sql_fail(const ctx *x, const char *what)
{
    return mlk_fail(x->err, MLK_E_DB, "%s: merging %s: %s", x->path, what, sqlite3_errmsg(x->h));
}

/* Run one statement (no parameters); *changes (may be NULL) gets the rows it inserted, updated or deleted. */
static int run(const ctx *x, const char *what, const char *sql, int64_t *changes)
{
    sqlite3_stmt *st;
    if (!sql)
        return mlk_fail(x->err, MLK_E_NOMEM, "%s: merging %s: out of memory", x->path, what);
    if (sqlite3_prepare_v2(x->h, sql, -1, &st, NULL) != SQLITE_OK)
        return sql_fail(x, what);
    int rc = sqlite3_step(st);
    while (rc == SQLITE_ROW)
        rc = sqlite3_step(st);
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE)
        return sql_fail(x, what);
    if (changes)
        *changes += sqlite3_changes(x->h);
    return MLK_OK;
}

enum { COLS_PLAIN, COLS_MIN, COLS_ASSIGN };

/* The columns of main.table except the skipped ones, into b: "a, b" (COLS_PLAIN, each prefixed with pfx),
 * "a = coalesce(min(m.a, s.a), m.a, s.a)" (COLS_MIN) or "a = s.a" (COLS_ASSIGN, pfx "s."). Read from the
 * output's schema so that a column added to the schema is carried without touching this file; only the columns the
 * input has too, so an input of an older schema (fewer columns) merges with NULL, "not measured", in the rest. */
static int columns(const ctx *x, const char *table, const char *const *skip, int mode, const char *pfx, mlk_buf *b)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(x->h, "SELECT name FROM pragma_table_info(?1, 'main') WHERE name IN "
                           "(SELECT name FROM pragma_table_info(?1, 'mlk_src')) ORDER BY cid", -1, &st, NULL) !=
        SQLITE_OK)
        return sql_fail(x, "reading the schema");
    sqlite3_bind_text(st, 1, table, -1, SQLITE_STATIC);
    int n = 0;
    while (sqlite3_step(st) == SQLITE_ROW) {
        const char *c = (const char *)sqlite3_column_text(st, 0);
        bool skipped = false;
        for (int i = 0; skip && skip[i] && !skipped; i++)
            skipped = !strcmp(skip[i], c);
        if (skipped)
            continue;
        const char *sep = n++ ? ", " : "";
        if (mode == COLS_PLAIN)
            mlk_buf_printf(b, "%s%s%s", sep, pfx, c);
        else if (mode == COLS_MIN)
            mlk_buf_printf(b, "%s%s = coalesce(min(m.%s, s.%s), m.%s, s.%s)", sep, c, c, c, c, c);
        else
            mlk_buf_printf(b, "%s%s = %s%s", sep, c, pfx, c);
    }
    sqlite3_finalize(st);
    if (n == 0)
        return mlk_fail(x->err, MLK_E_DB, "%s: merging: the output has no table %s", x->path, table);
    return b->failed ? mlk_fail(x->err, MLK_E_NOMEM, "%s: merging: out of memory", x->path) : MLK_OK;
}

/* Whether the input has table at all: one of an older schema lacks the newer tables, which then merge nothing. */
static bool src_has(const ctx *x, const char *table)
{
    sqlite3_stmt *st;
    bool yes = sqlite3_prepare_v2(x->h, "SELECT 1 FROM mlk_src.sqlite_master WHERE type = 'table' AND name = ?1", -1,
                                  &st, NULL) == SQLITE_OK &&
               sqlite3_bind_text(st, 1, table, -1, SQLITE_STATIC) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW;
    sqlite3_finalize(st);
    return yes;
}

/* sql_head, the column list of table (as columns()), sql_tail: one statement, run. */
static int run_cols(const ctx *x, const char *what, const char *head, const char *table, const char *const *skip,
                    int mode, const char *pfx, const char *mid, int mode2, const char *pfx2, const char *tail,
                    int64_t *changes)
{
    if (!src_has(x, table))
        return MLK_OK;
    mlk_buf b = {0};
    mlk_buf_printf(&b, "%s", head);
    int rc = columns(x, table, skip, mode, pfx, &b);
    if (!rc && mid) {
        mlk_buf_printf(&b, "%s", mid);
        rc = columns(x, table, skip, mode2, pfx2, &b);
    }
    if (!rc) {
        mlk_buf_printf(&b, "%s", tail);
        char *sql = mlk_buf_take(&b);
        rc = run(x, what, sql, changes);
        free(sql);
    }
    mlk_buf_free(&b);
    return rc;
}

/* ---- runs ----------------------------------------------------------------------------------------------- */

static int merge_runs(const ctx *x, mlk_merge_counts *c)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(x->h,
                           "SELECT s.uuid FROM mlk_src.runs s JOIN main.runs m ON m.uuid = s.uuid "
                           "WHERE s.scenario_text IS NOT m.scenario_text LIMIT 1",
                           -1, &st, NULL) != SQLITE_OK)
        return sql_fail(x, "runs");
    int rc = MLK_OK;
    if (sqlite3_step(st) == SQLITE_ROW)
        rc = mlk_fail(x->err, MLK_E_PARSE, "%s: run %s has another scenario than the run with that uuid in the "
                      "output (one --run-key used for two batches?)", x->path, sqlite3_column_text(st, 0));
    sqlite3_finalize(st);
    if (rc)
        return rc;
    if ((rc = run(x, "runs", "INSERT INTO temp.mlk_merge_runs(uuid, prior, incoming) SELECT s.uuid, m.status, "
                  "s.status FROM mlk_src.runs s LEFT JOIN main.runs m ON m.uuid = s.uuid", NULL)))
        return rc;
    static const char *const no_id[] = {"id", NULL};
    if ((rc = run_cols(x, "runs", "INSERT INTO main.runs(", "runs", no_id, COLS_PLAIN, "", ") SELECT ", COLS_PLAIN,
                       "s.", " FROM mlk_src.runs s WHERE NOT EXISTS (SELECT 1 FROM main.runs m WHERE m.uuid = s.uuid) "
                       "ORDER BY s.started_at, s.id", &c->runs_new)))
        return rc;
    /* Shards of one run differ in argv, host, commit...: the smallest value wins, whatever the order of inputs. */
    static const char *const fixed[] = {"id", "uuid", "scenario_text", "status", "finished_at", NULL};
    return run_cols(x, "runs", "UPDATE main.runs AS m SET ", "runs", fixed, COLS_MIN, "", NULL, 0, NULL,
                    ", finished_at = coalesce(max(m.finished_at, s.finished_at), m.finished_at, s.finished_at) "
                    "FROM mlk_src.runs AS s WHERE s.uuid = m.uuid",
                    NULL);
}

static int status_rank(const char *s)
{
    return !s ? -1 : !strcmp(s, "failed") ? 3 : !strcmp(s, "interrupted") ? 2 : !strcmp(s, "running") ? 1 : 0;
}

const char *mlk_merge_run_status(const char *prior, const char *incoming, int64_t n_cells, int64_t n_unfinished,
                                 int64_t expected)
{
    static const char *const names[] = {"done", "running", "interrupted", "failed"};
    int worst = status_rank(incoming);
    if (status_rank(prior) > worst)
        worst = status_rank(prior);
    if (worst < 0)
        worst = 1;
    bool complete = n_unfinished == 0 && (expected >= 0 ? n_cells >= expected : worst == 0);
    if (complete)
        return "done";
    return worst == 0 ? "running" : names[worst];
}

/* The cells of the run's matrix, from its scenario text; -1 when the text does not parse (a newer syntax). */
static int64_t expected_cells(const char *text, const char *uuid)
{
    if (!text)
        return -1;
    mlk_scenario *s = NULL;
    mlk_error ignore = {0};
    if (mlk_scenario_parse(text, strlen(text), uuid, &s, &ignore))
        return -1;
    int64_t n = mlk_scenario_n_cells(s);
    mlk_scenario_free(s);
    return n;
}

static int update_statuses(const ctx *x)
{
    sqlite3_stmt *q = NULL, *u = NULL;
    int rc = MLK_OK, step;
    if (sqlite3_prepare_v2(x->h,
                           "SELECT r.id, r.uuid, r.scenario_text, x.prior, x.incoming, "
                           "(SELECT count(*) FROM main.cells WHERE run_id = r.id), "
                           "(SELECT count(*) FROM main.cells WHERE run_id = r.id AND status IN " UNFINISHED ") "
                           "FROM temp.mlk_merge_runs x JOIN main.runs r ON r.uuid = x.uuid",
                           -1, &q, NULL) != SQLITE_OK ||
        sqlite3_prepare_v2(x->h, "UPDATE main.runs SET status = ?1 WHERE id = ?2 AND status IS NOT ?1", -1, &u,
                           NULL) != SQLITE_OK) {
        rc = sql_fail(x, "run statuses");
        goto out;
    }
    while ((step = sqlite3_step(q)) == SQLITE_ROW) {
        int64_t expected = expected_cells((const char *)sqlite3_column_text(q, 2),
                                          (const char *)sqlite3_column_text(q, 1));
        const char *st = mlk_merge_run_status((const char *)sqlite3_column_text(q, 3),
                                              (const char *)sqlite3_column_text(q, 4), sqlite3_column_int64(q, 5),
                                              sqlite3_column_int64(q, 6), expected);
        sqlite3_reset(u);
        sqlite3_bind_text(u, 1, st, -1, SQLITE_STATIC);
        sqlite3_bind_int64(u, 2, sqlite3_column_int64(q, 0));
        if (sqlite3_step(u) != SQLITE_DONE) {
            rc = sql_fail(x, "run statuses");
            goto out;
        }
    }
    if (step != SQLITE_DONE)
        rc = sql_fail(x, "run statuses");
out:
    sqlite3_finalize(q);
    sqlite3_finalize(u);
    return rc;
}

/* ---- cells and what hangs off them ---------------------------------------------------------------------- */

static int merge_cells(const ctx *x, mlk_merge_counts *c)
{
    /* action: 0 keep the output's cell, 1 copy (absent), 2 replace in place (the input's is further on). */
    int rc = run(x, "cells",
                 "INSERT INTO temp.mlk_merge_cells(src_id, run_id, idx, dst_id, action) "
                 "SELECT sc.id, mr.id, sc.idx, mc.id, CASE WHEN mc.id IS NULL THEN 1 "
                 "WHEN (sc.status NOT IN " UNFINISHED ", coalesce(sc.finished_at, ''), "
                 "      (SELECT count(*) FROM mlk_src.samples WHERE cell_id = sc.id)) > "
                 "     (mc.status NOT IN " UNFINISHED ", coalesce(mc.finished_at, ''), "
                 "      (SELECT count(*) FROM main.samples WHERE cell_id = mc.id)) THEN 2 ELSE 0 END "
                 "FROM mlk_src.cells sc JOIN mlk_src.runs sr ON sr.id = sc.run_id "
                 "JOIN main.runs mr ON mr.uuid = sr.uuid LEFT JOIN main.cells mc ON mc.run_id = mr.id AND mc.idx = sc.idx",
                 NULL);
    static const char *const no_ids[] = {"id", "run_id", NULL};
    if (!rc)
        rc = run_cols(x, "cells", "INSERT INTO main.cells(run_id, ", "cells", no_ids, COLS_PLAIN, "",
                      ") SELECT x.run_id, ", COLS_PLAIN, "sc.",
                      " FROM temp.mlk_merge_cells x JOIN mlk_src.cells sc ON sc.id = x.src_id WHERE x.action = 1 "
                      "ORDER BY x.run_id, x.idx",
                      &c->cells_new);
    if (!rc)
        rc = run(x, "cells", "UPDATE temp.mlk_merge_cells SET dst_id = (SELECT id FROM main.cells c WHERE "
                 "c.run_id = mlk_merge_cells.run_id AND c.idx = mlk_merge_cells.idx) WHERE action = 1", NULL);
    /* Every table hanging off a cell by cell_id alone: copied, or replaced with the cell. */
    static const char *const tables[] = {"samples", "metrics", "step_stats", "leaks", "heap_peaks",
                                         "heap_peak_sites", "tool_frames", "series_results", "site_reports",
                                         "growth_sites", "growth_site_frames", "sample_resolution", "tool_exec",
                                         "site_windows", "cell_stops", "cell_inputs"};
    enum { N_CELL_TABLES = sizeof tables / sizeof tables[0] };
    for (int i = 0; i < N_CELL_TABLES && !rc; i++) {
        char sql[160];
        snprintf(sql, sizeof sql, "DELETE FROM main.%s WHERE cell_id IN (SELECT dst_id FROM temp.mlk_merge_cells "
                 "WHERE action = 2)", tables[i]);
        rc = run(x, tables[i], sql, NULL);
    }
    static const char *const kept[] = {"id", "run_id", "idx", NULL};
    if (!rc)
        rc = run_cols(x, "cells", "UPDATE main.cells AS c SET ", "cells", kept, COLS_ASSIGN, "sc.", NULL, 0, NULL,
                      " FROM temp.mlk_merge_cells x JOIN mlk_src.cells sc ON sc.id = x.src_id "
                      "WHERE x.action = 2 AND c.id = x.dst_id",
                      &c->cells_replaced);
    int64_t series_rows = 0; /* with the cell's verdict, sites and kept resolution: not counted on their own */
    int64_t *counts[N_CELL_TABLES] = {&c->samples, &c->metrics, &c->step_stats, &c->tool_rows, &c->tool_rows,
                                      &c->tool_rows, &c->tool_rows, &series_rows, &series_rows, &series_rows,
                                      &series_rows, &series_rows, &series_rows};
    static const char *const no_cell[] = {"cell_id", NULL};
    for (int i = 0; i < N_CELL_TABLES && !rc; i++) {
        char head[64];
        snprintf(head, sizeof head, "INSERT INTO main.%s(cell_id, ", tables[i]);
        char tail[192];
        snprintf(tail, sizeof tail, " FROM mlk_src.%s t JOIN temp.mlk_merge_cells x ON x.src_id = t.cell_id "
                 "WHERE x.action IN (1, 2)", tables[i]);
        rc = run_cols(x, tables[i], head, tables[i], no_cell, COLS_PLAIN, "", ") SELECT x.dst_id, ", COLS_PLAIN,
                      "t.", tail, counts[i]);
    }
    return rc;
}

/* ---- baselines, comparisons, findings, change points ---------------------------------------------------- */

static int merge_history(const ctx *x, mlk_merge_counts *c)
{
    static const char *const no_id[] = {"id", NULL};
    int rc = run_cols(x, "baselines", "INSERT INTO main.baselines(", "baselines", no_id, COLS_PLAIN, "", ") SELECT ",
                      COLS_PLAIN, "b.",
                      " FROM mlk_src.baselines b WHERE NOT EXISTS (SELECT 1 FROM main.baselines m WHERE "
                      "m.run_uuid = b.run_uuid AND m.branch = b.branch AND m.pinned_at = b.pinned_at) "
                      "AND b.id = (SELECT min(d.id) FROM mlk_src.baselines d WHERE d.run_uuid = b.run_uuid "
                      "AND d.branch = b.branch AND d.pinned_at = b.pinned_at) ORDER BY b.pinned_at, b.id",
                      &c->baselines);
    static const char *const no_ids[] = {"id", "run_id", NULL};
    if (!rc)
        rc = run_cols(x, "comparisons", "INSERT INTO main.comparisons(run_id, ", "comparisons", no_ids, COLS_PLAIN,
                      "", ") SELECT mr.id, ", COLS_PLAIN, "c.",
                      " FROM mlk_src.comparisons c JOIN mlk_src.runs sr ON sr.id = c.run_id "
                      "JOIN main.runs mr ON mr.uuid = sr.uuid WHERE NOT EXISTS (SELECT 1 FROM main.comparisons m "
                      "WHERE m.run_id = mr.id AND m.created_at = c.created_at AND m.baseline = c.baseline) "
                      "AND c.id = (SELECT min(d.id) FROM mlk_src.comparisons d WHERE d.run_id = c.run_id "
                      "AND d.created_at = c.created_at AND d.baseline = c.baseline) ORDER BY c.created_at, c.id",
                      &c->comparisons);
    if (!rc)
        rc = run(x, "comparisons",
                 "INSERT INTO temp.mlk_merge_cmp(src_id, dst_id) SELECT c.id, (SELECT min(m.id) FROM "
                 "main.comparisons m WHERE m.run_id = mr.id AND m.created_at = c.created_at AND m.baseline = "
                 "c.baseline) FROM mlk_src.comparisons c JOIN mlk_src.runs sr ON sr.id = c.run_id "
                 "JOIN main.runs mr ON mr.uuid = sr.uuid",
                 NULL);
    static const char *const no_refs[] = {"comparison_id", "cell_id", NULL};
    if (!rc)
        rc = run_cols(x, "findings", "INSERT INTO main.findings(comparison_id, cell_id, ", "findings", no_refs,
                      COLS_PLAIN, "", ") SELECT k.dst_id, x.dst_id, ", COLS_PLAIN, "f.",
                      " FROM mlk_src.findings f JOIN temp.mlk_merge_cmp k ON k.src_id = f.comparison_id "
                      "JOIN temp.mlk_merge_cells x ON x.src_id = f.cell_id WHERE true ON CONFLICT DO NOTHING",
                      &c->findings);
    if (!rc)
        rc = run_cols(x, "change_points", "INSERT INTO main.change_points(", "change_points", NULL, COLS_PLAIN, "",
                      ") SELECT ", COLS_PLAIN, "p.",
                      " FROM mlk_src.change_points p WHERE true ON CONFLICT DO NOTHING", &c->change_points);
    return rc;
}

/* ---- one input ------------------------------------------------------------------------------------------ */

static int attach(const ctx *x)
{
    bool uri = uri_on || sqlite3_compileoption_used("USE_URI");
    char *name = uri ? db_ro_uri(x->path) : strdup(x->path);
    if (!name)
        return mlk_fail(x->err, MLK_E_NOMEM, "%s: out of memory", x->path);
    sqlite3_stmt *st;
    int rc = MLK_OK;
    if (sqlite3_prepare_v2(x->h, "ATTACH DATABASE ?1 AS mlk_src", -1, &st, NULL) != SQLITE_OK) {
        rc = sql_fail(x, "attaching");
    } else {
        sqlite3_bind_text(st, 1, name, -1, SQLITE_TRANSIENT);
        if (sqlite3_step(st) != SQLITE_DONE)
            rc = mlk_fail(x->err, MLK_E_IO, "%s: cannot attach: %s", x->path, sqlite3_errmsg(x->h));
        sqlite3_finalize(st);
    }
    free(name);
    return rc;
}

static int merge_all(const ctx *x, mlk_merge_counts *c)
{
    int rc = run(x, "setup", "CREATE TEMP TABLE IF NOT EXISTS mlk_merge_runs(uuid TEXT PRIMARY KEY, prior TEXT, "
                 "incoming TEXT NOT NULL)", NULL);
    if (!rc)
        rc = run(x, "setup", "CREATE TEMP TABLE IF NOT EXISTS mlk_merge_cells(src_id INTEGER PRIMARY KEY, "
                 "run_id INTEGER NOT NULL, idx INTEGER NOT NULL, dst_id INTEGER, action INTEGER NOT NULL)", NULL);
    if (!rc)
        rc = run(x, "setup", "CREATE TEMP TABLE IF NOT EXISTS mlk_merge_cmp(src_id INTEGER PRIMARY KEY, "
                 "dst_id INTEGER NOT NULL)", NULL);
    if (rc)
        return rc;
    if ((rc = run(x, "a transaction", "BEGIN IMMEDIATE", NULL)))
        return rc;
    if (!(rc = run(x, "setup", "DELETE FROM temp.mlk_merge_runs", NULL)) &&
        !(rc = run(x, "setup", "DELETE FROM temp.mlk_merge_cells", NULL)) &&
        !(rc = run(x, "setup", "DELETE FROM temp.mlk_merge_cmp", NULL)) && !(rc = merge_runs(x, c)) &&
        !(rc = merge_cells(x, c)) && !(rc = update_statuses(x)) && !(rc = merge_history(x, c)))
        rc = run(x, "commit", "COMMIT", NULL);
    if (rc)
        sqlite3_exec(x->h, "ROLLBACK", NULL, NULL, NULL);
    return rc;
}

int mlk_merge_db(db_store *out, const char *path, mlk_merge_counts *counts, mlk_error *err)
{
    ctx x = {db_sqlite(out), path, err};
    mlk_merge_counts c;
    memset(&c, 0, sizeof c);
    int rc = attach(&x);
    if (rc)
        return rc;
    if (!(rc = merge_all(&x, &c))) {
        sqlite3_stmt *st;
        if (sqlite3_prepare_v2(x.h, "SELECT count(*) FROM temp.mlk_merge_runs WHERE prior IS NOT NULL", -1, &st,
                               NULL) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW)
            c.runs_joined = sqlite3_column_int64(st, 0);
        sqlite3_finalize(st);
    }
    if (sqlite3_exec(x.h, "DETACH DATABASE mlk_src", NULL, NULL, NULL) != SQLITE_OK && !rc)
        rc = sql_fail(&x, "detaching");
    if (!rc && counts)
        *counts = c;
    return rc;
}
