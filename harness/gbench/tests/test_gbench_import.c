/* test_gbench_import.c: Google Benchmark JSON reports stored as runs: figures equal the report's (units converted),
 * medians from aggregates or repetitions, counters mapped or left NULL, NaN tolerated, errors and complexity-only
 * families, idempotence per (content, commit), refusals that store nothing, and the stored scenario parses.
 * It must never leave its db behind. */
#include <math.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "db_compare.h"
#include "gbench_import.h"
#include "mlk_check.h"
#include "runs.h"

/* A 1.7.1 report, written by hand: 3 repetitions of BM_Alloc/64 with aggregates (a NaN cv, as 1.7.1 writes for a
 * counter that is always 0), BM_Once (one repetition, us), BM_Broken (an error), BM_Cplx (complexity aggregates
 * only), BM_Sec/1 (no aggregates, 2 repetitions, s). */
static const char *const REPORT =
    "{\n  \"context\": {\"date\": \"2024-03-01T10:00:00+01:00\", \"host_name\": \"box\", \"executable\":"
    " \"./build/bench_things\", \"num_cpus\": 8, \"mhz_per_cpu\": 3000, \"library_build_type\": \"release\","
    " \"caches\": [{\"type\": \"Data\", \"level\": 1, \"size\": 32768}], \"odd key\\n\": \"x#y: z\"},\n"
    "  \"benchmarks\": [\n"
    "    {\"name\": \"BM_Alloc/64\", \"run_name\": \"BM_Alloc/64\", \"run_type\": \"iteration\", \"repetitions\": 3,"
    " \"repetition_index\": 0, \"threads\": 1, \"iterations\": 1000, \"real_time\": 1.2e+02, \"cpu_time\": 110,"
    " \"time_unit\": \"ns\", \"peak_rss_kib\": 5000, \"heap_live_bytes\": 4096, \"allocs_per_iter\": 0},\n"
    "    {\"name\": \"BM_Alloc/64\", \"run_name\": \"BM_Alloc/64\", \"run_type\": \"iteration\", \"repetitions\": 3,"
    " \"repetition_index\": 1, \"threads\": 1, \"iterations\": 1000, \"real_time\": 100.5, \"cpu_time\": 100,"
    " \"time_unit\": \"ns\", \"peak_rss_kib\": 5004, \"heap_live_bytes\": 4096, \"allocs_per_iter\": 0},\n"
    "    {\"name\": \"BM_Alloc/64\", \"run_name\": \"BM_Alloc/64\", \"run_type\": \"iteration\", \"repetitions\": 3,"
    " \"repetition_index\": 2, \"threads\": 1, \"iterations\": 1000, \"real_time\": 130, \"cpu_time\": 125,"
    " \"time_unit\": \"ns\", \"peak_rss_kib\": 5008, \"heap_live_bytes\": 4096, \"allocs_per_iter\": 0},\n"
    "    {\"name\": \"BM_Alloc/64_mean\", \"run_name\": \"BM_Alloc/64\", \"run_type\": \"aggregate\", \"repetitions\": 3,"
    " \"threads\": 1, \"aggregate_name\": \"mean\", \"aggregate_unit\": \"time\", \"iterations\": 3, \"real_time\":"
    " 116.83333, \"cpu_time\": 111.66667, \"time_unit\": \"ns\", \"peak_rss_kib\": 5004, \"heap_live_bytes\": 4096,"
    " \"allocs_per_iter\": 0},\n"
    "    {\"name\": \"BM_Alloc/64_median\", \"run_name\": \"BM_Alloc/64\", \"run_type\": \"aggregate\", \"repetitions\":"
    " 3, \"threads\": 1, \"aggregate_name\": \"median\", \"aggregate_unit\": \"time\", \"iterations\": 3, \"real_time\":"
    " 120, \"cpu_time\": 110, \"time_unit\": \"ns\", \"peak_rss_kib\": 5004, \"heap_live_bytes\": 4096,"
    " \"allocs_per_iter\": 0},\n"
    "    {\"name\": \"BM_Alloc/64_cv\", \"run_name\": \"BM_Alloc/64\", \"run_type\": \"aggregate\", \"repetitions\": 3,"
    " \"threads\": 1, \"aggregate_name\": \"cv\", \"aggregate_unit\": \"percentage\", \"iterations\": 3,"
    " \"real_time\": 0.12, \"cpu_time\": 0.1, \"time_unit\": \"ns\", \"peak_rss_kib\": 0.0008, \"heap_live_bytes\": 0,"
    " \"allocs_per_iter\": NaN},\n"
    "    {\"name\": \"BM_Once\", \"run_name\": \"BM_Once\", \"run_type\": \"iteration\", \"repetitions\": 1,"
    " \"repetition_index\": 0, \"threads\": 1, \"iterations\": 20, \"real_time\": 2.5e+03, \"cpu_time\": -Infinity,"
    " \"time_unit\": \"us\", \"label\": \"one\"},\n"
    "    {\"name\": \"BM_Broken\", \"run_name\": \"BM_Broken\", \"run_type\": \"iteration\", \"repetitions\": 1,"
    " \"repetition_index\": 0, \"threads\": 1, \"error_occurred\": true, \"error_message\": \"no device\"},\n"
    "    {\"name\": \"BM_Cplx_BigO\", \"run_name\": \"BM_Cplx\", \"run_type\": \"aggregate\", \"repetitions\": 1,"
    " \"threads\": 1, \"aggregate_name\": \"BigO\", \"cpu_coefficient\": 1.5, \"real_coefficient\": 1.6,"
    " \"big_o\": \"N\", \"time_unit\": \"ns\"},\n"
    "    {\"name\": \"BM_Sec/1\", \"run_name\": \"BM_Sec/1\", \"run_type\": \"iteration\", \"repetitions\": 2,"
    " \"repetition_index\": 0, \"threads\": 1, \"iterations\": 1, \"real_time\": 2, \"cpu_time\": 1,"
    " \"time_unit\": \"s\"},\n"
    "    {\"name\": \"BM_Sec/1\", \"run_name\": \"BM_Sec/1\", \"run_type\": \"iteration\", \"repetitions\": 2,"
    " \"repetition_index\": 1, \"threads\": 1, \"iterations\": 1, \"real_time\": 3, \"cpu_time\": 2,"
    " \"time_unit\": \"s\"}\n"
    "  ]\n}\n";

