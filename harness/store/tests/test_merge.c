/* test_merge.c: merging memleak dbs: shards of one run joined, idempotence, order independence, history tables
 * without duplicates, unfinished cells replaced, run statuses, inputs untouched, errors naming the file.
 * It must never leave files behind: everything lives in one mkdtemp folder removed at the end. */
#include <dirent.h>
#include <math.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "db_col.h"
#include "merge_db.h"
#include "mlk_check.h"
#include "sample.h"
#include "store.h"

static char dir[64];

static const char *at(const char *name)
{
    static char p[8][128];
    static int k;
    k = (k + 1) % 8;
    snprintf(p[k], sizeof p[k], "%s/%s", dir, name);
    return p[k];
}

/* Four cells (threads 1..4): the scenario the runs below claim, so the merge knows when a run is complete. */
static const char *scenario = "name: t\nengine: ref\nmodel: {generate: mlp}\n"
                              "pipeline: [compile_model, create_request, infer, release_request, release_compiled]\n"
                              "matrix:\n  threads: [1, 2, 3, 4]\n";

static void exec(db_store *db, const char *sql)
{
    char *msg = NULL;
    if (sqlite3_exec(db_sqlite(db), sql, NULL, NULL, &msg) != SQLITE_OK) {
        fprintf(stderr, "%s: %s\n", sql, msg);
        CHECK(0);
    }
    sqlite3_free(msg);
}

static void add_cell(db_store *db, int64_t run, int idx, int n_samples, bool finish, mlk_error *err)
{
    char key[32];
    snprintf(key, sizeof key, "engine=ref threads=%d", idx + 1);
    db_cell_def d = {idx, "ref", "m.onnx", "abc", "{}", key, "glibc"};
    int64_t cell = 0, seq = 0;
    CHECK_OK(db_cell_insert(db, run, &d, &cell, err), err);
    CHECK_OK(db_cell_start(db, cell, err), err);
    mlk_sample s[8];
    memset(s, 0, sizeof s);
    for (int i = 0; i < n_samples && i < 8; i++) {
        s[i].phase = MLK_PHASE_MEASURE;
        s[i].iteration = i;
        s[i].step = MLK_STEP_ITERATION;
        s[i].m.vm_rss_kib = 1000 * (idx + 1) + i;
    }
    CHECK_OK(db_samples_insert(db, cell, s, n_samples, &seq, err), err);
    char sql[160];
    snprintf(sql, sizeof sql, "INSERT INTO metrics(cell_id, seq, name, value) VALUES (%lld, 0, 'arena', %d)",
             (long long)cell, 100 + idx);
    exec(db, sql);
    if (!finish)
        return;
    db_step_stats st = {.step = MLK_STEP_INFER, .n = n_samples, .peak_kib = 1200 + idx, .rss_growth = 0,
                        .heap_growth = NAN, .heap_delta_median = 0, .rss_delta_median = 0, .wall_ms_median = 1,
                        .wall_ms_p90 = 2, .cpu_ms_median = 1, .final_rss_kib = 1000, .final_anon_kib = 500,
                        .final_heap_bytes = -1};
    CHECK_OK(db_step_stats_insert(db, cell, &st, 1, err), err);
    db_cell_result r = {.status = "pass", .signal = -1, .exit_code = 0, .slope = NAN, .late_slope = NAN,
                        .mk_p = NAN, .growth = NAN};
    CHECK_OK(db_cell_finish(db, cell, &r, err), err);
}

/* A shard db: run uuid with the cells idx % n == shard; the history rows every shard db of a nightly may hold. */
static void make_shard(const char *file, const char *uuid, const char *text, int shard, int n, const char *argv)
{
    mlk_error err = {0};
    db_store *db = NULL;
    CHECK_OK(db_open(at(file), &db, &err), &err);
    if (!db)
        return;
    db_run_meta m = {.uuid = uuid, .scenario_name = "t", .scenario_text = text, .host = argv, .argv = argv,
                     .tool_version = "0"};
    int64_t run = 0;
    CHECK_OK(db_run_begin(db, &m, &run, &err), &err);
    for (int i = 0; i < 4; i++)
        if (i % n == shard)
            add_cell(db, run, i, 5, true, &err);
    CHECK_OK(db_run_finish(db, run, "done", &err), &err);
    char sql[600];
    snprintf(sql, sizeof sql,
             "INSERT INTO baselines(run_uuid, branch, pinned_at) VALUES ('u0', 'main', '2024-01-01T00:00:00Z');"
             "INSERT INTO comparisons(run_id, baseline, created_at) VALUES (%lld, 'run u0', '2024-01-02T00:00:00Z');"
             "INSERT INTO findings(comparison_id, cell_id, config_key, step, metric, kind, current, baseline) "
             "SELECT (SELECT max(id) FROM comparisons), id, config_key, 'infer', 'peak_kib', 'regression', 2, 1 FROM cells;"
             "INSERT INTO change_points(config_key, step, metric, run_uuid, before, after, detected_at) VALUES "
             "('engine=ref threads=1', 'infer', 'peak_kib', '%s', 1, 2, '2024-01-03T00:00:00Z')",
             (long long)run, uuid);
    exec(db, sql);
    db_close(db);
}

