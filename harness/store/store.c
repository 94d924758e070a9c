/* store.c: the SQLite store: schema from db/schema.sql (compiled in), WAL, busy timeout, one IMMEDIATE
 * transaction per batch. It must never leave a transaction open on return, success or failure. */
#include <errno.h>
#include <math.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "db_col.h"
#include "db_open_ro.h"
#include "files.h"
#include "schema_sql.h"
#include "store.h"

/* How long a write waits for another run's transaction (two runs may share one db). */
enum { DB_BUSY_MS = 60000 };

struct db_store {
    sqlite3 *h;
    sqlite3_stmt *ins_sample;
    char *path;
};

sqlite3 *db_sqlite(db_store *db) { return db->h; }
const char *db_path(db_store *db) { return db->path; }

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
    return db_fail_cause(db->h, db->path, "cannot switch it to WAL", err); /* the -wal, -shm files: say why */
}

/* The steps from each schema version to the next, for dbs written by an older memleak-run (the new tables were
 * already made by the schema's CREATE TABLE IF NOT EXISTS; only columns of existing tables need adding). */
static const char *const migrations[] = {
    /* 1 -> 2: descriptors and followed mappings per sample (issue 9). */
    "ALTER TABLE samples ADD COLUMN fds INTEGER; ALTER TABLE samples ADD COLUMN mapped_bytes INTEGER; "
    "ALTER TABLE samples ADD COLUMN mappings INTEGER; ALTER TABLE samples ADD COLUMN alloc_bytes INTEGER; "
    "ALTER TABLE samples ADD COLUMN alloc_held INTEGER; "
    "INSERT INTO schema_version(version) VALUES (2);",
    /* 2 -> 3: a cell may end 'hung' (issue 14): widen_cell_status runs first. */
    "INSERT INTO schema_version(version) VALUES (3);",
    /* 3 -> 4: memory requested within a step, touched or not (issue 12): add_columns runs first. */
    "INSERT INTO schema_version(version) VALUES (4);",
    /* 4 -> 5: run_owners, one live process per run (issue 25), a new table made by the schema; and a cell may end
     * 'inconclusive' (issue 23, iterations: auto): widen_cell_status runs first. */
    "INSERT INTO schema_version(version) VALUES (5);",
    /* 5 -> 6: the heap shim's own resident bytes per sample, which the anon series leaves out: add_columns first. */
    "INSERT INTO schema_version(version) VALUES (6);",
};

/* The columns a step from version `from` adds (3 -> 4, 5 -> 6), each only where missing: a table an older db never
 * had was just made by the schema. */
static int add_columns(db_store *db, int from, mlk_error *err)
{
    static const struct {
        int from;
        const char *table, *column;
    } cols[] = {{3, "samples", "mapped_peak_bytes"}, {3, "step_stats", "heap_peak_bytes"},
                {3, "step_stats", "mapped_peak_bytes"}, {5, "samples", "shim_bytes"}};
    int rc = MLK_OK;
    for (size_t i = 0; i < sizeof cols / sizeof *cols && !rc; i++) {
        if (cols[i].from != from)
            continue;
        sqlite3_stmt *st = NULL;
        bool have = false;
        if (sqlite3_prepare_v2(db->h, "SELECT 1 FROM pragma_table_info(?1) WHERE name = ?2", -1, &st, NULL) !=
            SQLITE_OK)
            return db_fail_sql(db, err, "reading a table's columns");
        sqlite3_bind_text(st, 1, cols[i].table, -1, SQLITE_STATIC);
        sqlite3_bind_text(st, 2, cols[i].column, -1, SQLITE_STATIC);
        have = sqlite3_step(st) == SQLITE_ROW;
        sqlite3_finalize(st);
        char sql[160];
        snprintf(sql, sizeof sql, "ALTER TABLE %s ADD COLUMN %s INTEGER", cols[i].table, cols[i].column);
        if (!have)
            rc = db_exec(db, sql, err);
    }
    return rc;
}
_Static_assert(sizeof migrations / sizeof *migrations == DB_SCHEMA_VERSION - 1, "one migration per version step");

