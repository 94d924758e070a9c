/* test_fuse_qdq.c: the QDQ rewrites (compile/fuse_qdq.c): two MatMuls reading one DequantizeLinear of a
 * QuantizeLinear'd input, one with per-column weight scales and zero points, one per tensor, against the integer sums
 * worked out here; fuse_qdq on and off agree within float rounding; the shared DequantizeLinear is elided and the
 * float weights freed only when nothing reads them; a graph output keeps its DequantizeLinear; a QDQ Conv (per-channel
 * weights, int32 bias, Relu, QuantizeLinear) becomes QLinearConv with values by hand, not when the bias scale is off;
 * the OOM loop over compile and infer. It must never take an expectation from the kernels, nor leave engine bytes allocated. */
#include <math.h>
#include <string.h>

#include "check.h"
#include "compile/compiled.h"
#include "graph_builder.h"
#include "op_harness.h"

enum { M = 3, K = 5, N = 4 };
static ref_error err;
static const float x[M * K] = {0.5f, -1.25f, 2.0f, 0.0f, 3.1f, -0.2f, 0.7f, 1.5f, -2.5f, 0.05f,
                               1.0f, 1.0f, -1.0f, 0.3f, -3.0f};
static const int8_t w[K * N] = {1, -2, 3, 127, -128, 5, 0, 7, 9, -10, 11, 12, 13, 14, -15, 16, 17, 18, 19, -20};
static const float sx = 0.025f, sw[N] = {0.01f, 0.02f, 0.005f, 0.04f}, sw2 = 0.03f;
static const uint8_t zx = 120;
static const int8_t zw[N] = {0, 1, -2, 3}, zw2 = -1;

/* x -> Q -> DQ -> MatMul with DQ(w, sw[], zw[], axis 1) -> y, and MatMul with DQ(w, sw2, zw2) -> y2 */
static ref_model *build(bool y_dq_output)
{
    ref_model *m = gb_model(13);
    int64_t xd[] = {M, K}, wd[] = {K, N}, nd[] = {N};
    int rc = gb_input(m, "x", REF_DT_FLOAT, 2, xd, NULL);
    rc |= gb_init(m, "sx", REF_DT_FLOAT, 0, NULL, &sx) | gb_init(m, "zx", REF_DT_UINT8, 0, NULL, &zx);
    rc |= gb_init(m, "w", REF_DT_INT8, 2, wd, w) | gb_init(m, "sw", REF_DT_FLOAT, 1, nd, sw);
    rc |= gb_init(m, "zw", REF_DT_INT8, 1, nd, zw) | gb_init(m, "sw2", REF_DT_FLOAT, 0, NULL, &sw2);
    rc |= gb_init(m, "zw2", REF_DT_INT8, 0, NULL, &zw2);
    ref_node *q = gb_node(m, "QuantizeLinear", "x,sx,zx", "xq");
    ref_node *dx = gb_node(m, "DequantizeLinear", "xq,sx,zx", "xd");
    ref_node *dw = gb_node(m, "DequantizeLinear", "w,sw,zw", "wd");
    ref_node *dw2 = gb_node(m, "DequantizeLinear", "w,sw2,zw2", "wd2");
    ref_node *mm = gb_node(m, "MatMul", "xd,wd", "y"), *mm2 = gb_node(m, "MatMul", "xd,wd2", "y2");
    if (rc || !q || !dx || !dw || !dw2 || !mm || !mm2) {
        ref_model_free(m);
        return NULL;
    }
    oh_attr_int(m, dw, "axis", 1);
    rc = gb_output(m, "y", REF_DT_FLOAT) | gb_output(m, "y2", REF_DT_FLOAT);
    if (y_dq_output)
        rc |= gb_output(m, "xd", REF_DT_FLOAT);
    if (rc) {
        ref_model_free(m);
        return NULL;
    }
    return m;
}

