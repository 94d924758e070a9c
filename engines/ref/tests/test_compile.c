/* test_compile.c: ordering, errors, constant folding, folding of shape subgraphs per input shape, shapes
 * known only at run time, and the OOM loop over compile+infer. It must never leave engine bytes allocated. */
#include <string.h>

#include "check.h"
#include "compile/compiled.h"
#include "graph_builder.h"

static ref_compiled *compile_ok(ref_model *m, ref_error *err)
{
    ref_compiled *c = NULL;
    CHECK_OK(ref_compile(m, NULL, &c, err), err);
    return c;
}

static void test_order_and_errors(void)
{
    /* Nodes out of order: y = Identity(b), b = Identity(x). */
    ref_model *m = gb_model(13);
    int64_t d[] = {4};
    gb_input(m, "x", REF_DT_FLOAT, 1, d, NULL);
    gb_node(m, "Identity", "b", "y");
    gb_node(m, "Identity", "x", "b");
    gb_output(m, "y", REF_DT_FLOAT);
    ref_error err = {0};
    ref_compiled *c = compile_ok(m, &err);
    CHECK(c && !strcmp(c->nodes[0].node->inputs[0], "x"));
    ref_compiled_free(c);
    ref_model_free(m);

    m = gb_model(13);
    gb_input(m, "x", REF_DT_FLOAT, 1, d, NULL);
    gb_node(m, "Identity", "nowhere", "y");
    gb_output(m, "y", REF_DT_FLOAT);
    c = NULL;
    CHECK(ref_compile(m, NULL, &c, &err) == REF_E_PARSE && !c);
    CHECK(strstr(err.msg, "nowhere") != NULL);
    ref_model_free(m);

    m = gb_model(13);
    gb_input(m, "x", REF_DT_FLOAT, 1, d, NULL);
    gb_node(m, "Identity", "b", "a");
    gb_node(m, "Identity", "a", "b");
    gb_output(m, "a", REF_DT_FLOAT);
    CHECK(ref_compile(m, NULL, &c, &err) == REF_E_PARSE);
    CHECK(strstr(err.msg, "cycle") != NULL);
    ref_model_free(m);

    m = gb_model(13);
    gb_input(m, "x", REF_DT_FLOAT, 1, d, NULL);
    gb_node(m, "NoSuchOp", "x", "y");
    gb_output(m, "y", REF_DT_FLOAT);
    CHECK(ref_compile(m, NULL, &c, &err) == REF_E_UNSUPPORTED);
    CHECK(strstr(err.msg, "NoSuchOp") != NULL);
    ref_model_free(m);
}

static void test_constant_folding(void)
{
    /* k = Concat(c1, c2) depends only on initializers: folded at compile time, never run. */
    ref_model *m = gb_model(13);
    int64_t d2[] = {2}, dx[] = {4};
    float c1[] = {1, 2}, c2[] = {3, 4};
    gb_input(m, "x", REF_DT_FLOAT, 1, dx, NULL);
    gb_init(m, "c1", REF_DT_FLOAT, 1, d2, c1);
    gb_init(m, "c2", REF_DT_FLOAT, 1, d2, c2);
    ref_node *n = gb_node(m, "Concat", "c1,c2", "k");
    oh_attr_int(m, n, "axis", 0);
    gb_node(m, "Identity", "x", "y");
    gb_output(m, "y", REF_DT_FLOAT);
    gb_output(m, "k", REF_DT_FLOAT);
    ref_error err = {0};
    ref_compiled *c = compile_ok(m, &err);
    ref_request *r = NULL;
    CHECK_OK(ref_request_new(c, &r, &err), &err);
    float x[4] = {9, 8, 7, 6};
    ref_tensor t = oh_tensor(REF_DT_FLOAT, 1, dx, x);
    CHECK_OK(ref_request_set_input(r, 0, &t, &err), &err);
    CHECK_OK(ref_infer(r, &err), &err);
    ref_tensor k;
    CHECK_OK(ref_request_output(r, 1, &k, &err), &err);
    CHECK(k.rank == 1 && k.dims[0] == 4 && ((float *)k.data)[3] == 4.0f);
    int folded = 0;
    for (int i = 0; i < c->n_nodes; i++)
        folded += c->nodes[i].folded;
    CHECK(folded == 1);
    ref_request_free(r);
    ref_compiled_free(c);
    ref_model_free(m);
}

/* y = Reshape(x, Concat(Unsqueeze(Gather(Shape(x), 0)), [-1])): a PyTorch-style shape subgraph that must
 * fold per input shape, so the plan stays static and follows the batch. */
