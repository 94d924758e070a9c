/* test_scenario.c: unit tests of the scenario parser: every field of a full scenario, defaults, variants, the
 * example scenarios, one bad fixture per error kind (exact line:col and message), I/O errors (robustness tests are
 * in test_scenario_robust.c). It must never leak: LSan runs it. */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "mlk_check.h"
#include "scenario.h"

static char source_dir[1024];

/* The repository root: $MLK_SOURCE_DIR (set by ctest), else three levels up from this file. */
static void find_source_dir(void)
{
    const char *env = getenv("MLK_SOURCE_DIR");
    if (env && env[0]) {
        snprintf(source_dir, sizeof source_dir, "%s", env);
        return;
    }
    snprintf(source_dir, sizeof source_dir, "%s", __FILE__);
    for (int up = 0; up < 4; up++) {
        char *slash = strrchr(source_dir, '/');
        if (slash)
            *slash = '\0';
        else
            snprintf(source_dir, sizeof source_dir, "..");
    }
}

static mlk_scenario *parse_ok(const char *text, int line)
{
    mlk_scenario *s = NULL;
    mlk_error err = {0};
    int rc = mlk_scenario_parse(text, strlen(text), "t.yaml", &s, &err);
    if (rc) {
        check_failed_++;
        fprintf(stderr, "%s:%d: parse failed (%d): %s\n", __FILE__, line, rc, err.msg);
        return NULL;
    }
    check_passed_++;
    return s;
}

/* Parse must fail with MLK_E_PARSE and a message starting "t.yaml:LINE:COL: " and containing want. */
static void parse_bad(const char *text, int line, int col, const char *want, int src_line)
{
    mlk_scenario *s = (mlk_scenario *)(uintptr_t)1;
    mlk_error err = {0};
    char prefix[64];
    snprintf(prefix, sizeof prefix, "t.yaml:%d:%d: ", line, col);
    int rc = mlk_scenario_parse(text, strlen(text), "t.yaml", &s, &err);
    if (rc == MLK_E_PARSE && err.code == MLK_E_PARSE && !strncmp(err.msg, prefix, strlen(prefix)) &&
        strstr(err.msg, want) && s == (mlk_scenario *)(uintptr_t)1) {
        check_passed_++;
        return;
    }
    check_failed_++;
    fprintf(stderr, "%s:%d: expected '%s...%s', got %d: %s\n", __FILE__, src_line, prefix, want, rc, err.msg);
    if (!rc)
        mlk_scenario_free(s);
}

#define MINIMAL       \
    "name: t\n"       \
    "engine: ref\n"   \
    "model: m.onnx\n" \
    "pipeline: [compile_model, create_request, infer, release_request, release_compiled]\n"

/* ------------------------------------------------------------------------------------------------
 * Valid scenarios
 * ---------------------------------------------------------------------------------------------- */

static void test_steps(void)
{
    for (int s = 0; s < MLK_STEP_COUNT; s++)
        CHECK(mlk_step_from_name(mlk_step_name((mlk_step)s)) == s);
    CHECK_STR(mlk_step_name(MLK_STEP_RELEASE_COMPILED), "release_compiled");
    CHECK(mlk_step_name(MLK_STEP_COUNT) == NULL);
    CHECK(mlk_step_name((mlk_step)-1) == NULL);
    CHECK(mlk_step_from_name("inference") == -1);
    CHECK(mlk_step_from_name(NULL) == -1);
    CHECK(mlk_scenario_bool("ON") == 1 && mlk_scenario_bool("no") == 0 && mlk_scenario_bool("2") == -1);
    CHECK(mlk_scenario_bool(NULL) == -1);
}

/* The matrix and engine options of test_full's text. */
static void check_full_matrix(const mlk_scenario *s)
{
    CHECK(s->n_axes == 5 && mlk_scenario_n_cells(s) == 2 * 2 * 4 * 2 * 2);
    const mlk_axis *a = mlk_scenario_axis(s, "mmap");
    CHECK(a && a->n_values == 2 && !a->variants && a->loc.line == 12 && a->loc.col == 3);
    if (a && a->n_values == 2) {
        CHECK_STR(a->values[0], "on");
        CHECK_STR(a->values[1], "off");
        CHECK(a->value_locs[1].line == 12 && a->value_locs[1].col == 14);
    }
    a = mlk_scenario_axis(s, "glibc_tunables");
    CHECK(a && a->n_values == 2);
    if (a && a->n_values == 2) {
        CHECK_STR(a->values[0], "");
        CHECK_STR(a->values[1], "glibc.malloc.arena_max=2:glibc.malloc.trim_threshold=131072");
    }
    a = mlk_scenario_axis(s, "allocator");
    CHECK(a && a->n_values == 4 && !strcmp(a->values[3], "mimalloc"));
    CHECK(mlk_scenario_axis(s, "nope") == NULL);
    CHECK(s->n_engine_options == 2);
    if (s->n_engine_options == 2) {
        CHECK_STR(s->engine_options[0].key, "planner");
        CHECK_STR(s->engine_options[0].value, "greedy");
        CHECK_STR(s->engine_options[1].value, "on");
        CHECK(s->engine_options[1].loc.line == 16 && s->engine_options[1].loc.col == 42);
    }
}