/* Every row of every table by its natural key, ids left out: equal dumps mean equal content. */
static char *dump(const char *file)
{
    static const char *const q[] = {
        "SELECT uuid, scenario_name, commit_sha, host, argv, started_at, finished_at, status FROM runs ORDER BY uuid",
        "SELECT r.uuid, c.idx, c.status, c.config_key, c.finished_at FROM cells c JOIN runs r ON r.id = c.run_id "
        "ORDER BY 1, 2",
        "SELECT r.uuid, c.idx, s.seq, s.vm_rss_kib FROM samples s JOIN cells c ON c.id = s.cell_id JOIN runs r ON "
        "r.id = c.run_id ORDER BY 1, 2, 3",
        "SELECT r.uuid, c.idx, m.name, m.value FROM metrics m JOIN cells c ON c.id = m.cell_id JOIN runs r ON "
        "r.id = c.run_id ORDER BY 1, 2, 3",
        "SELECT r.uuid, c.idx, s.step, s.peak_kib FROM step_stats s JOIN cells c ON c.id = s.cell_id JOIN runs r ON "
        "r.id = c.run_id ORDER BY 1, 2, 3",
        "SELECT run_uuid, branch, pinned_at FROM baselines ORDER BY 1, 2, 3",
        "SELECT r.uuid, k.baseline, k.created_at FROM comparisons k JOIN runs r ON r.id = k.run_id ORDER BY 1, 2, 3",
        "SELECT r.uuid, k.created_at, cr.uuid, c.idx, f.metric, f.current FROM findings f JOIN comparisons k ON "
        "k.id = f.comparison_id JOIN runs r ON r.id = k.run_id JOIN cells c ON c.id = f.cell_id JOIN runs cr ON "
        "cr.id = c.run_id ORDER BY 1, 2, 3, 4",
        "SELECT config_key, step, metric, run_uuid, before, after FROM change_points ORDER BY 1, 2, 3, 4",
    };
    sqlite3 *h = NULL;
    char *out = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&out, &len);
    if (f && sqlite3_open_v2(at(file), &h, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK) {
        for (size_t i = 0; i < sizeof q / sizeof q[0]; i++) {
            sqlite3_stmt *st;
            if (sqlite3_prepare_v2(h, q[i], -1, &st, NULL) != SQLITE_OK) {
                fprintf(f, "error %s\n", sqlite3_errmsg(h));
                continue;
            }
            while (sqlite3_step(st) == SQLITE_ROW) {
                for (int c = 0; c < sqlite3_column_count(st); c++)
                    fprintf(f, "%s|", sqlite3_column_type(st, c) == SQLITE_NULL ? "NULL"
                                                                               : (const char *)sqlite3_column_text(st, c));
                fputc('\n', f);
            }
            sqlite3_finalize(st);
            fputs("--\n", f);
        }
    }
    sqlite3_close(h);
    if (f)
        fclose(f);
    return out;
}

