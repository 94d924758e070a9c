/* test_gbench_import.c: Google Benchmark JSON reports stored as runs: figures equal the report's (units converted),
 * medians from aggregates or repetitions, counters mapped or left NULL, NaN tolerated, errors and complexity-only
 * families, idempotence per (content, commit), refusals that store nothing, and the stored scenario parses.
 * It must never leave its db behind. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "db_compare.h"
#include "db_json.h"
#include "db_rows.h"
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

static db_store *DB;

static db_row_counts counts(void)
{
    db_row_counts c;
    memset(&c, -1, sizeof c);
    mlk_error err = {0};
    CHECK_OK(db_row_counts_get(DB, &c, &err), &err);
    return c;
}

static bool text_is(const char *what, const char *got, const char *want)
{
    bool ok = got && !strcmp(got, want);
    if (!ok)
        fprintf(stderr, "  %s: got '%s', expected '%s'\n", what, got ? got : "(null)", want);
    return ok;
}

static bool near(double a, double b) { return fabs(a - b) <= 1e-12 * fmax(1, fabs(b)); }

/* The member key of the JSON object at path in json, through the store's JSON reader: its number (NaN when absent
 * or not a number) or its text (copied into out, "" when absent). */
static double json_num(const char *json, const char *path, const char *key)
{
    db_json_item *v = NULL;
    int n = 0;
    mlk_error err = {0};
    double x = NAN;
    if (json && !db_json_items(DB, json, path, &v, &n, &err) && db_json_find(v, n, key))
        x = db_json_find(v, n, key)->num;
    db_json_items_free(v, n);
    return x;
}

static void json_text(const char *json, const char *path, const char *key, char *out, size_t len)
{
    db_json_item *v = NULL;
    int n = 0;
    mlk_error err = {0};
    const db_json_item *it = NULL;
    if (json && !db_json_items(DB, json, path, &v, &n, &err))
        it = db_json_find(v, n, key);
    snprintf(out, len, "%s", it && it->text ? it->text : "");
    db_json_items_free(v, n);
}

/* The cells of run 1, by idx (freed at exit of each check through cells_free). */
typedef struct {
    db_cell_row *v;
    int n;
} cell_list;

static cell_list cells_of(int64_t run_id)
{
    cell_list c = {NULL, 0};
    mlk_error err = {0};
    CHECK_OK(db_cell_rows(DB, run_id, &c.v, &c.n, &err), &err);
    return c;
}

/* The cell of run 1 whose axes name benchmark (axes.benchmark), or NULL. */
static const db_cell_row *cell_named(const cell_list *c, const char *benchmark)
{
    for (int i = 0; i < c->n; i++) {
        char name[256];
        json_text(c->v[i].axes, "$", "benchmark", name, sizeof name);
        if (!strcmp(name, benchmark))
            return &c->v[i];
    }
    return NULL;
}

/* The step 'iteration' row of a cell; every figure NaN and n -1 when there is none. */
static db_step_row iteration_stats(const db_cell_row *cell)
{
    db_step_row r = {.n = -1};
    double *f[] = {&r.peak_kib,       &r.rss_growth,    &r.heap_growth,   &r.heap_delta_median,
                   &r.rss_delta_median, &r.wall_ms_median, &r.wall_ms_p90, &r.cpu_ms_median,
                   &r.final_rss_kib,  &r.final_anon_kib, &r.final_heap_bytes};
    for (size_t i = 0; i < sizeof f / sizeof *f; i++)
        *f[i] = NAN;
    db_step_row *v = NULL;
    int n = 0;
    mlk_error err = {0};
    if (cell && !db_step_rows(DB, cell->id, &v, &n, &err))
        for (int i = 0; i < n; i++)
            if (!strcmp(v[i].step, "iteration"))
                r = v[i];
    free(v);
    return r;
}

static int n_step_rows(const db_cell_row *cell)
{
    db_step_row *v = NULL;
    int n = -1;
    mlk_error err = {0};
    if (!cell || db_step_rows(DB, cell->id, &v, &n, &err))
        n = -1;
    free(v);
    return n;
}

/* Sample columns of a cell's repetitions (step 'benchmark'), in seq order, as "v1,v2,..." (column2 not NULL:
 * "v1/w1,v2/w2,..."). */
static void samples_of(const db_cell_row *cell, const char *column, const char *column2, char *out, size_t len)
{
    double *v = NULL, *w = NULL;
    int n = 0, n2 = 0;
    mlk_error err = {0};
    out[0] = '\0';
    if (!cell || db_series(DB, cell->id, "benchmark", column, &v, &n, &err))
        return;
    if (column2 && (db_series(DB, cell->id, "benchmark", column2, &w, &n2, &err) || n2 != n)) {
        free(v);
        free(w);
        return;
    }
    size_t o = 0;
    for (int i = 0; i < n && o < len; i++) {
        o += (size_t)snprintf(out + o, len - o, "%s%.17g", i ? "," : "", v[i]);
        if (w && o < len)
            o += (size_t)snprintf(out + o, len - o, "/%.17g", w[i]);
    }
    free(v);
    free(w);
}