/* The example from the issue, with every key. */
static void test_full(void)
{
    static const char text[] =
        "name: compile-infer-mobilenet\n"
        "description: the issue's example\n"
        "engine: ref\n"
        "model: {generate: mobilenetv2, external_data: true, width_mult: 0.5, seed: 7}   # a comment\n"
        "setup: [load_engine, read_model]\n"
        "pipeline: [compile_model, create_request, infer, release_request, release_compiled]\n"
        "teardown: [release_model, unload_engine]\n"
        "iterations: 200\n"
        "warmup: 20\n"
        "matrix:\n"
        "  threads: [1, 2]\n"
        "  mmap: [on, off]\n"
        "  allocator: [glibc, jemalloc, tcmalloc, mimalloc]\n"
        "  malloc_trim: [off, on]\n"
        "  glibc_tunables: [\"\", \"glibc.malloc.arena_max=2:glibc.malloc.trim_threshold=131072\"]\n"
        "engine_options: {planner: greedy, arena: on}\n"
        "thresholds: {leak_bytes_per_iter: 2048}\n"
        "timeout_s: 600.5\n"
        "memory_limit_mb: 4096\n"
        "detector: openvino\n"
        "heap: off\n";
    mlk_scenario *s = parse_ok(text, __LINE__);
    if (!s)
        return;
    CHECK_STR(s->path, "t.yaml");
    CHECK(strlen(s->text) == sizeof text - 1 && !strcmp(s->text, text));
    CHECK_STR(s->name, "compile-infer-mobilenet");
    CHECK_STR(s->description, "the issue's example");
    CHECK_STR(s->engine, "ref");
    CHECK(s->engine_loc.line == 3 && s->engine_loc.col == 9);
    CHECK(s->model.kind == MLK_MODEL_GENERATE);
    CHECK_STR(s->model.generate, "mobilenetv2");
    CHECK(s->model.path == NULL && s->model.n_inputs == 0);
    CHECK(s->model.loc.line == 4 && s->model.loc.col == 8);
    CHECK(s->model.n_gen == 3);
    if (s->model.n_gen == 3) {
        CHECK_STR(s->model.gen[0].key, "external_data");
        CHECK_STR(s->model.gen[0].value, "true");
        CHECK_STR(s->model.gen[1].key, "width_mult");
        CHECK_STR(s->model.gen[1].value, "0.5");
        CHECK(s->model.gen[1].loc.line == 4 && s->model.gen[1].loc.col == 65);
        CHECK_STR(s->model.gen[2].value, "7");
    }
    CHECK(s->n_setup == 2 && s->setup[0] == MLK_STEP_LOAD_ENGINE && s->setup[1] == MLK_STEP_READ_MODEL);
    CHECK(s->n_pipeline == 5 && s->pipeline[0] == MLK_STEP_COMPILE_MODEL && s->pipeline[2] == MLK_STEP_INFER &&
          s->pipeline[4] == MLK_STEP_RELEASE_COMPILED);
    CHECK(s->n_teardown == 2 && s->teardown[1] == MLK_STEP_UNLOAD_ENGINE);
    CHECK(s->iterations == 200 && s->warmup == 20);
    check_full_matrix(s);
    CHECK(s->leak_bytes_per_iter == 2048);
    CHECK(s->timeout_s == 600.5);
    CHECK(s->memory_limit_mb == 4096);
    CHECK(s->detector == MLK_DETECTOR_OPENVINO);
    CHECK(!s->heap);
    mlk_scenario_free(s);
}

static void test_defaults(void)
{
    mlk_scenario *s = parse_ok(MINIMAL, __LINE__);
    if (!s)
        return;
    CHECK(s->model.kind == MLK_MODEL_PATH);
    CHECK_STR(s->model.path, "m.onnx");
    CHECK(s->model.generate == NULL && s->model.n_gen == 0);
    CHECK(s->description == NULL);
    CHECK(s->n_setup == 2 && s->setup[0] == MLK_STEP_LOAD_ENGINE && s->setup[1] == MLK_STEP_READ_MODEL);
    CHECK(s->n_teardown == 2 && s->teardown[0] == MLK_STEP_RELEASE_MODEL && s->teardown[1] == MLK_STEP_UNLOAD_ENGINE);
    CHECK(s->iterations == 100 && s->warmup == 10);
    CHECK(s->n_axes == 0 && s->axes == NULL && mlk_scenario_n_cells(s) == 1);
    CHECK(s->n_engine_options == 0);
    CHECK(s->leak_bytes_per_iter == 1024);
    CHECK(s->timeout_s == 600.0);
    CHECK(s->memory_limit_mb == 0);
    CHECK(s->detector == MLK_DETECTOR_MEMLEAK);
    CHECK(s->heap);
    CHECK(s->heap_sites == MLK_HEAP_SITES_SAMPLE && s->heap_sites_interval_kib == 512); /* see scenario.h */
    mlk_scenario_free(s);
}

