/* test_scenario_axes.c: the engine and model matrix axes of scenarios, variants that carry harness settings, what one
 * cell gets (mlk_scenario_cell_value), and the errors with their file:line:col. It must never touch the file system: scenarios are parsed from strings. */
#include <string.h>

#include "mlk_check.h"
#include "scenario.h"

static int parse(const char *text, mlk_scenario **s, mlk_error *err)
{
    return mlk_scenario_parse(text, strlen(text), "t.yaml", s, err);
}

static void test_engine_and_model_axes(void)
{
    const char *text = "name: x\n"
                       "engine: ref\n"
                       "pipeline: [compile_model, create_request, infer, release_request, release_compiled]\n"
                       "engine_options: {ref.planner: naive, ort.graph_optimization: all}\n"
                       "matrix:\n"
                       "  engine: [ref, ort]\n"
                       "  model:\n"
                       "    - {name: small, generate: mlp, mlp_hidden: 32}\n"
                       "    - {name: file, path: m.onnx, inputs: [a.pb]}\n";
    mlk_scenario *s = NULL;
    mlk_error err = {0};
    CHECK_OK(parse(text, &s, &err), &err);
    if (!s)
        return;
    const mlk_axis *e = mlk_scenario_axis(s, "engine"), *m = mlk_scenario_axis(s, "model");
    CHECK(e && e->n_values == 2 && !strcmp(e->values[1], "ort") && !e->variants);
    CHECK(m && m->n_values == 2 && m->variants && !strcmp(m->values[0], "small"));
    CHECK(m && m->variants[0].model && m->variants[0].model->kind == MLK_MODEL_GENERATE);
    CHECK(m && !strcmp(m->variants[0].model->generate, "mlp") && m->variants[0].model->n_gen == 1);
    CHECK(m && m->variants[1].model->kind == MLK_MODEL_PATH && m->variants[1].model->n_inputs == 1);
    CHECK(m && m->variants[0].n_options == 0); /* a model value carries no engine options */
    CHECK(mlk_scenario_n_cells(s) == 4);
    CHECK(mlk_scenario_is_harness_axis("engine") && mlk_scenario_is_harness_axis("model"));
    CHECK(!mlk_scenario_is_harness_axis("threads"));
    mlk_scenario_free(s);
}

/* One factor at a time: a variant axis whose values change an engine option or a harness setting each. */
static void test_variant_harness(void)
{
    const char *text = "name: x\n"
                       "engine: ref\n"
                       "pipeline: [compile_model, create_request, infer, release_request, release_compiled]\n"
                       "model: m.onnx\n"
                       "engine_options: {mmap: on, ref.compile_threads: 2}\n"
                       "matrix:\n"
                       "  threads: [1, 2]\n"
                       "  guide:\n"
                       "    - {name: default}\n"
                       "    - {name: mmap_off, mmap: off}\n"
                       "    - {name: trim, malloc_trim: on}\n"
                       "    - {name: tt, glibc_tunables: 'glibc.malloc.trim_threshold=131072'}\n"
                       "    - {name: je, allocator: jemalloc, malloc_conf: 'narenas:2', ref.compile_threads: 1}\n";
    mlk_scenario *s = NULL;
    mlk_error err = {0};
    CHECK_OK(parse(text, &s, &err), &err);
    if (!s)
        return;
    CHECK(mlk_scenario_n_cells(s) == 10);
    CHECK(mlk_scenario_variant_harness_key("malloc_trim") && mlk_scenario_variant_harness_key("allocator"));
    CHECK(!mlk_scenario_variant_harness_key("tool") && !mlk_scenario_variant_harness_key("engine") &&
          !mlk_scenario_variant_harness_key("mmap"));
    /* cell 6: threads=2 (the first axis, slowest), guide=mmap_off */
    const char *v = mlk_scenario_cell_value(s, 6, "ref", "mmap");
    CHECK(v && !strcmp(v, "off"));
    CHECK((v = mlk_scenario_cell_value(s, 6, "ref", "threads")) && !strcmp(v, "2"));
    CHECK((v = mlk_scenario_cell_value(s, 5, "ref", "mmap")) && !strcmp(v, "on")); /* engine_options' */
    CHECK((v = mlk_scenario_cell_value(s, 5, "ref", "compile_threads")) && !strcmp(v, "2"));
    CHECK(!mlk_scenario_cell_value(s, 5, "ort", "compile_threads")); /* scoped to ref */
    CHECK((v = mlk_scenario_cell_value(s, 4, "ref", "compile_threads")) && !strcmp(v, "1")); /* the variant's */
    CHECK((v = mlk_scenario_cell_value(s, 4, "ref", "allocator")) && !strcmp(v, "jemalloc"));
    CHECK((v = mlk_scenario_cell_value(s, 2, NULL, "malloc_trim")) && !strcmp(v, "on"));
    CHECK(!mlk_scenario_cell_value(s, 0, "ref", "malloc_trim"));
    CHECK((v = mlk_scenario_cell_value(s, 0, "ref", "guide")) && !strcmp(v, "default"));
    CHECK(!mlk_scenario_cell_value(s, 10, "ref", "mmap") && !mlk_scenario_cell_value(s, -1, "ref", "mmap"));
    mlk_scenario_free(s);
}

