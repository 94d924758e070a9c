/* test_ops_norm.c: BatchNormalization, InstanceNormalization, LayerNormalization (with its optional Mean and
 * InvStdDev outputs), MeanVarianceNormalization and LRN against hand-computed values.
 * It must never leave engine bytes allocated. */
#include <math.h>

#include "check.h"
#include "op_harness.h"

static ref_model *m;

static int go(const ref_node *n, int opset, int n_in, const ref_tensor *const *in, int n_out, ref_tensor *y,
              int threads, ref_error *err)
{
    return oh_run(n, opset, n_in, in, n_out, y, 0, threads, err);
}

static void check_f(const ref_tensor *y, int rank, const int64_t *dims, const float *want, double tol)
{
    CHECK(y->rank == rank);
    for (int d = 0; d < rank && d < y->rank; d++)
        CHECK(y->dims[d] == dims[d]);
    int64_t n = ref_tensor_numel(y);
    for (int64_t i = 0; i < n && y->data; i++)
        CHECK_NEAR(((const float *)y->data)[i], want[i], tol);
}

static void test_batchnorm(void)
{
    ref_error errs, *err = &errs;
    float xv[] = {1, 3, 2, 4}, sc[] = {2, 0.5f}, b[] = {1, -1}, mean[] = {2, 3}, var[] = {4, 0.25f};
    ref_tensor x = oh_tensor(REF_DT_FLOAT, 4, (int64_t[]){1, 2, 1, 2}, xv), y[5];
    ref_tensor ts = oh_tensor(REF_DT_FLOAT, 1, (int64_t[]){2}, sc), tb = oh_tensor(REF_DT_FLOAT, 1, (int64_t[]){2}, b);
    ref_tensor tm = oh_tensor(REF_DT_FLOAT, 1, (int64_t[]){2}, mean);
    ref_tensor tv = oh_tensor(REF_DT_FLOAT, 1, (int64_t[]){2}, var);
    const ref_tensor *in[5] = {&x, &ts, &tb, &tm, &tv};

    ref_node *n = oh_node(m, "BatchNormalization", 5, 1);
    oh_attr_float(m, n, "epsilon", 0.0f);
    CHECK_OK(go(n, 15, 5, in, 1, y, 1, err), err);
    /* ch0: (x - 2) / 2 * 2 + 1 = x - 1; ch1: (x - 3) / 0.5 * 0.5 - 1 = x - 4 */
    check_f(&y[0], 4, (int64_t[]){1, 2, 1, 2}, (const float[]){0, 2, -2, 0}, 1e-6);
    oh_free_outputs(1, y);
    /* epsilon joins the variance: ch0 divides by sqrt(4 + 5) = 3 */
    n = oh_node(m, "BatchNormalization", 5, 1);
    oh_attr_float(m, n, "epsilon", 5.0f);
    CHECK_OK(go(n, 9, 5, in, 1, y, 1, err), err);
    CHECK_NEAR(((float *)y[0].data)[0], 1 - 2.0 / 3, 1e-6);
    CHECK_NEAR(((float *)y[0].data)[1], 1 + 2.0 / 3, 1e-6);
    oh_free_outputs(1, y);

    /* training_mode: the batch's own mean and biased variance; running statistics move by momentum 0.9. */
    n = oh_node(m, "BatchNormalization", 5, 3);
    oh_attr_int(m, n, "training_mode", 1);
    CHECK_OK(go(n, 15, 5, in, 3, y, 1, err), err);
    float s1 = (float)(1.0 / sqrt(1.0 + 1e-5));
    check_f(&y[0], 4, (int64_t[]){1, 2, 1, 2}, (const float[]){1 - 2 * s1, 1 + 2 * s1, -1 - 0.5f * s1, -1 + 0.5f * s1},
            1e-5);
    check_f(&y[1], 1, (int64_t[]){2}, (const float[]){2.0f, 3.0f}, 1e-6);
    check_f(&y[2], 1, (int64_t[]){2}, (const float[]){3.7f, 0.325f}, 1e-6);
    oh_free_outputs(3, y);
    CHECK(go(oh_node(m, "BatchNormalization", 5, 5), 9, 5, in, 5, y, 1, err) == REF_E_UNSUPPORTED);
    ref_tensor t3 = oh_tensor(REF_DT_FLOAT, 1, (int64_t[]){1}, sc);
    const ref_tensor *bad[5] = {&x, &t3, &tb, &tm, &tv};
    CHECK(go(oh_node(m, "BatchNormalization", 5, 1), 15, 5, bad, 1, y, 1, err) == REF_E_SHAPE);

    /* opset 6, spatial=0: one parameter per (c, d) element */
    float sc4[] = {1, 2, 3, 4}, z4[] = {0, 0, 0, 0}, one4[] = {1, 1, 1, 1};
    ref_tensor p1 = oh_tensor(REF_DT_FLOAT, 2, (int64_t[]){2, 2}, sc4);
    ref_tensor p0 = oh_tensor(REF_DT_FLOAT, 2, (int64_t[]){2, 2}, z4);
    ref_tensor pv = oh_tensor(REF_DT_FLOAT, 2, (int64_t[]){2, 2}, one4);
    const ref_tensor *pe[5] = {&x, &p1, &p0, &p0, &pv};
    n = oh_node(m, "BatchNormalization", 5, 1);
    oh_attr_int(m, n, "spatial", 0);
    oh_attr_float(m, n, "epsilon", 0.0f);
    CHECK_OK(go(n, 6, 5, pe, 1, y, 1, err), err);
    check_f(&y[0], 4, (int64_t[]){1, 2, 1, 2}, (const float[]){1, 6, 6, 16}, 1e-6);
    oh_free_outputs(1, y);
}

