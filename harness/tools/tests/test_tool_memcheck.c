/* test_tool_memcheck.c: valgrind memcheck's XML into leak records: a captured planted leak, every leak kind with
 * a definitely lost record that owns indirect blocks, other errors, which records are the engine's, and documents
 * that are cut short, malformed or not memcheck's. It must never need valgrind: test_tool_valgrind runs it. */
#include "mlk_check.h"
#include "tool.h"
#include "tool_test.h"

static void planted(void)
{
    char path[1200];
    tool_fixture("memcheck_planted.xml", path, sizeof path);
    mlk_leak_report r;
    mlk_error err = {0};
    CHECK_OK(mlk_memcheck_parse(path, &r, &err), &err);
    CHECK(r.complete);
    CHECK(r.n == 1);
    CHECK(r.n_other_errors == 0);
    if (r.n == 1) {
        const mlk_leak *l = &r.leaks[0];
        /* inject_leak_bytes=4096 on infer, 3 iterations: 3 blocks of 4096 */
        CHECK(l->kind == MLK_LEAK_DEFINITELY);
        CHECK(l->bytes == 12288 && l->total_bytes == 12288 && l->blocks == 3);
        CHECK(l->n_frames >= 5);
        CHECK(l->n_frames >= 2 && str_eq(l->frames[0].fn, "malloc") && mlk_frame_is_allocator(&l->frames[0]));
        CHECK(l->n_frames >= 2 && str_eq(l->frames[1].fn, "leak"));
        CHECK(l->n_frames >= 2 && ends_with(l->frames[1].file, "/engines/ref/src/inject.c") &&
              l->frames[1].line == 38);
        CHECK(l->n_frames >= 2 && ends_with(l->frames[1].obj, "/engine_ref.so"));
    }
    const char *harness[] = {"/somewhere/else/memleak-run", NULL};
    mlk_leaks_attribute(&r, harness);
    int64_t bytes[MLK_LEAK_KIND_COUNT], blocks[MLK_LEAK_KIND_COUNT], engine = -1;
    mlk_leaks_sum(&r, bytes, blocks, &engine);
    CHECK(bytes[MLK_LEAK_DEFINITELY] == 12288 && blocks[MLK_LEAK_DEFINITELY] == 3 && engine == 12288);
    mlk_leak_report_free(&r);
    CHECK(r.n == 0 && r.leaks == NULL);
}

static void kinds(void)
{
    char path[1200];
    tool_fixture("memcheck_kinds.xml", path, sizeof path);
    mlk_leak_report r;
    mlk_error err = {0};
    CHECK_OK(mlk_memcheck_parse(path, &r, &err), &err);
    CHECK(r.complete && r.n == 5);
    /* the InvalidRead: counted, described, and its two stacks never taken for a leak's */
    CHECK(r.n_other_errors == 1 && strstr(r.first_error, "InvalidRead: Invalid read of size 4"));
    int64_t bytes[MLK_LEAK_KIND_COUNT], blocks[MLK_LEAK_KIND_COUNT];
    mlk_leaks_sum(&r, bytes, blocks, NULL);
    /* what valgrind's text LEAK SUMMARY would say: direct bytes per kind */
    CHECK(bytes[MLK_LEAK_DEFINITELY] == 1016 + 24 && blocks[MLK_LEAK_DEFINITELY] == 3);
    CHECK(bytes[MLK_LEAK_INDIRECTLY] == 40 && blocks[MLK_LEAK_INDIRECTLY] == 1);
    CHECK(bytes[MLK_LEAK_POSSIBLY] == 64 && bytes[MLK_LEAK_REACHABLE] == 77);
    if (r.n == 5) {
        const mlk_leak *chain = &r.leaks[1];
        CHECK(chain->kind == MLK_LEAK_DEFINITELY && chain->bytes == 1016 && chain->total_bytes == 1056);
        CHECK(chain->n_frames == 3 && str_eq(chain->frames[1].fn, "list_new<float>"));
        CHECK(chain->n_frames == 3 && str_eq(chain->frames[1].file, "/src/engine/list.c"));
        CHECK(chain->n_frames == 3 && !chain->frames[2].file && chain->frames[2].line == 0);
        CHECK(r.leaks[2].n_frames == 2 && !r.leaks[2].frames[1].fn && !r.leaks[2].frames[1].obj);
    }
    const char *harness[] = {"/usr/bin/memleak-run", NULL};
    mlk_leaks_attribute(&r, harness);
    if (r.n == 5) {
        CHECK(r.leaks[0].in_engine);  /* libengine.so */
        CHECK(r.leaks[1].in_engine);  /* libengine.so, then the harness */
        CHECK(r.leaks[2].in_engine);  /* a frame of no known object: never hidden */
        CHECK(!r.leaks[3].in_engine); /* the loader */
        CHECK(!r.leaks[4].in_engine); /* the harness and libc only */
    }
    int64_t engine = -1;
    mlk_leaks_sum(&r, NULL, NULL, &engine);
    CHECK(engine == 1016);
    mlk_leak_report_free(&r);
}

