/* test_control.c: If, Loop and Scan with subgraphs that read outer-scope values (constants, graph inputs, and a
 * grandparent's input through a nested If), reruns with other shapes, the arena path of an If whose branches agree
 * on shapes, and compile plus infer under every failing allocation. It must never leave live bytes behind. */
#include "check.h"
#include "compile/compiled.h"
#include "graph_builder.h"

static ref_error err;
static int64_t arm_at = -1; /* the OOM loop's failure point, armed once the model is built */

/* An attribute holding subgraph g. */
static void attr_graph(ref_model *m, ref_node *n, const char *name, const ref_graph *g)
{
    oh_attr(m, n, name, REF_ATTR_GRAPH)->g = g;
}

/* y = If(cond) then x + 1 (a branch constant) else x * k (k a main-graph constant). */
static ref_model *build_if(void)
{
    ref_model *m = gb_model(13);
    int64_t d3[] = {3}, d1[] = {1};
    float k[3] = {2, 3, 4}, one = 1;
    ref_graph *tg = m ? ref_model_new_subgraph(m) : NULL, *eg = m ? ref_model_new_subgraph(m) : NULL;
    int ok = tg && eg && !gb_input(m, "cond", REF_DT_BOOL, 0, NULL, NULL) &&
             !gb_input(m, "x", REF_DT_FLOAT, 1, d3, NULL) && !gb_init(m, "k", REF_DT_FLOAT, 1, d3, k);
    ref_initializer *in = ok ? ref_graph_push_init(tg) : NULL;
    if (in) {
        in->name = gb_str(m, "one");
        in->t = oh_tensor(REF_DT_FLOAT, 1, d1, ref_model_heap_alloc(m, sizeof one));
        in->nbytes = sizeof one;
        ok = in->name && in->t.data;
        if (ok)
            memcpy(in->t.data, &one, sizeof one);
    }
    ok = ok && in && gb_node_in(m, tg, "Add", "x,one", "t_out") &&
         !GB_VALUE(m, tg, outputs, "t_out", REF_DT_FLOAT, -1, NULL) && gb_node_in(m, eg, "Mul", "x,k", "e_out") &&
         !GB_VALUE(m, eg, outputs, "e_out", REF_DT_FLOAT, -1, NULL);
    ref_node *n = ok ? gb_node(m, "If", "cond", "y") : NULL;
    if (n) {
        attr_graph(m, n, "then_branch", tg);
        attr_graph(m, n, "else_branch", eg);
    }
    if (!n || gb_output(m, "y", REF_DT_FLOAT)) {
        ref_model_free(m);
        return NULL;
    }
    return m;
}

/* s, scan = Loop(M, "", s0) with body: c = If(cond_in) then x else s; s_out = s + c; scan = s_out.
 * x is a graph input the nested If reads through the body: s ends at s0 + M*x. */