/* cells.status may take one more value: 'hung' (2 -> 3), 'inconclusive' (4 -> 5). SQLite cannot alter a CHECK
 * constraint, and widening one changes no stored row, so the table's text in sqlite_schema is edited in place (from
 * becomes to, where word is not there yet), with the schema cookie bumped, under one savepoint: SQLite's documented
 * procedure for such changes (lang_altertable.html, "Making Other Kinds Of Table Schema Changes"). */
static int widen_cell_status(db_store *db, const char *from, const char *to, const char *word, mlk_error *err)
{
    sqlite3_stmt *st = NULL;
    int rc = db_exec(db, "SAVEPOINT widen_cell_status", err); /* db_open may already hold a transaction */
    if (rc)
        return rc;
    int cookie = -1;
    if (sqlite3_prepare_v2(db->h, "PRAGMA schema_version", -1, &st, NULL) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW)
        cookie = sqlite3_column_int(st, 0);
    sqlite3_finalize(st);
    char sql[64];
    snprintf(sql, sizeof sql, "PRAGMA schema_version=%d", cookie + 1);
    if (cookie < 0)
        rc = db_fail_sql(db, err, "reading PRAGMA schema_version");
    if (!rc)
        rc = db_exec(db, "PRAGMA writable_schema=ON", err);
    if (!rc && (sqlite3_prepare_v2(db->h, "UPDATE sqlite_schema SET sql = replace(sql, ?1, ?2) WHERE type = 'table' "
                                          "AND name = 'cells' AND instr(sql, ?3) = 0", -1, &st, NULL) != SQLITE_OK ||
                sqlite3_bind_text(st, 1, from, -1, SQLITE_STATIC) || sqlite3_bind_text(st, 2, to, -1, SQLITE_STATIC) ||
                sqlite3_bind_text(st, 3, word, -1, SQLITE_STATIC) || sqlite3_step(st) != SQLITE_DONE))
        rc = db_fail_sql(db, err, "widening cells.status");
    sqlite3_finalize(st);
    st = NULL;
    if (!rc)
        rc = db_exec(db, sql, err);
    mlk_error ignore = {0};
    db_exec(db, "PRAGMA writable_schema=OFF", rc ? &ignore : err);
    if (!rc && sqlite3_prepare_v2(db->h, "SELECT instr(sql, ?1) FROM sqlite_schema WHERE name = 'cells'", -1, &st,
                                  NULL) == SQLITE_OK) {
        sqlite3_bind_text(st, 1, word, -1, SQLITE_STATIC);
        if (sqlite3_step(st) != SQLITE_ROW || sqlite3_column_int(st, 0) == 0)
            rc = mlk_fail(err, MLK_E_DB, "%s: cells.status: its CHECK constraint is not the one this memleak-run "
                                         "knows, so %s cannot be added", db->path, word);
        sqlite3_finalize(st);
    }
    if (rc) {
        db_exec(db, "ROLLBACK TO widen_cell_status; RELEASE widen_cell_status", NULL);
        return rc;
    }
    return db_exec(db, "RELEASE widen_cell_status", err);
}

static int migrate(db_store *db, int from, mlk_error *err)
{
    for (int v = from; v < DB_SCHEMA_VERSION; v++) {
        if ((v == 2 && widen_cell_status(db, "'timeout', 'oom'", "'timeout', 'hung', 'oom'", "'hung'", err)) ||
            ((v == 3 || v == 5) && add_columns(db, v, err)) ||
            (v == 4 && widen_cell_status(db, "'oom', 'error'", "'oom', 'error', 'inconclusive'", "'inconclusive'", err)))
            return mlk_fail_prefix(err, "migrating the schema from version %d: ", v);
        int rc = db_exec(db, migrations[v - 1], err);
        if (rc)
            return mlk_fail_prefix(err, "migrating the schema from version %d: ", v);
    }
    return MLK_OK;
}

