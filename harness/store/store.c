/* store.c: the SQLite store: schema from db/schema.sql (compiled in), WAL, busy timeout, one IMMEDIATE
 * transaction per batch. It must never leave a transaction open on return, success or failure. */
#include <math.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "schema_sql.h"
#include "store.h"

/* How long a write waits for another run's transaction (two runs may share one db). */
enum { DB_BUSY_MS = 60000 };

struct db_store {
    sqlite3 *h;
    sqlite3_stmt *ins_sample;
    char *path;
};

static int db_fail(db_store *db, mlk_error *err, const char *what)
{
    return mlk_fail(err, MLK_E_DB, "%s: %s: %s", db && db->path ? db->path : "db", what,
                    db && db->h ? sqlite3_errmsg(db->h) : "no handle");
}

static int exec(db_store *db, const char *sql, mlk_error *err)
{
    char *msg = NULL;
    if (sqlite3_exec(db->h, sql, NULL, NULL, &msg) != SQLITE_OK) {
        mlk_fail(err, MLK_E_DB, "%s: %s: %s", db->path, sql, msg ? msg : "?");
        sqlite3_free(msg);
        return MLK_E_DB;
    }
    return MLK_OK;
}

/* Switching a fresh file to WAL takes an exclusive lock that SQLite does not pass through the busy handler:
 * a second run creating the same db at the same moment gets SQLITE_BUSY at once. Retry it for as long as the
 * busy timeout would have waited. */
static int enter_wal(db_store *db, mlk_error *err)
{
    for (int waited_ms = 0;; waited_ms += 10) {
        int rc = sqlite3_exec(db->h, "PRAGMA journal_mode=WAL", NULL, NULL, NULL);
        if (rc == SQLITE_OK)
            return MLK_OK;
        if ((rc & 0xff) != SQLITE_BUSY && (rc & 0xff) != SQLITE_LOCKED)
            break;
        if (waited_ms >= DB_BUSY_MS)
            break;
        sqlite3_sleep(10);
    }
    return db_fail(db, err, "PRAGMA journal_mode=WAL");
}

static int check_version(db_store *db, mlk_error *err)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(db->h, "SELECT max(version) FROM schema_version", -1, &st, NULL) != SQLITE_OK)
        return db_fail(db, err, "reading schema_version");
    int rc = MLK_OK;
    if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_type(st, 0) != SQLITE_NULL) {
        int v = sqlite3_column_int(st, 0);
        if (v > DB_SCHEMA_VERSION)
            rc = mlk_fail(err, MLK_E_DB, "%s: schema version %d is newer than this memleak-run (%d)", db->path, v,
                          DB_SCHEMA_VERSION);
        sqlite3_finalize(st);
        return rc;
    }
    sqlite3_finalize(st);
    char sql[96];
    snprintf(sql, sizeof sql, "INSERT INTO schema_version(version) VALUES (%d)", DB_SCHEMA_VERSION);
    return exec(db, sql, err);
}