static ref_model *build_loop(void)
{
    ref_model *m = gb_model(13);
    int64_t d2[] = {2};
    float s0[2] = {10, 20};
    ref_graph *body = m ? ref_model_new_subgraph(m) : NULL, *tg = m ? ref_model_new_subgraph(m) : NULL,
              *eg = m ? ref_model_new_subgraph(m) : NULL;
    int ok = body && tg && eg && !gb_input(m, "M", REF_DT_INT64, 0, NULL, NULL) &&
             !gb_input(m, "x", REF_DT_FLOAT, 1, d2, NULL) && !gb_init(m, "s0", REF_DT_FLOAT, 1, d2, s0) &&
             !GB_VALUE(m, body, inputs, "i", REF_DT_INT64, 0, NULL) &&
             !GB_VALUE(m, body, inputs, "cond_in", REF_DT_BOOL, 0, NULL) &&
             !GB_VALUE(m, body, inputs, "s", REF_DT_FLOAT, -1, NULL) && gb_node_in(m, tg, "Identity", "x", "tx") &&
             !GB_VALUE(m, tg, outputs, "tx", REF_DT_FLOAT, -1, NULL) && gb_node_in(m, eg, "Identity", "s", "es") &&
             !GB_VALUE(m, eg, outputs, "es", REF_DT_FLOAT, -1, NULL);
    ref_node *n = ok ? gb_node_in(m, body, "If", "cond_in", "c") : NULL;
    if (n) {
        attr_graph(m, n, "then_branch", tg);
        attr_graph(m, n, "else_branch", eg);
    }
    ok = n && gb_node_in(m, body, "Add", "s,c", "s_out") && gb_node_in(m, body, "Identity", "cond_in", "cond_out") &&
         gb_node_in(m, body, "Identity", "s_out", "scan") &&
         !GB_VALUE(m, body, outputs, "cond_out", REF_DT_BOOL, -1, NULL) &&
         !GB_VALUE(m, body, outputs, "s_out", REF_DT_FLOAT, -1, NULL) &&
         !GB_VALUE(m, body, outputs, "scan", REF_DT_FLOAT, -1, NULL);
    n = ok ? gb_node(m, "Loop", "M,,s0", "s_final,scans") : NULL;
    if (n)
        attr_graph(m, n, "body", body);
    if (!n || gb_output(m, "s_final", REF_DT_FLOAT) || gb_output(m, "scans", REF_DT_FLOAT)) {
        ref_model_free(m);
        return NULL;
    }
    return m;
}

/* state, sums = Scan(init, xs) over axis 0: sums[t] = init + xs[0] + ... + xs[t]. */
static ref_model *build_scan(void)
{
    ref_model *m = gb_model(11);
    int64_t d2[] = {2}, dx[] = {3, 2};
    ref_graph *body = m ? ref_model_new_subgraph(m) : NULL;
    int ok = body && !gb_input(m, "init", REF_DT_FLOAT, 1, d2, NULL) &&
             !gb_input(m, "xs", REF_DT_FLOAT, 2, dx, NULL) && !GB_VALUE(m, body, inputs, "st", REF_DT_FLOAT, 1, d2) &&
             !GB_VALUE(m, body, inputs, "xt", REF_DT_FLOAT, 1, d2) && gb_node_in(m, body, "Add", "st,xt", "st_out") &&
             gb_node_in(m, body, "Identity", "st_out", "sum") &&
             !GB_VALUE(m, body, outputs, "st_out", REF_DT_FLOAT, -1, NULL) &&
             !GB_VALUE(m, body, outputs, "sum", REF_DT_FLOAT, -1, NULL);
    ref_node *n = ok ? gb_node(m, "Scan", "init,xs", "state,sums") : NULL;
    if (n) {
        attr_graph(m, n, "body", body);
        oh_attr_int(m, n, "num_scan_inputs", 1);
    }
    if (!n || gb_output(m, "state", REF_DT_FLOAT) || gb_output(m, "sums", REF_DT_FLOAT)) {
        ref_model_free(m);
        return NULL;
    }
    return m;
}

/* Compile m, set the inputs, infer twice (the second from cached plans). */
static int run2(ref_model *m, int n_in, const ref_tensor *in, ref_compiled **c, ref_request **r)
{
    ref_alloc_fail_after(arm_at, 0);
    int rc = ref_compile(m, NULL, c, &err);
    if (!rc)
        rc = ref_request_new(*c, r, &err);
    for (int i = 0; i < n_in && !rc; i++)
        rc = ref_request_set_input(*r, (size_t)i, &in[i], &err);
    for (int it = 0; it < 2 && !rc; it++)
        rc = ref_infer(*r, &err);
    ref_alloc_fail_after(-1, 0);
    return rc;
}

static int if_case(int cond_val, float *y)
{
    ref_model *m = build_if();
    ref_compiled *c = NULL;
    ref_request *r = NULL;
    uint8_t cond = (uint8_t)cond_val;
    float x[3] = {1, 2, 3};
    int64_t d3[] = {3};
    ref_tensor in[2] = {oh_tensor(REF_DT_BOOL, 0, NULL, &cond), oh_tensor(REF_DT_FLOAT, 1, d3, x)}, out;
    int rc = m ? run2(m, 2, in, &c, &r) : REF_E_NOMEM;
    if (!rc && !(rc = ref_request_output(r, 0, &out, &err)))
        memcpy(y, out.data, sizeof(float) * 3);
    ref_request_free(r);
    ref_compiled_free(c);
    ref_model_free(m);
    return rc;
}

