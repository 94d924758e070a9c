/* test_store.c: the SQLite store: schema and version, runs and cells, samples in batches with NULL for what was
 * not measured, series queries, step stats, lookups for resume, integrity, the JSON reader (db_json.h), config keys
 * and change points (db_history.h). It must never leave files behind. */
#include <math.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "db_stops.h"
#include "db_col.h"
#include "db_history.h"
#include "db_json.h"
#include "mlk_check.h"
#include "store.h"

static char path[64];

static int64_t scalar(db_store *db, const char *sql)
{
    sqlite3_stmt *st;
    int64_t v = -1;
    if (sqlite3_prepare_v2(db_sqlite(db), sql, -1, &st, NULL) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW)
        v = sqlite3_column_type(st, 0) == SQLITE_NULL ? -2 : sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    return v;
}

/* db_json.h: what json_each gives, typed; NULL for null, never 0; bad JSON refused. */
static void check_json(db_store *db)
{
    mlk_error err = {0};
    const char *j = "{\"a\": true, \"b\": null, \"c\": 1.5, \"d\": \"x\\\"y\", \"e\": [1, {\"f\": 2}], \"a\": 7}";
    db_json_item *v = NULL;
    int n = 0;
    CHECK_OK(db_json_items(db, j, "$", &v, &n, &err), &err);
    CHECK(n == 6 && v);
    const db_json_item *a = db_json_find(v, n, "a"), *b = db_json_find(v, n, "b"), *c = db_json_find(v, n, "c"),
                       *d = db_json_find(v, n, "d"), *e = db_json_find(v, n, "e");
    CHECK(a && a->type == DB_JSON_TRUE && a->num == 1); /* the first of duplicate keys */
    CHECK(b && b->type == DB_JSON_NULL && !b->text && isnan(b->num) && b->json && !strcmp(b->json, "null"));
    CHECK(c && c->type == DB_JSON_REAL && c->num == 1.5);
    CHECK(d && d->type == DB_JSON_TEXT && !strcmp(d->text, "x\"y") && !strcmp(d->json, "\"x\\\"y\"") && isnan(d->num));
    CHECK(e && e->type == DB_JSON_ARRAY && !e->json && e->text && !strcmp(e->text, "[1,{\"f\":2}]"));
    db_json_items_free(v, n);
    CHECK_OK(db_json_items(db, j, "$.e", &v, &n, &err), &err);
    CHECK(n == 2 && !strcmp(v[0].key, "0") && v[1].type == DB_JSON_OBJECT);
    db_json_items_free(v, n);
    CHECK_OK(db_json_items(db, j, "$.zz", &v, &n, &err), &err); /* nothing there: no items */
    CHECK(n == 0);
    db_json_items_free(v, n);
    db_json_type t = DB_JSON_NULL;
    CHECK_OK(db_json_type_at(db, j, "$.zz", &t, &err), &err);
    CHECK(t == DB_JSON_ABSENT);
    CHECK_OK(db_json_type_at(db, j, "$.e", &t, &err), &err);
    CHECK(t == DB_JSON_ARRAY);
    CHECK(db_json_type_at(db, "{\"a\": ", "$", &t, &err) == MLK_E_PARSE);
    CHECK(db_json_items(db, "[1, 2", "$", &v, &n, &err) == MLK_E_PARSE);
    CHECK(db_json_type_at(db, "", "$", &t, &err) == MLK_E_PARSE);
}

/* db_history.h: config keys by part, and a change point stored once. */
static void check_history(db_store *db)
{
    mlk_error err = {0};
    char keys[3][DB_KEY_LEN];
    int n = -1;
    CHECK_OK(db_configs_matching(db, "ref", keys, 3, &n, &err), &err);
    CHECK(n == 1 && !strcmp(keys[0], "engine=ref"));
    CHECK_OK(db_configs_matching(db, "nothing like it", keys, 3, &n, &err), &err);
    CHECK(n == 0);
    db_change_point cp = {"engine=ref", "iteration", "peak_kib", "u-1", NULL, 1000, 2000, NAN};
    bool is_new = false;
    CHECK_OK(db_change_point_store(db, &cp, &is_new, &err), &err);
    CHECK(is_new);
    CHECK_OK(db_change_point_store(db, &cp, &is_new, &err), &err);
    CHECK(!is_new); /* known: left as it is */
    CHECK(scalar(db, "SELECT count(*) FROM change_points") == 1);
    CHECK(scalar(db, "SELECT t_stat FROM change_points") == -2); /* not finite: NULL */
}

