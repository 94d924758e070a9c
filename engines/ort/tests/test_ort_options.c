/* test_ort_options.c: the ORT plugin's option parser, telemetry switch and mmap=off reader, without ONNX Runtime.
 * It must never leave files behind: everything lives in one mkdtemp folder. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mlk_check.h"
#include "ort_internal.h"
#include "refengine.h"

static int parse1(const char *k, const char *v, ort_opts *o, engine_error *err)
{
    engine_kv kv = {k, v};
    memset(err, 0, sizeof *err);
    return ort_opts_parse(&kv, 1, o, err);
}

static void test_defaults_and_values(void)
{
    ort_opts o;
    engine_error err = {0};
    CHECK(ort_opts_parse(NULL, 0, &o, &err) == 0);
    CHECK(o.threads == 1 && o.inter_threads == 1 && o.arena == 1 && o.mem_pattern == 1);
    CHECK(o.extend_strategy == -1 && o.graph_opt == 99 && o.prepacking == 1 && o.init_device_alloc == 0);
    CHECK(o.arena_shrinkage == 0 && o.mmap == 1 && o.n_dims == 0);
    CHECK(o.telemetry == 0); /* ORT's own default is on: the plugin's is off (README: telemetry) */
    engine_kv kv[] = {{"threads", "2"},          {"inter_threads", "0"},      {"arena", "off"},
                      {"mem_pattern", "false"},  {"arena_extend_strategy", "exact"}, {"graph_optimization", "basic"},
                      {"prepacking", "off"},     {"initializers_in_device_allocator", "on"},
                      {"arena_shrinkage", "yes"}, {"mmap", "0"},              {"dim.batch", "4"},
                      {"dim.seq", "7"},          {"dim.batch", "5"}};
    CHECK(ort_opts_parse(kv, sizeof kv / sizeof kv[0], &o, &err) == 0);
    CHECK(o.threads == 2 && o.inter_threads == 0 && o.arena == 0 && o.mem_pattern == 0);
    CHECK(o.extend_strategy == 1 && o.graph_opt == 1 && o.prepacking == 0 && o.init_device_alloc == 1);
    CHECK(o.arena_shrinkage == 1 && o.mmap == 0);
    CHECK(o.n_dims == 2 && ort_opts_dim(&o, "batch") == 5 && ort_opts_dim(&o, "seq") == 7);
    CHECK(ort_opts_dim(&o, "other") == 0);
    CHECK(parse1("graph_optimization", "disable", &o, &err) == 0 && o.graph_opt == 0);
    CHECK(parse1("telemetry", "on", &o, &err) == 0 && o.telemetry == 1);
    CHECK(parse1("telemetry", "sometimes", &o, &err) == ORT_E_INVALID);
    CHECK(parse1("graph_optimization", "extended", &o, &err) == 0 && o.graph_opt == 2);
    CHECK(parse1("arena_extend_strategy", "pow2", &o, &err) == 0 && o.extend_strategy == 0);
}

static void test_errors(void)
{
    ort_opts o;
    engine_error err;
    CHECK(parse1("planner", "greedy", &o, &err) == ORT_E_NOTFOUND);
    CHECK(strstr(err.msg, "unknown option 'planner'") != NULL);
    CHECK(strstr(err.msg, ort_opts_keys()) != NULL);
    CHECK(parse1("arena", "maybe", &o, &err) == ORT_E_INVALID && !strcmp(err.msg, "option arena: 'maybe' is not on|off"));
    CHECK(parse1("threads", "257", &o, &err) == ORT_E_INVALID);
    CHECK(!strcmp(err.msg, "option threads: '257' is not an integer in [0, 256]"));
    CHECK(parse1("threads", "2x", &o, &err) == ORT_E_INVALID);
    CHECK(parse1("threads", "", &o, &err) == ORT_E_INVALID);
    CHECK(parse1("arena_extend_strategy", "double", &o, &err) == ORT_E_INVALID);
    CHECK(!strcmp(err.msg, "option arena_extend_strategy: 'double' is not pow2|exact"));
    CHECK(parse1("graph_optimization", "max", &o, &err) == ORT_E_INVALID);
    CHECK(!strcmp(err.msg, "option graph_optimization: 'max' is not disable|basic|extended|all"));
    CHECK(parse1("dim.batch", "0", &o, &err) == ORT_E_INVALID && strstr(err.msg, "option dim.batch: '0'"));
    CHECK(parse1("dim.", "3", &o, &err) == ORT_E_INVALID && strstr(err.msg, "name must be 1 to 63"));
    engine_kv nul = {"threads", NULL};
    CHECK(ort_opts_parse(&nul, 1, &o, &err) == ORT_E_INVALID && strstr(err.msg, "key and value are required"));
    engine_kv many[ORT_MAX_DIMS + 1];
    char names[ORT_MAX_DIMS + 1][24];
    for (int i = 0; i <= ORT_MAX_DIMS; i++) {
        snprintf(names[i], sizeof names[i], "dim.d%d", i);
        many[i] = (engine_kv){names[i], "2"};
    }
    CHECK(ort_opts_parse(many, ORT_MAX_DIMS, &o, &err) == 0 && o.n_dims == ORT_MAX_DIMS);
    CHECK(ort_opts_parse(many, ORT_MAX_DIMS + 1, &o, &err) == ORT_E_INVALID && strstr(err.msg, "at most 16"));
    CHECK(ort_fail(NULL, ORT_E_IO, "no err record") == ORT_E_IO);
    CHECK(ort_fail(&err, ORT_E_NOMEM, "x") == ORT_E_NOMEM && err.oom == 1 && err.code == ORT_E_NOMEM);
}