/* heap_sites (issue 9): the three modes, YAML's on/off as sample/off, the sampling interval. */
static void test_heap_sites(void)
{
    static const struct {
        const char *text;
        int mode;
    } cases[] = {{"heap_sites: off\n", MLK_HEAP_SITES_OFF},     {"heap_sites: exact\n", MLK_HEAP_SITES_EXACT},
                 {"heap_sites: sample\n", MLK_HEAP_SITES_SAMPLE}, {"heap_sites: on\n", MLK_HEAP_SITES_SAMPLE},
                 {"heap_sites: no\n", MLK_HEAP_SITES_OFF}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char text[512];
        snprintf(text, sizeof text, "%s%s", MINIMAL, cases[i].text);
        mlk_scenario *s = parse_ok(text, __LINE__);
        CHECK(s && s->heap_sites == cases[i].mode);
        mlk_scenario_free(s);
    }
    mlk_scenario *s = parse_ok(MINIMAL "heap_sites_interval_kib: 64\nheap: off\n", __LINE__);
    CHECK(s && s->heap_sites_interval_kib == 64 && !s->heap); /* without the shim no stack is taken, whatever the mode */
    mlk_scenario_free(s);
    parse_bad(MINIMAL "heap_sites: [exact]\n", 5, 13, "heap_sites: expected off, sample or exact, got a list",
              __LINE__);
    parse_bad(MINIMAL "heap_sites_interval_kib: 0\n", 5, 26, "heap_sites_interval_kib: expected an integer >= 1",
              __LINE__);
}

/* Block style, model as a mapping with path and inputs, scalars as one-value axes, booleans as written,
 * a whole-lifecycle pipeline with empty setup and teardown, CRLF line ends. */
static void test_variations(void)
{
    mlk_scenario *s = parse_ok("name: v.1_x\n"
                               "engine: ort\n"
                               "model:\n"
                               "  path: models/m.onnx\n"
                               "  inputs:\n"
                               "    - in0.pb\n"
                               "    - 'in 1.pb'\n"
                               "setup: []\n"
                               "pipeline:\n"
                               "  - load_engine\n"
                               "  - read_model\n"
                               "  - compile_model\n"
                               "  - release_model\n"
                               "  - create_request\n"
                               "  - infer\n"
                               "  - infer\n"
                               "  - release_request\n"
                               "  - release_compiled\n"
                               "  - unload_engine\n"
                               "teardown: []\n"
                               "matrix:\n"
                               "  allocator: jemalloc\n"
                               "  malloc_trim: [Yes, OFF]\n"
                               "  threads: 4\n"
                               "thresholds: {}\n"
                               "engine_options: {}\n"
                               "timeout_s: 1e2\n",
                               __LINE__);
    if (s) {
        CHECK_STR(s->model.path, "models/m.onnx");
        CHECK(s->model.n_inputs == 2);
        if (s->model.n_inputs == 2) {
            CHECK_STR(s->model.inputs[1], "in 1.pb");
            CHECK(s->model.input_locs[1].line == 7 && s->model.input_locs[1].col == 7);
        }
        CHECK(s->n_setup == 0 && s->n_teardown == 0 && s->n_pipeline == 10);
        const mlk_axis *a = mlk_scenario_axis(s, "allocator");
        CHECK(a && a->n_values == 1 && !strcmp(a->values[0], "jemalloc") && a->value_locs[0].col == 14);
        a = mlk_scenario_axis(s, "malloc_trim");
        CHECK(a && a->n_values == 2 && !strcmp(a->values[0], "Yes") && !strcmp(a->values[1], "OFF"));
        a = mlk_scenario_axis(s, "threads");
        CHECK(a && a->n_values == 1 && !strcmp(a->values[0], "4"));
        CHECK(mlk_scenario_n_cells(s) == 2);
        CHECK(s->timeout_s == 100.0);
        mlk_scenario_free(s);
    }
    s = parse_ok("name: crlf\r\nengine: ref\r\nmodel: m.onnx\r\npipeline: [infer]\r\n"
                 "setup: [load_engine, read_model, compile_model, create_request]\r\n"
                 "teardown: [release_request, release_compiled, release_model, unload_engine]\r\n",
                 __LINE__);
    if (s) {
        CHECK(s->n_pipeline == 1 && s->pipeline[0] == MLK_STEP_INFER && s->n_setup == 4 && s->n_teardown == 4);
        mlk_scenario_free(s);
    }
    /* An error after CRLF lines still counts lines right. */
    parse_bad("name: crlf\r\nengine: ref\r\niterations: x\r\n", 3, 13, "iterations: expected an integer >= 1",
              __LINE__);
}