int db_open(const char *path, db_store **out, mlk_error *err)
{
    db_store *db = calloc(1, sizeof *db);
    if (!db || !(db->path = strdup(path))) {
        free(db);
        return mlk_fail(err, MLK_E_NOMEM, "db: out of memory");
    }
    int rc;
    if (sqlite3_open_v2(path, &db->h, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, NULL) != SQLITE_OK) {
        rc = db_fail(db, err, "cannot open");
        goto fail;
    }
    sqlite3_busy_timeout(db->h, DB_BUSY_MS);
    if ((rc = enter_wal(db, err)) || (rc = exec(db, "PRAGMA synchronous=NORMAL", err)) ||
        (rc = exec(db, "PRAGMA foreign_keys=ON", err)) ||
        (rc = exec(db, "BEGIN IMMEDIATE", err)))
        goto fail;
    if ((rc = exec(db, (const char *)mlk_schema_sql, err)) || (rc = check_version(db, err))) {
        exec(db, "ROLLBACK", NULL);
        goto fail;
    }
    if ((rc = exec(db, "COMMIT", err)))
        goto fail;
    if (sqlite3_prepare_v2(db->h,
                           "INSERT INTO samples(cell_id, seq, phase, iteration, step, wall_ns, cpu_ns, minflt, "
                           "majflt, vm_rss_kib, vm_hwm_kib, vm_size_kib, vm_peak_kib, rss_anon_kib, rss_file_kib, "
                           "rss_shmem_kib, threads, heap_live_bytes, heap_peak_bytes, heap_allocs, heap_frees) "
                           "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                           -1, &db->ins_sample, NULL) != SQLITE_OK) {
        rc = db_fail(db, err, "preparing the sample insert");
        goto fail;
    }
    *out = db;
    return MLK_OK;
fail:
    db_close(db);
    return rc;
}

void db_close(db_store *db)
{
    if (!db)
        return;
    sqlite3_finalize(db->ins_sample);
    sqlite3_close(db->h);
    free(db->path);
    free(db);
}

struct sqlite3 *db_handle(db_store *db) { return db->h; }

static void bind_text(sqlite3_stmt *st, int i, const char *s)
{
    if (s)
        sqlite3_bind_text(st, i, s, -1, SQLITE_TRANSIENT);
    else
        sqlite3_bind_null(st, i);
}

static void bind_real(sqlite3_stmt *st, int i, double v)
{
    if (isnan(v))
        sqlite3_bind_null(st, i);
    else
        sqlite3_bind_double(st, i, v);
}

static void bind_opt_int(sqlite3_stmt *st, int i, int64_t v, bool present)
{
    if (present && v >= 0)
        sqlite3_bind_int64(st, i, v);
    else
        sqlite3_bind_null(st, i);
}

/* Prepare, bind through the callback, step once, finalize. */
static int run_stmt(db_store *db, const char *sql, void (*bind)(sqlite3_stmt *, const void *), const void *arg,
                    mlk_error *err)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(db->h, sql, -1, &st, NULL) != SQLITE_OK)
        return db_fail(db, err, sql);
    bind(st, arg);
    int rc = sqlite3_step(st) == SQLITE_DONE ? MLK_OK : db_fail(db, err, sql);
    sqlite3_finalize(st);
    return rc;
}

static void bind_run(sqlite3_stmt *st, const void *v)
{
    const db_run_meta *m = v;
    const char *f[] = {m->uuid, m->scenario_name, m->scenario_path, m->scenario_text, m->commit_sha, m->branch,
                       m->host, m->cpu, m->kernel, m->glibc, m->tool_version, m->argv};
    for (int i = 0; i < 12; i++)
        bind_text(st, i + 1, f[i]);
}

static void bind_uuid(sqlite3_stmt *st, const void *v) { bind_text(st, 1, v); }

int db_run_begin(db_store *db, const db_run_meta *m, int64_t *run_id, mlk_error *err)
{
    int rc = run_stmt(db,
                      "INSERT INTO runs(uuid, scenario_name, scenario_path, scenario_text, commit_sha, branch, host, "
                      "cpu, kernel, glibc, tool_version, argv, started_at, status) "
                      "VALUES (?,?,?,?,?,?,?,?,?,?,?,?, strftime('%Y-%m-%dT%H:%M:%fZ','now'), 'running') "
                      "ON CONFLICT(uuid) DO UPDATE SET status = 'running'",
                      bind_run, m, err);
    if (rc)
        return rc;
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(db->h, "SELECT id FROM runs WHERE uuid = ?", -1, &st, NULL) != SQLITE_OK)
        return db_fail(db, err, "reading the run back");
    bind_uuid(st, m->uuid);
    rc = sqlite3_step(st) == SQLITE_ROW ? MLK_OK : db_fail(db, err, "reading the run back");
    if (!rc)
        *run_id = sqlite3_column_int64(st, 0);
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
    bind_text(st, 1, a->s);
    sqlite3_bind_int64(st, 2, a->id);
}

int db_run_finish(db_store *db, int64_t run_id, const char *status, mlk_error *err)
{
    id_text a = {run_id, status};
    return run_stmt(db,
                    "UPDATE runs SET status = ?, finished_at = strftime('%Y-%m-%dT%H:%M:%fZ','now') WHERE id = ?",
                    bind_id_text, &a, err);
}

typedef struct {
    int64_t run_id;
    const db_cell_def *c;
} cell_arg;

static void bind_cell(sqlite3_stmt *st, const void *v)
{
    const cell_arg *a = v;
    sqlite3_bind_int64(st, 1, a->run_id);
    sqlite3_bind_int(st, 2, a->c->idx);
    const char *f[] = {a->c->engine, a->c->model, a->c->model_hash, a->c->axes_json, a->c->config_key,
                       a->c->allocator};
    for (int i = 0; i < 6; i++)
        bind_text(st, i + 3, f[i]);
}