/* y and y2 of m compiled with fuse_qdq on or off; *elided: DequantizeLinear nodes elided, *freed: float constants
 * left without data. */
static int run(ref_model *m, int fuse, float *y, float *y2, int *elided, int *freed)
{
    ref_options o;
    ref_options_init(&o);
    o.fuse_qdq = fuse;
    ref_compiled *c = NULL;
    ref_request *r = NULL;
    int64_t xd[] = {M, K};
    ref_tensor t = oh_tensor(REF_DT_FLOAT, 2, xd, (void *)x), out;
    int rc = oh_compile_infer(m, &o, &t, &c, &r, &err);
    if (!rc && !(rc = ref_request_output(r, 0, &out, &err)))
        memcpy(y, out.data, sizeof(float) * M * N);
    if (!rc && !(rc = ref_request_output(r, 1, &out, &err)))
        memcpy(y2, out.data, sizeof(float) * M * N);
    if (!rc) {
        *elided = *freed = 0;
        for (int k = 0; k < c->n_nodes; k++)
            *elided += c->nodes[k].elided && ref_exec_is_op(&c->nodes[k], "DequantizeLinear");
        for (int v = 0; v < c->n_vals; v++)
            *freed += c->vals[v].kind == REF_VAL_CONST && c->vals[v].t.dtype == REF_DT_FLOAT && !c->vals[v].t.data;
    }
    ref_request_free(r);
    ref_compiled_free(c);
    return rc;
}

/* The sums by hand: x quantized (ties to even, saturated), then sum (xq - zx)(w - zw) times the scales. */
static void expect(float *y, float *y2)
{
    int xq[M * K];
    for (int i = 0; i < M * K; i++) {
        double v = nearbyint(x[i] / sx) + zx;
        xq[i] = (int)(v < 0 ? 0 : v > 255 ? 255 : v);
    }
    for (int i = 0; i < M; i++)
        for (int n = 0; n < N; n++) {
            long s = 0, s2 = 0;
            for (int k = 0; k < K; k++) {
                s += (long)(xq[i * K + k] - zx) * (w[k * N + n] - zw[n]);
                s2 += (long)(xq[i * K + k] - zx) * (w[k * N + n] - zw2);
            }
            y[i * N + n] = (float)((double)s * sx * sw[n]);
            y2[i * N + n] = (float)((double)s2 * sx * sw2);
        }
}

static void test_fused_and_not(void)
{
    ref_model *m = build(false);
    CHECK(m != NULL);
    if (!m)
        return;
    float want[M * N], want2[M * N], y[M * N], y2[M * N], u[M * N], u2[M * N];
    int elided = -1, freed = -1, e0 = -1, f0;
    expect(want, want2);
    CHECK_OK(run(m, 1, y, y2, &elided, &freed), &err);
    CHECK_OK(run(m, 0, u, u2, &e0, &f0), &err);
    for (int i = 0; i < M * N; i++) {
        CHECK_NEAR(y[i], want[i], 1e-6 * (1 + fabs(want[i])));
        CHECK_NEAR(y2[i], want2[i], 1e-6 * (1 + fabs(want2[i])));
        CHECK_NEAR(u[i], want[i], 1e-5 * (1 + fabs(want[i]))); /* float Q/DQ: each product rounded */
        CHECK_NEAR(u2[i], want2[i], 1e-5 * (1 + fabs(want2[i])));
    }
    CHECK(elided == 1 && freed == 2); /* x's DequantizeLinear once both MatMuls read xq; both weights' float copies */
    CHECK(e0 == 0); /* unfused, the MatMuls pack and release the float weights themselves */
    ref_model_free(m);

    /* x's dequantized values are a graph output: that DequantizeLinear still runs, the products still fuse */
    m = build(true);
    CHECK(m != NULL);
    if (!m)
        return;
    CHECK_OK(run(m, 1, y, y2, &elided, &freed), &err);
    CHECK(elided == 0 && freed == 2);
    CHECK_NEAR(y[5], want[5], 1e-6 * (1 + fabs(want[5])));
    ref_model_free(m);
}

