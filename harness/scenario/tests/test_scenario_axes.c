/* test_scenario_axes.c: the engine and model matrix axes of scenarios: parsed values and models, and the errors with
 * their file:line:col. It must never touch the file system: scenarios are parsed from strings. */
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
    return check_summary();
}
