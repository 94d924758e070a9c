/* test_tool_lsan.c: LeakSanitizer's report into leak records: a captured planted leak in the frame format lsan cells
 * ask for, the default format (C++ names with spaces, module+offset frames, unknown modules), AddressSanitizer
 * errors beside leaks, SUMMARY checks, several log files. It must never need a sanitized program to run. */
#include <sys/stat.h>
#include <unistd.h>

#include "mlk_check.h"
#include "tool.h"
#include "tool_test.h"

static void planted(void)
{
    size_t len = 0;
    char *text = tool_fixture_text("lsan_planted.txt", &len);
    CHECK(text != NULL);
    mlk_leak_report r;
    mlk_error err = {0};
    CHECK_OK(mlk_lsan_parse_buf(text ? text : "", len, "lsan.1", &r, &err), &err);
    CHECK(r.complete && r.n == 1 && r.summary_bytes == 12288 && r.summary_allocs == 3);
    if (r.n == 1) {
        const mlk_leak *l = &r.leaks[0];
        CHECK(l->kind == MLK_LEAK_DEFINITELY && l->bytes == 12288 && l->total_bytes == 12288 && l->blocks == 3);
        CHECK(l->n_frames == 11);
        CHECK(str_eq(l->frames[0].fn, "__interceptor_malloc") && mlk_frame_is_allocator(&l->frames[0]));
        CHECK(str_eq(l->frames[1].fn, "leak") && ends_with(l->frames[1].file, "engines/ref/src/inject.c"));
        CHECK(l->frames[1].line == 38 && ends_with(l->frames[1].obj, "/engine_ref_lsan.so"));
        CHECK(str_eq(l->frames[9].fn, "main") && ends_with(l->frames[9].obj, "/memleak-worker-lsan"));
    }
    const char *harness[] = {"/elsewhere/memleak-worker-lsan", NULL};
    mlk_leaks_attribute(&r, harness);
    CHECK(r.n == 1 && r.leaks[0].in_engine);
    mlk_leak_report_free(&r);
    free(text);
}

static void default_format(void)
{
    size_t len = 0;
    char *text = tool_fixture_text("lsan_default.txt", &len);
    CHECK(text != NULL);
    mlk_leak_report r;
    mlk_error err = {0};
    CHECK_OK(mlk_lsan_parse_buf(text ? text : "", len, "lsan.2", &r, &err), &err);
    CHECK(r.complete && r.n == 2 && r.summary_bytes == 136 && r.summary_allocs == 3);
    if (r.n == 2) {
        const mlk_leak *d = &r.leaks[0], *in = &r.leaks[1];
        CHECK(d->kind == MLK_LEAK_DEFINITELY && d->bytes == 96 && d->blocks == 2 && d->n_frames == 6);
        CHECK(in->kind == MLK_LEAK_INDIRECTLY && in->bytes == 40 && in->blocks == 1 && in->n_frames == 3);
        const mlk_frame *f = d->frames;
        CHECK(str_eq(f[1].fn, "operator new(unsigned long)") && mlk_frame_is_allocator(&f[1]));
        CHECK(ends_with(f[1].file, "libsupc++/new_op.cc") && f[1].line == 50);
        CHECK(str_eq(f[2].fn, "Engine::Cache::insert(std::string const&, int)") && f[2].line == 120);
        CHECK(str_eq(f[2].file, "/src/engine/cache.cc") && !f[2].obj);
        CHECK(!f[3].fn && str_eq(f[3].obj, "/opt/engine/lib/libengine_core.so"));
        CHECK(!f[4].fn && !f[4].obj && !f[4].file);
        CHECK(str_eq(f[5].fn, "main") && str_eq(f[5].obj, "/usr/bin/host") && !f[5].file);
        CHECK(str_eq(in->frames[1].fn, "mk") && str_eq(in->frames[1].file, "/tmp/vg/leaky.c") &&
              in->frames[1].line == 6);
    }
    int64_t bytes[MLK_LEAK_KIND_COUNT], blocks[MLK_LEAK_KIND_COUNT];
    mlk_leaks_sum(&r, bytes, blocks, NULL);
    CHECK(bytes[0] + bytes[1] == r.summary_bytes && blocks[0] + blocks[1] == r.summary_allocs);
    mlk_leak_report_free(&r);
    free(text);
}

static int parse(const char *text, mlk_leak_report *r, mlk_error *err)
{
    return mlk_lsan_parse_buf(text, strlen(text), "lsan.3", r, err);
}

