/* test_ort_release.c: the ORT plugin's releases without ONNX Runtime: release strings, the version option, where a
 * release's library is looked for (a fake cache), the C API needs of options, and ORT_API_OF's version boundaries.
 * It must never leave files behind: the fake cache lives in one mkdtemp folder, removed at the end. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define MLK_CHECK_ERROR engine_error
#include "engine.h"
#include "mlk_check.h"
#include "ort_internal.h"

static void test_parse(void)
{
    engine_error err = {0};
    int api = -1;
    int64_t code = -1;
    CHECK(ort_release_parse("1.23.2", "x", &api, &code, &err) == 0 && api == 23 && code == 1023002);
    CHECK(ort_release_parse("1.30.0", "x", &api, &code, &err) == 0 && api == 30 && code == 1030000);
    CHECK(ort_release_parse("1.5.0", "x", &api, &code, &err) == 0 && api == 5 && code == 1005000);
    CHECK(ort_release_parse("1.17.3", "x", NULL, NULL, &err) == 0);
    api = -1, code = -1;
    const char *bad[] = {"", "1", "1.23", "1.23.", "1.23.2.1", "2.0.0", "0.9.0", "1.023.2", "v1.23.2", "1.23.2 ",
                         "1.2x.0", "1.1234.0", "1..0", NULL};
    for (int i = 0; bad[i]; i++) {
        CHECK(ort_release_parse(bad[i], "option version", &api, &code, &err) == ORT_E_INVALID);
        CHECK(strstr(err.msg, "option version: '") && strstr(err.msg, "is not an ONNX Runtime 1.x release"));
    }
    CHECK(api == -1 && code == -1); /* untouched on failure */
    CHECK(ort_release_parse(NULL, "v", &api, &code, &err) == ORT_E_INVALID);
    CHECK(ort_release_parse("1.4.2", "option version", &api, &code, &err) == ORT_E_INVALID);
    CHECK(strstr(err.msg, "needs C API 5 or later") && strstr(err.msg, "fetches 1.10.0 and later"));
    CHECK(ort_release_parse("1.4.2", "", NULL, NULL, NULL) == ORT_E_INVALID); /* err may be NULL */
}

static void test_option(void)
{
    ort_opts o;
    engine_error err = {0};
    engine_kv kv = {"version", "1.17.3"};
    CHECK(ort_opts_parse(&kv, 1, &o, &err) == 0 && !strcmp(o.version, "1.17.3"));
    CHECK(ort_opts_parse(NULL, 0, &o, &err) == 0 && o.version[0] == '\0');
    kv.value = "latest";
    CHECK(ort_opts_parse(&kv, 1, &o, &err) == ORT_E_INVALID && strstr(err.msg, "option version: 'latest'"));
    CHECK(strstr(ort_opts_keys(), "version") != NULL);
}

static void test_needs(void)
{
    size_t n = 0;
    const ort_need *t = ort_needs(&n);
    CHECK(n == 3);
    for (size_t i = 0; i < n; i++)
        CHECK(t[i].api > ORT_API_MIN && t[i].api <= 23 && t[i].member && t[i].member[0]);
    const ort_need *need = ort_need_find("mmap=off with external data");
    CHECK(need && need->api == 18 && !strcmp(need->member, "AddExternalInitializersFromFilesInMemory"));
    CHECK(ort_need_find("threads") == NULL);

    ort_opts o;
    engine_error err = {0};
    engine_kv kv[] = {{"arena_extend_strategy", "exact"}, {"arena_shrinkage", "on"}};
    CHECK(ort_opts_parse(kv, 2, &o, &err) == 0);
    CHECK(ort_opts_check_api(&o, 10, "1.10.0", &err) == 0); /* every release fetch.sh fetches serves both */
    CHECK(ort_opts_check_api(&o, 9, "1.9.0", &err) == 0);
    CHECK(ort_opts_check_api(&o, 8, "1.8.2", &err) == ORT_E_RELEASE);
    CHECK_STR(err.msg, "option arena_extend_strategy needs C API 9 (ONNX Runtime 1.9 or later: UnregisterAllocator); "
                       "ONNX Runtime 1.8.2 serves C API 8");
    CHECK(ort_opts_parse(kv + 1, 1, &o, &err) == 0);
    CHECK(ort_opts_check_api(&o, 8, "1.8.2", &err) == 0);
    CHECK(ort_opts_check_api(&o, 7, "1.7.0", &err) == ORT_E_RELEASE && strstr(err.msg, "option arena_shrinkage"));
    engine_kv off[] = {{"arena_shrinkage", "on"}, {"arena", "off"}}; /* no arena: nothing to shrink, nothing asked */
    CHECK(ort_opts_parse(off, 2, &o, &err) == 0 && ort_opts_check_api(&o, 5, "1.5.0", &err) == 0);
}