static int check_version(db_store *db, mlk_error *err)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(db->h, "SELECT max(version) FROM schema_version", -1, &st, NULL) != SQLITE_OK)
        return db_fail_sql(db, err, "reading schema_version");
    int rc = MLK_OK;
    if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_type(st, 0) != SQLITE_NULL) {
        int v = sqlite3_column_int(st, 0);
        sqlite3_finalize(st);
        if (v > DB_SCHEMA_VERSION)
            return mlk_fail(err, MLK_E_DB, "%s: schema version %d is newer than this memleak-run (%d)", db->path, v,
                            DB_SCHEMA_VERSION);
        return v < DB_SCHEMA_VERSION ? migrate(db, v, err) : MLK_OK;
    }
    sqlite3_finalize(st);
    if (sqlite3_prepare_v2(db->h, "INSERT INTO schema_version(version) VALUES (?1)", -1, &st, NULL) != SQLITE_OK)
        return db_fail_sql(db, err, "writing schema_version");
    sqlite3_bind_int(st, 1, DB_SCHEMA_VERSION);
    rc = sqlite3_step(st) == SQLITE_DONE ? MLK_OK : db_fail_sql(db, err, "writing schema_version");
    sqlite3_finalize(st);
    return rc;
}

/* Before anything is written (WAL, schema): a db that holds tables is memleak's, else it is left as it is. */
static int check_ours(db_store *db, mlk_error *err)
{
    sqlite3_stmt *st = NULL;
    int n = -1;
    if (sqlite3_prepare_v2(db->h, "SELECT count(*) FROM sqlite_schema WHERE type = 'table'", -1, &st, NULL) ==
            SQLITE_OK && sqlite3_step(st) == SQLITE_ROW)
        n = sqlite3_column_int(st, 0);
    sqlite3_finalize(st);
    if (n < 0)
        return db_fail_cause(db->h, db->path, "cannot open it", err);
    return n ? db_check_memleak(db->h, db->path, err) : MLK_OK;
}

/* A name SQLite would not keep as a file ("" is a temporary db, ":memory:" lives in memory): results written
 * there vanish at exit, so the name is refused before anything is run or created. */
int db_check_name(const char *path, mlk_error *err)
{
    if (!path || !path[0] || !strcmp(path, ":memory:") || !strncmp(path, "file:", 5))
        return mlk_fail(err, MLK_E_USAGE, "--db '%s': not a file name (SQLite would keep nothing of it after the "
                                          "run): give a path such as results.db", path ? path : "");
    return MLK_OK;
}