/* The float inference path rounds each channel's scale a and shift to float and does one float multiply and add:
 * every value lies within 3 float rounding units (2^-24) of |x*a| + |shift| of the exact double result, and across
 * many channels and magnitudes some must differ from it by at least one float ulp's worth to show the bound is
 * the float one (a double path would be exact to within one rounding of the result). */
static void test_batchnorm_float_bound(void)
{
    enum { C = 24, S = 257 };
    static float xd[C * S];
    float sc[C], b[C], mean[C], var[C];
    uint32_t r = 99;
    for (int i = 0; i < C * S; i++) {
        r = r * 1664525u + 1013904223u;
        xd[i] = ((float)((r >> 8) % 200001) / 1000.0f - 100.0f) * (float)(1 + i % 7);
    }
    for (int c = 0; c < C; c++) {
        sc[c] = 0.3f + 0.37f * (float)c, b[c] = (float)(c % 5) - 2.1f;
        mean[c] = 0.7f * (float)(c - 12), var[c] = 0.01f + 0.9f * (float)c;
    }
    ref_tensor x = oh_tensor(REF_DT_FLOAT, 4, (int64_t[]){1, C, 1, S}, xd), y;
    ref_tensor ts = oh_tensor(REF_DT_FLOAT, 1, (int64_t[]){C}, sc), tb = oh_tensor(REF_DT_FLOAT, 1, (int64_t[]){C}, b);
    ref_tensor tm = oh_tensor(REF_DT_FLOAT, 1, (int64_t[]){C}, mean), tv = oh_tensor(REF_DT_FLOAT, 1, (int64_t[]){C}, var);
    const ref_tensor *in[5] = {&x, &ts, &tb, &tm, &tv};
    ref_error errs, *err = &errs;
    CHECK_OK(go(oh_node(m, "BatchNormalization", 5, 1), 15, 5, in, 1, &y, 1, err), err);
    double worst = 0; /* largest error in units of 2^-24 (|x*a| + |shift|) */
    int off_double = 0;
    for (int c = 0; c < C && y.data; c++) {
        double a = (double)sc[c] / sqrt((double)var[c] + (double)1e-5f), shift = (double)b[c] - (double)mean[c] * a;
        for (int i = 0; i < S; i++) {
            double xa = (double)xd[c * S + i] * a, want = xa + shift;
            double got = ((const float *)y.data)[c * S + i];
            double units = fabs(got - want) / (ldexp(1.0, -24) * (fabs(xa) + fabs(shift)));
            worst = units > worst ? units : worst;
            off_double += got != (double)(float)want;
        }
    }
    CHECK(worst <= 3.0);
    CHECK(off_double > 0);
    oh_free_outputs(1, &y);
}

static void test_instancenorm(void)
{
    ref_error errs, *err = &errs;
    float xv[] = {1, 3, 0, 4}, sc[] = {1, 2}, b[] = {0, 1};
    ref_tensor x = oh_tensor(REF_DT_FLOAT, 3, (int64_t[]){1, 2, 2}, xv), y;
    ref_tensor ts = oh_tensor(REF_DT_FLOAT, 1, (int64_t[]){2}, sc), tb = oh_tensor(REF_DT_FLOAT, 1, (int64_t[]){2}, b);
    const ref_tensor *in[3] = {&x, &ts, &tb};
    ref_node *n = oh_node(m, "InstanceNormalization", 3, 1);
    oh_attr_float(m, n, "epsilon", 0.0f);
    CHECK_OK(go(n, 6, 3, in, 1, &y, 1, err), err);
    /* ch0: mean 2, std 1; ch1: mean 2, std 2, then * 2 + 1 */
    check_f(&y, 3, (int64_t[]){1, 2, 2}, (const float[]){-1, 1, -1, 3}, 1e-6);
    oh_free_outputs(1, &y);
    ref_tensor x2 = oh_tensor(REF_DT_FLOAT, 2, (int64_t[]){2, 2}, xv);
    const ref_tensor *in2[3] = {&x2, &ts, &tb};
    CHECK(go(n, 6, 3, in2, 1, &y, 1, err) == REF_E_SHAPE);
}