static void test_variants(void)
{
    mlk_scenario *s = parse_ok(MINIMAL "engine_options: {planner: naive, arena: on}\n"
                                       "matrix:\n"
                                       "  threads: [1, 2]\n"
                                       "  fault:\n"
                                       "    - {name: none}\n"
                                       "    - {name: leak, inject_leak_bytes: 65536}\n"
                                       "    - name: retention\n"
                                       "      inject_retention_bytes: 65536\n"
                                       "      inject_retention_cap: 4M\n"
                                       "      arena: off\n"
                                       "  solo: {name: only, mem_pattern: off}\n",
                               __LINE__);
    if (!s)
        return;
    const mlk_axis *a = mlk_scenario_axis(s, "fault");
    CHECK(a && a->n_values == 3 && a->variants);
    if (a && a->n_values == 3 && a->variants) {
        CHECK_STR(a->values[0], "none");
        CHECK(a->variants[0].n_options == 0);
        CHECK_STR(a->values[1], "leak");
        CHECK(a->variants[1].n_options == 1);
        CHECK_STR(a->variants[1].options[0].key, "inject_leak_bytes");
        CHECK_STR(a->variants[1].options[0].value, "65536");
        CHECK(a->variants[1].options[0].loc.line == 10 && a->variants[1].options[0].loc.col == 39);
        CHECK_STR(a->values[2], "retention");
        CHECK(a->value_locs[2].line == 11 && a->value_locs[2].col == 13);
        CHECK(a->variants[2].n_options == 3);
        if (a->variants[2].n_options == 3) {
            CHECK_STR(a->variants[2].options[1].key, "inject_retention_cap");
            CHECK_STR(a->variants[2].options[1].value, "4M");
            CHECK_STR(a->variants[2].options[2].value, "off"); /* overrides engine_options' arena */
        }
    }
    a = mlk_scenario_axis(s, "solo");
    CHECK(a && a->n_values == 1 && a->variants && !strcmp(a->values[0], "only") && a->variants[0].n_options == 1);
    a = mlk_scenario_axis(s, "threads");
    CHECK(a && !a->variants);
    CHECK(mlk_scenario_n_cells(s) == 6);
    mlk_scenario_free(s);

    parse_bad(MINIMAL "matrix:\n  f: [{name: a}, {name: a, x: 1}]\n", 6, 25, "duplicate value 'a'", __LINE__);
    parse_bad(MINIMAL "matrix:\n  f: [{name: ''}]\n", 6, 14, "expected a non-empty variant name", __LINE__);
    parse_bad(MINIMAL "matrix:\n  f: [{name: [a]}]\n", 6, 14, "expected a string, got a list", __LINE__);
    parse_bad(MINIMAL "matrix:\n  f: [{name: a, x: {y: 1}}]\n", 6, 20, "matrix.f.x: expected a scalar value", __LINE__);
    parse_bad(MINIMAL "matrix:\n  malloc_trim: [{name: a}]\n", 6, 17, "variants are for engine options", __LINE__);
    /* The allocator axis takes the registry's names and mappings of the user's own allocators side by side. */
    s = parse_ok(MINIMAL "matrix:\n  allocator: [glibc, {name: mine, preload: /opt/x/libmine.so}, {name: jemalloc}]\n",
                 __LINE__);
    a = s ? mlk_scenario_axis(s, "allocator") : NULL;
    CHECK(a && a->n_values == 3 && !strcmp(a->values[1], "mine"));
    CHECK(a && !mlk_scenario_allocator_preload(a, 0) && !mlk_scenario_allocator_preload(a, 2));
    CHECK(a && mlk_scenario_allocator_preload(a, 1) &&
          !strcmp(mlk_scenario_allocator_preload(a, 1), "/opt/x/libmine.so"));
    mlk_scenario_free(s);
    parse_bad(MINIMAL "matrix:\n  allocator: [{name: a}]\n", 6, 22, "'a' is not one of glibc", __LINE__);
    parse_bad(MINIMAL "matrix:\n  allocator: [{name: a, preload: lib.so}]\n", 6, 34,
              "preload: expected an absolute path", __LINE__);
    parse_bad(MINIMAL "matrix:\n  allocator: [{name: a, preload: /x.so, threads: 2}]\n", 6, 41,
              "unknown key 'threads' (expected name and preload)", __LINE__);
    parse_bad(MINIMAL "matrix:\n  f: [{name: a, x: 1}]\n  g: [{name: b, x: 2}]\n", 7, 20,
              "option 'x' is also set by another variant axis at 6:20", __LINE__);
    parse_bad(MINIMAL "matrix:\n  f: [{name: a, tool: memcheck}]\n", 6, 23, "'tool' is a harness setting a variant "
              "cannot change", __LINE__);
    parse_bad(MINIMAL "matrix:\n  f: [a, {name: b}]\n", 6, 10, "expected a scalar value", __LINE__);
}

