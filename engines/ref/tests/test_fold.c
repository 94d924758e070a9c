/* test_fold.c: BatchNormalization, Mul and Add by constants folded into the Conv or Gemm before them, and Relu or Clip
 * fused into a Conv or a BatchNormalization (fold_bn): folded and unfolded compiles give the same outputs within
 * float rounding (a fused Clip the very same bits), the folded nodes are elided, a folded
 * pattern that must not fold (a second reader, a graph output) is left alone, a folded weight a Conv packed is
 * freed, and compile survives every failing allocation. It must never compare against anything but the same
 * model compiled with fold_bn off. */
#include <math.h>

#include "check.h"
#include "compile/compiled.h"
#include "graph_builder.h"

static ref_error err;

static float rnd(uint32_t *s)
{
    *s = *s * 1664525u + 1013904223u;
    return (float)((*s >> 8) & 0xffff) / 32768.0f - 1.0f;
}

static int init_rand(ref_model *m, const char *name, int rank, const int64_t *dims, uint32_t seed, float lo)
{
    float buf[1024];
    ref_tensor t = {.dtype = REF_DT_FLOAT, .rank = rank};
    for (int i = 0; i < rank; i++)
        t.dims[i] = dims[i];
    int64_t n = ref_tensor_numel(&t);
    if (n > 1024)
        return REF_E_RANGE;
    for (int64_t i = 0; i < n; i++)
        buf[i] = lo > 0 ? lo + fabsf(rnd(&seed)) : rnd(&seed);
    return gb_init(m, name, REF_DT_FLOAT, rank, dims, buf);
}

/* x[1,3,6,6] -> Conv(4, 3x3, pad 1, bias) -> BN -> Mul([4,1,1]) -> Add([1,4,1,1]) -> Relu -> Flatten
 *   -> Gemm(transB, no bias) -> BN -> Mul(scalar) -> y; and Conv2 (no bias) -> BN -> z read twice (not folded). */
static ref_model *build(void)
{
    ref_model *m = gb_model(13);
    int64_t xd[] = {1, 3, 6, 6}, wd[] = {4, 3, 3, 3}, c4[] = {4}, c41[] = {4, 1, 1}, c1411[] = {1, 4, 1, 1};
    int64_t gw[] = {5, 144}, c5[] = {5}, one[] = {1};
    int ok = m && !gb_input(m, "x", REF_DT_FLOAT, 4, xd, NULL) && !init_rand(m, "W", 4, wd, 1, 0) &&
             !init_rand(m, "B", 1, c4, 2, 0) && !init_rand(m, "s", 1, c4, 3, 0) && !init_rand(m, "b", 1, c4, 4, 0) &&
             !init_rand(m, "mu", 1, c4, 5, 0) && !init_rand(m, "var", 1, c4, 6, 0.5f) &&
             !init_rand(m, "k", 3, c41, 7, 0) && !init_rand(m, "a", 4, c1411, 8, 0) &&
             !init_rand(m, "G", 2, gw, 9, 0) && !init_rand(m, "s5", 1, c5, 10, 0) &&
             !init_rand(m, "b5", 1, c5, 11, 0) && !init_rand(m, "m5", 1, c5, 12, 0) &&
             !init_rand(m, "v5", 1, c5, 13, 0.5f) && !init_rand(m, "h", 1, one, 14, 0);
    ref_node *n;
    ok = ok && (n = gb_node(m, "Conv", "x,W,B", "c"));
    if (ok) {
        int64_t pads[] = {1, 1, 1, 1};
        oh_attr_ints(m, n, "pads", 4, pads);
    }
    ok = ok && (n = gb_node(m, "BatchNormalization", "c,s,b,mu,var", "bn"));
    if (ok)
        oh_attr_float(m, n, "epsilon", 1e-3f);
    ok = ok && gb_node(m, "Mul", "k,bn", "mul") && gb_node(m, "Add", "mul,a", "add") && gb_node(m, "Relu", "add", "r") &&
         gb_node(m, "Flatten", "r", "f") && (n = gb_node(m, "Gemm", "f,G", "g"));
    if (ok)
        oh_attr_int(m, n, "transB", 1);
    ok = ok && gb_node(m, "BatchNormalization", "g,s5,b5,m5,v5", "gb") && gb_node(m, "Mul", "gb,h", "y") &&
         !gb_output(m, "y", REF_DT_FLOAT);
    /* A Conv whose output two nodes read: nothing folds into it. */
    ok = ok && gb_node(m, "Conv", "x,W", "c2") && gb_node(m, "BatchNormalization", "c2,s,b,mu,var", "z") &&
         gb_node(m, "Add", "c2,z", "w") && !gb_output(m, "w", REF_DT_FLOAT);
    /* Conv -> Clip(-0.25, 0.5) by constant inputs (opset 13): fused. */
    float lo = -0.25f, hi = 0.5f;
    ok = ok && !gb_init(m, "lo", REF_DT_FLOAT, 0, NULL, &lo) && !gb_init(m, "hi", REF_DT_FLOAT, 0, NULL, &hi) &&
         gb_node(m, "Conv", "x,W,B", "c3") && gb_node(m, "Clip", "c3,lo,hi", "v") && !gb_output(m, "v", REF_DT_FLOAT);
    /* x -> BN (nothing to fold into) -> Clip(-0.25, 0.5): the Clip fused into the BN. */
    int64_t c3d[] = {3};
    ok = ok && !init_rand(m, "s3", 1, c3d, 15, 0) && !init_rand(m, "b3", 1, c3d, 16, 0) &&
         !init_rand(m, "m3", 1, c3d, 17, 0) && !init_rand(m, "v3", 1, c3d, 18, 0.5f) &&
         gb_node(m, "BatchNormalization", "x,s3,b3,m3,v3", "xb") && gb_node(m, "Clip", "xb,lo,hi", "u") &&
         !gb_output(m, "u", REF_DT_FLOAT);
    if (!ok) {
        ref_model_free(m);
        return NULL;
    }
    return m;
}

