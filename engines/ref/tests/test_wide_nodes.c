/* test_wide_nodes.c: nodes as wide as a crafted model can make them (millions of inputs, a hundred thousand
 * outputs) through write, read, compile and infer: each either works or fails with a status, and never
 * overflows the stack (compile and the runtime once kept per-node arrays in VLAs sized by the model).
 * Then the OOM loop over the heap arrays that replaced them. It must never leave engine bytes allocated. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "graph_builder.h"

#define WIDE_IN (1 << 21)  /* 2M input pointers are 16 MiB: twice a default 8 MiB stack */
#define WIDE_OUT (1 << 17) /* 128K output tensors are 10 MiB */

/* n names from m's pool: all the one name `same`, or prefix0, prefix1, ... NULL on allocation failure. */
static const char **names(ref_model *m, int n, const char *same, const char *prefix)
{
    const char **v = ref_model_pool_alloc(m, sizeof *v * (size_t)n);
    const char *one = same ? gb_str(m, same) : NULL;
    if (!v || (same && !one))
        return NULL;
    for (int i = 0; i < n; i++) {
        char buf[32];
        int len = snprintf(buf, sizeof buf, "%s%d", prefix ? prefix : "", i);
        v[i] = same ? one : ref_model_strdup(m, buf, (size_t)len);
        if (!v[i])
            return NULL;
    }
    return v;
}

/* A node of op over the given name arrays (owned by m's pool), with room for OH_MAX_ATTRS attributes. */
static ref_node *wide_node(ref_model *m, const char *op, const char **ins, int n_in, const char **outs, int n_out)
{
    if (!ins || !outs)
        return NULL;
    ref_node *n = ref_graph_add_node(m);
    if (!n)
        return NULL;
    n->op_type = gb_str(m, op);
    n->name = n->op_type;
    n->domain = "";
    n->inputs = ins;
    n->n_inputs = n_in;
    n->outputs = outs;
    n->n_outputs = n_out;
    n->attrs = ref_model_pool_alloc(m, sizeof(ref_attr) * OH_MAX_ATTRS);
    return n->op_type && n->attrs ? n : NULL;
}

/* Serialize m with the engine's writer, free it, and read the file back. NULL (and a failed check) on error. */
static ref_model *round_trip(ref_model *m)
{
    char path[256];
    const char *tmp = getenv("TMPDIR");
    snprintf(path, sizeof path, "%s/test_wide_nodes.XXXXXX", tmp && tmp[0] ? tmp : "/tmp");
    int fd = mkstemp(path);
    CHECK(fd >= 0);
    if (fd < 0) {
        ref_model_free(m);
        return NULL;
    }
    close(fd);
    ref_error err = {0};
    ref_model *back = NULL;
    CHECK_OK(ref_onnx_write(m, path, false, &err), &err);
    ref_model_free(m);
    CHECK_OK(ref_model_read(path, NULL, &back, &err), &err);
    unlink(path);
    return back;
}

/* Compile m (freeing it), feed x as input 0 when x_n > 0, infer, and copy output 0 into y (y_n floats).
 * Returns the first failing status; err says why. */
static int compile_and_run(ref_model *m, const ref_options *o, const float *x, int64_t x_n, float *y, int64_t y_n,
                           ref_error *err)
{
    ref_compiled *c = NULL;
    ref_request *r = NULL;
    int rc = ref_compile(m, o, &c, err);
    ref_model_free(m);
    if (!rc)
        rc = ref_request_new(c, &r, err);
    if (!rc && x_n > 0) {
        ref_tensor t = oh_tensor(REF_DT_FLOAT, 1, &x_n, (void *)x);
        rc = ref_request_set_input(r, 0, &t, err);
    }
    if (!rc)
        rc = ref_infer(r, err);
    ref_tensor out;
    if (!rc && !(rc = ref_request_output(r, 0, &out, err))) {
        CHECK(out.dtype == REF_DT_FLOAT && out.rank == 1 && out.dims[0] == y_n);
        if (out.rank == 1 && out.dims[0] == y_n)
            memcpy(y, out.data, sizeof *y * (size_t)y_n);
    }
    ref_request_free(r);
    ref_compiled_free(c);
    return rc;
}