/* Error kinds not worth a fixture file, or that a text file cannot hold. */
/* Input libyaml refuses or the tree builder refuses, and the entry points' own argument checks. */
static void test_yaml_errors(void)
{
    static const char nul[] = "name: t\nengine: \"r\\0f\"\n";
    mlk_scenario *s = NULL;
    mlk_error err = {0};
    CHECK(mlk_scenario_parse(nul, sizeof nul - 1, "t.yaml", &s, &err) == MLK_E_PARSE && !s);
    CHECK(!strncmp(err.msg, "t.yaml:2:9: NUL characters are not allowed", 42));
    /* A raw NUL byte and invalid UTF-8 are reader errors, located from libyaml's byte offset. */
    static const char raw[] = "name: t\nengine: r\0f\n";
    CHECK(mlk_scenario_parse(raw, sizeof raw - 1, "t.yaml", &s, &err) == MLK_E_PARSE && !s);
    CHECK(!strncmp(err.msg, "t.yaml:2:10: invalid input", 26));
    static const char utf[] = "name: t\nengine: \xc3\xa9\xff\n";
    CHECK(mlk_scenario_parse(utf, sizeof utf - 1, "t.yaml", &s, &err) == MLK_E_PARSE && !s);
    CHECK(!strncmp(err.msg, "t.yaml:2:10: invalid input", 26));
    CHECK(mlk_scenario_parse("", 0, "t.yaml", &s, &err) == MLK_E_PARSE && !s);
    CHECK(!strncmp(err.msg, "t.yaml:1:1: expected a mapping of scenario keys, got an empty file", 66));
    CHECK(mlk_scenario_parse(NULL, 0, NULL, &s, &err) == MLK_E_PARSE && !s);
    CHECK(!strncmp(err.msg, "<scenario>:1:1: ", 16));
    CHECK(mlk_scenario_parse(NULL, 3, "t.yaml", &s, &err) == MLK_E_USAGE && !s);
    CHECK(mlk_scenario_parse("a: 1", 4, "t.yaml", NULL, &err) == MLK_E_USAGE);
    CHECK(mlk_scenario_parse("x", 1, "t.yaml", &s, NULL) == MLK_E_PARSE && !s);

    parse_bad("just text\n", 1, 1, "expected a mapping of scenario keys", __LINE__);
    parse_bad("? [a]\n: 1\n", 1, 3, "expected a plain key, got a list", __LINE__);
    parse_bad("%YAML 1.1\n---\nname: t\n--- \nname: u\n", 4, 1, "multiple documents", __LINE__);
    parse_bad(MINIMAL "name: x\n", 5, 1, "duplicate key 'name' (first at 1:1", __LINE__);
    parse_bad(MINIMAL "matrix:\n  threads: [1]\n  threads: [2]\n", 7, 3, "duplicate key 'threads' (first at 6:3",
              __LINE__);
    parse_bad("# only a comment\n\n", 1, 1, "got an empty file", __LINE__);
    parse_bad("---\n", 2, 1, "expected a mapping of scenario keys (name,", __LINE__);
    parse_bad("a: &x 1\n", 1, 4, "anchor '&x': anchors and aliases are not supported", __LINE__);
    parse_bad("a: !custom 1\n", 1, 4, "tag '!custom': tags are not supported", __LINE__);
    parse_bad("a: !!map {}\n", 1, 4, "tags are not supported", __LINE__);
    parse_bad("a: 'unterminated\n", 2, 1,
              "YAML syntax error: found unexpected end of stream (while scanning a quoted "
              "scalar at 1:4)",
              __LINE__);
    char *many = malloc(16 * 4100 + 64);
    if (many) {
        strcpy(many, "matrix: {x: [");
        for (int i = 0; i < 4100; i++)
            sprintf(many + strlen(many), "%d, ", i);
        strcat(many, "]}\n");
        parse_bad(many, 1, 13 + 3 * 10 + 4 * 90 + 5 * 900 + 6 * 3096 + 1, "expected at most 4096 entries in a list",
                  __LINE__);
        free(many);
    }
}

