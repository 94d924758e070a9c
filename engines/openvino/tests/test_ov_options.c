/* test_ov_options.c: the OpenVINO plugin's option parser, release strings, release folders and ONNX dims reader, without
 * OpenVINO. It must never leave files behind: everything lives in one mkdtemp folder. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define MLK_CHECK_ERROR engine_error
#include "engine.h"
#include "mlk_check.h"
#include "ov_internal.h"
#include "refengine.h"

static int parse1(const char *k, const char *v, ov_opts *o, engine_error *err)
{
    engine_kv kv = {k, v};
    memset(err, 0, sizeof *err);
    return ov_opts_parse(&kv, 1, o, err);
}

static void test_defaults_and_values(void)
{
    ov_opts o;
    engine_error err = {0};
    CHECK(ov_opts_parse(NULL, 0, &o, &err) == 0);
    CHECK(o.mmap == 1 && o.threads == 1 && o.compile_threads == -1 && o.streams == -1 && o.hint == -1);
    CHECK(o.runtime_cache == -1 && o.cache_dir[0] == '\0' && o.precision == -1 && o.version[0] == '\0');
    engine_kv kv[] = {{"mmap", "off"},          {"threads", "0"},        {"compile_threads", "2"},
                      {"streams", "auto"},      {"hint", "throughput"},  {"runtime_cache", "0"},
                      {"cache_dir", "/tmp/ovc"}, {"precision", "bf16"},  {"version", "2024.6.0"},
                      {"dim.batch", "4"},       {"dim.seq", "7"},        {"dim.batch", "5"}};
    CHECK(ov_opts_parse(kv, sizeof kv / sizeof kv[0], &o, &err) == 0);
    CHECK(o.mmap == 0 && o.threads == 0 && o.compile_threads == 2 && o.streams == 0);
    CHECK(!strcmp(ov_hint_value(o.hint), "THROUGHPUT") && o.runtime_cache == 0);
    CHECK(!strcmp(o.cache_dir, "/tmp/ovc") && !strcmp(ov_precision_value(o.precision), "bf16"));
    CHECK(!strcmp(o.version, "2024.6.0"));
    CHECK(o.n_dims == 2 && ov_opts_dim(&o, "batch") == 5 && ov_opts_dim(&o, "seq") == 7 && ov_opts_dim(&o, "x") == 0);
    CHECK(parse1("streams", "3", &o, &err) == 0 && o.streams == 3);
    CHECK(parse1("hint", "latency", &o, &err) == 0 && !strcmp(ov_hint_value(o.hint), "LATENCY"));
    CHECK(ov_hint_value(-1) == NULL && ov_precision_value(99) == NULL);
}

static void test_errors(void)
{
    ov_opts o;
    engine_error err = {0};
    CHECK(parse1("arena", "on", &o, &err) == OV_E_NOTFOUND);
    CHECK(strstr(err.msg, "unknown option 'arena'") && strstr(err.msg, "accepted: mmap, threads, compile_threads"));
    CHECK(parse1("mmap", "maybe", &o, &err) == OV_E_INVALID && strstr(err.msg, "option mmap: 'maybe' is not on|off"));
    CHECK(parse1("threads", "-1", &o, &err) == OV_E_INVALID && strstr(err.msg, "[0, 1024]"));
    CHECK(parse1("streams", "0", &o, &err) == OV_E_INVALID && strstr(err.msg, "not auto or an integer"));
    CHECK(parse1("hint", "fast", &o, &err) == OV_E_INVALID && strstr(err.msg, "'fast' is not latency|throughput"));
    CHECK(parse1("precision", "int8", &o, &err) == OV_E_INVALID && strstr(err.msg, "not f32|bf16|f16"));
    CHECK(parse1("runtime_cache", "x", &o, &err) == OV_E_INVALID);
    CHECK(parse1("cache_dir", "", &o, &err) == OV_E_INVALID);
    CHECK(parse1("dim.", "3", &o, &err) == OV_E_INVALID);
    CHECK(parse1("dim.seq", "0", &o, &err) == OV_E_INVALID);
    const char *bad[] = {"2024.6", "1.2.3", "2024.06.0", "2024.6.0.1", "v2024.6.0", "", "2024.6.x"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        CHECK(parse1("version", bad[i], &o, &err) == OV_E_INVALID);
        CHECK(strstr(err.msg, "is not an OpenVINO release such as 2024.6.0"));
    }
    engine_kv nokey = {NULL, "1"};
    CHECK(ov_opts_parse(&nokey, 1, &o, &err) == OV_E_INVALID);
}

static void test_release(const char *dir)
{
    int64_t code = 0;
    engine_error err = {0};
    CHECK(ov_release_parse("2026.4.1", "v", &code, &err) == 0 && code == 2026004001);
    CHECK(ov_release_parse("2024.10.0", "v", &code, &err) == 0 && code == 2024010000);

    char lib[1300], libs[600], f[700];
    unsetenv("MLK_OPENVINO_CACHE");
    CHECK(ov_release_library("2024.6.0", dir, lib, sizeof lib, &err) == OV_E_RELEASE);
    CHECK(strstr(err.msg, "OpenVINO 2024.6.0 is not fetched") && strstr(err.msg, "fetch.sh --versions 2024.6.0"));
    snprintf(libs, sizeof libs, "%s/2024.6.0", dir);
    CHECK(mkdir(libs, 0700) == 0);
    snprintf(libs, sizeof libs, "%s/2024.6.0/libs", dir);
    CHECK(mkdir(libs, 0700) == 0);
    snprintf(f, sizeof f, "%s/libopenvino_c.so.2460", libs);
    FILE *fp = fopen(f, "w");
    CHECK(fp && fclose(fp) == 0);
    CHECK_OK(ov_release_library("2024.6.0", dir, lib, sizeof lib, &err), NULL);
    CHECK(!strcmp(lib, f));
    CHECK(ov_release_library("2024.6.0", dir, lib, 8, &err) == OV_E_INVALID);
    /* $MLK_OPENVINO_CACHE wins over the built-in cache, and the message says how to fetch into it */
    setenv("MLK_OPENVINO_CACHE", "/nonexistent-ov", 1);
    CHECK(ov_release_library("2024.6.0", dir, lib, sizeof lib, &err) == OV_E_RELEASE);
    CHECK(strstr(err.msg, "MLK_OPENVINO_CACHE=/nonexistent-ov engines/openvino/fetch.sh"));
    unsetenv("MLK_OPENVINO_CACHE");
    CHECK(unlink(f) == 0 && rmdir(libs) == 0);
    snprintf(libs, sizeof libs, "%s/2024.6.0", dir);
    CHECK(rmdir(libs) == 0);
}