/* x [1, 2, 2, 2] -> Q/DQ (scale 0.05, zp 128) -> Conv 1x1 to 3 channels, weights DQ'd per channel (axis 0), bias DQ'd
 * from int32 at x's times w's scale (bias_scale_ok) or at another one -> Relu -> Q (scale 0.1, zp 0) -> DQ -> y */
static ref_model *build_conv(bool bias_scale_ok)
{
    static const int8_t cw[6] = {50, -20, 127, 3, -90, 60};
    static const float cws[3] = {0.01f, 0.02f, 0.005f};
    static const int8_t cwz[3] = {0, 0, 0};
    static const int32_t cb[3] = {100, -2000, 37};
    float bs[3];
    for (int i = 0; i < 3; i++)
        bs[i] = 0.05f * cws[i] * (bias_scale_ok ? 1.0f : 1.5f);
    static const float s_in = 0.05f, s_out = 0.1f;
    static const uint8_t z_in = 128, z_out = 0;
    ref_model *m = gb_model(13);
    int64_t xd[] = {1, 2, 2, 2}, wd[] = {3, 2, 1, 1}, cd[] = {3};
    int rc = gb_input(m, "x", REF_DT_FLOAT, 4, xd, NULL);
    rc |= gb_init(m, "s_in", REF_DT_FLOAT, 0, NULL, &s_in) | gb_init(m, "z_in", REF_DT_UINT8, 0, NULL, &z_in);
    rc |= gb_init(m, "s_out", REF_DT_FLOAT, 0, NULL, &s_out) | gb_init(m, "z_out", REF_DT_UINT8, 0, NULL, &z_out);
    rc |= gb_init(m, "w", REF_DT_INT8, 4, wd, cw) | gb_init(m, "ws", REF_DT_FLOAT, 1, cd, cws);
    rc |= gb_init(m, "wz", REF_DT_INT8, 1, cd, cwz) | gb_init(m, "b", REF_DT_INT32, 1, cd, cb);
    rc |= gb_init(m, "bs", REF_DT_FLOAT, 1, cd, bs);
    ref_node *n[7] = {gb_node(m, "QuantizeLinear", "x,s_in,z_in", "xq"), gb_node(m, "DequantizeLinear", "xq,s_in,z_in", "xd"),
                      gb_node(m, "DequantizeLinear", "w,ws,wz", "wf"), gb_node(m, "DequantizeLinear", "b,bs", "bf"),
                      gb_node(m, "Conv", "xd,wf,bf", "c"), gb_node(m, "Relu", "c", "r"),
                      gb_node(m, "QuantizeLinear", "r,s_out,z_out", "yq")};
    ref_node *last = gb_node(m, "DequantizeLinear", "yq,s_out,z_out", "y");
    for (int i = 0; i < 7; i++)
        rc |= !n[i];
    if (rc || !last) {
        ref_model_free(m);
        return NULL;
    }
    oh_attr_int(m, n[2], "axis", 0);
    oh_attr_int(m, n[3], "axis", 0);
    if (gb_output(m, "y", REF_DT_FLOAT)) {
        ref_model_free(m);
        return NULL;
    }
    return m;
}

/* y of the conv model, and how many nodes were elided */
static int run_conv(ref_model *m, int fuse, float *y, int *elided)
{
    static const float cx[8] = {0.3f, -0.7f, 1.2f, 0.05f, -1.5f, 0.9f, 0.45f, -0.2f};
    ref_options o;
    ref_options_init(&o);
    o.fuse_qdq = fuse;
    ref_compiled *c = NULL;
    ref_request *r = NULL;
    ref_tensor t = oh_tensor(REF_DT_FLOAT, 4, (int64_t[]){1, 2, 2, 2}, (void *)cx), out;
    int rc = oh_compile_infer(m, &o, &t, &c, &r, &err);
    if (!rc && !(rc = ref_request_output(r, 0, &out, &err)))
        memcpy(y, out.data, sizeof(float) * 12);
    if (!rc) {
        *elided = 0;
        for (int k = 0; k < c->n_nodes; k++)
            *elided += c->nodes[k].elided;
    }
    ref_request_free(r);
    ref_compiled_free(c);
    return rc;
}