/* y = Concat(x, x, ..., x) with 2M inputs, built in memory and also written and read back. */
static void test_concat_many_inputs(void)
{
    float *y = malloc(sizeof *y * WIDE_IN);
    CHECK(y != NULL);
    for (int via_file = 0; y && via_file <= 1; via_file++) {
        ref_model *m = gb_model(13);
        int64_t one[] = {1};
        ref_node *n = NULL;
        if (m && !gb_input(m, "x", REF_DT_FLOAT, 1, one, NULL) && !gb_output(m, "y", REF_DT_FLOAT))
            n = wide_node(m, "Concat", names(m, WIDE_IN, "x", NULL), WIDE_IN, names(m, 1, "y", NULL), 1);
        CHECK(n != NULL);
        if (!n) {
            ref_model_free(m);
            continue;
        }
        oh_attr_int(m, n, "axis", 0);
        if (via_file && !(m = round_trip(m)))
            continue;
        CHECK(m->graph.nodes[0].n_inputs == WIDE_IN);
        float x = 3.5f;
        ref_error err = {0};
        memset(y, 0, sizeof *y * WIDE_IN);
        CHECK_OK(compile_and_run(m, NULL, &x, 1, y, WIDE_IN, &err), &err);
        int same = 1;
        for (int i = 0; i < WIDE_IN; i++)
            same &= y[i] == x;
        CHECK(same);
    }
    free(y);
}

/* z = Concat(Split(x)): one node with 128K outputs, then one with as many inputs. x is a graph input
 * (planned and run, with the arena and without) or an initializer (folded at compile time). */
static void test_split_many_outputs(void)
{
    float *x = malloc(sizeof *x * WIDE_OUT), *z = malloc(sizeof *z * WIDE_OUT);
    CHECK(x && z);
    for (int i = 0; x && i < WIDE_OUT; i++)
        x[i] = (float)i;
    for (int variant = 0; x && z && variant < 3; variant++) {
        int constant = variant == 2;
        ref_model *m = gb_model(13);
        int64_t dims[] = {WIDE_OUT};
        const char **parts = m ? names(m, WIDE_OUT, NULL, "y") : NULL;
        int built = m && parts && !gb_output(m, "z", REF_DT_FLOAT) &&
                    !(constant ? gb_init(m, "x", REF_DT_FLOAT, 1, dims, x)
                               : gb_input(m, "x", REF_DT_FLOAT, 1, dims, NULL));
        ref_node *cat = NULL;
        if (built && wide_node(m, "Split", names(m, 1, "x", NULL), 1, parts, WIDE_OUT))
            cat = wide_node(m, "Concat", parts, WIDE_OUT, names(m, 1, "z", NULL), 1);
        CHECK(cat != NULL);
        if (!cat) {
            ref_model_free(m);
            continue;
        }
        oh_attr_int(m, cat, "axis", 0);
        /* The greedy planner is quadratic in live tensors; naive keeps 128K of them fast. */
        ref_options o;
        ref_options_init(&o);
        o.planner = REF_PLANNER_NAIVE;
        o.arena = variant != 1;
        ref_error err = {0};
        memset(z, 0, sizeof *z * WIDE_OUT);
        CHECK_OK(compile_and_run(m, &o, x, constant ? 0 : WIDE_OUT, z, WIDE_OUT, &err), &err);
        CHECK(!memcmp(x, z, sizeof *z * WIDE_OUT));
    }
    free(x);
    free(z);
}

/* Max takes at most 64 inputs here: 2M of them is refused with a status naming the limit. */
static void test_variadic_refused(void)
{
    ref_model *m = gb_model(13);
    int64_t one[] = {1};
    ref_node *n = NULL;
    if (m && !gb_input(m, "x", REF_DT_FLOAT, 1, one, NULL) && !gb_output(m, "y", REF_DT_FLOAT))
        n = wide_node(m, "Max", names(m, WIDE_IN, "x", NULL), WIDE_IN, names(m, 1, "y", NULL), 1);
    CHECK(n != NULL);
    ref_compiled *c = NULL;
    ref_error err = {0};
    CHECK(n && ref_compile(m, NULL, &c, &err) == REF_E_UNSUPPORTED && !c);
    CHECK(strstr(err.msg, "at most 64") != NULL);
    ref_model_free(m);
}

/* A small graph that reaches every heap array standing in for a former VLA: folding (Concat of constants),
 * planning (Split, Concat), pre-packing on two workers (two MatMuls with constant weights), lazy preparation
 * at run time (a MatMul after a Reshape whose target is an input) and the per-tensor runtime. */