static void fill(mlk_sample *s, int it, int step, bool heap)
{
    memset(s, 0, sizeof *s);
    s->phase = it < 2 ? MLK_PHASE_WARMUP : MLK_PHASE_MEASURE;
    s->iteration = it;
    s->step = step;
    s->m.vm_rss_kib = 1000 + it;
    s->m.vm_hwm_kib = 1100 + it;
    s->m.rss_anon_kib = 500 + it;
    s->m.threads = 1;
    s->m.have_heap = heap;
    s->m.heap.live_bytes = 4096 * it;
    s->m.heap.shim_bytes = it == 3 ? -1 : 8192 * (it + 1); /* the shim's own, not said in one sample */
}

/* Runs that create one db at the same moment all open it: SQLite does not pass the switch to WAL through the
 * busy handler, so the store must wait for it itself. Children released together by closing one pipe. */
static void concurrent_create(void)
{
    enum { ROUNDS = 20, KIDS = 4 };
    char p[80], side[96];
    snprintf(p, sizeof p, "/tmp/mlk-test-store-conc-%d.db", (int)getpid());
    int failed_opens = 0;
    for (int r = 0; r < ROUNDS; r++) {
        int gate[2];
        if (pipe(gate) != 0)
            break;
        pid_t kids[KIDS];
        for (int k = 0; k < KIDS; k++) {
            kids[k] = fork();
            if (kids[k] == 0) {
                close(gate[1]);
                char c;
                while (read(gate[0], &c, 1) > 0) {
                }
                db_store *d = NULL;
                mlk_error e = {0};
                int rc = db_open(p, &d, &e);
                if (rc)
                    fprintf(stderr, "child: %s\n", e.msg);
                db_close(d);
                _exit(rc ? 1 : 0);
            }
        }
        close(gate[0]);
        close(gate[1]);
        for (int k = 0; k < KIDS; k++) {
            int st = 0;
            if (kids[k] < 0 || waitpid(kids[k], &st, 0) != kids[k] || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
                failed_opens++;
        }
        unlink(p);
        snprintf(side, sizeof side, "%s-wal", p);
        unlink(side);
        snprintf(side, sizeof side, "%s-shm", p);
        unlink(side);
    }
    CHECK(failed_opens == 0);
}

/* A db written by schema 1 (no descriptor and mapping columns) gains them on open, keeps its rows, and says the
 * current version. */
static void migrate_v1(void)
{
    char p1[64];
    snprintf(p1, sizeof p1, "/tmp/mlk-test-store-v1-%d.db", (int)getpid());
    unlink(p1);
    sqlite3 *h = NULL;
    CHECK(sqlite3_open(p1, &h) == SQLITE_OK);
    CHECK(sqlite3_exec(h,
                       "CREATE TABLE schema_version(version INTEGER NOT NULL); INSERT INTO schema_version VALUES (1);"
                       "CREATE TABLE samples(cell_id INTEGER NOT NULL, seq INTEGER NOT NULL, phase TEXT NOT NULL, "
                       "iteration INTEGER, step TEXT NOT NULL, wall_ns INTEGER, cpu_ns INTEGER, minflt INTEGER, "
                       "majflt INTEGER, vm_rss_kib INTEGER, vm_hwm_kib INTEGER, vm_size_kib INTEGER, "
                       "vm_peak_kib INTEGER, rss_anon_kib INTEGER, rss_file_kib INTEGER, rss_shmem_kib INTEGER, "
                       "threads INTEGER, heap_live_bytes INTEGER, heap_peak_bytes INTEGER, heap_allocs INTEGER, "
                       "heap_frees INTEGER, PRIMARY KEY (cell_id, seq)) WITHOUT ROWID;"
                       "INSERT INTO samples(cell_id, seq, phase, step, vm_rss_kib) VALUES (7, 0, 'measure', 'infer', 42);",
                       NULL, NULL, NULL) == SQLITE_OK);
    sqlite3_close(h);
    mlk_error err = {0};
    db_store *db = NULL;
    CHECK_OK(db_open(p1, &db, &err), &err);
    CHECK(db && scalar(db, "SELECT max(version) FROM schema_version") == DB_SCHEMA_VERSION);
    CHECK(db && scalar(db, "SELECT count(*) FROM pragma_table_info('samples') WHERE name IN "
                           "('fds', 'mapped_bytes', 'mappings', 'alloc_bytes', 'alloc_held')") == 5);
    CHECK(db && scalar(db, "SELECT vm_rss_kib FROM samples WHERE cell_id = 7") == 42);
    CHECK(db && scalar(db, "SELECT count(*) FROM samples WHERE fds IS NULL") == 1); /* not measured: NULL */
    db_close(db);
    /* Opening again migrates nothing twice. */
    CHECK_OK(db_open(p1, &db, &err), &err);
    CHECK(db && scalar(db, "SELECT count(*) FROM schema_version WHERE version = 2") == 1);
    db_close(db);
    unlink(p1);
}

/* A db of schema 2 (cells.status without 'hung', no requested-memory columns), made by taking a current one back:
 * opening it widens the CHECK, adds the columns, keeps its rows, and a cell can then end hung. */
static void migrate_v2(void)
{
    char p2[64];
    snprintf(p2, sizeof p2, "/tmp/mlk-test-store-v2-%d.db", (int)getpid());
    unlink(p2);
    mlk_error err = {0};
    db_store *db = NULL;
    CHECK_OK(db_open(p2, &db, &err), &err);
    db_close(db);
    sqlite3 *h = NULL;
    CHECK(sqlite3_open(p2, &h) == SQLITE_OK);
    int cookie = 0;
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(h, "PRAGMA schema_version", -1, &st, NULL) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW)
        cookie = sqlite3_column_int(st, 0);
    sqlite3_finalize(st);
    char bump[64];
    snprintf(bump, sizeof bump, "PRAGMA schema_version=%d;", cookie + 2);
    CHECK(sqlite3_exec(h,
                       "ALTER TABLE samples DROP COLUMN mapped_peak_bytes; ALTER TABLE step_stats DROP COLUMN "
                       "heap_peak_bytes; ALTER TABLE step_stats DROP COLUMN mapped_peak_bytes; "
                       "PRAGMA writable_schema=ON; UPDATE sqlite_schema SET sql = replace(sql, '''hung'', ', '') "
                       "WHERE name = 'cells'; ",
                       NULL, NULL, NULL) == SQLITE_OK);
    CHECK(sqlite3_exec(h, bump, NULL, NULL, NULL) == SQLITE_OK);
    CHECK(sqlite3_exec(h, "PRAGMA writable_schema=OFF; DELETE FROM schema_version; INSERT INTO schema_version VALUES (2); "
                          "INSERT INTO runs(uuid, scenario_name, scenario_text, status, started_at) "
                          "VALUES ('u', 's', 't', 'done', '2026-11-25');",
                       NULL, NULL, NULL) == SQLITE_OK);
    sqlite3_close(h);
    CHECK_OK(db_open(p2, &db, &err), &err);
    CHECK(db && scalar(db, "SELECT max(version) FROM schema_version") == DB_SCHEMA_VERSION);
    CHECK(db && scalar(db, "SELECT instr(sql, '''hung''') > 0 FROM sqlite_schema WHERE name = 'cells'") == 1);
    CHECK(db && scalar(db, "SELECT count(*) FROM pragma_table_info('step_stats') WHERE name IN ('heap_peak_bytes', "
                           "'mapped_peak_bytes')") == 2);
    CHECK(db && scalar(db, "SELECT count(*) FROM runs") == 1);
    db_cell_def d = {0, "ref", "m.onnx", "abc", "{}", "engine=ref", "glibc"};
    int64_t cell = 0;
    CHECK_OK(db_cell_insert(db, 1, &d, &cell, &err), &err);
    db_cell_result res = {.status = "hung", .signal = -1, .exit_code = -1, .slope = NAN, .late_slope = NAN,
                          .mk_p = NAN, .growth = NAN, .detail = "hung: no sample for 2 s (stall_s)"};
    CHECK_OK(db_cell_finish(db, cell, &res, &err), &err);
    bool ok = false;
    CHECK_OK(db_integrity_ok(db, &ok, &err), &err);
    CHECK(ok);
    db_close(db);
    unlink(p2);
}