static void test_layernorm(void)
{
    ref_error errs, *err = &errs;
    float xv[] = {1, 2, 3, 2, 4, 6}, sc[] = {1, 1, 2}, b[] = {0, 1, 0};
    ref_tensor x = oh_tensor(REF_DT_FLOAT, 2, (int64_t[]){2, 3}, xv), y[3];
    ref_tensor ts = oh_tensor(REF_DT_FLOAT, 1, (int64_t[]){3}, sc), tb = oh_tensor(REF_DT_FLOAT, 1, (int64_t[]){3}, b);
    const ref_tensor *in[3] = {&x, &ts, &tb};
    const float r = 1.22474487f; /* sqrt(3/2): row 0 has variance 2/3, row 1 8/3 */

    ref_node *n = oh_node(m, "LayerNormalization", 3, 3);
    oh_attr_float(m, n, "epsilon", 0.0f);
    CHECK_OK(go(n, 17, 3, in, 3, y, 1, err), err);
    check_f(&y[0], 2, (int64_t[]){2, 3}, (const float[]){-r, 1, 2 * r, -r, 1, 2 * r}, 1e-6);
    check_f(&y[1], 2, (int64_t[]){2, 1}, (const float[]){2, 4}, 1e-6);
    check_f(&y[2], 2, (int64_t[]){2, 1}, (const float[]){r, r / 2}, 1e-6);
    CHECK(y[1].dtype == REF_DT_FLOAT && y[2].dtype == REF_DT_FLOAT);
    oh_free_outputs(3, y);

    /* axis 0: one row of 6 (mean 3, variance 8/3); Scale [3] broadcasts over it; no B */
    n = oh_node(m, "LayerNormalization", 2, 3);
    oh_attr_int(m, n, "axis", 0);
    oh_attr_float(m, n, "epsilon", 0.0f);
    CHECK_OK(go(n, 17, 2, in, 3, y, 1, err), err);
    float h = r / 2;
    check_f(&y[0], 2, (int64_t[]){2, 3}, (const float[]){-2 * h, -h, 0, -h, h, 6 * h}, 1e-6);
    check_f(&y[1], 2, (int64_t[]){1, 1}, (const float[]){3}, 1e-6);
    check_f(&y[2], 2, (int64_t[]){1, 1}, (const float[]){h}, 1e-6);
    oh_free_outputs(3, y);

    /* omitted optional outputs ("" names) must not be written */
    n = oh_node(m, "LayerNormalization", 3, 3);
    n->outputs[1] = "";
    n->outputs[2] = "";
    CHECK_OK(go(n, 17, 3, in, 3, y, 1, err), err);
    for (int k = 1; k < 3; k++)
        for (int64_t i = 0; i < ref_tensor_numel(&y[k]); i++)
            CHECK(((float *)y[k].data)[i] == 0.0f);
    oh_free_outputs(3, y);

    float s4[4] = {1, 1, 1, 1};
    ref_tensor t4 = oh_tensor(REF_DT_FLOAT, 1, (int64_t[]){4}, s4);
    const ref_tensor *bad[2] = {&x, &t4};
    CHECK(go(oh_node(m, "LayerNormalization", 2, 1), 17, 2, bad, 1, y, 1, err) == REF_E_SHAPE);
    n = oh_node(m, "LayerNormalization", 2, 1);
    oh_attr_int(m, n, "axis", 2);
    CHECK(go(n, 17, 2, in, 1, y, 1, err) == REF_E_SHAPE);
}

