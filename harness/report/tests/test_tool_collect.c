/* test_tool_collect.c: a tool cell's report from its folder to the db and out again: mlk_tool_collect judges and
 * stores the captured memcheck, LSan and massif reports, a second store replaces the first, the store reads them
 * back (db_report_tool_load), and mlk_tool_html lists them escaped. It must never need valgrind, and leaves no
 * file behind. */
#include <stdlib.h>
#include <unistd.h>

#include "db_report.h"
#include "db_rows.h"
#include "mlk_check.h"
#include "report.h"
#include "store_tools.h"
#include "tool_collect.h"
#include "tool_test.h"

static db_store *db;

/* The rows of the tool tables, every cell's. */
static db_row_counts counts(void)
{
    db_row_counts c = {0};
    mlk_error err = {0};
    CHECK_OK(db_row_counts_get(db, &c, &err), &err);
    return c;
}

/* What the store holds for the cell, every leak record with its stack. */
static db_report_tool stored(int64_t cell_id)
{
    db_report_tool t;
    mlk_error err = {0};
    CHECK_OK(db_report_tool_load(db, cell_id, -1, &t, &err), &err);
    return t;
}

/* The first stored record with these own bytes, or NULL. */
static const mlk_leak *leak_of(const db_report_tool *t, int64_t bytes)
{
    for (int i = 0; i < t->leaks.n; i++)
        if (t->leaks.leaks[i].bytes == bytes)
            return &t->leaks.leaks[i];
    return NULL;
}

/* The leak records' own bytes, those by the engine only when engine. */
static int64_t sum_bytes(const db_report_tool *t, bool engine)
{
    int64_t sum = 0;
    for (int i = 0; i < t->leaks.n; i++)
        sum += !engine || t->leaks.leaks[i].in_engine ? t->leaks.leaks[i].bytes : 0;
    return sum;
}

static int count_fn(const mlk_frame *f, int n, const char *fn)
{
    int k = 0;
    for (int i = 0; i < n; i++)
        k += f[i].fn && !strcmp(f[i].fn, fn);
    return k;
}

/* Copy fixture name to dst (what the tool would have written), never outside a tool folder. */
static void place(const char *name, const char *dst)
{
    CHECK(strstr(dst, "/mlk-") != NULL);
    if (!strstr(dst, "/mlk-"))
        return;
    size_t len = 0;
    char *text = tool_fixture_text(name, &len);
    FILE *f = text ? fopen(dst, "wb") : NULL;
    if (f) {
        fwrite(text, 1, len, f);
        fclose(f);
    }
    free(text);
    CHECK(f != NULL);
}

