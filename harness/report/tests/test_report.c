/* test_report.c: the report's escaping and units, and its db reading and writers on a db built through the
 * store's functions: NULL stays "not measured", the newest comparison wins, odd axes get labels, junit counts
 * failures and skips. It must never leave files behind, nor need gnuplot (plots are the e2e test's). */
#include <ftw.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "db_compare.h"
#include "db_history.h"
#include "db_report.h"
#include "mlk_check.h"
#include "report.h"
#include "store.h"

typedef void (*writer)(FILE *f, const char *s);

static char *render(writer w, const char *s)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    w(f, s);
    fclose(f);
    return buf;
}

static int expect(writer w, const char *in, const char *want)
{
    char *got = render(w, in);
    int ok = got && !strcmp(got, want);
    if (!ok)
        fprintf(stderr, "  '%s' gave '%s', expected '%s'\n", in, got ? got : "(null)", want);
    free(got);
    return ok;
}

static void test_escaping(void)
{
    CHECK(expect(mlk_rep_xml, "a&<>\"'b", "a&amp;&lt;&gt;&quot;&#39;b"));
    CHECK(expect(mlk_rep_xml, "caf\xc3\xa9\ttab\nline", "caf\xc3\xa9\ttab\nline")); /* valid UTF-8 and whitespace */
    CHECK(expect(mlk_rep_xml, "x\x01y\x1b[31m\r", "x\\x01y\\e[31m\\r"));     /* no control characters: shown */
    CHECK(expect(mlk_rep_xml, "\xc2\x9b\xef\xbf\xbe", "\\u009b\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd")); /* C1, U+FFFE */
    CHECK(expect(mlk_rep_md, "n\x1b[2J\xff", "n\\\\e\\[2J\xef\xbf\xbd"));              /* ESC shown, not UTF-8 */
    CHECK(expect(mlk_rep_xml, "\xff", "\xef\xbf\xbd"));                              /* not UTF-8 */
    CHECK(expect(mlk_rep_xml, "\xc0\xaf", "\xef\xbf\xbd\xef\xbf\xbd"));              /* overlong '/' */
    CHECK(expect(mlk_rep_xml, "\xed\xa0\x80", "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd")); /* a surrogate */
    CHECK(expect(mlk_rep_xml, "end\xe2\x82", "end\xef\xbf\xbd\xef\xbf\xbd"));        /* cut short by the NUL */
    CHECK(expect(mlk_rep_xml, "\xf0\x9f\x98\x80", "\xf0\x9f\x98\x80"));             /* 4-byte sequence */
    CHECK(expect(mlk_rep_md, "a_b*c[d](e)<f>|g`h\ni#", "a\\_b\\*c\\[d\\](e)\\<f\\>\\|g\\`h i\\#"));
    char t[16];
    mlk_rep_tsv_field(t, sizeof t, "a\tb\"c\n");
    CHECK(!strcmp(t, "a\\tb'c\\n"));
    mlk_rep_tsv_field(t, sizeof t, "");
    CHECK(!strcmp(t, "-")); /* an empty field would read as missing */
    mlk_rep_tsv_field(t, 4, "abcdef");
    CHECK(!strcmp(t, "abc"));
}

static void test_units(void)
{
    char b[64];
    mlk_fmt_bytes(b, sizeof b, 512, false);
    CHECK(!strcmp(b, "512 B"));
    mlk_fmt_bytes(b, sizeof b, 65536, true);
    CHECK(!strcmp(b, "+64.0 KiB"));
    mlk_fmt_bytes(b, sizeof b, -1.5 * 1024 * 1024, true);
    CHECK(!strcmp(b, "-1.5 MiB"));
    mlk_fmt_bytes(b, sizeof b, NAN, true);
    CHECK(!strcmp(b, "-")); /* not measured, never 0 */
    mlk_rep_fmt_metric(b, sizeof b, "peak_kib", 5120);
    CHECK(!strcmp(b, "5.0 MiB"));
    mlk_rep_fmt_metric(b, sizeof b, "final_heap_bytes", 2048);
    CHECK(!strcmp(b, "2.0 KiB"));
    mlk_rep_fmt_metric(b, sizeof b, "wall_ms", 0.0162);
    CHECK(!strcmp(b, "0.0162 ms"));
    mlk_rep_fmt_metric(b, sizeof b, "growth", 65536);
    CHECK(!strcmp(b, "+64.0 KiB/iter"));
    mlk_rep_fmt_metric(b, sizeof b, "wall_ms", NAN);
    CHECK(!strcmp(b, "-"));
    CHECK(!strcmp(mlk_metric_label("peak_kib"), "peak HWM") && !strcmp(mlk_metric_label("odd"), "odd"));
    CHECK(mlk_rep_status_fails("leak") && mlk_rep_status_fails("oom") && !mlk_rep_status_fails("plateau") &&
          !mlk_rep_status_fails(NULL));
}