/* A db of schema 4 (cells.status without 'inconclusive', no samples.shim_bytes): opening it widens the CHECK, adds the
 * column, keeps its rows, a cell can then end inconclusive, and the new tables of issue 23 are there. */
static void migrate_v4(void)
{
    char p4[64];
    snprintf(p4, sizeof p4, "/tmp/mlk-test-store-v4-%d.db", (int)getpid());
    unlink(p4);
    mlk_error err = {0};
    db_store *db = NULL;
    CHECK_OK(db_open(p4, &db, &err), &err);
    db_close(db);
    sqlite3 *h = NULL;
    CHECK(sqlite3_open(p4, &h) == SQLITE_OK);
    int cookie = 0;
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(h, "PRAGMA schema_version", -1, &st, NULL) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW)
        cookie = sqlite3_column_int(st, 0);
    sqlite3_finalize(st);
    char bump[64];
    snprintf(bump, sizeof bump, "PRAGMA schema_version=%d;", cookie + 2);
    CHECK(sqlite3_exec(h, "PRAGMA writable_schema=ON; UPDATE sqlite_schema SET sql = replace(sql, ', ''inconclusive''', "
                          "'') WHERE name = 'cells'; DROP TABLE cell_stops; ALTER TABLE samples DROP COLUMN "
                          "shim_bytes;", NULL, NULL, NULL) == SQLITE_OK);
    CHECK(sqlite3_exec(h, bump, NULL, NULL, NULL) == SQLITE_OK);
    CHECK(sqlite3_exec(h, "PRAGMA writable_schema=OFF; DELETE FROM schema_version; INSERT INTO schema_version VALUES (4); "
                          "INSERT INTO runs(uuid, scenario_name, scenario_text, status, started_at) "
                          "VALUES ('u', 's', 't', 'done', '2026-11-25');",
                       NULL, NULL, NULL) == SQLITE_OK);
    sqlite3_close(h);
    CHECK_OK(db_open(p4, &db, &err), &err);
    CHECK(db && scalar(db, "SELECT max(version) FROM schema_version") == DB_SCHEMA_VERSION);
    CHECK(db && scalar(db, "SELECT instr(sql, '''inconclusive''') > 0 FROM sqlite_schema WHERE name = 'cells'") == 1);
    CHECK(db && scalar(db, "SELECT count(*) FROM pragma_table_info('samples') WHERE name = 'shim_bytes'") == 1);
    CHECK(db && scalar(db, "SELECT count(*) FROM runs") == 1);
    db_cell_def d = {0, "ref", "m.onnx", "abc", "{}", "engine=ref", "glibc"};
    int64_t cell = 0;
    CHECK_OK(db_cell_insert(db, 1, &d, &cell, &err), &err);
    db_cell_result res = {.status = "inconclusive", .signal = -1, .exit_code = -1, .slope = NAN, .late_slope = NAN,
                          .mk_p = NAN, .growth = NAN, .detail = "inconclusive: anon undecided at 1000 iterations (max)"};
    CHECK_OK(db_cell_finish(db, cell, &res, &err), &err);
    CHECK_OK(db_cell_stop_store(db, cell, 1000, "max", 12, "anon", &err), &err);
    CHECK(scalar(db, "SELECT iterations FROM cell_stops WHERE undecided = 'anon' AND reason = 'max'") == 1000);
    bool ok = false;
    CHECK_OK(db_integrity_ok(db, &ok, &err), &err);
    CHECK(ok);
    db_close(db);
    unlink(p4);
}