static void test_shape_subgraph(void)
{
    ref_model *m = gb_model(13);
    const char *params[] = {"batch", NULL, NULL};
    int64_t xd[] = {-1, 3, 4}, one[] = {1}, zero_d[] = {1};
    int64_t minus1[] = {-1}, zero[] = {0};
    gb_input(m, "x", REF_DT_FLOAT, 3, xd, params);
    gb_init(m, "minus1", REF_DT_INT64, 1, one, minus1);
    gb_init(m, "idx0", REF_DT_INT64, 0, zero_d, zero);
    gb_init(m, "axes0", REF_DT_INT64, 1, one, zero);
    gb_node(m, "Shape", "x", "s");
    ref_node *n = gb_node(m, "Gather", "s,idx0", "b");
    oh_attr_int(m, n, "axis", 0);
    gb_node(m, "Unsqueeze", "b,axes0", "bu");
    n = gb_node(m, "Concat", "bu,minus1", "target");
    oh_attr_int(m, n, "axis", 0);
    gb_node(m, "Reshape", "x,target", "y");
    gb_output(m, "y", REF_DT_FLOAT);
    ref_error err = {0};
    ref_compiled *c = compile_ok(m, &err);
    ref_plan_stats ps;
    CHECK_OK(ref_compiled_plan_stats(c, &ps, &err), &err);
    CHECK(ps.is_static);
    ref_request *r = NULL;
    CHECK_OK(ref_request_new(c, &r, &err), &err);
    float x[5 * 12];
    for (int i = 0; i < 60; i++)
        x[i] = (float)i;
    for (int batch = 1; batch <= 5; batch += 4) {
        int64_t d[] = {batch, 3, 4};
        ref_tensor t = oh_tensor(REF_DT_FLOAT, 3, d, x);
        CHECK_OK(ref_request_set_input(r, 0, &t, &err), &err);
        CHECK_OK(ref_infer(r, &err), &err);
        ref_tensor y;
        CHECK_OK(ref_request_output(r, 0, &y, &err), &err);
        CHECK(y.rank == 2 && y.dims[0] == batch && y.dims[1] == 12);
        CHECK(((float *)y.data)[batch * 12 - 1] == (float)(batch * 12 - 1));
    }
    ref_request_free(r);
    ref_compiled_free(c);
    ref_model_free(m);
}

/* Reshape whose target is a graph input: no static plan; run time infers with the real values. */
static void test_dynamic_shape(void)
{
    for (int arena = 0; arena <= 1; arena++) {
        ref_model *m = gb_model(13);
        int64_t xd[] = {6}, sd[] = {2};
        gb_input(m, "x", REF_DT_FLOAT, 1, xd, NULL);
        gb_input(m, "s", REF_DT_INT64, 1, sd, NULL);
        gb_node(m, "Reshape", "x,s", "r");
        gb_node(m, "Identity", "r", "y");
        gb_output(m, "y", REF_DT_FLOAT);
        ref_options o;
        ref_options_init(&o);
        o.arena = arena;
        ref_compiled *c = NULL;
        ref_error err = {0};
        CHECK_OK(ref_compile(m, &o, &c, &err), &err);
        ref_plan_stats ps;
        CHECK(ref_compiled_plan_stats(c, &ps, &err) == REF_E_DYNAMIC);
        ref_request *r = NULL;
        CHECK_OK(ref_request_new(c, &r, &err), &err);
        float x[6] = {0, 1, 2, 3, 4, 5};
        int64_t shapes[2][2] = {{2, 3}, {3, 2}};
        for (int i = 0; i < 2; i++) {
            ref_tensor tx = oh_tensor(REF_DT_FLOAT, 1, xd, x), ts = oh_tensor(REF_DT_INT64, 1, sd, shapes[i]);
            CHECK_OK(ref_request_set_input(r, 0, &tx, &err), &err);
            CHECK_OK(ref_request_set_input(r, 1, &ts, &err), &err);
            CHECK_OK(ref_infer(r, &err), &err);
            ref_tensor y;
            CHECK_OK(ref_request_output(r, 0, &y, &err), &err);
            CHECK(y.rank == 2 && y.dims[0] == shapes[i][0] && ((float *)y.data)[5] == 5.0f);
        }
        ref_request_free(r);
        ref_compiled_free(c);
        ref_model_free(m);
    }
}

/* A node prepared at run time (its shapes were unknown at compile) must not take activations for weights:
 * Reshape(B, s) -> MatMul(A, .) with B fed anew each run. */