static int open_rw(const char *path, bool create, db_store **out, mlk_error *err)
{
    int rc = db_check_name(path, err);
    if (rc)
        return rc;
    db_store *db = calloc(1, sizeof *db);
    if (!db || !(db->path = strdup(path))) {
        free(db);
        return mlk_fail(err, MLK_E_NOMEM, "db: out of memory");
    }
    if (!create && access(path, F_OK) != 0) { /* before SQLite, which would create it */
        rc = mlk_fail(err, MLK_E_NOTFOUND, "%s: no such db (%s); nothing was created", path, strerror(errno));
        goto fail;
    }
    /* SQLite would block on a FIFO, fail on a folder with "disk I/O error", and make a link's missing target */
    if ((rc = mlk_check_regular(path, "db", create, err)))
        goto fail;
    if (sqlite3_open_v2(path, &db->h, SQLITE_OPEN_READWRITE | (create ? SQLITE_OPEN_CREATE : 0), NULL) !=
        SQLITE_OK) {
        rc = db_fail_cause(db->h, path, "cannot open it", err);
        goto fail;
    }
    sqlite3_busy_timeout(db->h, DB_BUSY_MS);
    if ((rc = check_ours(db, err)))
        goto fail;
    if ((rc = enter_wal(db, err)) || (rc = db_exec(db, "PRAGMA synchronous=NORMAL", err)) ||
        (rc = db_exec(db, "PRAGMA foreign_keys=ON", err)) ||
        (rc = db_exec(db, "BEGIN IMMEDIATE", err)))
        goto fail;
    if ((rc = db_exec(db, (const char *)mlk_schema_sql, err)) || (rc = check_version(db, err))) {
        db_exec(db, "ROLLBACK", NULL);
        goto fail;
    }
    if ((rc = db_exec(db, "COMMIT", err)))
        goto fail;
    if (sqlite3_prepare_v2(db->h,
                           "INSERT INTO samples(cell_id, seq, phase, iteration, step, wall_ns, cpu_ns, minflt, "
                           "majflt, vm_rss_kib, vm_hwm_kib, vm_size_kib, vm_peak_kib, rss_anon_kib, rss_file_kib, "
                           "rss_shmem_kib, threads, heap_live_bytes, heap_peak_bytes, heap_allocs, heap_frees, fds, "
                           "mapped_bytes, mappings, alloc_bytes, alloc_held, mapped_peak_bytes, shim_bytes) "
                           "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                           -1, &db->ins_sample, NULL) != SQLITE_OK) {
        rc = db_fail_sql(db, err, "preparing the sample insert");
        goto fail;
    }
    *out = db;
    return MLK_OK;
fail:
    db_close(db);
    return rc;
}

int db_open(const char *path, db_store **out, mlk_error *err) { return open_rw(path, true, out, err); }

int db_open_existing(const char *path, db_store **out, mlk_error *err) { return open_rw(path, false, out, err); }

int db_open_readonly(const char *path, db_store **out, mlk_error *err)
{
    db_store *db = calloc(1, sizeof *db);
    if (!db || !(db->path = strdup(path))) {
        free(db);
        return mlk_fail(err, MLK_E_NOMEM, "db: out of memory");
    }
    /* No schema, no WAL switch, no insert statement: nothing here may write, not even to an older db. */
    int rc = mlk_check_regular(path, "db", false, err);
    char *uri = rc ? NULL : db_ro_uri(path);
    if (!rc && (!uri || sqlite3_open_v2(uri, &db->h, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI, NULL) != SQLITE_OK))
        rc = uri ? db_fail_sql(db, err, "cannot open") : mlk_fail(err, MLK_E_NOMEM, "db: out of memory");
    free(uri);
    if (!rc)
        sqlite3_busy_timeout(db->h, DB_BUSY_MS);
    if (!rc && (rc = db_exec(db, "PRAGMA query_only = 1", err)) == MLK_OK) {
        *out = db;
        return MLK_OK;
    }
    db_close(db);
    return rc;
}

int db_check_usable(const char *path, mlk_error *err)
{
    int rc = db_check_name(path, err);
    if (rc)
        return rc;
    if (access(path, F_OK) != 0) { /* made by the run: its folder must take a new file */
        const char *slash = strrchr(path, '/');
        char dir[4096];
        snprintf(dir, sizeof dir, "%.*s", slash ? (int)(slash == path ? 1 : slash - path) : 1, slash ? path : ".");
        if (access(dir, W_OK | X_OK) != 0)
            return mlk_fail(err, MLK_E_USAGE, "--db %s: cannot be created: folder %s: %s", path, dir, strerror(errno));
        return MLK_OK;
    }
    if (access(path, R_OK | W_OK) != 0)
        return mlk_fail(err, MLK_E_USAGE, "--db %s: cannot be written: %s", path, strerror(errno));
    db_store *db = NULL;
    if ((rc = db_open_readonly(path, &db, err)))
        return rc;
    sqlite3_stmt *st = NULL;
    int v = -1;
    /* An empty file is a new db; a foreign one fails here ("file is not a database"), a newer schema below. */
    int prc = sqlite3_prepare_v2(db->h, "SELECT count(*) FROM sqlite_schema", -1, &st, NULL);
    if (prc == SQLITE_OK)
        prc = sqlite3_step(st);
    if (prc == SQLITE_ROW && sqlite3_column_int(st, 0) > 0) {
        sqlite3_finalize(st);
        st = NULL;
        if (sqlite3_prepare_v2(db->h, "SELECT max(version) FROM schema_version", -1, &st, NULL) == SQLITE_OK &&
            sqlite3_step(st) == SQLITE_ROW)
            v = sqlite3_column_int(st, 0);
        else
            rc = mlk_fail(err, MLK_E_USAGE, "--db %s: a SQLite db, but not memleak's (no schema_version)", path);
    } else if (prc != SQLITE_ROW) {
        rc = mlk_fail(err, MLK_E_USAGE, "--db %s: not a SQLite db: %s", path, sqlite3_errmsg(db->h));
    }
    sqlite3_finalize(st);
    if (!rc && v > DB_SCHEMA_VERSION)
        rc = mlk_fail(err, MLK_E_USAGE, "--db %s: schema version %d is newer than this memleak-run (%d)", path, v,
                      DB_SCHEMA_VERSION);
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

/* Prepare, bind through the callback, step once, finalize. */
static int run_stmt(db_store *db, const char *sql, void (*bind)(sqlite3_stmt *, const void *), const void *arg,
                    mlk_error *err)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(db->h, sql, -1, &st, NULL) != SQLITE_OK)
        return db_fail_sql(db, err, sql);
    bind(st, arg);
    int rc = sqlite3_step(st) == SQLITE_DONE ? MLK_OK : db_fail_sql(db, err, sql);
    sqlite3_finalize(st);
    return rc;
}