static int parse_text(const char *xml, mlk_leak_report *r, mlk_error *err)
{
    int rc = mlk_memcheck_parse_buf(xml, strlen(xml), "t.xml", r, err);
    return rc;
}

static void cut_short(void)
{
    size_t len = 0;
    char *xml = tool_fixture_text("memcheck_planted.xml", &len);
    CHECK(xml != NULL);
    if (!xml)
        return;
    char *mid = strstr(xml, "<leakedbytes>");
    mlk_leak_report r;
    mlk_error err = {0};
    /* the worker was killed while valgrind wrote its leak records: no error, nothing half-read, incomplete */
    CHECK_OK(mlk_memcheck_parse_buf(xml, mid ? (size_t)(mid - xml) : len / 2, "cut.xml", &r, &err), &err);
    CHECK(!r.complete && r.n == 0);
    mlk_leak_report_free(&r);
    char *end = strstr(xml, "</valgrindoutput>");
    CHECK_OK(mlk_memcheck_parse_buf(xml, end ? (size_t)(end - xml) : len, "cut.xml", &r, &err), &err);
    CHECK(!r.complete && r.n == 1);
    mlk_leak_report_free(&r);
    free(xml);
}

static void refused(void)
{
    static const struct {
        const char *xml, *msg;
        int code;
    } cases[] = {
        {"", "empty", MLK_E_PARSE},
        {"not xml at all", "t.xml:1: not valgrind's XML", MLK_E_PARSE},
        {"<html><body/></html>", "expected valgrind's <valgrindoutput>, got <html>", MLK_E_PARSE},
        {"<valgrindoutput><protocoltool>helgrind</protocoltool></valgrindoutput>", "got the tool 'helgrind'",
         MLK_E_PARSE},
        {"<valgrindoutput><protocoltool>memcheck</protocoltool><error><kind>Leak_DefinitelyLost</kind>"
         "<xwhat><text>8 bytes</text><leakedblocks>1</leakedblocks></xwhat></error></valgrindoutput>",
         "expected <leakedbytes> and <leakedblocks>", MLK_E_PARSE},
        {"<valgrindoutput><protocoltool>memcheck</protocoltool><error><kind>Leak_DefinitelyLost</kind>"
         "<xwhat><text>8</text><leakedbytes>-8</leakedbytes><leakedblocks>1</leakedblocks></xwhat></error>"
         "</valgrindoutput>",
         "expected <leakedbytes>", MLK_E_PARSE},
        {"<valgrindoutput><protocoltool>memcheck</protocoltool><error><xwhat/></error></valgrindoutput>",
         "without its <kind>", MLK_E_PARSE},
        {"<valgrindoutput><protocoltool>memcheck</protocoltool><error></valgrindoutput>", "t.xml:1: not valgrind's",
         MLK_E_PARSE},
        {"<valgrindoutput></valgrindoutput>", "no <protocoltool>", MLK_E_PARSE},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        mlk_leak_report r;
        mlk_error err = {0};
        int rc = parse_text(cases[i].xml, &r, &err);
        CHECK(rc == cases[i].code);
        if (!strstr(err.msg, cases[i].msg))
            fprintf(stderr, "case %zu: message '%s', expected it to contain '%s'\n", i, err.msg, cases[i].msg);
        CHECK(strstr(err.msg, cases[i].msg) != NULL);
        mlk_leak_report_free(&r);
    }
    mlk_leak_report r;
    mlk_error err = {0};
    CHECK(mlk_memcheck_parse("/nonexistent/memcheck.xml", &r, &err) == MLK_E_IO);
    CHECK(strstr(err.msg, "/nonexistent/memcheck.xml") != NULL);
    mlk_leak_report_free(&r);
}

int main(void)
{
    planted();
    kinds();
    cut_short();
    refused();
    CHECK(str_eq(mlk_tool_name(MLK_TOOL_MEMCHECK), "memcheck") && mlk_tool_from_name("lsan") == MLK_TOOL_LSAN);
    CHECK(mlk_tool_from_name(NULL) == MLK_TOOL_NONE && mlk_tool_from_name("helgrind") == -1);
    return check_summary();
}