static sqlite3 *H;

/* One number from the db (NaN for NULL or no row). */
static double num(const char *sql)
{
    sqlite3_stmt *st;
    double v = NAN;
    if (sqlite3_prepare_v2(H, sql, -1, &st, NULL) != SQLITE_OK) {
        fprintf(stderr, "sql: %s: %s\n", sql, sqlite3_errmsg(H));
        return v;
    }
    if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_type(st, 0) != SQLITE_NULL)
        v = sqlite3_column_double(st, 0);
    sqlite3_finalize(st);
    return v;
}

static bool text_is(const char *sql, const char *want)
{
    sqlite3_stmt *st;
    bool ok = false;
    if (sqlite3_prepare_v2(H, sql, -1, &st, NULL) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW) {
        const unsigned char *t = sqlite3_column_text(st, 0);
        ok = t && !strcmp((const char *)t, want);
        if (!ok)
            fprintf(stderr, "  %s: got '%s', expected '%s'\n", sql, t ? (const char *)t : "(null)", want);
    }
    sqlite3_finalize(st);
    return ok;
}

static bool near(double a, double b) { return fabs(a - b) <= 1e-12 * fmax(1, fabs(b)); }

#define CELL(name) "(SELECT id FROM cells WHERE json_extract(axes, '$.benchmark') = '" name "' AND run_id = 1)"
#define STAT(col, name) "SELECT " col " FROM step_stats WHERE step = 'iteration' AND cell_id = " CELL(name)

