/* test_cellrun_sites.c: the worker's "W" lines (where memory grew, issue 9) through the parent: decoded exactly as
 * sites.c encodes them (a real maps-mode report from this process, and written-out lines with empty fields, blanked
 * tabs and C++ names), malformed and out-of-order lines refused, the report stored and read back with NULL for
 * what was not measured, and the final table's lines. It must never leave files behind. */
#include <fcntl.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "cellrun.h"
#include "db_sites.h"
#include "mlk_check.h"
#include "sites.h"
#include "table.h"

static int feed(db_site_report *r, const char *text)
{
    char *copy = strdup(text), *save = NULL;
    int bad = 0;
    for (char *line = strtok_r(copy, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
        bad += mlk_cellrun_site_line(r, line) != 0;
    free(copy);
    return bad;
}

static void check_written_lines(void)
{
    db_site_report r = {0};
    const char *text =
        "W\tsite\t0\theap\t4104\t1\t160056\t184680\t45\t\n"
        "W\tframe\t0\t0\t13ed8\tref_inject_step\t/src/inject.c\t38\t/lib/engine_ref.so\n"
        "W\tframe\t0\t1\t\tstd::vector<int, std::allocator<int> >::push_back(int const&)\t\t\t/lib/libstdc++.so.6\n"
        "W\tsite\t1\tmmap\t65536\t1\t589824\t655360\t10\t/models/m.onnx\n"
        "W\tframe\t1\t0\t2a\t\t\t\t\n"
        "W\tsite\t2\tmaps\t4096\t\t36864\t40960\t\t[anon]\n"
        "W\tinfo\texact\t\t16\t5\t44\t119\t3297\t0\t0\t0\t14706.3\t471.481\n";
    CHECK(feed(&r, text) == 0);
    CHECK(r.have && !strcmp(r.mode, "exact") && r.sample_bytes == -1 && r.n_checkpoints == 16);
    CHECK(r.first_iteration == 5 && r.last_iteration == 44 && r.n_sites == 119 && r.stacks == 3297);
    CHECK(r.dropped_sites == 0 && r.unwind_ns > 14706 && r.symbolize_ms > 471);
    CHECK(r.n == 3);
    if (r.n == 3) {
        db_growth_site *a = &r.sites[0], *b = &r.sites[1], *c = &r.sites[2];
        CHECK(!strcmp(a->kind, "heap") && a->bytes_per_iter == 4104 && a->blocks_per_iter == 1 && !a->path);
        CHECK(a->growth_bytes == 160056 && a->live_bytes == 184680 && a->live_blocks == 45 && a->n_frames == 2);
        CHECK(a->frames[0].offset == 0x13ed8 && a->frames[0].line == 38 && !strcmp(a->frames[0].fn, "ref_inject_step"));
        CHECK(a->frames[1].offset == -1 && !a->frames[1].file && a->frames[1].line == 0);
        CHECK(!strcmp(b->kind, "mmap") && b->path && !strcmp(b->path, "/models/m.onnx") && b->n_frames == 1);
        CHECK(!b->frames[0].fn && !b->frames[0].obj && b->frames[0].offset == 0x2a);
        CHECK(!strcmp(c->kind, "maps") && isnan(c->blocks_per_iter) && c->live_blocks == -1 && c->n_frames == 0);
        /* The table names the engine's frame, never the C++ library's; mappings by path. */
        db_site_frame *f = (db_site_frame *)db_site_frame_pick(a);
        CHECK(f == &a->frames[0]);
        mlk_table_row row;
        memset(&row, 0, sizeof row);
        mlk_table_sites(&row, &r);
        CHECK(strstr(row.sites, "grows: +4.0 KiB/iter  ref_inject_step (inject.c:38) in engine_ref.so") != NULL);
        CHECK(strstr(row.sites, "mmap of /models/m.onnx") != NULL);
        CHECK(strstr(row.sites, "[anon]  [mapping, no stack]") != NULL);
        CHECK(strstr(row.sites, "engine_ref.so (no file:line") == NULL); /* it has its line */
        /* A frame of the engine without a line names the object that lacks debug information; a runtime's never. */
        free(a->frames[0].file);
        a->frames[0].file = NULL;
        char one[512];
        db_site_describe(a, one, sizeof one);
        CHECK(strstr(one, "ref_inject_step in engine_ref.so (no file:line: engine_ref.so has no debug info; build it with "
                          "-g)") != NULL);
        free(a->frames[0].obj);
        a->frames[0].obj = strdup("/lib/libstdc++.so.6");
        db_site_describe(a, one, sizeof one);
        CHECK(strstr(one, "no debug info") == NULL);
    }
    /* The window's fields (issue 23) on the info line; absent ones (an older worker) leave it unmeasured. */
    db_site_report w = {0};
    CHECK(feed(&w, "W\tinfo\tsample\t524288\t16\t10\t109\t50\t900\t0\t0\t0\t900\t1.5\t32\t12.5\t3104\n") == 0);
    CHECK(w.have && w.window_iterations == 32 && w.window_ms == 12.5 && w.window_stacks == 3104);
    mlk_table_row wrow;
    memset(&wrow, 0, sizeof wrow);
    mlk_table_sites(&wrow, &w);
    CHECK(strstr(wrow.sites, "heap sites measured exactly over 32 more iterations (12 ms), not judged") != NULL);
    db_site_report_free(&w);
    CHECK(feed(&w, "W\tinfo\tsample\t524288\t16\t10\t109\t50\t900\t0\t0\t0\t900\t1.5\n") == 0);
    CHECK(w.have && w.window_iterations == 0 && w.window_stacks == -1);
    db_site_report_free(&w);
    /* Refused: an unknown kind, a site out of order, a frame of no site or out of order, a short info. */
    CHECK(feed(&r, "W\tsite\t3\tstack\t1\t\t1\t1\t\t\n") == 1);
    CHECK(feed(&r, "W\tsite\t5\theap\t1\t\t1\t1\t\t\n") == 1);
    CHECK(feed(&r, "W\tframe\t9\t0\t\tf\t\t\t\n") == 1);
    CHECK(feed(&r, "W\tframe\t0\t5\t\tf\t\t\t\n") == 1);
    CHECK(feed(&r, "W\tinfo\texact\t\t16\n") == 1);
    CHECK(feed(&r, "W\tsite\t3\theap\t\t\t1\t1\t\t\n") == 1); /* no rate */
    CHECK(r.n == 3 && r.sites[0].n_frames == 2);
    db_site_report_free(&r);
    CHECK(r.n == 0 && !r.sites);
}

/* A maps-mode report from this very process (no shim in a unit test), decoded. */
static void check_real_report(void)
{
    setenv("MLK_HEAP_SITES", "off", 1);
    char file[] = "/tmp/mlk-cellrun-sites-XXXXXX";
    int fd = mkstemp(file);
    CHECK(fd >= 0 && ftruncate(fd, 8 * 4096) == 0);
    mlk_sites *s = mlk_sites_open(0, 6, false);
    void *m[6];
    for (int it = 0; it < 6; it++) {
        m[it] = mmap(NULL, 8 * 4096, PROT_READ, MAP_PRIVATE, fd, 0);
        mlk_sites_after_iteration(s, it);
    }
    int p[2];
    CHECK(pipe(p) == 0);
    mlk_sites_report(s, p[1]);
    close(p[1]);
    char out[65536];
    ssize_t n = read(p[0], out, sizeof out - 1);
    close(p[0]);
    out[n > 0 ? n : 0] = '\0';
    db_site_report r = {0};
    CHECK(feed(&r, out) == 0);
    CHECK(r.have && !strcmp(r.mode, "maps") && r.first_iteration == 0 && r.last_iteration == 5);
    CHECK(r.n_sites == -1 && r.dropped_blocks == -1 && isnan(r.unwind_ns) && r.symbolize_ms >= 0);
    int found = 0;
    for (int i = 0; i < r.n; i++)
        found += r.sites[i].path && !strcmp(r.sites[i].path, file) && r.sites[i].growth_bytes == 5 * 8 * 4096 &&
                 !strcmp(r.sites[i].kind, "maps");
    CHECK(found == 1);
    /* Stored and read back: NULL for the figures maps mode does not measure. */
    char dbpath[] = "/tmp/mlk-cellrun-sites-db-XXXXXX";
    int dfd = mkstemp(dbpath);
    close(dfd);
    db_store *db = NULL;
    mlk_error err = {0};
    CHECK_OK(db_open(dbpath, &db, &err), &err);
    int64_t run = 0, cell = 0;
    db_run_meta meta = {.uuid = "u-1", .scenario_name = "s", .scenario_text = "t"};
    db_cell_def def = {0, "ref", "m.onnx", "h", "{}", "k", "glibc"};
    CHECK_OK(db_run_begin(db, &meta, &run, &err), &err);
    CHECK_OK(db_cell_insert(db, run, &def, &cell, &err), &err);
    CHECK_OK(db_sites_store(db, cell, &r, &err), &err);
    CHECK_OK(db_sites_store(db, cell, &r, &err), &err); /* again: replaced, not doubled */
    db_site_report back;
    CHECK_OK(db_sites_load(db, cell, 100, &back, &err), &err);
    CHECK(back.have && back.n == r.n && !strcmp(back.mode, "maps") && back.n_sites == -1 && isnan(back.unwind_ns));
    for (int i = 0; i < back.n && i < r.n; i++)
        CHECK(back.sites[i].growth_bytes == r.sites[i].growth_bytes && back.sites[i].live_blocks == -1 &&
              !strcmp(back.sites[i].path, r.sites[i].path));
    db_site_report_free(&back);
    CHECK_OK(db_sites_load(db, cell + 1, 100, &back, &err), &err); /* a cell without a report */
    CHECK(!back.have && back.n == 0);
    /* A report with stacks keeps its frames and their NULLs. */
    db_site_report w = {0};
    CHECK(feed(&w, "W\tsite\t0\theap\t10\t\t90\t100\t1\t\nW\tframe\t0\t0\t\tf\t\t\t/x.so\n"
                   "W\tframe\t0\t1\t10\tg\tg.c\t7\t\nW\tinfo\tsample\t262144\t16\t0\t99\t5\t6\t0\t0\t0\t900\t1.5\n") == 0);
    CHECK_OK(db_sites_store(db, cell, &w, &err), &err);
    CHECK_OK(db_sites_load(db, cell, 100, &back, &err), &err);
    CHECK(back.n == 1 && back.sites[0].n_frames == 2 && back.sample_bytes == 262144);
    if (back.n == 1 && back.sites[0].n_frames == 2) {
        db_site_frame *f = back.sites[0].frames;
        CHECK(!strcmp(f[0].fn, "f") && !f[0].file && f[0].line == 0 && f[0].offset == -1 && !strcmp(f[0].obj, "/x.so"));
        CHECK(!strcmp(f[1].file, "g.c") && f[1].line == 7 && f[1].offset == 16 && !f[1].obj);
    }
    db_site_report_free(&back);
    db_site_report_free(&w);
    db_close(db);
    unlink(dbpath);
    char wal[80];
    snprintf(wal, sizeof wal, "%s-wal", dbpath);
    unlink(wal);
    snprintf(wal, sizeof wal, "%s-shm", dbpath);
    unlink(wal);
    db_site_report_free(&r);
    for (int it = 0; it < 6; it++)
        munmap(m[it], 8 * 4096);
    close(fd);
    unlink(file);
    mlk_sites_free(s);
}

int main(void)
{
    check_written_lines();
    check_real_report();
    return check_summary();
}