static void test_mvn_lrn(void)
{
    ref_error errs, *err = &errs;
    /* [N=2, C=2, 1, 1]: channel 0 holds 1 and 3, channel 1 holds 5 twice (zero variance) */
    float xv[] = {1, 5, 3, 5};
    ref_tensor x = oh_tensor(REF_DT_FLOAT, 4, (int64_t[]){2, 2, 1, 1}, xv), y;
    const ref_tensor *in[1] = {&x};
    CHECK_OK(go(oh_node(m, "MeanVarianceNormalization", 1, 1), 13, 1, in, 1, &y, 1, err), err);
    check_f(&y, 4, (int64_t[]){2, 2, 1, 1}, (const float[]){-1, 0, 1, 0}, 1e-6);
    oh_free_outputs(1, &y);
    ref_node *n = oh_node(m, "MeanVarianceNormalization", 1, 1);
    oh_attr_ints(m, n, "axes", 1, (int64_t[]){1});
    CHECK_OK(go(n, 13, 1, in, 1, &y, 1, err), err);
    check_f(&y, 4, (int64_t[]){2, 2, 1, 1}, (const float[]){-1, 1, -1, 1}, 1e-6);
    oh_free_outputs(1, &y);

    float lv[] = {1, 2, 3};
    ref_tensor xl = oh_tensor(REF_DT_FLOAT, 4, (int64_t[]){1, 3, 1, 1}, lv);
    const ref_tensor *inl[1] = {&xl};
    n = oh_node(m, "LRN", 1, 1);
    oh_attr_int(m, n, "size", 3);
    oh_attr_float(m, n, "alpha", 3.0f);
    oh_attr_float(m, n, "beta", 1.0f);
    CHECK_OK(go(n, 13, 1, inl, 1, &y, 1, err), err);
    /* alpha / size = 1: sums of squares over channels {0,1}, {0,1,2}, {1,2} = 5, 14, 13, plus bias 1 */
    check_f(&y, 4, (int64_t[]){1, 3, 1, 1}, (const float[]){1 / 6.f, 2 / 15.f, 3 / 14.f}, 1e-6);
    oh_free_outputs(1, &y);
    /* even size leans forward: channels {c, c+1} */
    n = oh_node(m, "LRN", 1, 1);
    oh_attr_int(m, n, "size", 2);
    oh_attr_float(m, n, "alpha", 2.0f);
    oh_attr_float(m, n, "beta", 1.0f);
    oh_attr_float(m, n, "bias", 0.0f);
    CHECK_OK(go(n, 13, 1, inl, 1, &y, 1, err), err);
    check_f(&y, 4, (int64_t[]){1, 3, 1, 1}, (const float[]){0.2f, 2 / 13.f, 1 / 3.f}, 1e-6);
    oh_free_outputs(1, &y);
    CHECK(go(oh_node(m, "LRN", 1, 1), 13, 1, inl, 1, &y, 1, err) == REF_E_INVALID);
}

/* Bit-identical results on 1 and 2 threads. */
static void test_threads(void)
{
    enum { N = 8, C = 16, S = 1024 };
    static float xd[N * C * S];
    float p[C], v[C];
    uint32_t s = 4242;
    for (int i = 0; i < N * C * S; i++) {
        s = s * 1664525u + 1013904223u;
        xd[i] = (float)((s >> 8) % 20000) / 1000.0f - 10.0f;
    }
    for (int c = 0; c < C; c++)
        p[c] = 0.5f + (float)c, v[c] = 1.0f + (float)c / 4;
    ref_tensor x = oh_tensor(REF_DT_FLOAT, 4, (int64_t[]){N, C, 32, 32}, xd);
    ref_tensor tp = oh_tensor(REF_DT_FLOAT, 1, (int64_t[]){C}, p), tv = oh_tensor(REF_DT_FLOAT, 1, (int64_t[]){C}, v);
    ref_tensor tl = oh_tensor(REF_DT_FLOAT, 2, (int64_t[]){32, 32}, xd);
    const char *ops[] = {"BatchNormalization", "InstanceNormalization", "LayerNormalization",
                         "MeanVarianceNormalization", "LRN"};
    for (int o = 0; o < 5; o++) {
        ref_error errs, *err = &errs;
        ref_tensor y1[3], y2[3];
        const ref_tensor *in[5] = {&x, &tp, &tp, &tp, &tv};
        int n_in = o == 0 ? 5 : o == 1 ? 3 : 1, n_out = 1;
        if (o == 2) {
            in[1] = &tl;
            n_in = 2;
            n_out = 3;
        }
        ref_node *n = oh_node(m, ops[o], n_in, n_out);
        if (o == 2)
            oh_attr_int(m, n, "axis", 2);
        if (o == 4)
            oh_attr_int(m, n, "size", 5);
        CHECK_OK(go(n, 17, n_in, in, n_out, y1, 1, err), err);
        CHECK_OK(go(n, 17, n_in, in, n_out, y2, 2, err), err);
        for (int k = 0; k < n_out; k++)
            CHECK(memcmp(y1[k].data, y2[k].data, ref_tensor_nbytes(&y1[k])) == 0);
        oh_free_outputs(n_out, y1);
        oh_free_outputs(n_out, y2);
    }
}

int main(void)
{
    m = ref_model_new();
    test_batchnorm();
    test_batchnorm_float_bound();
    test_instancenorm();
    test_layernorm();
    test_mvn_lrn();
    test_threads();
    ref_model_free(m);
    ref_alloc_stats st;
    ref_alloc_get_stats(&st);
    CHECK(st.live_bytes == 0);
    return check_summary();
}