/* Wrong types, ranges and values of each top-level key, the model and the matrix. */
static void test_field_errors(void)
{
    parse_bad(MINIMAL "iterations: 99999999999999999999\n", 5, 13, "expected an integer in [1, 1000000000]", __LINE__);
    parse_bad(MINIMAL "iterations: 1000000001\n", 5, 13, "expected an integer in [1, 1000000000]", __LINE__);
    parse_bad(MINIMAL "iterations: 0x10\n", 5, 13, "expected an integer >= 1, got '0x10'", __LINE__);
    parse_bad(MINIMAL "iterations: [1]\n", 5, 13, "expected an integer >= 1, got a list", __LINE__);
    parse_bad(MINIMAL "iterations:\n", 5, 12, "expected an integer >= 1, got nothing", __LINE__);
    parse_bad(MINIMAL "timeout_s: .inf\n", 5, 12, "expected a number > 0, got '.inf'", __LINE__);
    parse_bad(MINIMAL "timeout_s: nan\n", 5, 12, "expected a number > 0", __LINE__);
    parse_bad(MINIMAL "timeout_s: -1.5\n", 5, 12, "expected a number > 0", __LINE__);
    parse_bad(MINIMAL "timeout_s: 1e999\n", 5, 12, "expected a number > 0", __LINE__);
    parse_bad(MINIMAL "heap: 'on'\n", 5, 7, "got the quoted string 'on' (write it unquoted)", __LINE__);
    parse_bad(MINIMAL "iterations: 010\n", 5, 13, "expected an integer >= 1, got '010'", __LINE__);
    parse_bad(MINIMAL "timeout_s: 1e7\n", 5, 12, "expected a number in (0, 604800], got '1e7'", __LINE__);
    parse_bad(MINIMAL "matrix: [threads]\n", 5, 9, "matrix: expected a mapping of at least one axis", __LINE__);
    parse_bad(MINIMAL "matrix:\n  threads: [1, ~]\n", 6, 16, "got null", __LINE__);
    parse_bad(MINIMAL "matrix:\n  '': [1]\n", 6, 3, "matrix: expected an axis name", __LINE__);
    parse_bad(MINIMAL "engine_options: [a]\n", 5, 17, "engine_options: expected a mapping", __LINE__);
    parse_bad(MINIMAL "engine_options: {a: }\n", 5, 21, "engine_options.a: expected a scalar value", __LINE__);
    parse_bad(MINIMAL "thresholds: {leak_bytes_per_iter: -1}\n", 5, 35, "expected an integer >= 0", __LINE__);
    parse_bad("name: t\nengine: ref\nmodel: ''\npipeline: [infer]\n", 3, 8, "model: expected a path", __LINE__);
    parse_bad("name: t\nengine: ref\nmodel: {path: ''}\npipeline: [infer]\n", 3, 15, "expected a path, got an empty",
              __LINE__);
    parse_bad("name: t\nengine: ref\nmodel: {path: m, inputs: []}\npipeline: [infer]\n", 3, 26, "got an empty list",
              __LINE__);
    parse_bad("name: t\nengine: ref\nmodel: {path: m, inputs: ['']}\npipeline: [infer]\n", 3, 27,
              "model.inputs: expected a path", __LINE__);
    parse_bad("name: t\nengine: ref\nmodel: {path: m, color: red}\npipeline: [infer]\n", 3, 18,
              "model: unknown key 'color'", __LINE__);
    parse_bad("name: t\nengine: ref\nmodel: {generate: mlp, batch: 0}\npipeline: [infer]\n", 3, 31,
              "model.batch: expected an integer >= 1", __LINE__);
    parse_bad("name: t\nengine: ref\nmodel: {generate: mlp, seed: -1}\npipeline: [infer]\n", 3, 30,
              "model.seed: expected an integer >= 0", __LINE__);
    parse_bad("name: t\nengine: ../x\nmodel: m\npipeline: [infer]\n", 2, 9, "engine: expected 1 to 128 letters",
              __LINE__);
    parse_bad("name: ''\n", 1, 7, "name: expected 1 to 128 letters", __LINE__);
    parse_bad("name: t\nengine: ref\nmodel: m\n", 1, 1, "missing required key: pipeline (required:", __LINE__);
}

/* Step lists that could not run, each reported at the step (or at the list for a defaulted one). */
static void test_step_errors(void)
{
    parse_bad(MINIMAL "setup: load_engine\n", 5, 8, "setup: expected a list of steps (load_engine,", __LINE__);
    parse_bad(MINIMAL "setup: [load_engine, [read_model]]\n", 5, 22, "setup: unknown step a list", __LINE__);
    parse_bad("name: t\nengine: ref\nmodel: m\nsetup: [read_model]\npipeline: [infer]\n", 4, 9,
              "setup step read_model: expected load_engine before it", __LINE__);
    parse_bad("name: t\nengine: ref\nmodel: m\npipeline: [compile_model, create_request, infer]\n", 4, 11,
              "(add: release_request, release_compiled)", __LINE__);
    parse_bad("name: t\nengine: ref\nmodel: m\nsetup: [load_engine]\npipeline: [read_model, release_model]\n", 5, 11,
              "teardown step release_model (the default; write the list to change it): no model is alive", __LINE__);
    parse_bad("name: t\nengine: ref\nmodel: m\nsetup: [load_engine, read_model, compile_model]\n"
              "pipeline: [release_compiled, compile_model]\n",
              5, 11, "teardown step unload_engine (the default; write the list to change it): the model, compiled",
              __LINE__);
    parse_bad("name: t\nengine: ref\nmodel: m\npipeline: [compile_model, compile_model]\n", 4, 27,
              "a compiled model is alive", __LINE__);
    parse_bad("name: t\nengine: ref\nmodel: m\npipeline: [compile_model, create_request, release_compiled]\n", 4, 43,
              "pipeline step release_compiled: a request is alive", __LINE__);
    parse_bad("name: t\nengine: ref\nmodel: m\nsetup: []\npipeline: [read_model]\n", 5, 12,
              "expected load_engine before it", __LINE__);
}

/* ------------------------------------------------------------------------------------------------
 * Files: the example scenarios, the bad fixtures, I/O errors
 * ---------------------------------------------------------------------------------------------- */

static mlk_scenario *load_example(const char *file)
{
    char path[1200];
    snprintf(path, sizeof path, "%s/scenarios/%s", source_dir, file);
    mlk_scenario *s = NULL;
    mlk_error err = {0};
    int rc = mlk_scenario_load(path, &s, &err);
    if (rc) {
        check_failed_++;
        fprintf(stderr, "%s: load failed (%d): %s\n", path, rc, err.msg);
        return NULL;
    }
    check_passed_++;
    CHECK_STR(s->path, path);
    CHECK(s->engine && !strcmp(s->engine, "ref"));
    CHECK(s->model.kind == MLK_MODEL_GENERATE);
    return s;
}