int db_cell_insert(db_store *db, int64_t run_id, const db_cell_def *c, int64_t *cell_id, mlk_error *err)
{
    cell_arg a = {run_id, c};
    int rc = run_stmt(db,
                      "INSERT INTO cells(run_id, idx, engine, model, model_hash, axes, config_key, allocator, status) "
                      "VALUES (?,?,?,?,?,?,?,?, 'pending')",
                      bind_cell, &a, err);
    if (!rc)
        *cell_id = sqlite3_last_insert_rowid(db->h);
    return rc;
}

int db_cell_start(db_store *db, int64_t cell_id, mlk_error *err)
{
    char sql[1024];
    /* Everything an interrupted attempt may have left hangs off the cell by cell_id. */
    static const char *const tables[] = {"samples", "metrics", "step_stats", "leaks", "heap_peaks",
                                         "heap_peak_sites", "tool_frames"};
    int len = snprintf(sql, sizeof sql, "BEGIN IMMEDIATE;");
    for (size_t i = 0; i < sizeof tables / sizeof tables[0]; i++)
        len += snprintf(sql + len, sizeof sql - (size_t)len, " DELETE FROM %s WHERE cell_id = %lld;", tables[i],
                        (long long)cell_id);
    snprintf(sql + len, sizeof sql - (size_t)len,
             " UPDATE cells SET status = 'running', started_at = strftime('%%Y-%%m-%%dT%%H:%%M:%%fZ','now') "
             "WHERE id = %lld; COMMIT",
             (long long)cell_id);
    int rc = exec(db, sql, err);
    if (rc)
        exec(db, "ROLLBACK", NULL);
    return rc;
}

typedef struct {
    int64_t id;
    const char *active, *lib;
    bool heap;
} alloc_arg;

static void bind_alloc(sqlite3_stmt *st, const void *v)
{
    const alloc_arg *a = v;
    bind_text(st, 1, a->active);
    bind_text(st, 2, a->lib);
    sqlite3_bind_int(st, 3, a->heap);
    sqlite3_bind_int64(st, 4, a->id);
}

int db_cell_set_allocator(db_store *db, int64_t cell_id, const char *active, const char *lib, bool heap_shim,
                          mlk_error *err)
{
    alloc_arg a = {cell_id, active, lib, heap_shim};
    return run_stmt(db, "UPDATE cells SET allocator_active = ?, allocator_lib = ?, heap_shim = ? WHERE id = ?",
                    bind_alloc, &a, err);
}

typedef struct {
    int64_t id;
    const db_cell_result *r;
} result_arg;

static void bind_result(sqlite3_stmt *st, const void *v)
{
    const result_arg *a = v;
    const db_cell_result *r = a->r;
    bind_text(st, 1, r->status);
    bind_opt_int(st, 2, r->signal, r->signal >= 0);
    bind_opt_int(st, 3, r->exit_code, r->exit_code >= 0);
    bind_text(st, 4, r->metric);
    bind_real(st, 5, r->slope);
    bind_real(st, 6, r->late_slope);
    bind_real(st, 7, r->mk_p);
    bind_real(st, 8, r->growth);
    bind_text(st, 9, r->detail);
    bind_text(st, 10, r->error);
    sqlite3_bind_int64(st, 11, a->id);
}

int db_cell_finish(db_store *db, int64_t cell_id, const db_cell_result *r, mlk_error *err)
{
    result_arg a = {cell_id, r};
    return run_stmt(db,
                    "UPDATE cells SET status = ?, signal = ?, exit_code = ?, metric = ?, slope_per_iter = ?, "
                    "late_slope_per_iter = ?, mk_p = ?, growth_bytes = ?, detail = ?, error = ?, "
                    "finished_at = strftime('%Y-%m-%dT%H:%M:%fZ','now') WHERE id = ?",
                    bind_result, &a, err);
}