static void collect(int64_t cell_id)
{
    mlk_scenario s = {.path = "t.yaml", .engine = "ref"};
    char *engines[] = {"ref"}, *libs[] = {"/x/engine_ref.so"};
    mlk_cell c = {.idx = 0, .engine = "ref", .engine_lib = libs[0], .tool = MLK_TOOL_MEMCHECK};
    char *lsan_libs[] = {"/x/engine_ref_lsan.so"};
    mlk_tool_paths tp = {.valgrind = "/usr/bin/valgrind", .supp = "/x/valgrind.supp", .keep = "/x/libmemleak_keep.so",
                         .lsan_worker = "/x/memleak-worker-lsan", .lsan_engines = lsan_libs, .n_engines = 1};
    mlk_plan p = {.s = &s, .engines = engines, .engine_libs = libs, .n_engines = 1, .cells = &c, .n_cells = 1,
                  .tools = &tp};
    mlk_error err = {0};
    mlk_tool_run t;
    mlk_tool_result res;

    /* memcheck: the planted leak is the engine's, so the cell leaks */
    CHECK_OK(mlk_tool_run_begin(&p, &c, &t, &err), &err);
    place("memcheck_planted.xml", t.out);
    CHECK_OK(mlk_tool_collect(db, cell_id, &p, &c, &t, "/x/bin/memleak-run", true, &res, &err), &err);
    CHECK(res.have && str_eq(res.status, "leak"));
    CHECK(strstr(res.detail, "memcheck: definitely lost 12288 B in 3 blocks (12288 B by the engine)") != NULL);
    CHECK(strstr(res.table, "definitely lost 12288 B in 3 blocks at leak (inject.c:38) < ref_inject_step") != NULL);
    db_report_tool back = stored(cell_id);
    CHECK(counts().leaks == 1 && back.n_leaks == 1 && sum_bytes(&back, true) == 12288 && str_eq(back.tool, "memcheck"));
    CHECK(back.leaks.n == 1 && back.leaks.leaks[0].n_frames >= 5);
    db_report_tool_deinit(&back);
    /* the same report again replaces, never adds */
    CHECK_OK(mlk_tool_collect(db, cell_id, &p, &c, &t, "/x/bin/memleak-run", true, &res, &err), &err);
    CHECK(counts().leaks == 1);
    mlk_tool_run_end(&t, NULL);

    /* every kind; the harness's own definite leak does not make the cell leak, libengine.so's does */
    CHECK_OK(mlk_tool_run_begin(&p, &c, &t, &err), &err);
    place("memcheck_kinds.xml", t.out);
    CHECK_OK(mlk_tool_collect(db, cell_id, &p, &c, &t, "/usr/bin/memleak-run", true, &res, &err), &err);
    CHECK(str_eq(res.status, "leak") && strstr(res.detail, "definitely lost 1040 B in 3 blocks (1016 B by the engine)"));
    CHECK(strstr(res.detail, "indirectly lost 40 B, possibly lost 64 B, still reachable 77 B") != NULL);
    CHECK(strstr(res.detail, "1 other error, the first: InvalidRead: Invalid read of size 4") != NULL);
    back = stored(cell_id);
    CHECK(counts().leaks == 5 && back.leaks.n == 5 && leak_of(&back, 1016) && leak_of(&back, 1016)->total_bytes == 1056);
    CHECK(leak_of(&back, 24) && !leak_of(&back, 24)->in_engine);
    CHECK(back.leaks.n == 5 && back.leaks.leaks[0].kind == MLK_LEAK_DEFINITELY &&
          back.leaks.leaks[4].kind == MLK_LEAK_REACHABLE); /* most severe first */
    db_report_tool_deinit(&back);
    CHECK_OK(db_report_tool_load(db, cell_id, 2, &back, &err), &err);
    CHECK(back.n_leaks == 5 && back.leaks.n == 2); /* all counted, as many loaded as asked */
    db_report_tool_deinit(&back);
    char *html = NULL;
    CHECK_OK(mlk_tool_html_cell(db, cell_id, &html, &err), &err);
    CHECK(html && strstr(html, "list_new&lt;float&gt; (list.c:21)") && !strstr(html, "list_new<float>"));
    CHECK(html && strstr(html, "<table class=\"leaks\">") && strstr(html, ">1056<"));
    free(html);
    /* cut short in a finished worker: not to be trusted */
    FILE *f = fopen(t.out, "w");
    if (f) {
        fputs("<?xml version=\"1.0\"?>\n<valgrindoutput>\n<protocoltool>memcheck</protocoltool>\n", f);
        fclose(f);
    }
    CHECK_OK(mlk_tool_collect(db, cell_id, &p, &c, &t, "/usr/bin/memleak-run", true, &res, &err), &err);
    CHECK(res.have && str_eq(res.status, "error") && strstr(res.detail, "its report stops early"));
    unlink(t.out);
    CHECK_OK(mlk_tool_collect(db, cell_id, &p, &c, &t, "/usr/bin/memleak-run", true, &res, &err), &err);
    CHECK(!res.have && strstr(res.detail, "memcheck: its report could not be read") && strstr(res.detail, t.out));
    CHECK(counts().leaks == 0);
    mlk_tool_run_end(&t, NULL);

    /* lsan */
    c.tool = MLK_TOOL_LSAN;
    CHECK_OK(mlk_tool_run_begin(&p, &c, &t, &err), &err);
    CHECK_OK(mlk_tool_collect(db, cell_id, &p, &c, &t, "/x/bin/memleak-run", true, &res, &err), &err);
    CHECK(str_eq(res.status, "pass") && !strstr(res.detail, "reachable")); /* no log: nothing leaked */
    char log[PATH_MAX + 40];
    snprintf(log, sizeof log, "%s.4242", t.out);
    place("lsan_planted.txt", log);
    CHECK_OK(mlk_tool_collect(db, cell_id, &p, &c, &t, "/x/bin/memleak-run", true, &res, &err), &err);
    CHECK(str_eq(res.status, "leak") && strstr(res.detail, "lsan: definitely lost 12288 B in 3 blocks"));
    back = stored(cell_id);
    int in_engine = 0;
    for (int i = 0; i < back.leaks.n; i++)
        in_engine += back.leaks.leaks[i].in_engine;
    CHECK(str_eq(back.tool, "lsan") && in_engine == 1);
    db_report_tool_deinit(&back);
    mlk_tool_run_end(&t, NULL);

    /* massif: the peak and its sites, judged pass */
    c.tool = MLK_TOOL_MASSIF;
    CHECK_OK(mlk_tool_run_begin(&p, &c, &t, &err), &err);
    place("massif_compile.out", t.out);
    CHECK_OK(mlk_tool_collect(db, cell_id, &p, &c, &t, "/x/bin/memleak-run", true, &res, &err), &err);
    CHECK(str_eq(res.status, "pass") && strstr(res.detail, "massif: peak heap 27620752 B (27600363 B asked for"));
    back = stored(cell_id);
    CHECK(back.peak.found && back.peak.heap_bytes + back.peak.extra_bytes == 27620752 && counts().leaks == 0);
    CHECK(back.peak.n_sites > 0 && back.peak.sites[0].bytes == 11665728);
    CHECK(back.peak.n_sites > 0 && count_fn(back.peak.sites[0].frames, back.peak.sites[0].n_frames, "compile") == 1);
    db_report_tool_deinit(&back);
    CHECK_OK(mlk_tool_html_cell(db, cell_id, &html, &err), &err);
    CHECK(html && strstr(html, "massif: peak heap <strong>26.3 MiB</strong>") && strstr(html, "alloc_with (alloc.c:63)"));
    free(html);
    mlk_tool_run_end(&t, NULL);
}