/* Three runs of config k1 (the third still running, with a crashed and a pending cell besides) and a later
 * fourth; no heap shim. The ids of runs and cells: ids[0..3] and cells[0..5]. */
typedef struct {
    int64_t runs[4], cells[6];
} fixture_ids;

static const char *const axes_k1 = "{\"threads\":\"2\",\"mmap\":\"on\"}";

static void add_cell(db_store *db, int64_t run, int idx, const char *axes, const char *key, const char *status,
                     int signal, double slope, const char *detail, int64_t *id)
{
    mlk_error err = {0};
    db_cell_def d = {.idx = idx, .engine = "ref", .model = "m", .axes_json = axes, .config_key = key,
                     .allocator = "glibc"};
    CHECK_OK(db_cell_insert(db, run, &d, id, &err), &err);
    if (!status)
        return; /* pending */
    db_cell_result res = {.status = status, .signal = signal, .exit_code = -1, .slope = slope, .late_slope = NAN,
                          .mk_p = NAN, .growth = NAN, .detail = detail};
    CHECK_OK(db_cell_finish(db, *id, &res, &err), &err);
}

static void add_stats(db_store *db, int64_t cell, int step, int64_t peak_kib, double wall_ms)
{
    mlk_error err = {0};
    db_step_stats s = {.step = step, .n = 3, .peak_kib = peak_kib, .rss_growth = NAN, .heap_growth = NAN,
                       .heap_delta_median = NAN, .rss_delta_median = NAN, .wall_ms_median = wall_ms,
                       .wall_ms_p90 = NAN, .cpu_ms_median = NAN, .final_rss_kib = -1, .final_anon_kib = -1,
                       .final_heap_bytes = -1};
    CHECK_OK(db_step_stats_insert(db, cell, &s, 1, &err), &err);
}

/* Samples of one cell: (phase, iteration, step, VmRSS, VmHWM) each, nothing else measured. */
static void add_samples(db_store *db, int64_t cell)
{
    static const struct {
        int phase, iteration, step;
        int64_t rss, hwm;
    } rows[] = {{MLK_PHASE_SETUP, -1, MLK_STEP_LOAD_ENGINE, 900, 950},
                {MLK_PHASE_WARMUP, 0, MLK_STEP_INFER, 1000, 1100},
                {MLK_PHASE_WARMUP, 0, MLK_STEP_ITERATION, 1024, 1024},
                {MLK_PHASE_MEASURE, 1, MLK_STEP_INFER, 1000, 2048},
                {MLK_PHASE_MEASURE, 1, MLK_STEP_ITERATION, 1024, 1024},
                {MLK_PHASE_MEASURE, 2, MLK_STEP_INFER, 1000, 1100},
                {MLK_PHASE_MEASURE, 2, MLK_STEP_ITERATION, 1024, 1024}};
    mlk_sample v[7];
    for (int i = 0; i < 7; i++) {
        mlk_mem m = {.vm_peak_kib = -1, .vm_size_kib = -1, .vm_hwm_kib = rows[i].hwm, .vm_rss_kib = rows[i].rss,
                     .rss_anon_kib = -1, .rss_file_kib = -1, .rss_shmem_kib = -1, .threads = -1};
        v[i] = (mlk_sample){.phase = rows[i].phase, .iteration = rows[i].iteration, .step = rows[i].step,
                            .wall_ns = -1, .cpu_ns = -1, .minflt = -1, .majflt = -1, .m = m};
    }
    mlk_error err = {0};
    int64_t seq = 0;
    CHECK_OK(db_samples_insert(db, cell, v, 7, &seq, &err), &err);
}