static void test_lazy_prepare_sees_only_constants(void)
{
    ref_model *m = gb_model(13);
    int64_t d22[] = {2, 2}, d4[] = {4}, d2[] = {2};
    gb_input(m, "a", REF_DT_FLOAT, 2, d22, NULL);
    gb_input(m, "b", REF_DT_FLOAT, 1, d4, NULL);
    gb_input(m, "s", REF_DT_INT64, 1, d2, NULL);
    gb_node(m, "Reshape", "b,s", "b2");
    gb_node(m, "MatMul", "a,b2", "y");
    gb_output(m, "y", REF_DT_FLOAT);
    ref_error err = {0};
    ref_compiled *c = compile_ok(m, &err);
    ref_request *r = NULL;
    CHECK_OK(ref_request_new(c, &r, &err), &err);
    float a[4] = {1, 0, 0, 1}, b1[4] = {0, 1, 2, 3}, b2[4] = {10, 11, 12, 13};
    int64_t s[2] = {2, 2};
    ref_tensor ta = oh_tensor(REF_DT_FLOAT, 2, d22, a), ts = oh_tensor(REF_DT_INT64, 1, d2, s);
    CHECK_OK(ref_request_set_input(r, 0, &ta, &err), &err);
    CHECK_OK(ref_request_set_input(r, 2, &ts, &err), &err);
    float *bs[2] = {b1, b2};
    for (int run = 0; run < 2; run++) {
        ref_tensor tb = oh_tensor(REF_DT_FLOAT, 1, d4, bs[run]);
        CHECK_OK(ref_request_set_input(r, 1, &tb, &err), &err);
        CHECK_OK(ref_infer(r, &err), &err);
        ref_tensor y;
        CHECK_OK(ref_request_output(r, 0, &y, &err), &err);
        CHECK(y.rank == 2 && !memcmp(y.data, bs[run], sizeof b1)); /* identity times B */
    }
    ref_request_free(r);
    ref_compiled_free(c);
    ref_model_free(m);
}

/* SQLite-style: fail the k-th allocation for k = 0, 1, ... until compile+infer succeed; every failure is
 * a clean REF_E_NOMEM and nothing leaks. */
static void test_oom_loop(void)
{
    int failures = 0, succeeded = 0;
    for (int64_t k = 0; k < 2000 && !succeeded; k++) {
        ref_alloc_stats s0, s1;
        ref_alloc_get_stats(&s0);
        ref_model *m = gb_model(13);
        int64_t d[] = {2, 3}, one[] = {1};
        int64_t target[] = {-1};
        float x[6] = {1, 2, 3, 4, 5, 6};
        int built = m && !gb_input(m, "x", REF_DT_FLOAT, 2, d, NULL) &&
                    !gb_init(m, "t", REF_DT_INT64, 1, one, target) && gb_node(m, "Reshape", "x,t", "r") &&
                    gb_node(m, "Identity", "r", "y") && !gb_output(m, "y", REF_DT_FLOAT);
        ref_compiled *c = NULL;
        ref_request *r = NULL;
        ref_error err = {0};
        ref_tensor t = oh_tensor(REF_DT_FLOAT, 2, d, x);
        ref_alloc_fail_after(k, 0);
        int rc = built ? oh_compile_infer(m, NULL, &t, &c, &r, &err) : REF_E_NOMEM;
        ref_alloc_stats mid;
        ref_alloc_get_stats(&mid);
        ref_alloc_fail_after(-1, 0);
        if (rc) {
            failures++;
            CHECK(rc == REF_E_NOMEM);
        } else {
            ref_tensor y;
            CHECK_OK(ref_request_output(r, 0, &y, &err), &err);
            CHECK(y.rank == 1 && y.dims[0] == 6 && ((float *)y.data)[5] == 6.0f);
            succeeded = 1;
        }
        ref_request_free(r);
        ref_compiled_free(c);
        ref_model_free(m);
        ref_alloc_get_stats(&s1);
        CHECK(s1.live_bytes == s0.live_bytes);
    }
    CHECK(succeeded);
    CHECK(failures > 10);
}

int main(void)
{
    ref_alloc_stats before, after;
    ref_alloc_get_stats(&before);
    test_order_and_errors();
    test_constant_folding();
    test_shape_subgraph();
    test_dynamic_shape();
    test_lazy_prepare_sees_only_constants();
    test_oom_loop();
    ref_alloc_get_stats(&after);
    CHECK(after.live_bytes == before.live_bytes);
    return check_summary();
}