static bool axis_is(const mlk_scenario *s, const char *name, const char *const *values, int n)
{
    const mlk_axis *a = mlk_scenario_axis(s, name);
    if (!a || a->n_values != n)
        return false;
    for (int i = 0; i < n; i++)
        if (strcmp(a->values[i], values[i]))
            return false;
    return true;
}

static bool full_pipeline(const mlk_scenario *s)
{
    static const mlk_step want[] = {MLK_STEP_COMPILE_MODEL, MLK_STEP_CREATE_REQUEST, MLK_STEP_INFER,
                                    MLK_STEP_RELEASE_REQUEST, MLK_STEP_RELEASE_COMPILED};
    return s->n_pipeline == 5 && !memcmp(s->pipeline, want, sizeof want);
}

static const char *gen_opt(const mlk_scenario *s, const char *key)
{
    for (int i = 0; i < s->model.n_gen; i++)
        if (!strcmp(s->model.gen[i].key, key))
            return s->model.gen[i].value;
    return NULL;
}

static void test_examples(void)
{
    mlk_scenario *s = load_example("quickstart.yaml");
    if (s) {
        CHECK_STR(s->model.generate, "mlp");
        CHECK_STR(gen_opt(s, "mlp_hidden"), "256");
        CHECK(full_pipeline(s) && s->iterations == 30 && s->warmup == 5);
        CHECK(axis_is(s, "allocator", (const char *const[]){"glibc", "jemalloc"}, 2));
        CHECK(axis_is(s, "threads", (const char *const[]){"1", "2"}, 2));
        CHECK(axis_is(s, "mmap", (const char *const[]){"on", "off"}, 2));
        CHECK(mlk_scenario_n_cells(s) == 8);
        mlk_scenario_free(s);
    }
    if ((s = load_example("allocators.yaml"))) {
        CHECK_STR(s->model.generate, "mobilenetv2");
        CHECK_STR(gen_opt(s, "image_size"), "96");
        CHECK(full_pipeline(s) && s->iterations == 60);
        CHECK(axis_is(s, "allocator", (const char *const[]){"glibc", "jemalloc", "tcmalloc", "mimalloc"}, 4));
        CHECK(axis_is(s, "malloc_trim", (const char *const[]){"off", "on"}, 2));
        CHECK(axis_is(s, "glibc_tunables",
                      (const char *const[]){"", "glibc.malloc.arena_max=2:glibc.malloc.trim_threshold=131072"}, 2));
        CHECK(mlk_scenario_n_cells(s) == 16);
        mlk_scenario_free(s);
    }
    if ((s = load_example("mmap.yaml"))) {
        CHECK_STR(s->model.generate, "resnet18");
        CHECK_STR(gen_opt(s, "external_data"), "true");
        CHECK(full_pipeline(s) && s->iterations == 20);
        CHECK(axis_is(s, "mmap", (const char *const[]){"on", "off"}, 2));
        CHECK(axis_is(s, "compile_threads", (const char *const[]){"1", "2"}, 2));
        CHECK(mlk_scenario_n_cells(s) == 4);
        mlk_scenario_free(s);
    }
    if ((s = load_example("leak-demo.yaml"))) {
        const mlk_axis *a = mlk_scenario_axis(s, "fault");
        CHECK(a && a->variants && axis_is(s, "fault", (const char *const[]){"none", "leak", "retention"}, 3));
        if (a && a->variants && a->n_values == 3) {
            CHECK(a->variants[0].n_options == 0);
            CHECK(a->variants[1].n_options == 1 && !strcmp(a->variants[1].options[0].key, "inject_leak_bytes") &&
                  !strcmp(a->variants[1].options[0].value, "65536"));
            CHECK(a->variants[2].n_options == 2 && !strcmp(a->variants[2].options[0].key, "inject_retention_bytes") &&
                  !strcmp(a->variants[2].options[1].value, "4M"));
        }
        CHECK(s->n_setup == 3 && s->n_pipeline == 3 && s->pipeline[1] == MLK_STEP_INFER && s->n_teardown == 3);
        /* The retention cap (4 MiB at 64 KiB an iteration) is reached well inside the measured iterations. */
        CHECK(s->iterations >= 2 * 64);
        CHECK(mlk_scenario_n_cells(s) == 3);
        mlk_scenario_free(s);
    }
}

/* "# expect: LINE:COL substring" on the first line. */
static bool read_expect(const char *path, int *line, int *col, char *want, size_t cap)
{
    FILE *f = fopen(path, "rb");
    char first[512];
    bool ok = f && fgets(first, sizeof first, f) && sscanf(first, "# expect: %d:%d", line, col) == 2;
    if (f)
        fclose(f);
    const char *sp = ok ? strchr(first + 10, ' ') : NULL;
    if (!sp)
        return false;
    snprintf(want, cap, "%s", sp + 1);
    want[strcspn(want, "\r\n")] = '\0';
    return want[0] != '\0';
}