static void build_fixture(db_store *db, fixture_ids *id)
{
    mlk_error err = {0};
    static const char *const uuid[] = {"u1", "u2", "u3", "u4"}, *const sha[] = {"a1", "a2", NULL, "a4"};
    for (int i = 0; i < 4; i++) {
        db_run_meta m = {.uuid = uuid[i], .scenario_name = "s", .scenario_text = "", .commit_sha = sha[i]};
        usleep(2000); /* started_at has milliseconds: runs apart, in order */
        CHECK_OK(db_run_begin(db, &m, &id->runs[i], &err), &err);
        if (i != 2) /* the third is still running */
            CHECK_OK(db_run_finish(db, id->runs[i], "done", &err), &err);
    }
    add_cell(db, id->runs[0], 0, axes_k1, "k1", "pass", -1, 0, "ok", &id->cells[0]);
    add_cell(db, id->runs[1], 0, axes_k1, "k1", "pass", -1, 0, "ok", &id->cells[1]);
    add_cell(db, id->runs[2], 0, axes_k1, "k1", "pass", -1, NAN, "a<b", &id->cells[2]);
    add_cell(db, id->runs[2], 1, "{}", "k2", "crashed", 11, NAN, NULL, &id->cells[3]);
    add_cell(db, id->runs[2], 2, "not json", "k3", NULL, -1, NAN, NULL, &id->cells[4]);
    add_cell(db, id->runs[3], 0, axes_k1, "k1", "pass", -1, 0, "later", &id->cells[5]);
    add_stats(db, id->cells[0], MLK_STEP_ITERATION, 1024, 1.0);
    add_stats(db, id->cells[1], MLK_STEP_ITERATION, 1024, 1.0);
    add_stats(db, id->cells[2], MLK_STEP_ITERATION, 2048, 1.5);
    add_stats(db, id->cells[5], MLK_STEP_ITERATION, 4096, 1.0);
    add_stats(db, id->cells[2], MLK_STEP_INFER, 2048, 0.5);
    add_samples(db, id->cells[2]);

    /* Two comparisons of the third run: only the newer one's (empty) findings count. */
    int64_t old = 0, newer = 0;
    CHECK_OK(db_begin_comparison(db, id->runs[2], "old", &old, &err), &err);
    mlk_step_figures f = {.cell_id = id->cells[2], .config_key = "k1", .step = "iteration"};
    CHECK_OK(db_store_finding(db, old, &f, "peak_kib", "regression", 2048, 1024, 1, 1024, NAN,
                              "only in the old comparison", &err), &err);
    usleep(2000);
    CHECK_OK(db_begin_comparison(db, id->runs[2], "new & improved", &newer, &err), &err);

    /* Change points of k1 at the second, third and fourth run: a report of the third shows two. */
    const char *const cp_run[] = {"u2", "u3", "u4"}, *const cp_sha[] = {"a2", NULL, "a4"};
    const double before[] = {1, 1, 2}, after[] = {2, 2, 4};
    for (int i = 0; i < 3; i++) {
        db_change_point cp = {.config_key = "k1", .step = "iteration", .metric = "peak_kib", .run_uuid = cp_run[i],
                              .commit_sha = cp_sha[i], .before = before[i], .after = after[i], .t_stat = 9};
        bool is_new = false;
        CHECK_OK(db_change_point_store(db, &cp, &is_new, &err), &err);
        CHECK(is_new);
    }
}

static char *slurp(const char *dir, const char *name)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "r");
    if (!f)
        return NULL;
    char *buf = calloc(1, 1 << 16);
    if (buf)
        fread(buf, 1, (1 << 16) - 1, f);
    fclose(f);
    return buf;
}

static int rm_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
    (void)sb, (void)flag, (void)ftw;
    return remove(path);
}