static void test_conv(void)
{
    /* by hand: xq = rint(x / 0.05) + 128 -> (134, 114, 152, 129, 98, 146, 137, 124); for output channel o at pixel p,
     * sum = (xq[0][p] - 128) w[o][0] + (xq[1][p] - 128) w[o][1] + b[o], y = clamp(rint(sum 0.05 ws[o] / 0.1), 0, 255) 0.1 */
    static const int xq[8] = {134, 114, 152, 129, 98, 146, 137, 124};
    static const int cw[6] = {50, -20, 127, 3, -90, 60}, cb[3] = {100, -2000, 37};
    static const double cws[3] = {0.01, 0.02, 0.005};
    float want[12], y[12], u[12];
    for (int o = 0; o < 3; o++)
        for (int p = 0; p < 4; p++) {
            double sum = (double)(xq[p] - 128) * cw[2 * o] + (double)(xq[4 + p] - 128) * cw[2 * o + 1] + cb[o];
            double q = nearbyint(sum * (0.05f * (float)cws[o]) / 0.1f);
            want[o * 4 + p] = (float)((q < 0 ? 0 : q > 255 ? 255 : q) * 0.1f);
        }
    ref_model *m = build_conv(true);
    CHECK(m != NULL);
    if (!m)
        return;
    int elided = -1, e0 = -1;
    CHECK_OK(run_conv(m, 1, y, &elided), &err);
    CHECK_OK(run_conv(m, 0, u, &e0), &err);
    for (int i = 0; i < 12; i++) {
        CHECK_NEAR(y[i], want[i], 1e-6);
        CHECK_NEAR(u[i], want[i], 0.1f + 1e-6); /* the float path may land one step away */
    }
    CHECK(elided == 3); /* x's DequantizeLinear, the Relu and the QuantizeLinear: QLinearConv writes yq */
    CHECK(e0 == 1); /* unfused, only the Relu (into the Conv, fuse_act) */
    ref_model_free(m);
    /* a bias at another scale than x's times w's: left alone, the float path runs (the Relu still fuse_act's) */
    m = build_conv(false);
    CHECK(m != NULL);
    if (!m)
        return;
    CHECK_OK(run_conv(m, 1, y, &elided), &err);
    CHECK(elided == 1);
    ref_model_free(m);
}

/* SQLite's OOM loop over compile and infer with the rewrite on: every failure a clean REF_E_NOMEM, nothing leaked,
 * until the whole run succeeds with the same values. */
static void test_oom_loop(void)
{
    float want[M * N], want2[M * N];
    expect(want, want2);
    int failures = 0, succeeded = 0;
    for (int64_t k = 0; k < 5000 && !succeeded; k++) {
        ref_alloc_stats s0, s1;
        ref_alloc_get_stats(&s0);
        ref_model *m = build(false);
        float y[M * N], y2[M * N];
        int elided = 0, freed = 0;
        ref_alloc_fail_after(k, 0);
        int rc = m ? run(m, 1, y, y2, &elided, &freed) : REF_E_NOMEM;
        ref_alloc_fail_after(-1, 0);
        if (rc) {
            failures++;
            CHECK(rc == REF_E_NOMEM);
        } else {
            succeeded = elided == 1 && fabsf(y[7] - want[7]) <= 1e-6f * (1 + fabsf(want[7]));
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
    test_fused_and_not();
    test_conv();
    test_oom_loop();
    ref_alloc_stats st;
    ref_alloc_get_stats(&st);
    CHECK(st.live_bytes == 0);
    return check_summary();
}