static void check_figures(db_store *db)
{
    CHECK(counts().runs == 1);
    db_run_row run;
    memset(&run, 0, sizeof run);
    mlk_error rerr = {0};
    CHECK_OK(db_run_row_get(db, 1, &run, &rerr), &rerr);
    CHECK(text_is("scenario_name", run.scenario_name, "bench_things"));
    CHECK(text_is("started_at", run.started_at, "2024-03-01T09:00:00.000Z")); /* context.date, in UTC */
    char hcs[256];
    snprintf(hcs, sizeof hcs, "%s;%s;%s", run.host ? run.host : "(null)", run.cpu ? run.cpu : "(null)",
             run.status ? run.status : "(null)");
    CHECK(text_is("host;cpu;status", hcs, "box;8 x 3000 MHz;done"));
    db_run_row_deinit(&run);
    CHECK(counts().cells == 4); /* BM_Cplx has no time per iteration: skipped */
    cell_list cl = cells_of(1);
    char names[256] = "";
    for (int i = 0; i < cl.n; i++) {
        char name[64];
        json_text(cl.v[i].axes, "$", "benchmark", name, sizeof name);
        snprintf(names + strlen(names), sizeof names - strlen(names), "%s%s", i ? "," : "", name);
    }
    CHECK(text_is("benchmarks by idx", names, "BM_Alloc/64,BM_Once,BM_Broken,BM_Sec/1"));
    CHECK(cl.n > 0 && text_is("config_key of idx 0", cl.v[0].config_key,
                              "benchmark=BM_Alloc/64;engine=gbench;binary=bench_things"));
    /* BM_Alloc/64: the median aggregate, in ms; p90 over the repetitions; mapped counters. */
    const db_cell_row *alloc = cell_named(&cl, "BM_Alloc/64");
    db_step_row st = iteration_stats(alloc);
    CHECK(near(st.wall_ms_median, 120e-6));
    CHECK(near(st.cpu_ms_median, 110e-6));
    CHECK(near(st.wall_ms_p90, (120 + (130 - 120) * 0.8) * 1e-6));
    CHECK(st.n == 3);
    CHECK(st.peak_kib == 5004);
    CHECK(st.final_heap_bytes == 4096);
    CHECK(isnan(st.final_rss_kib)); /* not in the report: NULL, not 0 */
    CHECK(isnan(st.heap_growth));
    CHECK(cl.n > 0 && cl.v[0].heap_shim == 1);
    char buf[256];
    samples_of(alloc, "wall_ns", NULL, buf, sizeof buf);
    CHECK(text_is("wall_ns of BM_Alloc/64", buf, "120,100.5,130"));
    samples_of(alloc, "cpu_ns", NULL, buf, sizeof buf);
    CHECK(text_is("cpu_ns of BM_Alloc/64", buf, "110,100,125"));
    samples_of(alloc, "vm_hwm_kib", "heap_live_bytes", buf, sizeof buf);
    CHECK(text_is("vm_hwm_kib/heap_live_bytes of BM_Alloc/64", buf, "5000/4096,5004/4096,5008/4096"));
    CHECK(cl.n > 0 && json_num(cl.v[0].detail, "$.counters", "allocs_per_iter") == 0);
    CHECK(cl.n > 0 && json_num(cl.v[0].detail, "$", "iterations") == 1000);
    /* BM_Once: one repetition (us); its -Infinity cpu_time is not measured. */
    st = iteration_stats(cell_named(&cl, "BM_Once"));
    CHECK(near(st.wall_ms_median, 2.5));
    CHECK(near(st.wall_ms_p90, 2.5));
    CHECK(isnan(st.cpu_ms_median));
    CHECK(isnan(st.peak_kib));
    CHECK(cl.n > 1 && cl.v[1].heap_shim == -1); /* NULL: not known */
    json_text(cl.n > 1 ? cl.v[1].detail : NULL, "$", "label", buf, sizeof buf);
    CHECK(text_is("label of idx 1", buf, "one"));
    /* BM_Broken: an error cell, no figures. */
    snprintf(buf, sizeof buf, "%s: %s", cl.n > 2 && cl.v[2].status ? cl.v[2].status : "(null)",
             cl.n > 2 && cl.v[2].error ? cl.v[2].error : "(null)");
    CHECK(text_is("status: error of idx 2", buf, "error: no device"));
    CHECK(n_step_rows(cell_named(&cl, "BM_Broken")) == 0);
    /* BM_Sec/1: no aggregates: the median of the repetitions, seconds to ms. */
    const db_cell_row *sec = cell_named(&cl, "BM_Sec/1");
    st = iteration_stats(sec);
    CHECK(near(st.wall_ms_median, 2500));
    CHECK(near(st.cpu_ms_median, 1500));
    samples_of(sec, "wall_ns", NULL, buf, sizeof buf);
    CHECK(text_is("wall_ns of BM_Sec/1", buf, "2000000000,3000000000"));
    db_cell_rows_free(cl.v, cl.n);
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
    CHECK(counts().runs == 1 && counts().cells == 4);
    o.commit = "c2";
    CHECK_OK(mlk_gbench_import_text(db, REPORT, strlen(REPORT), "r.json", &o, &r, &err), &err);
    CHECK(!r.existed && r.run_id == 2 && r.n_cells == 4 && r.n_failed == 1 && r.n_skipped == 1);
    CHECK(counts().runs == 2);
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
    CHECK(counts().runs == 2);
    mlk_error err = {0};
    mlk_gbench_import_result r;
    CHECK(mlk_gbench_import_file(db, "/nonexistent/x.json", NULL, &r, &err) == MLK_E_NOTFOUND);
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
    cell_list cl = cells_of(r.run_id);
    CHECK(cl.n == 1 && iteration_stats(&cl.v[0]).wall_ms_median == 20);
    db_cell_rows_free(cl.v, cl.n);
    db_run_row run;
    memset(&run, 0, sizeof run);
    CHECK_OK(db_run_row_get(db, r.run_id, &run, &err), &err);
    CHECK(!run.commit_sha && !run.branch);
    db_run_row_deinit(&run);
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
        return check_summary();
    DB = db;
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
    return check_summary();
}