static void bind_run(sqlite3_stmt *st, const void *v)
{
    const db_run_meta *m = v;
    const char *f[] = {m->uuid, m->scenario_name, m->scenario_path, m->scenario_text, m->commit_sha, m->branch,
                       m->host, m->cpu, m->kernel, m->glibc, m->tool_version, m->argv};
    for (int i = 0; i < 12; i++)
        db_bind_text(st, i + 1, f[i]);
}

static void bind_uuid(sqlite3_stmt *st, const void *v) { db_bind_text(st, 1, v); }

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
        return db_fail_sql(db, err, "reading the run back");
    bind_uuid(st, m->uuid);
    rc = sqlite3_step(st) == SQLITE_ROW ? MLK_OK : db_fail_sql(db, err, "reading the run back");
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
    db_bind_text(st, 1, a->s);
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
        db_bind_text(st, i + 3, f[i]);
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

static void bind_id(sqlite3_stmt *st, const void *v) { sqlite3_bind_int64(st, 1, *(const int64_t *)v); }

int db_cell_start(db_store *db, int64_t cell_id, mlk_error *err)
{
    /* Everything an interrupted attempt may have left hangs off the cell by cell_id. */
    static const char *const sql[] = {
        "DELETE FROM samples WHERE cell_id = ?1",         "DELETE FROM metrics WHERE cell_id = ?1",
        "DELETE FROM step_stats WHERE cell_id = ?1",      "DELETE FROM leaks WHERE cell_id = ?1",
        "DELETE FROM heap_peaks WHERE cell_id = ?1",      "DELETE FROM heap_peak_sites WHERE cell_id = ?1",
        "DELETE FROM tool_frames WHERE cell_id = ?1",     "DELETE FROM series_results WHERE cell_id = ?1",
        "UPDATE cells SET status = 'running', started_at = strftime('%Y-%m-%dT%H:%M:%fZ','now') WHERE id = ?1"};
    int rc = db_exec(db, "BEGIN IMMEDIATE", err);
    for (size_t i = 0; !rc && i < sizeof sql / sizeof *sql; i++)
        rc = run_stmt(db, sql[i], bind_id, &cell_id, err);
    if (!rc)
        rc = db_exec(db, "COMMIT", err);
    if (rc)
        db_exec(db, "ROLLBACK", NULL);
    return rc;
}