static void test_dtype_sizes(void)
{
    CHECK(ort_dtype_size(1) == 4 && ort_dtype_size(7) == 8 && ort_dtype_size(9) == 1 && ort_dtype_size(10) == 2);
    CHECK(ort_dtype_size(8) == 0 && ort_dtype_size(0) == 0 && ort_dtype_size(99) == 0);
}

static int write_bytes(const char *path, const void *b, size_t n)
{
    FILE *f = fopen(path, "wb");
    if (!f)
        return -1;
    size_t w = fwrite(b, 1, n, f);
    return fclose(f) || w != n ? -1 : 0;
}

/* A ModelProto whose one initializer names location loc: graph(7) { initializer(5) { external_data(13) {
 * key(1) "location", value(2) loc } } }. */
static size_t craft_model(uint8_t *out, const char *loc)
{
    size_t l = strlen(loc), entry = 2 + 8 + 2 + l, tensor = 2 + entry, graph = 2 + tensor, n = 0;
    uint8_t *p = out;
    p[n++] = 7 << 3 | 2, p[n++] = (uint8_t)graph;
    p[n++] = 5 << 3 | 2, p[n++] = (uint8_t)tensor;
    p[n++] = 13 << 3 | 2, p[n++] = (uint8_t)entry;
    p[n++] = 1 << 3 | 2, p[n++] = 8;
    memcpy(p + n, "location", 8), n += 8;
    p[n++] = 2 << 3 | 2, p[n++] = (uint8_t)l;
    memcpy(p + n, loc, l), n += l;
    return n;
}

static void test_read_bytes(const char *dir)
{
    char model[512], data[600], path[512];
    engine_error err = {0};
    ort_bytes b = {0};
    snprintf(model, sizeof model, "%s/r18.onnx", dir);
    ref_gen_options g;
    ref_gen_options_init(&g);
    g.arch = "resnet18";
    g.image_size = 32;
    g.external_data = 1;
    ref_error re = {0};
    CHECK_OK(ref_gen_model(&g, model, &re), NULL);
    CHECK_OK(ort_bytes_read(model, &b, &err), NULL);
    CHECK(b.n_ext == 1 && b.ext_names && !strcmp(b.ext_names[0], "r18.onnx.data"));
    snprintf(data, sizeof data, "%s.data", model);
    FILE *f = fopen(data, "rb");
    long len = -1;
    if (f && !fseek(f, 0, SEEK_END))
        len = ftell(f);
    if (f)
        fclose(f);
    CHECK(b.n_ext == 1 && b.ext_lens && (long)b.ext_lens[0] == len && len > 1000000);
    CHECK(b.model && b.model_len > 0 && b.model_len < 100000);
    ort_bytes_free(&b);
    CHECK(b.model == NULL && b.n_ext == 0);
    ort_bytes_free(&b);

    /* Without external data: no files beside the model. */
    g.external_data = 0;
    g.arch = "mlp";
    g.mlp_hidden = 16;
    snprintf(path, sizeof path, "%s/mlp.onnx", dir);
    CHECK_OK(ref_gen_model(&g, path, &re), NULL);
    CHECK_OK(ort_bytes_read(path, &b, &err), NULL);
    CHECK(b.n_ext == 0 && b.model_len > 0);
    ort_bytes_free(&b);

    /* Errors leave *out empty and say which file. */
    uint8_t buf[256];
    snprintf(path, sizeof path, "%s/evil.onnx", dir);
    CHECK(write_bytes(path, buf, craft_model(buf, "../secret.bin")) == 0);
    CHECK(ort_bytes_read(path, &b, &err) == ORT_E_IO && strstr(err.msg, "'../secret.bin' leaves the model's folder"));
    CHECK(b.model == NULL);
    CHECK(write_bytes(path, buf, craft_model(buf, "/etc/passwd")) == 0);
    CHECK(ort_bytes_read(path, &b, &err) == ORT_E_IO && strstr(err.msg, "leaves the model's folder"));
    CHECK(write_bytes(path, buf, craft_model(buf, "gone.data")) == 0);
    CHECK(ort_bytes_read(path, &b, &err) == ORT_E_NOTFOUND && strstr(err.msg, "gone.data"));
    size_t n = craft_model(buf, "x.data");
    CHECK(write_bytes(path, buf, n - 3) == 0); /* a length that runs past the end */
    CHECK(ort_bytes_read(path, &b, &err) == ORT_E_PARSE && strstr(err.msg, "evil.onnx is not a well-formed"));
    CHECK(ort_bytes_read("/nonexistent/m.onnx", &b, &err) == ORT_E_NOTFOUND && strstr(err.msg, "/nonexistent/m.onnx"));
    CHECK(ort_bytes_read(dir, &b, &err) == ORT_E_IO && strstr(err.msg, "not a regular file"));
    unlink(path);
    snprintf(path, sizeof path, "%s/mlp.onnx", dir);
    unlink(path);
    unlink(data);
    unlink(model);
}