int main(void)
{
    migrate_v1();
    migrate_v2();
    migrate_v4();
    concurrent_create();
    snprintf(path, sizeof path, "/tmp/mlk-test-store-%d.db", (int)getpid());
    mlk_error err = {0};
    db_store *db = NULL;
    CHECK_OK(db_open(path, &db, &err), &err);
    CHECK(scalar(db, "SELECT max(version) FROM schema_version") == DB_SCHEMA_VERSION);
    db_run_meta m = {.uuid = "u1", .scenario_name = "t", .scenario_text = "name: t\n", .tool_version = "0"};
    int64_t run = 0, cell = 0, cell2 = 0;
    CHECK_OK(db_run_begin(db, &m, &run, &err), &err);
    int64_t again = 0;
    CHECK_OK(db_run_begin(db, &m, &again, &err), &err); /* the same uuid joins the run (shards) */
    CHECK(again == run && scalar(db, "SELECT count(*) FROM runs") == 1);
    db_cell_def d = {0, "ref", "m.onnx", "abc", "{}", "engine=ref", "glibc"};
    CHECK_OK(db_cell_insert(db, run, &d, &cell, &err), &err);
    d.idx = 1;
    CHECK_OK(db_cell_insert(db, run, &d, &cell2, &err), &err);
    CHECK(db_cell_insert(db, run, &d, &cell2, &err) == MLK_E_DB); /* (run, idx) is unique */
    CHECK_OK(db_cell_start(db, cell, &err), &err);
    mlk_sample s[12];
    for (int i = 0; i < 12; i++)
        fill(&s[i], i, MLK_STEP_ITERATION, i != 5);
    int64_t seq = 0;
    CHECK_OK(db_samples_insert(db, cell, s, 7, &seq, &err), &err);
    CHECK_OK(db_samples_insert(db, cell, s + 7, 5, &seq, &err), &err);
    CHECK(seq == 12);
    CHECK(scalar(db, "SELECT count(*) FROM samples") == 12);
    CHECK(scalar(db, "SELECT heap_live_bytes FROM samples WHERE iteration = 5") == -2); /* not measured: NULL */
    CHECK(scalar(db, "SELECT count(*) FROM samples WHERE iteration IS NULL") == 0);
    CHECK(scalar(db, "SELECT shim_bytes FROM samples WHERE iteration = 4") == 8192 * 5);
    CHECK(scalar(db, "SELECT shim_bytes FROM samples WHERE iteration = 3") == -2); /* not said: NULL */
    CHECK(scalar(db, "SELECT shim_bytes FROM samples WHERE iteration = 5") == -2); /* no shim: NULL */
    double *v = NULL;
    int n = 0;
    CHECK_OK(db_series(db, cell, "iteration", "heap_live_bytes", &v, &n, &err), &err);
    CHECK(n == 9 && v && v[0] == 4096 * 2 && v[8] == 4096 * 11); /* measured only, NULL skipped */
    free(v);
    CHECK(db_series(db, cell, "iteration", "1; DROP TABLE x", &v, &n, &err) != 0);
    db_step_stats st = {.step = MLK_STEP_INFER, .n = 10, .peak_kib = 1200, .rss_growth = 1.5, .heap_growth = NAN,
                        .heap_delta_median = 4096, .rss_delta_median = NAN, .wall_ms_median = 0.5,
                        .wall_ms_p90 = 0.9, .cpu_ms_median = 0.4, .final_rss_kib = 1234, .final_anon_kib = -1,
                        .final_heap_bytes = 99};
    CHECK_OK(db_step_stats_insert(db, cell, &st, 1, &err), &err);
    CHECK(scalar(db, "SELECT heap_growth_per_iter IS NULL FROM step_stats") == 1);
    CHECK(scalar(db, "SELECT final_rss_kib FROM step_stats") == 1234);
    CHECK(scalar(db, "SELECT final_anon_kib FROM step_stats") == -2); /* NULL */
    db_cell_result r = {.status = "leak", .signal = -1, .exit_code = 0, .metric = "heap_live_bytes", .slope = 4096,
                        .late_slope = 4096, .mk_p = 1e-9, .growth = 1e5, .detail = "why"};
    CHECK_OK(db_cell_finish(db, cell, &r, &err), &err);
    char *status = NULL;
    int64_t found = 0;
    CHECK_OK(db_cell_lookup(db, run, 0, &found, &status, &err), &err);
    CHECK(found == cell && status && !strcmp(status, "leak"));
    free(status);
    CHECK_OK(db_cell_lookup(db, run, 1, &found, &status, &err), &err);
    CHECK(found == cell2 && status && !strcmp(status, "pending"));
    free(status);
    CHECK_OK(db_cell_start(db, cell, &err), &err); /* a restart clears what the attempt left */
    CHECK(scalar(db, "SELECT count(*) FROM samples") == 0);
    CHECK(scalar(db, "SELECT count(*) FROM step_stats") == 0);
    char *text = NULL, *sp = NULL;
    CHECK_OK(db_run_load(db, run, &text, &sp, &err), &err);
    CHECK(text && !strcmp(text, "name: t\n") && !sp);
    free(text);
    CHECK(db_run_load(db, run + 100, &text, &sp, &err) == MLK_E_NOTFOUND);
    check_json(db);
    check_history(db);
    CHECK_OK(db_run_finish(db, run, "done", &err), &err);
    CHECK_OK(db_run_reopen(db, run, &err), &err); /* --resume */
    CHECK(scalar(db, "SELECT status = 'running' FROM runs") == 1);
    CHECK_OK(db_run_finish(db, run, "done", &err), &err);
    bool ok = false;
    CHECK_OK(db_integrity_ok(db, &ok, &err), &err);
    CHECK(ok);
    sqlite3_exec(db_sqlite(db), "UPDATE schema_version SET version = 99", NULL, NULL, NULL);
    db_close(db);
    db = NULL;
    CHECK(db_open(path, &db, &err) == MLK_E_PARSE); /* made by a newer memleak: the user's input, exit 2 */
    CHECK(strstr(err.msg, "newer") != NULL);
    db_close(db);
    CHECK(db_open("/nonexistent-dir/x.db", &db, &err) == MLK_E_NOTFOUND && strstr(err.msg, "/nonexistent-dir/x.db"));
    char wal[80], shm[80];
    snprintf(wal, sizeof wal, "%s-wal", path);
    snprintf(shm, sizeof shm, "%s-shm", path);
    unlink(path);
    unlink(wal);
    unlink(shm);
    return check_summary();
}