int db_run_reopen(db_store *db, int64_t run_id, mlk_error *err)
{
    return run_stmt(db, "UPDATE runs SET status = 'running' WHERE id = ?1", bind_id, &run_id, err);
}

typedef struct {
    int64_t id;
    const char *active, *lib;
    bool heap;
} alloc_arg;

static void bind_alloc(sqlite3_stmt *st, const void *v)
{
    const alloc_arg *a = v;
    db_bind_text(st, 1, a->active);
    db_bind_text(st, 2, a->lib);
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
    db_bind_text(st, 1, r->status);
    db_bind_opt_int(st, 2, r->signal, r->signal >= 0);
    db_bind_opt_int(st, 3, r->exit_code, r->exit_code >= 0);
    db_bind_text(st, 4, r->metric);
    db_bind_real(st, 5, r->slope);
    db_bind_real(st, 6, r->late_slope);
    db_bind_real(st, 7, r->mk_p);
    db_bind_real(st, 8, r->growth);
    db_bind_text(st, 9, r->detail);
    db_bind_text(st, 10, r->error);
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
    db_bind_text(st, 3, mlk_phase_name(s->phase));
    db_bind_opt_int(st, 4, s->iteration, s->iteration >= 0);
    db_bind_text(st, 5, mlk_any_step_name(s->step));
    const int64_t v[] = {s->wall_ns,      s->cpu_ns,      s->minflt,       s->majflt,        m->vm_rss_kib,
                         m->vm_hwm_kib,   m->vm_size_kib, m->vm_peak_kib,  m->rss_anon_kib,  m->rss_file_kib,
                         m->rss_shmem_kib, m->threads};
    for (int i = 0; i < 12; i++)
        db_bind_opt_int(st, 6 + i, v[i], true);
    const int64_t h[] = {m->heap.live_bytes, m->heap.peak_bytes, m->heap.n_allocs, m->heap.n_frees};
    for (int i = 0; i < 4; i++)
        db_bind_opt_int(st, 18 + i, h[i], m->have_heap);
    db_bind_opt_int(st, 22, m->fds, m->fds >= 0);
    db_bind_opt_int(st, 23, m->heap.mapped_bytes, m->have_heap && m->heap.mapped_bytes >= 0);
    db_bind_opt_int(st, 24, m->heap.n_mappings, m->have_heap && m->heap.n_mappings >= 0);
    db_bind_opt_int(st, 25, m->alloc_bytes, m->alloc_bytes >= 0);
    db_bind_opt_int(st, 26, m->alloc_held, m->alloc_held >= 0);
    db_bind_opt_int(st, 27, m->heap.mapped_peak_bytes, m->have_heap && m->heap.mapped_peak_bytes >= 0);
    db_bind_opt_int(st, 28, m->heap.shim_bytes, m->have_heap && m->heap.shim_bytes >= 0);
    return sqlite3_step(st) == SQLITE_DONE ? MLK_OK : MLK_E_DB;
}