static void test_onnx_dims(const char *dir)
{
    char model[600];
    snprintf(model, sizeof model, "%s/tr.onnx", dir);
    ref_gen_options g;
    ref_gen_options_init(&g);
    g.arch = "transformer";
    g.layers = 1;
    g.hidden = 16;
    g.heads = 2;
    g.seq = 8;
    g.dynamic = 1;
    ref_error re = {0};
    CHECK_OK(ref_gen_model(&g, model, &re), NULL);
    ov_onnx_dims d;
    engine_error err = {0};
    CHECK_OK(ov_onnx_dims_read(model, &d, &err), &err);
    CHECK(d.n >= 1);
    const char *name = d.n ? d.input[0] : "";
    const char *p0 = ov_onnx_dims_param(&d, name, 0), *p1 = ov_onnx_dims_param(&d, name, 1);
    CHECK(p0 && !strcmp(p0, "batch") && p1 && !strcmp(p1, "seq"));
    CHECK(ov_onnx_dims_param(&d, name, 2) == NULL && ov_onnx_dims_param(&d, "no-such-input", 0) == NULL);
    CHECK(ov_onnx_dims_param(&d, name, -1) == NULL && ov_onnx_dims_param(&d, name, ENGINE_MAX_RANK) == NULL);
    ov_onnx_dims_free(&d);
    CHECK(d.n == 0 && d.input == NULL);
    ov_onnx_dims_free(&d); /* twice is fine */

    /* a file that is not ONNX: a parse error naming the file; a missing one: not found */
    FILE *f = fopen(model, "wb");
    CHECK(f && fwrite("\x3a\xff\xff\xff\x0f", 1, 5, f) == 5 && fclose(f) == 0);
    CHECK(ov_onnx_dims_read(model, &d, &err) == OV_E_PARSE && strstr(err.msg, "tr.onnx") && d.input == NULL);
    CHECK(unlink(model) == 0);
    CHECK(ov_onnx_dims_read(model, &d, &err) == OV_E_NOTFOUND);
}

int main(void)
{
    char dir[] = "/tmp/mlk-ov-opts.XXXXXX";
    test_defaults_and_values();
    test_errors();
    if (mkdtemp(dir)) {
        test_release(dir);
        test_onnx_dims(dir);
        CHECK(rmdir(dir) == 0);
    } else {
        CHECK(!"mkdtemp");
    }
    return check_summary();
}