static void check_figures(db_store *db)
{
    CHECK(num("SELECT count(*) FROM runs") == 1);
    CHECK(text_is("SELECT scenario_name FROM runs", "bench_things"));
    CHECK(text_is("SELECT started_at FROM runs", "2024-03-01T09:00:00.000Z")); /* context.date, in UTC */
    CHECK(text_is("SELECT host || ';' || cpu || ';' || status FROM runs", "box;8 x 3000 MHz;done"));
    CHECK(num("SELECT count(*) FROM cells") == 4); /* BM_Cplx has no time per iteration: skipped */
    CHECK(text_is("SELECT group_concat(json_extract(axes, '$.benchmark'), ',') FROM (SELECT axes FROM cells "
                  "ORDER BY idx)", "BM_Alloc/64,BM_Once,BM_Broken,BM_Sec/1"));
    CHECK(text_is("SELECT config_key FROM cells WHERE idx = 0", "benchmark=BM_Alloc/64;engine=gbench;binary=bench_things"));
    /* BM_Alloc/64: the median aggregate, in ms; p90 over the repetitions; mapped counters. */
    CHECK(near(num(STAT("wall_ms_median", "BM_Alloc/64")), 120e-6));
    CHECK(near(num(STAT("cpu_ms_median", "BM_Alloc/64")), 110e-6));
    CHECK(near(num(STAT("wall_ms_p90", "BM_Alloc/64")), (120 + (130 - 120) * 0.8) * 1e-6));
    CHECK(num(STAT("n", "BM_Alloc/64")) == 3);
    CHECK(num(STAT("peak_kib", "BM_Alloc/64")) == 5004);
    CHECK(num(STAT("final_heap_bytes", "BM_Alloc/64")) == 4096);
    CHECK(isnan(num(STAT("final_rss_kib", "BM_Alloc/64")))); /* not in the report: NULL, not 0 */
    CHECK(isnan(num(STAT("heap_growth_per_iter", "BM_Alloc/64"))));
    CHECK(num("SELECT heap_shim FROM cells WHERE idx = 0") == 1);
    CHECK(text_is("SELECT group_concat(wall_ns, ',') FROM (SELECT wall_ns FROM samples WHERE cell_id = "
                  CELL("BM_Alloc/64") " ORDER BY seq)", "120,100.5,130"));
    CHECK(text_is("SELECT group_concat(cpu_ns, ',') FROM samples WHERE cell_id = " CELL("BM_Alloc/64"),
                  "110,100,125"));
    CHECK(text_is("SELECT group_concat(vm_hwm_kib || '/' || heap_live_bytes, ',') FROM samples WHERE cell_id = "
                  CELL("BM_Alloc/64"), "5000/4096,5004/4096,5008/4096"));
    CHECK(num("SELECT json_extract(detail, '$.counters.allocs_per_iter') FROM cells WHERE idx = 0") == 0);
    CHECK(num("SELECT json_extract(detail, '$.iterations') FROM cells WHERE idx = 0") == 1000);
    /* BM_Once: one repetition (us); its -Infinity cpu_time is not measured. */
    CHECK(near(num(STAT("wall_ms_median", "BM_Once")), 2.5));
    CHECK(near(num(STAT("wall_ms_p90", "BM_Once")), 2.5));
    CHECK(isnan(num(STAT("cpu_ms_median", "BM_Once"))));
    CHECK(isnan(num(STAT("peak_kib", "BM_Once"))));
    CHECK(isnan(num("SELECT heap_shim FROM cells WHERE idx = 1")));
    CHECK(text_is("SELECT json_extract(detail, '$.label') FROM cells WHERE idx = 1", "one"));
    /* BM_Broken: an error cell, no figures. */
    CHECK(text_is("SELECT status || ': ' || error FROM cells WHERE idx = 2", "error: no device"));
    CHECK(num("SELECT count(*) FROM step_stats WHERE cell_id = " CELL("BM_Broken")) == 0);
    /* BM_Sec/1: no aggregates: the median of the repetitions, seconds to ms. */
    CHECK(near(num(STAT("wall_ms_median", "BM_Sec/1")), 2500));
    CHECK(near(num(STAT("cpu_ms_median", "BM_Sec/1")), 1500));
    CHECK(text_is("SELECT group_concat(wall_ns, ',') FROM samples WHERE cell_id = " CELL("BM_Sec/1"),
                  "2000000000,3000000000"));
    /* The commands' view: figures of the run, latency samples, and the stored scenario parses. */
    mlk_error err = {0};
    mlk_step_figures *f = NULL;
    int n = 0;
    CHECK_OK(mlk_runs_figures(db, 1, &f, &n, &err), &err);
    CHECK(n == 3 && f && !strcmp(f[0].step, "iteration") && near(f[0].v[MLK_M_WALL], 120e-6));
    double *lat = NULL;
    int nl = 0;
    CHECK_OK(mlk_runs_latency(db, f ? f[0].cell_id : 0, "iteration", &lat, &nl, &err), &err);
    CHECK(nl == 3 && lat && near(lat[0], 120e-6) && near(lat[1], 100.5e-6));
    free(lat);
    free(f);
    mlk_scenario *s = NULL;
    CHECK_OK(db_run_scenario(db, 1, &s, &err), &err);
    CHECK(s && !strcmp(s->engine, "gbench") && s->description && strstr(s->description, "host_name: \"box\""));
    CHECK(s && s->latency_abs_ms < 1e-5);
    mlk_scenario_free(s);
}

static void check_idempotence(db_store *db)
{
    mlk_error err = {0};
    mlk_gbench_import_result r;
    mlk_gbench_import_opts o = {.commit = "c1", .branch = "main"};
    CHECK_OK(mlk_gbench_import_text(db, REPORT, strlen(REPORT), "r.json", &o, &r, &err), &err);
    CHECK(r.existed && r.run_id == 1);
    CHECK(num("SELECT count(*) FROM runs") == 1 && num("SELECT count(*) FROM cells") == 4);
    o.commit = "c2";
    CHECK_OK(mlk_gbench_import_text(db, REPORT, strlen(REPORT), "r.json", &o, &r, &err), &err);
    CHECK(!r.existed && r.run_id == 2 && r.n_cells == 4 && r.n_failed == 1 && r.n_skipped == 1);
    CHECK(num("SELECT count(*) FROM runs") == 2);
}