int main(void)
{
    char path[64];
    snprintf(path, sizeof path, "/tmp/mlk-test-tool-store-%d.db", (int)getpid());
    mlk_error err = {0};
    CHECK_OK(db_open(path, &db, &err), &err);
    db_run_meta m = {.uuid = "u1", .scenario_name = "t", .scenario_text = "name: t\n", .tool_version = "0"};
    int64_t run = 0, cell = 0, other = 0;
    CHECK_OK(db_run_begin(db, &m, &run, &err), &err);
    db_cell_def d = {0, "ref", "m.onnx", "abc", "{}", "engine=ref", "glibc"};
    CHECK_OK(db_cell_insert(db, run, &d, &cell, &err), &err);
    d.idx = 1;
    CHECK_OK(db_cell_insert(db, run, &d, &other, &err), &err);
    collect(cell);
    char *html = (char *)"untouched";
    CHECK_OK(mlk_tool_html_cell(db, other, &html, &err), &err);
    CHECK(html == NULL); /* a plain cell: nothing to list */
    CHECK_OK(db_tool_clear(db, cell, &err), &err);
    db_row_counts n = counts();
    CHECK(n.heap_peaks + n.tool_frames == 0);
    db_close(db);
    char wal[80];
    unlink(path);
    snprintf(wal, sizeof wal, "%s-wal", path);
    unlink(wal);
    snprintf(wal, sizeof wal, "%s-shm", path);
    unlink(wal);
    return check_summary();
}