/* The telemetry switch works on the process environment: start from one with no CI variable and no user setting. */
static void test_telemetry_env(void)
{
    for (size_t i = 0; ort_ci_vars[i]; i++)
        unsetenv(ort_ci_vars[i]);
    unsetenv("ORT_DISABLE_TELEMETRY");
    engine_error err = {0};
    const char *v;
    CHECK(ort_telemetry_env(0, &err) == 0);
    CHECK((v = getenv("ORT_DISABLE_TELEMETRY")) && !strcmp(v, "1")); /* off: set before ORT loads */
    CHECK(ort_telemetry_check_on(&err) == 0);                         /* ours, so on may undo it */
    CHECK(ort_telemetry_env(1, &err) == 0 && !getenv("ORT_DISABLE_TELEMETRY"));
    CHECK(ort_telemetry_env(0, &err) == 0 && getenv("ORT_DISABLE_TELEMETRY"));
    CHECK(ort_telemetry_env(1, &err) == 0 && !getenv("ORT_DISABLE_TELEMETRY"));

    setenv("CI", "true", 1);
    CHECK(ort_telemetry_env(1, &err) == ORT_E_INVALID && strstr(err.msg, "CI=true is set"));
    CHECK(ort_telemetry_check_on(&err) == ORT_E_INVALID);
    CHECK(ort_telemetry_env(0, &err) == 0); /* off is always possible */
    CHECK(ort_telemetry_env(1, &err) == ORT_E_INVALID);
    setenv("CI", "false", 1); /* ORT keeps telemetry on for CI=false, 0, no or empty */
    CHECK(ort_telemetry_env(1, &err) == 0 && !getenv("ORT_DISABLE_TELEMETRY"));
    setenv("CI", "", 1);
    setenv("GITHUB_ACTIONS", "true", 1);
    CHECK(ort_telemetry_check_on(&err) == ORT_E_INVALID && strstr(err.msg, "GITHUB_ACTIONS=true"));
    unsetenv("GITHUB_ACTIONS");
    unsetenv("CI");

    setenv("ORT_DISABLE_TELEMETRY", "yes", 1); /* the user's own: kept, and on is refused */
    CHECK(ort_telemetry_env(0, &err) == 0 && !strcmp(getenv("ORT_DISABLE_TELEMETRY"), "yes"));
    CHECK(ort_telemetry_env(1, &err) == ORT_E_INVALID && strstr(err.msg, "ORT_DISABLE_TELEMETRY=yes"));
    CHECK(!strcmp(getenv("ORT_DISABLE_TELEMETRY"), "yes"));
    unsetenv("ORT_DISABLE_TELEMETRY");
}

int main(void)
{
    test_telemetry_env();
    char dir[] = "/tmp/mlk-ort-opts.XXXXXX";
    test_defaults_and_values();
    test_errors();
    test_dtype_sizes();
    if (mkdtemp(dir)) {
        test_read_bytes(dir);
        CHECK(rmdir(dir) == 0);
    } else {
        CHECK(!"mkdtemp");
    }
    return check_summary();
}