static int insert_sample(db_store *db, int64_t cell_id, int64_t seq, const mlk_sample *s)
{
    sqlite3_stmt *st = db->ins_sample;
    const mlk_mem *m = &s->m;
    sqlite3_reset(st);
    sqlite3_bind_int64(st, 1, cell_id);
    sqlite3_bind_int64(st, 2, seq);
    bind_text(st, 3, mlk_phase_name(s->phase));
    bind_opt_int(st, 4, s->iteration, s->iteration >= 0);
    bind_text(st, 5, mlk_any_step_name(s->step));
    const int64_t v[] = {s->wall_ns,      s->cpu_ns,      s->minflt,       s->majflt,        m->vm_rss_kib,
                         m->vm_hwm_kib,   m->vm_size_kib, m->vm_peak_kib,  m->rss_anon_kib,  m->rss_file_kib,
                         m->rss_shmem_kib, m->threads};
    for (int i = 0; i < 12; i++)
        bind_opt_int(st, 6 + i, v[i], true);
    const int64_t h[] = {m->heap.live_bytes, m->heap.peak_bytes, m->heap.n_allocs, m->heap.n_frees};
    for (int i = 0; i < 4; i++)
        bind_opt_int(st, 18 + i, h[i], m->have_heap);
    return sqlite3_step(st) == SQLITE_DONE ? MLK_OK : MLK_E_DB;
}

int db_samples_insert(db_store *db, int64_t cell_id, const mlk_sample *s, int n, int64_t *seq, mlk_error *err)
{
    if (n <= 0)
        return MLK_OK;
    int rc = exec(db, "BEGIN IMMEDIATE", err);
    if (rc)
        return rc;
    for (int i = 0; i < n; i++)
        if (insert_sample(db, cell_id, *seq + i, &s[i])) {
            rc = db_fail(db, err, "inserting a sample");
            exec(db, "ROLLBACK", NULL);
            return rc;
        }
    if ((rc = exec(db, "COMMIT", err))) {
        exec(db, "ROLLBACK", NULL);
        return rc;
    }
    *seq += n;
    return MLK_OK;
}

int db_metric_insert(db_store *db, int64_t cell_id, int64_t seq, const char *name, int64_t value, mlk_error *err)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(db->h, "INSERT OR REPLACE INTO metrics(cell_id, seq, name, value) VALUES (?,?,?,?)", -1, &st,
                           NULL) != SQLITE_OK)
        return db_fail(db, err, "preparing a metric insert");
    sqlite3_bind_int64(st, 1, cell_id);
    sqlite3_bind_int64(st, 2, seq);
    sqlite3_bind_text(st, 3, name, -1, SQLITE_TRANSIENT);
    sqlite3_bind_int64(st, 4, value);
    int rc = sqlite3_step(st) == SQLITE_DONE ? MLK_OK : db_fail(db, err, "inserting a metric");
    sqlite3_finalize(st);
    return rc;
}

int db_step_stats_insert(db_store *db, int64_t cell_id, const db_step_stats *s, int n, mlk_error *err)
{
    sqlite3_stmt *st;
    const char *sql = "INSERT OR REPLACE INTO step_stats(cell_id, step, n, peak_kib, rss_growth_per_iter, "
                      "heap_growth_per_iter, heap_delta_median, rss_delta_median, wall_ms_median, wall_ms_p90, "
                      "cpu_ms_median, final_rss_kib, final_anon_kib, final_heap_bytes) "
                      "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?)";
    if (sqlite3_prepare_v2(db->h, sql, -1, &st, NULL) != SQLITE_OK)
        return db_fail(db, err, "preparing step_stats insert");
    int rc = exec(db, "BEGIN IMMEDIATE", err);
    for (int i = 0; !rc && i < n; i++) {
        sqlite3_reset(st);
        sqlite3_bind_int64(st, 1, cell_id);
        bind_text(st, 2, mlk_any_step_name(s[i].step));
        sqlite3_bind_int(st, 3, s[i].n);
        bind_opt_int(st, 4, s[i].peak_kib, true);
        bind_real(st, 5, s[i].rss_growth);
        bind_real(st, 6, s[i].heap_growth);
        bind_real(st, 7, s[i].heap_delta_median);
        bind_real(st, 8, s[i].rss_delta_median);
        bind_real(st, 9, s[i].wall_ms_median);
        bind_real(st, 10, s[i].wall_ms_p90);
        bind_real(st, 11, s[i].cpu_ms_median);
        bind_opt_int(st, 12, s[i].final_rss_kib, true);
        bind_opt_int(st, 13, s[i].final_anon_kib, true);
        bind_opt_int(st, 14, s[i].final_heap_bytes, true);
        if (sqlite3_step(st) != SQLITE_DONE)
            rc = db_fail(db, err, "inserting step_stats");
    }
    sqlite3_finalize(st);
    if (!rc)
        rc = exec(db, "COMMIT", err);
    if (rc)
        exec(db, "ROLLBACK", NULL);
    return rc;
}