static void test_db(const char *dir)
{
    char path[512], sub[600];
    snprintf(path, sizeof path, "%s/r.db", dir);
    mlk_error err = {0};
    db_store *store = NULL;
    CHECK_OK(db_open(path, &store, &err), &err);
    if (!store)
        return;
    fixture_ids ids;
    build_fixture(store, &ids);
    db_store *db = store;
    int64_t id = 0;
    char spec[32];
    CHECK_OK(db_report_find_run(db, NULL, &id, &err), &err);
    CHECK(id == ids.runs[3]);
    CHECK_OK(db_report_find_run(db, "u2", &id, &err), &err);
    CHECK(id == ids.runs[1]);
    snprintf(spec, sizeof spec, "%lld", (long long)ids.runs[2]);
    CHECK_OK(db_report_find_run(db, spec, &id, &err), &err);
    CHECK(id == ids.runs[2]);
    CHECK(db_report_find_run(db, "99", &id, &err) == MLK_E_NOTFOUND && strstr(err.msg, "'99'"));
    CHECK(db_report_find_run(db, "nope", &id, &err) == MLK_E_NOTFOUND && id == ids.runs[2]); /* untouched */

    mlk_report *r = NULL;
    CHECK_OK(mlk_rep_load(db, ids.runs[2], &r, &err), &err);
    if (!r) {
        db_close(store);
        return;
    }
    CHECK(r->n_cells == 3 && !r->commit);
    CHECK(!strcmp(r->cells[0].label, "threads=2 mmap=on"));
    CHECK(!strcmp(r->cells[1].label, "cell 1"));   /* no axes */
    CHECK(!strcmp(r->cells[2].label, "not json")); /* malformed axes shown as they are */
    CHECK(r->cells[1].signal == 11 && isnan(r->cells[1].slope) && r->cells[0].exit_code == -1);
    CHECK(r->baseline && !strcmp(r->baseline, "new & improved") && r->n_findings == 0); /* the newest only */
    CHECK(r->n_cps == 2 && !r->cps[0].this_run && r->cps[1].this_run); /* not u4's: after this run */

    for (int i = 0; i < 2; i++) {
        snprintf(sub, sizeof sub, "%s/%s", dir, i ? "plots" : "data");
        mkdir(sub, 0700);
    }
    CHECK_OK(mlk_rep_export(db, r, dir, NULL, &err), &err);
    int memory = r->cells[0].memory_plot;
    CHECK(memory >= 0 && r->plots[memory].a[0] == 1 && r->plots[memory].a[3] == 0); /* measured from 1, no heap */
    CHECK(r->cells[1].memory_plot == -1);                                            /* nothing sampled */
    char *tsv = slurp(dir, "data/memory-cell-0.tsv");
    CHECK(tsv && strstr(tsv, "\n0\t0\t1\t1.07422\t?\n1\t1\t1\t2\t?\n2\t1\t1\t1.07422\t?\n")); /* heap: not 0 */
    free(tsv);
    CHECK(mlk_rep_find_trend(r, 0, "iteration", "final_heap_bytes") < 0); /* never measured: no plot */
    int peak = mlk_rep_find_trend(r, 0, "iteration", "peak_kib");
    CHECK(peak >= 0 && r->plots[peak].a[0] == 3 && r->plots[peak].a[3] == 2);
    tsv = slurp(dir, "data/trend-c0-iteration-peak_kib.tsv");
    /* oldest first, the band from the runs before, the uuid where there is no commit, run 4 left out */
    CHECK(tsv && strstr(tsv, "\n0\ta1\t1\t?\t?\t?\t?\n1\ta2\t1\t0.95\t1.05\t1\t?\n2\tu3\t2\t0.95\t1.05\t1\t?\n"));
    CHECK(tsv && strstr(tsv, "\n\n# x\tchange point commit\n1\ta2\n2\tu3\n"));
    free(tsv);
    tsv = slurp(dir, "data/matrix-infer-peak.tsv");
    CHECK(tsv && !strcmp(tsv, "group\tthreads=2 mmap=on\nglibc\t2\n"));
    free(tsv);

    snprintf(path, sizeof path, "%s/junit.xml", dir);
    CHECK_OK(mlk_rep_write_junit(r, path, &err), &err);
    char *x = slurp(dir, "junit.xml");
    CHECK(x && strstr(x, "tests=\"3\" failures=\"1\" errors=\"0\" skipped=\"1\""));
    CHECK(x && strstr(x, "<failure type=\"crashed\" message=\"crashed: signal 11 ("));
    CHECK(x && strstr(x, "name=\"not json\"") && strstr(x, "<skipped message=\"not finished: pending"));
    CHECK(x && strstr(x, "<system-out>pass: a&lt;b</system-out>"));
    free(x);
    snprintf(path, sizeof path, "%s/summary.md", dir);
    CHECK_OK(mlk_rep_write_summary(r, path, &err), &err);
    x = slurp(dir, "summary.md");
    CHECK(x && strstr(x, "**No alerts** against new \\& improved."));
    CHECK(x && strstr(x, "**Leaks and failures (1)**:\n- **crashed** cell 1: signal 11"));
    CHECK(x && strstr(x, "1 of 3 cells pass, 1 unfinished."));
    free(x);
    snprintf(path, sizeof path, "%s/index.html", dir);
    CHECK_OK(mlk_rep_write_html(r, path, &err), &err);
    x = slurp(dir, "index.html");
    CHECK(x && !strstr(x, "http") && strstr(x, "new &amp; improved") && strstr(x, "a&lt;b"));
    CHECK(x && strstr(x, "data/memory-cell-0.tsv") && strstr(x, "(not rendered)"));
    free(x);
    snprintf(path, sizeof path, "%s/nodir/junit.xml", dir);
    CHECK(mlk_rep_write_junit(r, path, &err) == MLK_E_NOTFOUND && strstr(err.msg, "nodir/junit.xml"));
    mlk_rep_free(r);
    mlk_rep_free(NULL);
    db_close(store);
}

int main(void)
{
    test_escaping();
    test_units();
    char dir[] = "/tmp/mlk-test-report-XXXXXX";
    if (mkdtemp(dir)) {
        test_db(dir);
        nftw(dir, rm_entry, 8, FTW_DEPTH | FTW_PHYS);
    } else {
        CHECK(!"mkdtemp");
    }
    return check_summary();
}