static int64_t scalar(const char *file, const char *sql)
{
    sqlite3 *h = NULL;
    sqlite3_stmt *st = NULL;
    int64_t v = -1;
    if (sqlite3_open_v2(at(file), &h, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK &&
        sqlite3_prepare_v2(h, sql, -1, &st, NULL) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW)
        v = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    sqlite3_close(h);
    return v;
}

/* The first column of the first row, as text (malloc'd; "" when none). */
static char *text_of(const char *file, const char *sql)
{
    sqlite3 *h = NULL;
    sqlite3_stmt *st = NULL;
    char *v = NULL;
    if (sqlite3_open_v2(at(file), &h, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK &&
        sqlite3_prepare_v2(h, sql, -1, &st, NULL) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW &&
        sqlite3_column_text(st, 0))
        v = strdup((const char *)sqlite3_column_text(st, 0));
    sqlite3_finalize(st);
    sqlite3_close(h);
    return v ? v : strdup("");
}

static char *run_status(const char *file) { return text_of(file, "SELECT group_concat(status) FROM runs"); }

/* Merge the inputs into out in order; the sum of what was added. */
static mlk_merge_counts merge(const char *out, const char *const *in, int n)
{
    mlk_merge_counts sum, c;
    memset(&sum, 0, sizeof sum);
    mlk_error err = {0};
    db_store *db = NULL;
    CHECK_OK(db_open(at(out), &db, &err), &err);
    for (int i = 0; db && i < n; i++) {
        CHECK_OK(mlk_merge_check(at(in[i]), &err), &err);
        CHECK_OK(mlk_merge_db(db, at(in[i]), &c, &err), &err);
        int64_t *s = &sum.runs_new, *a = &c.runs_new;
        for (size_t k = 0; k < sizeof sum / sizeof sum.runs_new; k++)
            s[k] += a[k];
    }
    db_close(db);
    return sum;
}

static void test_status_rule(void)
{
    CHECK(!strcmp(mlk_merge_run_status(NULL, "done", 4, 0, 4), "done"));
    CHECK(!strcmp(mlk_merge_run_status(NULL, "done", 2, 0, 4), "running"));          /* a shard missing */
    CHECK(!strcmp(mlk_merge_run_status("done", "running", 4, 1, 4), "running"));      /* a cell still running */
    CHECK(!strcmp(mlk_merge_run_status("interrupted", "done", 3, 0, 4), "interrupted"));
    CHECK(!strcmp(mlk_merge_run_status("failed", "interrupted", 3, 1, 4), "failed"));
    CHECK(!strcmp(mlk_merge_run_status("failed", "done", 4, 0, 4), "done"));          /* every cell finished */
    CHECK(!strcmp(mlk_merge_run_status("done", "done", 4, 0, -1), "done"));           /* scenario unreadable */
    CHECK(!strcmp(mlk_merge_run_status("running", "done", 4, 0, -1), "running"));
}

/* The whole file (malloc'd), or NULL. */
static char *slurp(const char *path, size_t *len)
{
    char *buf = NULL;
    *len = 0;
    FILE *f = fopen(path, "rb"), *m = open_memstream(&buf, len);
    int ch;
    while (f && m && (ch = fgetc(f)) != EOF)
        fputc(ch, m);
    if (m)
        fclose(m);
    if (f)
        fclose(f);
    return buf;
}

static void test_shards(void)
{
    make_shard("a.db", "u1", scenario, 0, 2, "argv-b");
    make_shard("b.db", "u1", scenario, 1, 2, "argv-a");
    make_shard("single.db", "u1", scenario, 0, 1, "argv-c"); /* all four cells: for the byte check below */
    const char *ab[] = {"a.db", "b.db"}, *ba[] = {"b.db", "a.db"};
    size_t len0 = 0, len1 = 0;
    char *bytes0 = slurp(at("a.db"), &len0); /* to check that merging leaves the input as it was */
    mlk_merge_counts c = merge("o1.db", ab, 2);
    CHECK(c.runs_new == 1 && c.runs_joined == 1 && c.cells_new == 4 && c.cells_replaced == 0);
    CHECK(c.samples == 20 && c.metrics == 4 && c.step_stats == 4);
    CHECK(c.baselines == 1 && c.comparisons == 1 && c.findings == 4 && c.change_points == 1);
    CHECK(scalar("o1.db", "SELECT count(*) FROM runs") == 1);
    CHECK(scalar("o1.db", "SELECT count(DISTINCT idx) || count(*) FROM cells") == 44);
    CHECK(scalar("o1.db", "SELECT count(*) FROM findings f JOIN cells c ON c.id = f.cell_id") == 4);
    CHECK(scalar("o1.db", "SELECT argv = 'argv-a' AND host = 'argv-a' FROM runs") == 1); /* smallest wins */
    char *st = run_status("o1.db");
    CHECK(!strcmp(st, "done"));
    free(st);
    merge("o2.db", ba, 2);
    char *d1 = dump("o1.db"), *d2 = dump("o2.db");
    CHECK(d1 && d2 && !strcmp(d1, d2));
    c = merge("o1.db", ba, 2); /* again: nothing new */
    CHECK(c.runs_new == 0 && c.cells_new == 0 && c.cells_replaced == 0 && c.samples == 0 && c.metrics == 0 &&
          c.step_stats == 0 && c.baselines == 0 && c.comparisons == 0 && c.findings == 0 && c.change_points == 0);
    char *d3 = dump("o1.db");
    CHECK(d1 && d3 && !strcmp(d1, d3));
    free(d1);
    free(d2);
    free(d3);
    char *bytes1 = slurp(at("a.db"), &len1);
    CHECK(bytes0 && bytes1 && len0 > 0 && len0 == len1 && !memcmp(bytes0, bytes1, len0));
    free(bytes0);
    free(bytes1);
    CHECK(access(at("a.db-wal"), F_OK) != 0 && access(at("a.db-shm"), F_OK) != 0); /* no files left beside it */
    const char *a_only[] = {"a.db"};
    merge("half.db", a_only, 1);
    st = run_status("half.db");
    CHECK(!strcmp(st, "running")); /* two of four cells: not done, whatever the shard said */
    free(st);
}

static void test_replace(void)
{
    mlk_error err = {0};
    db_store *db = NULL;
    CHECK_OK(db_open(at("d.db"), &db, &err), &err);
    if (!db)
        return;
    db_run_meta m = {.uuid = "u1", .scenario_name = "t", .scenario_text = scenario, .argv = "zzz", .host = "zzz",
                     .tool_version = "0"};
    int64_t run = 0;
    CHECK_OK(db_run_begin(db, &m, &run, &err), &err);
    add_cell(db, run, 0, 2, false, &err); /* killed while running cell 0 */
    CHECK_OK(db_run_finish(db, run, "interrupted", &err), &err);
    db_close(db);
    const char *d[] = {"d.db"}, *a[] = {"a.db"}, *b[] = {"b.db"};
    merge("r.db", d, 1);
    char *st = run_status("r.db");
    CHECK(!strcmp(st, "interrupted"));
    free(st);
    mlk_merge_counts c = merge("r.db", a, 1);
    CHECK(c.cells_new == 1 && c.cells_replaced == 1 && c.samples == 10);
    CHECK(scalar("r.db", "SELECT count(*) FROM samples s JOIN cells c ON c.id = s.cell_id WHERE c.idx = 0") == 5);
    CHECK(scalar("r.db", "SELECT count(*) FROM metrics") == 2); /* the running copy's metric row went with it */
    c = merge("r.db", d, 1); /* the unfinished copy never replaces the finished one */
    CHECK(c.cells_replaced == 0 && c.samples == 0);
    merge("r.db", b, 1);
    st = run_status("r.db");
    CHECK(!strcmp(st, "done"));
    free(st);
    CHECK(scalar("r.db", "SELECT count(*) FROM cells WHERE status = 'pass'") == 4);
}

static void test_errors(void)
{
    mlk_error err = {0};
    FILE *f = fopen(at("text.db"), "w");
    if (f) {
        fputs("not a database, just some text that is long enough to fill a header................\n", f);
        fclose(f);
    }
    CHECK(mlk_merge_check(at("text.db"), &err) == MLK_E_PARSE);
    CHECK(strstr(err.msg, at("text.db")) && strstr(err.msg, "not a memleak db"));
    sqlite3 *h = NULL;
    sqlite3_open(at("other.db"), &h);
    sqlite3_exec(h, "CREATE TABLE t(x)", NULL, NULL, NULL);
    sqlite3_close(h);
    CHECK(mlk_merge_check(at("other.db"), &err) == MLK_E_PARSE);
    CHECK(strstr(err.msg, "other.db") && strstr(err.msg, "no schema_version"));
    CHECK(mlk_merge_check(at("missing.db"), &err) == MLK_E_NOTFOUND);
    CHECK(strstr(err.msg, "missing.db") != NULL);
    CHECK(mlk_merge_check(dir, &err) == MLK_E_PARSE && strstr(err.msg, "is a folder"));
    make_shard("new.db", "u9", scenario, 0, 1, "x");
    sqlite3_open(at("new.db"), &h);
    sqlite3_exec(h, "UPDATE schema_version SET version = 99", NULL, NULL, NULL);
    sqlite3_close(h);
    CHECK(mlk_merge_check(at("new.db"), &err) == MLK_E_PARSE);
    CHECK(strstr(err.msg, "new.db") && strstr(err.msg, "newer"));
    /* The same uuid for another scenario: refused whole, and the output stays usable. */
    make_shard("clash.db", "u1", "name: other\nengine: ref\nmodel: {generate: mlp}\npipeline: [compile_model]\n", 0,
               1, "x");
    char *before = dump("o1.db");
    db_store *db = NULL;
    CHECK_OK(db_open(at("o1.db"), &db, &err), &err);
    if (db) {
        CHECK(mlk_merge_db(db, at("clash.db"), NULL, &err) == MLK_E_PARSE);
        CHECK(strstr(err.msg, "clash.db") && strstr(err.msg, "run u1"));
        mlk_merge_counts c;
        CHECK_OK(mlk_merge_db(db, at("a.db"), &c, &err), &err); /* detached and rolled back: the next one works */
        db_close(db);
    }
    char *after = dump("o1.db");
    CHECK(before && after && !strcmp(before, after));
    free(before);
    free(after);
}

static void cleanup(void)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    while (d && (e = readdir(d)))
        if (e->d_name[0] != '.')
            unlink(at(e->d_name));
    if (d)
        closedir(d);
    rmdir(dir);
}

int main(void)
{
    snprintf(dir, sizeof dir, "%s", "/tmp/mlk-test-merge-XXXXXX");
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return 1;
    }
    mlk_merge_setup();
    test_status_rule();
    test_shards();
    test_replace();
    test_errors();
    cleanup();
    return check_summary();
}