static void check_fixture(const char *path)
{
    int line, col;
    char want[512], prefix[1500];
    if (!read_expect(path, &line, &col, want, sizeof want)) {
        check_failed_++;
        fprintf(stderr, "%s: no '# expect: LINE:COL substring' first line\n", path);
        return;
    }
    mlk_scenario *s = NULL;
    mlk_error err = {0};
    int rc = mlk_scenario_load(path, &s, &err);
    snprintf(prefix, sizeof prefix, "%s:%d:%d: ", path, line, col);
    if (rc == MLK_E_PARSE && !s && !strncmp(err.msg, prefix, strlen(prefix)) && strstr(err.msg, want)) {
        check_passed_++;
        return;
    }
    check_failed_++;
    fprintf(stderr, "%s: expected %d:%d '%s', got %d: %s\n", path, line, col, want, rc, err.msg);
    mlk_scenario_free(s);
}

static int cmp_names(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static void test_fixtures(void)
{
    char dir[1100];
    snprintf(dir, sizeof dir, "%s/harness/scenario/tests/fixtures", source_dir);
    DIR *d = opendir(dir);
    CHECK(d != NULL);
    if (!d)
        return;
    char *names[256];
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) && n < 256) {
        size_t len = strlen(e->d_name);
        if (len > 5 && !strcmp(e->d_name + len - 5, ".yaml"))
            names[n++] = strdup(e->d_name);
    }
    closedir(d);
    qsort(names, (size_t)n, sizeof names[0], cmp_names);
    for (int i = 0; i < n; i++) {
        char path[1400];
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        check_fixture(path);
        free(names[i]);
    }
    /* Guards against a glob that silently finds nothing. */
    CHECK(n >= 50);
    printf("%d bad-input fixtures checked\n", n);
}

/* Warts a newcomer hit: an engine axis stands for the top-level engine, and engine names are plain names. */
static void test_engine_names(void)
{
    mlk_scenario *s = parse_ok("name: t\nmodel: m.onnx\npipeline: [compile_model, release_compiled]\n"
                               "matrix:\n  engine: [ref, ort]\n", __LINE__);
    CHECK(s && !s->engine && mlk_scenario_axis(s, "engine") && mlk_scenario_n_cells(s) == 2);
    mlk_scenario_free(s);
    parse_bad("name: t\nmodel: m.onnx\npipeline: [infer]\nmatrix:\n  threads: [1, 2]\n", 1, 1,
              "missing required key: engine (required: name, engine or an engine axis", __LINE__);
    parse_bad("name: t\nengine: ..\nmodel: m\npipeline: [infer]\n", 2, 9,
              "engine: expected a plain name starting with a letter or digit, got '..'", __LINE__);
    parse_bad("name: t\nengine: -x\nmodel: m\npipeline: [infer]\n", 2, 9, "starting with a letter or digit",
              __LINE__);
    parse_bad("name: t\nmodel: m\npipeline: [infer]\nmatrix:\n  engine: [ref, ..]\n", 5, 17,
              "expected an engine name", __LINE__);
}

/* Input errors, each with exit 2's codes: missing, a folder, a device without end, a FIFO (never waits for a
 * writer), a file over 4 MiB. */
static void test_io_errors(void)
{
    mlk_scenario *s = NULL;
    mlk_error err = {0};
    CHECK(mlk_scenario_load("/nonexistent/dir/x.yaml", &s, &err) == MLK_E_NOTFOUND && !s);
    CHECK(strstr(err.msg, "/nonexistent/dir/x.yaml not found"));
    CHECK(mlk_scenario_load(source_dir, &s, &err) == MLK_E_PARSE && !s);
    CHECK(strstr(err.msg, source_dir) && strstr(err.msg, "is a folder, not a regular file"));
    CHECK(mlk_scenario_load(NULL, &s, &err) == MLK_E_USAGE);
    CHECK(mlk_scenario_load("/dev/zero", &s, &err) == MLK_E_PARSE && !s);
    CHECK(strstr(err.msg, "/dev/zero is a character device, not a regular file"));
    char fifo[64], big[64];
    snprintf(fifo, sizeof fifo, "/tmp/mlk-test-scenario-fifo-%d", (int)getpid());
    snprintf(big, sizeof big, "/tmp/mlk-test-scenario-big-%d.yaml", (int)getpid());
    unlink(fifo);
    CHECK(mkfifo(fifo, 0600) == 0);
    CHECK(mlk_scenario_load(fifo, &s, &err) == MLK_E_PARSE && !s); /* returns at once: nobody writes to it */
    CHECK(strstr(err.msg, "is a FIFO, not a regular file"));
    unlink(fifo);
    FILE *f = fopen(big, "w");
    CHECK(f && fseek(f, (5L << 20) - 1, SEEK_SET) == 0 && fputc('\n', f) == '\n');
    if (f)
        fclose(f);
    CHECK(mlk_scenario_load(big, &s, &err) == MLK_E_PARSE && !s);
    CHECK(strstr(err.msg, "larger than 4 MiB; not a scenario file"));
    unlink(big);
}

int main(void)
{
    find_source_dir();
    test_steps();
    test_full();
    test_defaults();
    test_variations();
    test_variants();
    test_yaml_errors();
    test_field_errors();
    test_step_errors();
    test_examples();
    test_fixtures();
    test_heap_sites();
    test_engine_names();
    test_io_errors();
    return check_summary();
}