static void expect_error(const char *text, const char *where, const char *what)
{
    mlk_scenario *s = NULL;
    mlk_error err = {0};
    CHECK(parse(text, &s, &err) == MLK_E_PARSE && !s);
    CHECK(strstr(err.msg, where) != NULL);
    CHECK(strstr(err.msg, what) != NULL);
    if (!strstr(err.msg, where) || !strstr(err.msg, what))
        fprintf(stderr, "  message: %s\n", err.msg);
}

int main(void)
{
    test_engine_and_model_axes();
    const char *head = "name: x\nengine: ref\npipeline: [compile_model, create_request, infer, release_request, "
                       "release_compiled]\n";
    char text[512];
    snprintf(text, sizeof text, "%smatrix:\n  model: [a, b]\n", head);
    expect_error(text, "t.yaml:5:11:", "expected mappings");
    snprintf(text, sizeof text, "%smodel: m.onnx\nmatrix:\n  model:\n    - {name: a, path: a.onnx}\n", head);
    expect_error(text, "t.yaml:6:3:", "top-level model");
    snprintf(text, sizeof text, "%smatrix:\n  model:\n    - {name: a, generate: nosuch}\n", head);
    expect_error(text, "t.yaml:6:", "unknown architecture");
    snprintf(text, sizeof text, "%smatrix:\n  engine: [ref, \"bad name\"]\n", head);
    expect_error(text, "t.yaml:5:", "expected an engine name");
    snprintf(text, sizeof text, "%smatrix:\n  threads: [1]\n", head);
    expect_error(text, "t.yaml:1:1:", "model");
    test_variant_harness();
    snprintf(text, sizeof text, "%smodel: m.onnx\nmatrix:\n  g: [{name: a, allocator: nosuch}]\n", head);
    expect_error(text, "t.yaml:6:", "allocator: expected one of glibc");
    snprintf(text, sizeof text, "%smodel: m.onnx\nmatrix:\n  g: [{name: a, malloc_trim: sometimes}]\n", head);
    expect_error(text, "t.yaml:6:", "malloc_trim: expected a boolean");
    snprintf(text, sizeof text, "%smodel: m.onnx\nmatrix:\n  malloc_trim: [off, on]\n  g: [{name: a, malloc_trim: on}]\n",
             head);
    expect_error(text, "t.yaml:7:", "option 'malloc_trim' is also the axis at 6:3");
    snprintf(text, sizeof text, "%smodel: m.onnx\nmatrix:\n  g: [{name: a, model: x}]\n", head);
    expect_error(text, "t.yaml:6:", "'model' is a harness setting a variant cannot change");
    return check_summary();
}