static ref_model *small_model(void)
{
    ref_model *m = gb_model(13);
    int64_t d22[] = {2, 2}, d2[] = {2};
    float w[4] = {1, 2, 3, 4}, c1[2] = {5, 6}, c2[2] = {7, 8};
    ref_node *k = NULL, *sp = NULL, *cat = NULL;
    int ok = m && !gb_input(m, "x", REF_DT_FLOAT, 2, d22, NULL) && !gb_input(m, "s", REF_DT_INT64, 1, d2, NULL) &&
             !gb_init(m, "W", REF_DT_FLOAT, 2, d22, w) && !gb_init(m, "c1", REF_DT_FLOAT, 1, d2, c1) &&
             !gb_init(m, "c2", REF_DT_FLOAT, 1, d2, c2) && (k = gb_node(m, "Concat", "c1,c2", "k")) &&
             gb_node(m, "MatMul", "x,W", "a") && gb_node(m, "MatMul", "a,W", "b") &&
             (sp = gb_node(m, "Split", "b", "b0,b1")) && (cat = gb_node(m, "Concat", "b0,b1", "cb")) &&
             gb_node(m, "Reshape", "cb,s", "r") && gb_node(m, "MatMul", "r,W", "d") &&
             !gb_output(m, "d", REF_DT_FLOAT) && !gb_output(m, "k", REF_DT_FLOAT);
    if (!ok) {
        ref_model_free(m);
        return NULL;
    }
    oh_attr_int(m, k, "axis", 0);
    oh_attr_int(m, sp, "axis", 0);
    oh_attr_int(m, cat, "axis", 0);
    return m;
}

/* d = x·W·W·W for x = I (reshaped to [2,2] unchanged): W³ = [[37,54],[81,118]]. */
static int run_small(ref_model *m, int arena, float *d, ref_error *err)
{
    ref_options o;
    ref_options_init(&o);
    o.compile_threads = 2;
    o.arena = arena;
    ref_compiled *c = NULL;
    ref_request *r = NULL;
    int rc = ref_compile(m, &o, &c, err);
    if (!rc)
        rc = ref_request_new(c, &r, err);
    float x[4] = {1, 0, 0, 1};
    int64_t s[2] = {2, 2}, d22[] = {2, 2}, d2[] = {2};
    ref_tensor tx = oh_tensor(REF_DT_FLOAT, 2, d22, x), ts = oh_tensor(REF_DT_INT64, 1, d2, s);
    if (!rc)
        rc = ref_request_set_input(r, 0, &tx, err);
    if (!rc)
        rc = ref_request_set_input(r, 1, &ts, err);
    for (int run = 0; run < 2 && !rc; run++) /* the second run finds the node already prepared */
        rc = ref_infer(r, err);
    ref_tensor y;
    if (!rc && !(rc = ref_request_output(r, 0, &y, err)))
        memcpy(d, y.data, sizeof(float) * 4);
    ref_request_free(r);
    ref_compiled_free(c);
    return rc;
}

/* SQLite-style: fail the k-th allocation for k = 0, 1, ... until compile+infer succeed; every failure is
 * a clean REF_E_NOMEM and nothing leaks. */
static void test_oom_loop(void)
{
    for (int arena = 0; arena <= 1; arena++) {
        int failures = 0, succeeded = 0;
        for (int64_t k = 0; k < 5000 && !succeeded; k++) {
            ref_alloc_stats s0, s1;
            ref_alloc_get_stats(&s0);
            ref_model *m = small_model();
            CHECK(m != NULL);
            if (!m)
                break;
            ref_error err = {0};
            float d[4] = {0};
            ref_alloc_fail_after(k, 0);
            int rc = run_small(m, arena, d, &err);
            ref_alloc_fail_after(-1, 0);
            if (rc) {
                failures++;
                if (rc != REF_E_NOMEM)
                    fprintf(stderr, "allocation %lld failed: %d %s\n", (long long)k, rc, err.msg);
                CHECK(rc == REF_E_NOMEM);
            } else {
                CHECK(d[0] == 37 && d[1] == 54 && d[2] == 81 && d[3] == 118);
                succeeded = 1;
            }
            ref_model_free(m);
            ref_alloc_get_stats(&s1);
            if (s1.live_bytes != s0.live_bytes)
                fprintf(stderr, "failing allocation %lld leaked %lld bytes (%s)\n", (long long)k,
                        (long long)(s1.live_bytes - s0.live_bytes), rc ? err.msg : "no failure");
            CHECK(s1.live_bytes == s0.live_bytes);
        }
        CHECK(succeeded);
        CHECK(failures > 10);
    }
}

int main(void)
{
    ref_alloc_stats before, after;
    ref_alloc_get_stats(&before);
    test_oom_loop();
    test_variadic_refused();
    test_split_many_outputs();
    test_concat_many_inputs();
    ref_alloc_get_stats(&after);
    CHECK(after.live_bytes == before.live_bytes);
    return check_summary();
}