/* ORT_API_OF at upstream's boundaries (the last member index of each C API version). */
static void test_api_of(void)
{
    static const struct {
        int last, api;
    } b[] = {{101, 1},  {118, 2},  {124, 3},  {126, 4},  {149, 5},  {157, 6},  {161, 7},  {169, 8},
             {191, 9},  {203, 10}, {209, 11}, {218, 12}, {224, 13}, {238, 14}, {254, 15}, {265, 16},
             {275, 17}, {279, 18}, {284, 20}, {317, 22}, {389, 23}};
    CHECK(ORT_API_OF(0) == 1);
    for (size_t i = 0; i < sizeof b / sizeof b[0]; i++) {
        CHECK(ORT_API_OF(b[i].last) == b[i].api);
        CHECK(ORT_API_OF(b[i].last + 1) == (i + 1 < sizeof b / sizeof b[0] ? b[i + 1].api : 0));
    }
}

static int touch(const char *path)
{
    FILE *f = fopen(path, "w");
    return f && fclose(f) == 0 ? 0 : -1;
}

static void test_library(const char *dir)
{
    char p[600], lib[600], out[700];
    engine_error err = {0};
    /* fetch.sh's layout: <cache>/lib/libonnxruntime.so.1 (the default) and <cache>/<version>/lib/... */
    snprintf(p, sizeof p, "%s/lib", dir);
    CHECK(mkdir(p, 0700) == 0);
    snprintf(lib, sizeof lib, "%s/lib/libonnxruntime.so.1", dir);
    CHECK(touch(lib) == 0);
    snprintf(p, sizeof p, "%s/1.23.2", dir);
    CHECK(mkdir(p, 0700) == 0);
    snprintf(p, sizeof p, "%s/1.23.2/lib", dir);
    CHECK(mkdir(p, 0700) == 0);
    snprintf(p, sizeof p, "%s/1.23.2/lib/libonnxruntime.so.1", dir);
    CHECK(touch(p) == 0);

    CHECK_OK(ort_release_library("1.23.2", lib, "1.30.0", out, sizeof out, &err), &err);
    CHECK_STR(out, p);
    CHECK_OK(ort_release_library("1.30.0", lib, "1.30.0", out, sizeof out, &err), &err); /* the default */
    CHECK_STR(out, lib);
    /* Not fetched: the file looked for, and the fetch.sh command, with the cache when it is not fetch.sh's own. */
    setenv("MLK_ORT_CACHE", dir, 1);
    strcpy(out, "untouched");
    CHECK(ort_release_library("1.17.3", lib, "1.30.0", out, sizeof out, &err) == ORT_E_RELEASE);
    CHECK(!strcmp(out, "untouched"));
    char want[900];
    snprintf(want, sizeof want, "option version: ONNX Runtime 1.17.3 is not fetched (no %s/1.17.3/lib/"
             "libonnxruntime.so.1); fetch it with: engines/ort/fetch.sh --versions 1.17.3", dir);
    CHECK_STR(err.msg, want);
    setenv("MLK_ORT_CACHE", "/elsewhere", 1);
    CHECK(ort_release_library("1.17.3", lib, "1.30.0", out, sizeof out, &err) == ORT_E_RELEASE);
    snprintf(want, sizeof want, "fetch it with: MLK_ORT_CACHE=%s engines/ort/fetch.sh --versions 1.17.3", dir);
    CHECK(strstr(err.msg, want) != NULL);
    unsetenv("MLK_ORT_CACHE");
    CHECK(ort_release_library("1.23.2", lib, "1.30.0", out, 8, &err) == ORT_E_INVALID); /* does not fit */
    CHECK(ort_release_library("1.23.2", "libonnxruntime.so.1", "1.30.0", out, sizeof out, &err) == ORT_E_INVALID);

    CHECK(unlink(p) == 0);
    snprintf(p, sizeof p, "%s/1.23.2/lib", dir);
    CHECK(rmdir(p) == 0);
    snprintf(p, sizeof p, "%s/1.23.2", dir);
    CHECK(rmdir(p) == 0);
    CHECK(unlink(lib) == 0);
    snprintf(p, sizeof p, "%s/lib", dir);
    CHECK(rmdir(p) == 0);
}

int main(void)
{
    test_parse();
    test_option();
    test_needs();
    test_api_of();
    char dir[] = "/tmp/mlk-ort-release.XXXXXX";
    if (mkdtemp(dir)) {
        test_library(dir);
        CHECK(rmdir(dir) == 0);
    } else {
        CHECK(!"mkdtemp");
    }
    return check_summary();
}