int db_samples_insert(db_store *db, int64_t cell_id, const mlk_sample *s, int n, int64_t *seq, mlk_error *err)
{
    if (n <= 0)
        return MLK_OK;
    int rc = db_exec(db, "BEGIN IMMEDIATE", err);
    if (rc)
        return rc;
    for (int i = 0; i < n; i++)
        if (insert_sample(db, cell_id, *seq + i, &s[i])) {
            rc = db_fail_sql(db, err, "inserting a sample");
            db_exec(db, "ROLLBACK", NULL);
            return rc;
        }
    if ((rc = db_exec(db, "COMMIT", err))) {
        db_exec(db, "ROLLBACK", NULL);
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
        return db_fail_sql(db, err, "preparing a metric insert");
    sqlite3_bind_int64(st, 1, cell_id);
    sqlite3_bind_int64(st, 2, seq);
    sqlite3_bind_text(st, 3, name, -1, SQLITE_TRANSIENT);
    sqlite3_bind_int64(st, 4, value);
    int rc = sqlite3_step(st) == SQLITE_DONE ? MLK_OK : db_fail_sql(db, err, "inserting a metric");
    sqlite3_finalize(st);
    return rc;
}

int db_step_stats_insert(db_store *db, int64_t cell_id, const db_step_stats *s, int n, mlk_error *err)
{
    sqlite3_stmt *st;
    const char *sql = "INSERT OR REPLACE INTO step_stats(cell_id, step, n, peak_kib, rss_growth_per_iter, "
                      "heap_growth_per_iter, heap_delta_median, rss_delta_median, wall_ms_median, wall_ms_p90, "
                      "cpu_ms_median, final_rss_kib, final_anon_kib, final_heap_bytes, heap_peak_bytes, "
                      "mapped_peak_bytes) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)";
    if (sqlite3_prepare_v2(db->h, sql, -1, &st, NULL) != SQLITE_OK)
        return db_fail_sql(db, err, "preparing step_stats insert");
    int rc = db_exec(db, "BEGIN IMMEDIATE", err);
    for (int i = 0; !rc && i < n; i++) {
        sqlite3_reset(st);
        sqlite3_bind_int64(st, 1, cell_id);
        db_bind_text(st, 2, mlk_any_step_name(s[i].step));
        sqlite3_bind_int(st, 3, s[i].n);
        db_bind_opt_int(st, 4, s[i].peak_kib, true);
        db_bind_real(st, 5, s[i].rss_growth);
        db_bind_real(st, 6, s[i].heap_growth);
        db_bind_real(st, 7, s[i].heap_delta_median);
        db_bind_real(st, 8, s[i].rss_delta_median);
        db_bind_real(st, 9, s[i].wall_ms_median);
        db_bind_real(st, 10, s[i].wall_ms_p90);
        db_bind_real(st, 11, s[i].cpu_ms_median);
        db_bind_opt_int(st, 12, s[i].final_rss_kib, true);
        db_bind_opt_int(st, 13, s[i].final_anon_kib, true);
        db_bind_opt_int(st, 14, s[i].final_heap_bytes, true);
        db_bind_opt_int(st, 15, s[i].heap_peak_bytes, true);
        db_bind_opt_int(st, 16, s[i].mapped_peak_bytes, true);
        if (sqlite3_step(st) != SQLITE_DONE)
            rc = db_fail_sql(db, err, "inserting step_stats");
    }
    sqlite3_finalize(st);
    if (!rc)
        rc = db_exec(db, "COMMIT", err);
    if (rc)
        db_exec(db, "ROLLBACK", NULL);
    return rc;
}

/* One static statement per column db_series serves: a column name cannot be a bound parameter. */
#define SERIES_SQL(c)                                                                                              \
    "SELECT " c " FROM samples WHERE cell_id = ?1 AND step = ?2 AND phase = 'measure' AND " c " IS NOT NULL "    \
    "ORDER BY seq"
static const struct {
    const char *column, *sql;
} series_sql[] = {
#define SERIES_(c) {c, SERIES_SQL(c)},
    SERIES_("heap_live_bytes") SERIES_("rss_anon_kib") SERIES_("vm_rss_kib") SERIES_("vm_hwm_kib") SERIES_("wall_ns")
    SERIES_("cpu_ns") SERIES_("heap_peak_bytes") SERIES_("threads") SERIES_("rss_file_kib")
#undef SERIES_
};

int db_series(db_store *db, int64_t cell_id, const char *step, const char *column, double **out, int *n,
              mlk_error *err)
{
    const char *sql = NULL;
    for (size_t i = 0; i < sizeof series_sql / sizeof *series_sql && !sql; i++)
        if (!strcmp(series_sql[i].column, column))
            sql = series_sql[i].sql;
    if (!sql)
        return mlk_fail(err, MLK_E_INTERNAL, "db_series: unknown column %s", column);
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(db->h, sql, -1, &st, NULL) != SQLITE_OK)
        return db_fail_sql(db, err, "preparing a series query");
    sqlite3_bind_int64(st, 1, cell_id);
    db_bind_text(st, 2, step);
    int cap = 0, len = 0, rc = MLK_OK;
    double *v = NULL;
    while (sqlite3_step(st) == SQLITE_ROW) {
        double *p = db_grow(v, len, &cap, sizeof *v);
        if (!p) {
            rc = mlk_fail(err, MLK_E_NOMEM, "db_series: out of memory");
            break;
        }
        v = p;
        v[len++] = sqlite3_column_double(st, 0);
    }
    sqlite3_finalize(st);
    if (!rc && !v && !(v = malloc(sizeof *v)))
        rc = mlk_fail(err, MLK_E_NOMEM, "db_series: out of memory");
    if (rc) {
        free(v);
        return rc;
    }
    *out = v;
    *n = len;
    return MLK_OK;
}