static void odd_reports(void)
{
    mlk_leak_report r;
    mlk_error err = {0};
    /* nothing at all: a clean run */
    CHECK_OK(parse("", &r, &err), &err);
    CHECK(r.complete && r.n == 0 && r.summary_bytes == -1);
    mlk_leak_report_free(&r);
    /* an AddressSanitizer error: counted and named, its stack is no leak's */
    const char *overflow = "==7==ERROR: AddressSanitizer: heap-buffer-overflow on address 0x6020 at pc 0x55\n"
                           "READ of size 4 at 0x6020 thread T0\n"
                           "    #0 0x55 in read_past /src/ops.c:12\n"
                           "    #1 0x56 in main /src/main.c:3\n"
                           "SUMMARY: AddressSanitizer: heap-buffer-overflow /src/ops.c:12 in read_past\n";
    CHECK_OK(parse(overflow, &r, &err), &err);
    CHECK(r.n == 0 && r.n_other_errors == 1 && strstr(r.first_error, "heap-buffer-overflow") && r.complete);
    mlk_leak_report_free(&r);
    /* leaks, then the process died before its SUMMARY */
    CHECK_OK(parse("Direct leak of 8 byte(s) in 1 object(s) allocated from:\n    #0 0x1 in malloc a.c:1\n", &r, &err),
             &err);
    CHECK(r.n == 1 && !r.complete);
    mlk_leak_report_free(&r);
    /* a SUMMARY that disagrees with the blocks above it */
    CHECK(parse("Direct leak of 8 byte(s) in 1 object(s) allocated from:\n    #0 0x1 in malloc a.c:1\n\n"
                "SUMMARY: AddressSanitizer: 16 byte(s) leaked in 2 allocation(s).\n", &r, &err) == MLK_E_PARSE);
    CHECK(strstr(err.msg, "lsan.3:4: the SUMMARY says 16 byte(s) in 2 allocation(s)") != NULL);
    mlk_leak_report_free(&r);
    /* a leak header that does not read, a frame that is not one */
    CHECK(parse("Direct leak of many byte(s) in 1 object(s) allocated from:\n", &r, &err) == MLK_E_PARSE);
    CHECK(strstr(err.msg, "lsan.3:1: expected 'N byte(s) in M object(s)") != NULL);
    mlk_leak_report_free(&r);
    CHECK(parse("Indirect leak of 8 byte(s) in 1 object(s) allocated from:\n    #0 nothing here\n", &r, &err) ==
          MLK_E_PARSE);
    CHECK(strstr(err.msg, "lsan.3:2: expected a stack frame") != NULL);
    mlk_leak_report_free(&r);
    /* LeakSanitizer cut its list short: the SUMMARY counts more than it listed, and that is no error */
    CHECK_OK(parse("Direct leak of 8 byte(s) in 1 object(s) allocated from:\n    #0 0x1 in malloc a.c:1\n\n"
                   "Too many leaks! Only the first 5000 leaks encountered will be reported.\n"
                   "SUMMARY: LeakSanitizer: 80 byte(s) leaked in 10 allocation(s).\n", &r, &err), &err);
    CHECK(r.n == 1 && r.complete && r.summary_bytes == 80);
    mlk_leak_report_free(&r);
}

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    if (f) {
        fputs(text, f);
        fclose(f);
    }
}

static void log_files(void)
{
    char dir[] = "/tmp/mlk-test-lsan-XXXXXX", a[128], b[128], c[128];
    CHECK(mkdtemp(dir) != NULL);
    mlk_leak_report r;
    mlk_error err = {0};
    CHECK_OK(mlk_lsan_parse_logs(dir, "lsan", &r, &err), &err);
    CHECK(r.n == 0 && r.complete); /* LSan writes no file when it finds nothing */
    mlk_leak_report_free(&r);
    snprintf(a, sizeof a, "%s/lsan.100", dir);
    snprintf(b, sizeof b, "%s/lsan.101", dir);
    snprintf(c, sizeof c, "%s/other.102", dir);
    write_file(a, "Direct leak of 8 byte(s) in 1 object(s) allocated from:\n    #0 0x1 in malloc a.c:1\n\n"
                  "SUMMARY: AddressSanitizer: 8 byte(s) leaked in 1 allocation(s).\n");
    write_file(b, "Direct leak of 16 byte(s) in 2 object(s) allocated from:\n    #0 0x1 in malloc a.c:1\n\n"
                  "SUMMARY: AddressSanitizer: 16 byte(s) leaked in 2 allocation(s).\n");
    write_file(c, "Direct leak of 99 byte(s) in 1 object(s) allocated from:\n");
    CHECK_OK(mlk_lsan_parse_logs(dir, "lsan", &r, &err), &err);
    CHECK(r.n == 2 && r.complete && r.summary_bytes == 24 && r.summary_allocs == 3);
    mlk_leak_report_free(&r);
    write_file(b, "Direct leak of 16 byte(s) in 2 object(s) allocated from:\n    #0 0x1 in malloc a.c:1\n");
    CHECK_OK(mlk_lsan_parse_logs(dir, "lsan", &r, &err), &err);
    CHECK(r.n == 2 && !r.complete); /* one process died before its SUMMARY */
    mlk_leak_report_free(&r);
    unlink(a), unlink(b), unlink(c), rmdir(dir);
    CHECK(mlk_lsan_parse_logs("/nonexistent/dir", "lsan", &r, &err) == MLK_E_IO);
    mlk_leak_report_free(&r);
}

int main(void)
{
    planted();
    default_format();
    odd_reports();
    log_files();
    return check_summary();
}