/* Each refused whole, with a message naming the problem, and nothing stored. */
static void check_refusals(db_store *db)
{
    static const struct {
        const char *text, *msg;
    } bad[] = {
        {"{\"benchmarks\": [", "not valid JSON"},
        {"{\"context\": {}}", "no \"benchmarks\" array"},
        {"[1, 2]", "no \"benchmarks\" array"},
        {"{\"benchmarks\": [{\"run_type\": \"iteration\", \"real_time\": 1}]}", "benchmarks[0] has no name"},
        {"{\"benchmarks\": [{\"name\": \"a\", \"real_time\": 1}, {\"name\": \"b\", \"time_unit\": \"min\"}]}",
         "unknown time_unit 'min'"},
        {"", "not valid JSON"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        mlk_error err = {0};
        mlk_gbench_import_result r;
        int rc = mlk_gbench_import_text(db, bad[i].text, strlen(bad[i].text), "bad.json", NULL, &r, &err);
        CHECK(rc == MLK_E_PARSE);
        CHECK(strstr(err.msg, bad[i].msg) != NULL && strstr(err.msg, "bad.json") != NULL);
        if (!strstr(err.msg, bad[i].msg))
            fprintf(stderr, "  case %zu: %s\n", i, err.msg);
    }
    CHECK(num("SELECT count(*) FROM runs") == 2);
    mlk_error err = {0};
    mlk_gbench_import_result r;
    CHECK(mlk_gbench_import_file(db, "/nonexistent/x.json", NULL, &r, &err) == MLK_E_IO);
    CHECK(strstr(err.msg, "/nonexistent/x.json") != NULL);
}

/* Reports before run_name existed: aggregates join their benchmark by name; no context: the file's name. */
static void check_old_format(db_store *db)
{
    const char *text = "{\"benchmarks\": [{\"name\": \"BM_x\", \"iterations\": 5, \"real_time\": 10, \"cpu_time\": 9,"
                       " \"time_unit\": \"ms\"}, {\"name\": \"BM_x\", \"iterations\": 5, \"real_time\": 30,"
                       " \"cpu_time\": 29, \"time_unit\": \"ms\"}, {\"name\": \"BM_x_median\", \"run_type\":"
                       " \"aggregate\", \"aggregate_name\": \"median\", \"iterations\": 2, \"real_time\": 20,"
                       " \"cpu_time\": 19, \"time_unit\": \"ms\"}]}";
    mlk_error err = {0};
    mlk_gbench_import_result r;
    CHECK_OK(mlk_gbench_import_text(db, text, strlen(text), "dir/old run.json", NULL, &r, &err), &err);
    CHECK(r.n_cells == 1 && r.n_samples == 2 && !strcmp(r.name, "old_run"));
    char sql[256];
    snprintf(sql, sizeof sql, "SELECT wall_ms_median FROM step_stats s JOIN cells c ON c.id = s.cell_id "
                              "WHERE c.run_id = %lld", (long long)r.run_id);
    CHECK(num(sql) == 20);
    snprintf(sql, sizeof sql, "SELECT commit_sha IS NULL AND branch IS NULL FROM runs WHERE id = %lld",
             (long long)r.run_id);
    CHECK(num(sql) == 1);
}

int main(void)
{
    char dir[] = "/tmp/mlk-gbimport-XXXXXX", path[64];
    if (!mkdtemp(dir))
        return 1;
    snprintf(path, sizeof path, "%s/t.db", dir);
    mlk_error err = {0};
    db_store *db = NULL;
    CHECK_OK(db_open(path, &db, &err), &err);
    if (!db)
        return mlk_check_summary();
    H = db_handle(db);
    mlk_gbench_import_result r;
    mlk_gbench_import_opts o = {.commit = "c1", .branch = "main", .argv_text = "test"};
    CHECK_OK(mlk_gbench_import_text(db, REPORT, strlen(REPORT), "r.json", &o, &r, &err), &err);
    CHECK(!r.existed && r.run_id == 1 && r.n_cells == 4 && r.n_samples == 6);
    check_figures(db);
    check_idempotence(db);
    check_refusals(db);
    check_old_format(db);
    db_close(db);
    char wal[80];
    unlink(path);
    snprintf(wal, sizeof wal, "%s-wal", path);
    unlink(wal);
    snprintf(wal, sizeof wal, "%s-shm", path);
    unlink(wal);
    rmdir(dir);
    return mlk_check_summary();
}
