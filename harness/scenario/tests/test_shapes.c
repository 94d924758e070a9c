/* test_shapes.c: shape schedules: every YAML form into the schedule, each error at its line:col, the worker-argument
 * form round trip, and sizes that depend on seed and iteration only. It must never leak: LSan runs it. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mlk_check.h"
#include "scenario.h"

#define HEAD "name: t\nengine: ref\nmodel: m.onnx\npipeline: [compile_model, create_request, infer, release_request, " \
             "release_compiled]\n"

static mlk_scenario *parse(const char *tail, mlk_error *err)
{
    char text[2048];
    snprintf(text, sizeof text, HEAD "%s", tail);
    mlk_scenario *s = NULL;
    return mlk_scenario_parse(text, strlen(text), "t.yaml", &s, err) ? NULL : s;
}

static void bad(const char *tail, const char *at, const char *want, int line)
{
    mlk_error err = {0};
    mlk_scenario *s = parse(tail, &err);
    if (!s && strstr(err.msg, at) && strstr(err.msg, want)) {
        check_passed_++;
        return;
    }
    check_failed_++;
    fprintf(stderr, "%s:%d: expected %s ... %s, got: %s\n", __FILE__, line, at, want, s ? "success" : err.msg);
    mlk_scenario_free(s);
}

static void round_trip(const mlk_shape_dim *d)
{
    char arg[2048];
    mlk_shape_dim back;
    mlk_error err = {0};
    CHECK(mlk_shape_dim_format(d, arg, sizeof arg) > 0);
    CHECK(mlk_shape_dim_parse(arg, &back, &err) == MLK_OK);
    CHECK(!strcmp(back.name, d->name) && back.kind == d->kind && back.n_values == d->n_values);
    CHECK(d->kind != MLK_SHAPE_RANGE || (back.lo == d->lo && back.hi == d->hi && back.step == d->step));
    for (int i = 0; i < d->n_values; i++)
        CHECK(back.values[i] == d->values[i]);
}

int main(void)
{
    mlk_error err = {0};
    mlk_scenario *s = parse("shapes:\n  seq: [16, 512]\n  batch: {cycle: [1, 4, 2]}\n  len: {range: [8, 64], step: 8}\n"
                            "  img: {choice: [224, 320]}\n  fixed: 3\nshape_seed: 9\n",
                            &err);
    CHECK(s != NULL);
    if (!s) {
        fprintf(stderr, "%s\n", err.msg);
        return check_summary();
    }
    const mlk_shapes *sh = s->shapes;
    CHECK(sh->n_dims == 5 && s->shape_seed == 9);
    CHECK(sh->dims[0].kind == MLK_SHAPE_RANGE && sh->dims[0].lo == 16 && sh->dims[0].hi == 512 && sh->dims[0].step == 1);
    CHECK(sh->dims[1].kind == MLK_SHAPE_CYCLE && sh->dims[1].n_values == 3 && sh->dims[1].values[2] == 2);
    CHECK(sh->dims[2].kind == MLK_SHAPE_RANGE && sh->dims[2].step == 8);
    CHECK(sh->dims[3].kind == MLK_SHAPE_CHOICE && sh->dims[3].n_values == 2);
    CHECK(sh->dims[4].kind == MLK_SHAPE_CYCLE && sh->dims[4].n_values == 1 && sh->dims[4].values[0] == 3);
    for (int d = 0; d < sh->n_dims; d++)
        round_trip(&sh->dims[d]);
    CHECK(mlk_shapes_combinations(sh) == 497LL * 3 * 8 * 2 * 1);
    CHECK(mlk_shapes_max(sh, 0) == 512 && mlk_shapes_max(sh, 1) == 4 && mlk_shapes_max(sh, 2) == 64);

    /* Sizes: a cycle in order; draws within bounds, on the step, every value met, the same for the same seed and
     * iteration, and another sequence for another seed. */
    mlk_shapes a = *sh, b = *sh;
    b.seed = a.seed + 1;
    int differ = 0, met[9] = {0};
    bool ok = true;
    for (int it = 0; it < 2000; it++) {
        ok &= mlk_shapes_value(&a, 1, it) == (int64_t[]){1, 4, 2}[it % 3];
        int64_t v = mlk_shapes_value(&a, 0, it), len = mlk_shapes_value(&a, 2, it);
        ok &= v >= 16 && v <= 512 && len >= 8 && len <= 64 && len % 8 == 0;
        ok &= v == mlk_shapes_value(&a, 0, it);
        met[len / 8]++;
        differ += v != mlk_shapes_value(&b, 0, it);
        int64_t img = mlk_shapes_value(&a, 3, it);
        ok &= img == 224 || img == 320;
    }
    CHECK(ok);
    for (int k = 1; k <= 8; k++)
        CHECK(met[k] > 0);
    CHECK(differ > 1900);
    char line[512];
    mlk_shapes_describe(sh, line, sizeof line);
    CHECK(strstr(line, "seq=range:16:512:1 batch=cycle:1,4,2") && strstr(line, "(seed 9)"));
    mlk_scenario_free(s);

    /* Without shapes: none, seed 1. */
    s = parse("", &err);
    CHECK(s && !s->shapes && s->shape_seed == 1);
    mlk_scenario_free(s);

    bad("shapes: [1, 2]\n", "t.yaml:5:9:", "expected a mapping of symbolic dim", __LINE__);
    bad("shapes: {seq: [16]}\n", "t.yaml:5:15:", "shapes.seq: expected [LO, HI]", __LINE__);
    bad("shapes: {seq: [64, 16]}\n", "t.yaml:5:15:", "high end 16 is below its low end 64", __LINE__);
    bad("shapes: {seq: [0, 16]}\n", "t.yaml:5:16:", "shapes.seq", __LINE__);
    bad("shapes: {seq: {cycle: []}}\n", "t.yaml:5:23:", "expected a list of 1 to 64 sizes", __LINE__);
    bad("shapes: {seq: {cycle: [1], choice: [2]}}\n", "t.yaml:5:15:", "exactly one of range, cycle or choice", __LINE__);
    bad("shapes: {seq: {cycle: [1], step: 2}}\n", "t.yaml:5:34:", "step goes with range only", __LINE__);
    bad("shapes: {seq: {ranges: [1, 2]}}\n", "t.yaml:5:16:", "unknown key 'ranges'", __LINE__);
    bad("shapes: {seq: {range: [1, 2], step: 0}}\n", "t.yaml:5:37:", "shapes.seq.step", __LINE__);
    bad("shapes: {seq: ~}\n", "t.yaml:5:15:", "expected [LO, HI] (a seeded choice", __LINE__);
    bad("shapes: {seq: 2000000}\n", "t.yaml:5:15:", "shapes.seq", __LINE__);
    bad("shape_seed: -1\n", "t.yaml:5:13:", "shape_seed", __LINE__);

    /* Worker arguments the parent cannot have written are refused. */
    mlk_shape_dim d;
    const char *refused[] = {"seq", "seq=", "=cycle:1", "seq=cycle:", "seq=cycle:1,", "seq=cycle:0", "seq=loop:1",
                             "seq=range:4:2:1", "seq=range:1:2", "seq=range:1:2:0", "seq=cycle:1,x", "seq=cycle: 4",
                             "seq=cycle:+4", "seq=range:1:", "seq=range:1:2:", NULL};
    for (int i = 0; refused[i]; i++) {
        int rc = mlk_shape_dim_parse(refused[i], &d, &err);
        CHECK(rc == MLK_E_USAGE);
        if (rc != MLK_E_USAGE)
            fprintf(stderr, "accepted: %s\n", refused[i]);
    }
    return check_summary();
}