static bool column_ok(const char *c)
{
    static const char *const ok[] = {"heap_live_bytes", "rss_anon_kib", "vm_rss_kib", "vm_hwm_kib", "wall_ns",
                                     "cpu_ns", "heap_peak_bytes", "threads", "rss_file_kib", NULL};
    for (int i = 0; ok[i]; i++)
        if (!strcmp(ok[i], c))
            return true;
    return false;
}

int db_series(db_store *db, int64_t cell_id, const char *step, const char *column, double **out, int *n,
              mlk_error *err)
{
    if (!column_ok(column))
        return mlk_fail(err, MLK_E_INTERNAL, "db_series: unknown column %s", column);
    char sql[256];
    snprintf(sql, sizeof sql,
             "SELECT %s FROM samples WHERE cell_id = ? AND step = ? AND phase = 'measure' AND %s IS NOT NULL "
             "ORDER BY seq",
             column, column);
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(db->h, sql, -1, &st, NULL) != SQLITE_OK)
        return db_fail(db, err, "preparing a series query");
    sqlite3_bind_int64(st, 1, cell_id);
    bind_text(st, 2, step);
    int cap = 256, len = 0, rc = MLK_OK;
    double *v = malloc(sizeof *v * (size_t)cap);
    while (v && sqlite3_step(st) == SQLITE_ROW) {
        if (len == cap) {
            double *p = realloc(v, sizeof *v * (size_t)(cap *= 2));
            if (!p) {
                free(v);
                v = NULL;
                break;
            }
            v = p;
        }
        v[len++] = sqlite3_column_double(st, 0);
    }
    sqlite3_finalize(st);
    if (!v)
        return mlk_fail(err, MLK_E_NOMEM, "db_series: out of memory");
    *out = v;
    *n = len;
    return rc;
}

static char *dup_col(sqlite3_stmt *st, int i)
{
    const unsigned char *t = sqlite3_column_text(st, i);
    return t ? strdup((const char *)t) : NULL;
}

int db_run_load(db_store *db, int64_t run_id, char **scenario_text, char **scenario_path, mlk_error *err)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(db->h, "SELECT scenario_text, scenario_path FROM runs WHERE id = ?", -1, &st, NULL) !=
        SQLITE_OK)
        return db_fail(db, err, "reading a run");
    sqlite3_bind_int64(st, 1, run_id);
    int rc = MLK_OK;
    if (sqlite3_step(st) == SQLITE_ROW) {
        *scenario_text = dup_col(st, 0);
        *scenario_path = dup_col(st, 1);
    } else {
        rc = mlk_fail(err, MLK_E_NOTFOUND, "%s: no run %lld", db->path, (long long)run_id);
    }
    sqlite3_finalize(st);
    return rc;
}

int db_cell_lookup(db_store *db, int64_t run_id, int idx, int64_t *cell_id, char **status, mlk_error *err)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(db->h, "SELECT id, status FROM cells WHERE run_id = ? AND idx = ?", -1, &st, NULL) !=
        SQLITE_OK)
        return db_fail(db, err, "reading a cell");
    sqlite3_bind_int64(st, 1, run_id);
    sqlite3_bind_int(st, 2, idx);
    *cell_id = 0;
    *status = NULL;
    if (sqlite3_step(st) == SQLITE_ROW) {
        *cell_id = sqlite3_column_int64(st, 0);
        *status = dup_col(st, 1);
    }
    sqlite3_finalize(st);
    return MLK_OK;
}

int db_integrity_ok(db_store *db, bool *ok, mlk_error *err)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(db->h, "PRAGMA integrity_check", -1, &st, NULL) != SQLITE_OK)
        return db_fail(db, err, "integrity_check");
    *ok = sqlite3_step(st) == SQLITE_ROW && !strcmp((const char *)sqlite3_column_text(st, 0), "ok");
    sqlite3_finalize(st);
    return MLK_OK;
}