int db_run_load(db_store *db, int64_t run_id, char **scenario_text, char **scenario_path, mlk_error *err)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(db->h, "SELECT scenario_text, scenario_path FROM runs WHERE id = ?", -1, &st, NULL) !=
        SQLITE_OK)
        return db_fail_sql(db, err, "reading a run");
    sqlite3_bind_int64(st, 1, run_id);
    int rc = MLK_OK;
    if (sqlite3_step(st) == SQLITE_ROW) {
        bool oom = false;
        char *text = db_col_dup(st, 0, &oom), *spath = db_col_dup(st, 1, &oom);
        if (oom) {
            free(text);
            free(spath);
            rc = mlk_fail(err, MLK_E_NOMEM, "%s: out of memory", db->path);
        } else {
            *scenario_text = text;
            *scenario_path = spath;
        }
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
        return db_fail_sql(db, err, "reading a cell");
    sqlite3_bind_int64(st, 1, run_id);
    sqlite3_bind_int(st, 2, idx);
    *cell_id = 0;
    *status = NULL;
    if (sqlite3_step(st) == SQLITE_ROW) {
        *cell_id = sqlite3_column_int64(st, 0);
        *status = db_col_dup(st, 1, NULL);
    }
    sqlite3_finalize(st);
    return MLK_OK;
}

int db_cell_identity(db_store *db, int64_t run_id, int idx, char **model, char **model_hash, mlk_error *err)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(db->h, "SELECT model, model_hash FROM cells WHERE run_id = ? AND idx = ?", -1, &st,
                           NULL) != SQLITE_OK)
        return db_fail_sql(db, err, "reading a cell");
    sqlite3_bind_int64(st, 1, run_id);
    sqlite3_bind_int(st, 2, idx);
    *model = *model_hash = NULL;
    int rc = MLK_OK;
    if (sqlite3_step(st) == SQLITE_ROW) {
        bool oom = false;
        *model = db_col_dup(st, 0, &oom);
        *model_hash = db_col_dup(st, 1, &oom);
        if (oom) {
            free(*model);
            free(*model_hash);
            *model = *model_hash = NULL;
            rc = mlk_fail(err, MLK_E_NOMEM, "%s: out of memory", db->path);
        }
    }
    sqlite3_finalize(st);
    return rc;
}

int db_integrity_ok(db_store *db, bool *ok, mlk_error *err)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(db->h, "PRAGMA integrity_check", -1, &st, NULL) != SQLITE_OK)
        return db_fail_sql(db, err, "integrity_check");
    *ok = sqlite3_step(st) == SQLITE_ROW && !strcmp((const char *)sqlite3_column_text(st, 0), "ok");
    sqlite3_finalize(st);
    return MLK_OK;
}