static void test_if(void)
{
    float y[3];
    CHECK_OK(if_case(1, y), &err);
    CHECK(y[0] == 2 && y[1] == 3 && y[2] == 4);
    CHECK_OK(if_case(0, y), &err);
    CHECK(y[0] == 2 && y[1] == 6 && y[2] == 12);
}

static int loop_case(int64_t trips, const float *x, float *s, float *scans)
{
    ref_model *m = build_loop();
    ref_compiled *c = NULL;
    ref_request *r = NULL;
    int64_t d2[] = {2};
    ref_tensor in[2] = {oh_tensor(REF_DT_INT64, 0, NULL, &trips), oh_tensor(REF_DT_FLOAT, 1, d2, (void *)x)}, out;
    int rc = m ? run2(m, 2, in, &c, &r) : REF_E_NOMEM;
    if (!rc && !(rc = ref_request_output(r, 0, &out, &err)))
        memcpy(s, out.data, sizeof(float) * 2);
    if (!rc && !(rc = ref_request_output(r, 1, &out, &err))) {
        CHECK(out.rank == 2 && out.dims[0] == trips && out.dims[1] == 2);
        memcpy(scans, out.data, ref_tensor_nbytes(&out));
    }
    ref_request_free(r);
    ref_compiled_free(c);
    ref_model_free(m);
    return rc;
}

static void test_loop(void)
{
    float x[2] = {1, 2}, s[2], scans[8];
    CHECK_OK(loop_case(3, x, s, scans), &err);
    CHECK(s[0] == 13 && s[1] == 26);
    CHECK(scans[0] == 11 && scans[1] == 22 && scans[4] == 13 && scans[5] == 26);
}

static void test_scan(void)
{
    ref_model *m = build_scan();
    ref_compiled *c = NULL;
    ref_request *r = NULL;
    float init[2] = {1, 1}, xs[6] = {1, 2, 3, 4, 5, 6};
    int64_t d2[] = {2}, dx[] = {3, 2};
    ref_tensor in[2] = {oh_tensor(REF_DT_FLOAT, 1, d2, init), oh_tensor(REF_DT_FLOAT, 2, dx, xs)}, out;
    CHECK_OK(m ? run2(m, 2, in, &c, &r) : REF_E_NOMEM, &err);
    if (r && !ref_request_output(r, 1, &out, &err)) {
        CHECK(out.rank == 2 && out.dims[0] == 3);
        CHECK_EQ_ARRAY(float, &out, 2, 3, 5, 7, 10, 13);
    }
    ref_request_free(r);
    ref_compiled_free(c);
    ref_model_free(m);
}

static void test_oom_loop(void)
{
    int failures = 0, succeeded = 0;
    for (int64_t k = 0; k < 20000 && succeeded < 2; k++) {
        ref_alloc_stats s0, s1;
        ref_alloc_get_stats(&s0);
        float x[2] = {1, 2}, s[2], scans[8], y[3];
        arm_at = k;
        int rc = succeeded ? if_case(0, y) : loop_case(2, x, s, scans);
        arm_at = -1;
        if (rc) {
            failures++;
            CHECK(rc == REF_E_NOMEM);
            if (rc != REF_E_NOMEM)
                printf("k=%lld: %s\n", (long long)k, err.msg);
        } else {
            succeeded++;
            k = -1;
        }
        ref_alloc_get_stats(&s1);
        CHECK(s1.live_bytes == s0.live_bytes);
    }
    CHECK(succeeded == 2);
    CHECK(failures > 20);
}

int main(void)
{
    ref_alloc_stats before, after;
    ref_alloc_get_stats(&before);
    test_if();
    test_loop();
    test_scan();
    test_oom_loop();
    ref_alloc_get_stats(&after);
    CHECK(after.live_bytes == before.live_bytes);
    return check_summary();
}