static int n_elided(const ref_compiled *c)
{
    int n = 0;
    for (int k = 0; k < c->n_nodes; k++)
        n += c->nodes[k].elided;
    return n;
}

/* Constants whose data compile released (release.c: a folded weight only a packed Conv or Gemm read). */
static int n_released(const ref_compiled *c)
{
    int n = 0;
    for (int v = 0; v < c->n_vals; v++)
        n += c->vals[v].kind == REF_VAL_CONST && !c->vals[v].t.data && ref_tensor_nbytes(&c->vals[v].t) > 0;
    return n;
}

static int last_released = -1;

/* Outputs of m compiled with fold_bn on or off, for the same input. */
static int run(ref_model *m, int fold, float *y, float *w, float *v, float *u, int *elided)
{
    ref_options o;
    ref_options_init(&o);
    o.fold_bn = fold;
    ref_compiled *c = NULL;
    ref_request *r = NULL;
    float x[108];
    uint32_t seed = 99;
    for (int i = 0; i < 108; i++)
        x[i] = rnd(&seed);
    int64_t xd[] = {1, 3, 6, 6};
    ref_tensor t = oh_tensor(REF_DT_FLOAT, 4, xd, x), out;
    int rc = oh_compile_infer(m, &o, &t, &c, &r, &err);
    if (!rc && !(rc = ref_request_output(r, 0, &out, &err)))
        memcpy(y, out.data, sizeof(float) * 5);
    if (!rc && !(rc = ref_request_output(r, 1, &out, &err)))
        memcpy(w, out.data, sizeof(float) * 64); /* [1, 4, 4, 4] */
    if (!rc && !(rc = ref_request_output(r, 2, &out, &err)))
        memcpy(v, out.data, sizeof(float) * 64);
    if (!rc && !(rc = ref_request_output(r, 3, &out, &err)))
        memcpy(u, out.data, sizeof(float) * 108); /* [1, 3, 6, 6] */
    if (!rc) {
        *elided = n_elided(c);
        last_released = n_released(c);
    }
    ref_request_free(r);
    ref_compiled_free(c);
    return rc;
}

static void test_folded_matches_unfolded(void)
{
    ref_model *m = build();
    CHECK(m != NULL);
    if (!m)
        return;
    float y0[5], y1[5], w0[64], w1[64], v0[64], v1[64], u0[108], u1[108];
    int e0 = -1, e1 = -1;
    CHECK_OK(run(m, 0, y0, w0, v0, u0, &e0), &err);
    CHECK(last_released == 0); /* W stays: nothing folded into it, the model owns it */
    CHECK_OK(run(m, 1, y1, w1, v1, u1, &e1), &err);
    CHECK(last_released == 2); /* the first Conv's and the Gemm's folded weights, freed once packed; y1 == y0 */
    CHECK(e0 == 0);
    /* BN, Mul, Add and Relu after the Conv; BN, Mul after the Gemm; nothing after the shared Conv; the two Clips */
    CHECK(e1 == 8);
    int clipped = 0;
    for (int i = 0; i < 64; i++) {
        CHECK(!memcmp(&v0[i], &v1[i], sizeof v0[i]));
        clipped += v1[i] == -0.25f || v1[i] == 0.5f;
    }
    CHECK(clipped > 4 && clipped < 60); /* the bounds bit, and not everywhere */
    clipped = 0;
    for (int i = 0; i < 108; i++) { /* Clip fused into a BatchNormalization: the very same bits */
        CHECK(!memcmp(&u0[i], &u1[i], sizeof u0[i]));
        clipped += u1[i] == -0.25f || u1[i] == 0.5f;
    }
    CHECK(clipped > 4 && clipped < 100);
    double worst = 0, scale = 0;
    for (int i = 0; i < 5; i++) {
        worst = fmax(worst, fabs(y0[i] - y1[i]));
        scale = fmax(scale, fabs(y0[i]));
    }
    CHECK(scale > 0 && worst <= 1e-5 * scale + 1e-6);
    for (int i = 0; i < 64; i++)
        CHECK(w0[i] == w1[i]);
    ref_model_free(m);
}

static void test_oom_loop(void)
{
    int failures = 0, succeeded = 0;
    for (int64_t k = 0; k < 5000 && !succeeded; k++) {
        ref_alloc_stats s0, s1;
        ref_alloc_get_stats(&s0);
        ref_model *m = build();
        float y[5], w[64], v[64], u[108];
        int e = 0;
        ref_alloc_fail_after(k, 0);
        int rc = m ? run(m, 1, y, w, v, u, &e) : REF_E_NOMEM;
        ref_alloc_fail_after(-1, 0);
        if (rc) {
            failures++;
            CHECK(rc == REF_E_NOMEM);
        } else {
            succeeded = e == 8;
        }
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
    test_folded_matches_unfolded();
    test_oom_loop();
    ref_alloc_get_stats(&after);
    CHECK(after.live_bytes == before.live_bytes);
    return check_summary();
}
