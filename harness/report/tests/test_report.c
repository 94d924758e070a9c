/* test_report.c: the report's escaping and units, and its db reading and writers on a hand-made db: NULL stays
 * "not measured", the newest comparison wins, odd axes get labels, junit counts failures and skips.
 * It must never leave files behind, nor need gnuplot (plots are the e2e test's). */
#include <ftw.h>
#include <math.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

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
    CHECK(expect(mlk_rep_xml, "x\x01y", "x\xef\xbf\xbdy"));                          /* no control characters */
    CHECK(expect(mlk_rep_xml, "\xff", "\xef\xbf\xbd"));                              /* not UTF-8 */
    CHECK(expect(mlk_rep_xml, "\xc0\xaf", "\xef\xbf\xbd\xef\xbf\xbd"));              /* overlong '/' */
    CHECK(expect(mlk_rep_xml, "\xed\xa0\x80", "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd")); /* a surrogate */
    CHECK(expect(mlk_rep_xml, "end\xe2\x82", "end\xef\xbf\xbd\xef\xbf\xbd"));        /* cut short by the NUL */
    CHECK(expect(mlk_rep_xml, "\xf0\x9f\x98\x80", "\xf0\x9f\x98\x80"));             /* 4-byte sequence */
    CHECK(expect(mlk_rep_md, "a_b*c[d](e)<f>|g`h\ni#", "a\\_b\\*c\\[d\\](e)\\<f\\>\\|g\\`h i\\#"));
    char t[8];
    mlk_rep_tsv_field(t, sizeof t, "a\tb\"c\n");
    CHECK(!strcmp(t, "a b'c "));
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

/* Three runs of config k1 (the third still running, with a crashed and a pending cell besides); no heap shim. */
static const char *fixture =
    "INSERT INTO runs (id, uuid, scenario_name, scenario_text, commit_sha, started_at, status) VALUES "
    " (1, 'u1', 's', '', 'a1', '2026-01-01T00:00:01Z', 'done'), (2, 'u2', 's', '', 'a2', '2026-01-01T00:00:02Z', "
    " 'done'), (3, 'u3', 's', '', NULL, '2026-01-01T00:00:03Z', 'running'),"
    " (4, 'u4', 's', '', 'a4', '2026-01-01T00:00:04Z', 'done');"
    "INSERT INTO cells (id, run_id, idx, engine, model, axes, config_key, allocator, status, signal, slope_per_iter,"
    " detail) VALUES (1, 1, 0, 'ref', 'm', '{\"threads\":\"2\",\"mmap\":\"on\"}', 'k1', 'glibc', 'pass', NULL, 0, 'ok'),"
    " (2, 2, 0, 'ref', 'm', '{\"threads\":\"2\",\"mmap\":\"on\"}', 'k1', 'glibc', 'pass', NULL, 0, 'ok'),"
    " (3, 3, 0, 'ref', 'm', '{\"threads\":\"2\",\"mmap\":\"on\"}', 'k1', 'glibc', 'pass', NULL, NULL, 'a<b'),"
    " (4, 3, 1, 'ref', 'm', '{}', 'k2', 'glibc', 'crashed', 11, NULL, NULL),"
    " (5, 3, 2, 'ref', 'm', 'not json', 'k3', 'glibc', 'pending', NULL, NULL, NULL),"
    " (6, 4, 0, 'ref', 'm', '{\"threads\":\"2\",\"mmap\":\"on\"}', 'k1', 'glibc', 'pass', NULL, 0, 'later');"
    "INSERT INTO step_stats (cell_id, step, n, peak_kib, wall_ms_median, final_heap_bytes) VALUES"
    " (1, 'iteration', 3, 1024, 1.0, NULL), (2, 'iteration', 3, 1024, 1.0, NULL), (3, 'iteration', 3, 2048, 1.5,"
    " NULL), (6, 'iteration', 3, 4096, 1.0, NULL), (3, 'infer', 3, 2048, 0.5, NULL);"
    "INSERT INTO samples (cell_id, seq, phase, iteration, step, vm_rss_kib, vm_hwm_kib) VALUES"
    " (3, 0, 'setup', NULL, 'load_engine', 900, 950),"
    " (3, 1, 'warmup', 0, 'infer', 1000, 1100), (3, 2, 'warmup', 0, 'iteration', 1024, 1024),"
    " (3, 3, 'measure', 1, 'infer', 1000, 2048), (3, 4, 'measure', 1, 'iteration', 1024, 1024),"
    " (3, 5, 'measure', 2, 'infer', 1000, 1100), (3, 6, 'measure', 2, 'iteration', 1024, 1024);"
    "INSERT INTO comparisons (id, run_id, baseline, created_at) VALUES (1, 3, 'old', '2026-01-02'),"
    " (2, 3, 'new & improved', '2026-01-03');"
    "INSERT INTO findings VALUES (1, 3, 'k1', 'iteration', 'peak_kib', 'regression', 2048, 1024, 1, 1024, NULL, "
    " 'only in the old comparison');"
    "INSERT INTO change_points VALUES ('k1', 'iteration', 'peak_kib', 'u2', 'a2', 1, 2, 9, 'd'),"
    " ('k1', 'iteration', 'peak_kib', 'u3', NULL, 1, 2, 9, 'd'), ('k1', 'iteration', 'peak_kib', 'u4', 'a4', 2, 4,"
    " 9, 'd');";

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
    sqlite3 *db = db_handle(store);
    CHECK(sqlite3_exec(db, fixture, NULL, NULL, NULL) == SQLITE_OK);
    int64_t id = 0;
    CHECK_OK(mlk_rep_find_run(db, NULL, &id, &err), &err);
    CHECK(id == 4);
    CHECK_OK(mlk_rep_find_run(db, "u2", &id, &err), &err);
    CHECK(id == 2);
    CHECK_OK(mlk_rep_find_run(db, "3", &id, &err), &err);
    CHECK(id == 3);
    CHECK(mlk_rep_find_run(db, "99", &id, &err) == MLK_E_NOTFOUND && strstr(err.msg, "'99'"));
    CHECK(mlk_rep_find_run(db, "nope", &id, &err) == MLK_E_NOTFOUND && id == 3); /* untouched on failure */

    mlk_report *r = NULL;
    CHECK_OK(mlk_rep_load(db, 3, &r, &err), &err);
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
    CHECK(x && strstr(x, "No regressions against new \\& improved."));
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
    CHECK(mlk_rep_write_junit(r, path, &err) == MLK_E_IO && strstr(err.msg, "nodir/junit.xml"));
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
    return mlk_check_summary();
}
