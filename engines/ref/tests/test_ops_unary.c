/* test_ops_unary.c: the unary math operators against double-precision libm, the rounding ops at their ties,
 * Abs/Neg/Sign on integers at their edges, IsNaN/IsInf, the half and double paths, threads and type errors.
 * It must never leave engine bytes allocated. */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "check.h"
#include "op_harness.h"
#include "ops/cast_half.h"
#include "ops/unary_fastmath.h"

static ref_model *m;

static int un(const char *op, int opset, const ref_tensor *x, ref_tensor *y, int threads, ref_error *err)
{
    const ref_tensor *in[1] = {x};
    return oh_run(oh_node(m, op, 1, 1), opset, 1, in, 1, y, 0, threads, err);
}

typedef struct fn_case {
    const char *op;
    double (*ref)(double);
    float lo, hi; /* domain sampled */
} fn_case;

static double recip(double x) { return 1.0 / x; }

/* Each float kernel against the double function at 41 points of its domain, to float precision. */
static void test_float_functions(void)
{
    static const fn_case cases[] = {
        {"Exp", exp, -80, 80},    {"Log", log, 0.01f, 100},  {"Sqrt", sqrt, 0, 50},   {"Reciprocal", recip, 0.5f, 9},
        {"Erf", erf, -4.5f, 4.5f},      {"Cos", cos, -6, 6},       {"Sin", sin, -6, 6},     {"Tan", tan, -1.4f, 1.4f},
        {"Acos", acos, -1, 1},    {"Asin", asin, -1, 1},     {"Atan", atan, -9, 9},   {"Cosh", cosh, -5, 5},
        {"Sinh", sinh, -5, 5},    {"Acosh", acosh, 1, 9},    {"Asinh", asinh, -9, 9}, {"Atanh", atanh, -0.99f, 0.99f},
        {"Floor", floor, -3, 3},  {"Ceil", ceil, -3, 3},
    };
    enum { N = 41 };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        ref_error errs, *err = &errs;
        float xd[N];
        double xdd[N];
        for (int i = 0; i < N; i++) {
            xd[i] = cases[k].lo + (cases[k].hi - cases[k].lo) * (float)i / (N - 1);
            xdd[i] = xd[i];
        }
        ref_tensor x = oh_tensor(REF_DT_FLOAT, 1, (int64_t[]){N}, xd), y;
        CHECK_OK(un(cases[k].op, 13, &x, &y, 1, err), err);
        CHECK(y.dtype == REF_DT_FLOAT && y.rank == 1 && y.dims[0] == N);
        for (int i = 0; i < N; i++) {
            double want = cases[k].ref(xd[i]);
            double got = ((float *)y.data)[i];
            if (!(fabs(got - want) <= 2e-6 * fabs(want) + 1e-6))
                fprintf(stderr, "%s(%g) = %.9g, want %.9g\n", cases[k].op, (double)xd[i], got, want);
            CHECK(fabs(got - want) <= 2e-6 * fabs(want) + 1e-6);
        }
        oh_free_outputs(1, &y);

        /* the double kernel matches the double function exactly */
        ref_tensor xdt = oh_tensor(REF_DT_DOUBLE, 1, (int64_t[]){N}, xdd);
        CHECK_OK(un(cases[k].op, 13, &xdt, &y, 1, err), err);
        CHECK(y.dtype == REF_DT_DOUBLE);
        for (int i = 0; i < N; i++)
            CHECK(((double *)y.data)[i] == cases[k].ref(xdd[i]));
        oh_free_outputs(1, &y);
    }
}

static void test_rounding_and_signs(void)
{
    ref_error errs, *err = &errs;
    ref_tensor y;
    float rd[] = {0.5f, 1.5f, 2.5f, -0.5f, -1.5f, 2.4f, 2.6f, -2.6f};
    ref_tensor r = oh_tensor(REF_DT_FLOAT, 1, (int64_t[]){8}, rd);
    CHECK_OK(un("Round", 11, &r, &y, 1, err), err);
    CHECK_EQ_ARRAY(float, &y, 0, 2, 2, -0.0f, -2, 2, 3, -3); /* ties go to even */
    oh_free_outputs(1, &y);
    CHECK_OK(un("Floor", 13, &r, &y, 1, err), err);
    CHECK_EQ_ARRAY(float, &y, 0, 1, 2, -1, -2, 2, 2, -3);
    oh_free_outputs(1, &y);
    CHECK_OK(un("Ceil", 13, &r, &y, 1, err), err);
    CHECK_EQ_ARRAY(float, &y, 1, 2, 3, -0.0f, -1, 3, 3, -2);
    oh_free_outputs(1, &y);

    float sd[] = {-2, 0, 3, NAN, -INFINITY};
    ref_tensor s = oh_tensor(REF_DT_FLOAT, 1, (int64_t[]){5}, sd);
    CHECK_OK(un("Sign", 13, &s, &y, 1, err), err);
    CHECK(((float *)y.data)[0] == -1 && ((float *)y.data)[1] == 0 && ((float *)y.data)[2] == 1);
    CHECK(isnan(((float *)y.data)[3]) && ((float *)y.data)[4] == -1);
    oh_free_outputs(1, &y);
    CHECK_OK(un("Abs", 13, &s, &y, 1, err), err);
    CHECK(((float *)y.data)[0] == 2 && ((float *)y.data)[4] == INFINITY);
    oh_free_outputs(1, &y);
    CHECK_OK(un("Neg", 13, &s, &y, 1, err), err);
    CHECK(((float *)y.data)[0] == 2 && ((float *)y.data)[2] == -3 && signbit(((float *)y.data)[1]));
    oh_free_outputs(1, &y);

    int32_t id[] = {INT32_MIN, -5, 0, 7};
    ref_tensor i = oh_tensor(REF_DT_INT32, 1, (int64_t[]){4}, id);
    CHECK_OK(un("Abs", 13, &i, &y, 1, err), err);
    CHECK_EQ_ARRAY(int32_t, &y, INT32_MIN, 5, 0, 7); /* |INT32_MIN| wraps, as in two's complement */
    oh_free_outputs(1, &y);
    CHECK_OK(un("Neg", 13, &i, &y, 1, err), err);
    CHECK_EQ_ARRAY(int32_t, &y, INT32_MIN, 5, 0, -7);
    oh_free_outputs(1, &y);
    CHECK_OK(un("Sign", 13, &i, &y, 1, err), err);
    CHECK_EQ_ARRAY(int32_t, &y, -1, -1, 0, 1);
    oh_free_outputs(1, &y);

    int8_t bd[] = {-128, -1, 127};
    ref_tensor b = oh_tensor(REF_DT_INT8, 1, (int64_t[]){3}, bd);
    CHECK_OK(un("Abs", 13, &b, &y, 1, err), err);
    CHECK_EQ_ARRAY(int8_t, &y, -128, 1, 127);
    oh_free_outputs(1, &y);

    uint8_t ud[] = {0, 200};
    ref_tensor u = oh_tensor(REF_DT_UINT8, 1, (int64_t[]){2}, ud);
    CHECK_OK(un("Abs", 13, &u, &y, 1, err), err);
    CHECK_EQ_ARRAY(uint8_t, &y, 0, 200);
    oh_free_outputs(1, &y);
    CHECK_OK(un("Sign", 13, &u, &y, 1, err), err);
    CHECK_EQ_ARRAY(uint8_t, &y, 0, 1);
    oh_free_outputs(1, &y);
    CHECK(un("Neg", 13, &u, &y, 1, err) == REF_E_UNSUPPORTED); /* no unsigned Neg in ONNX */
    CHECK(strstr(err->msg, "uint8") != NULL);

    int64_t ld[] = {-9, 0, 4};
    ref_tensor l = oh_tensor(REF_DT_INT64, 1, (int64_t[]){3}, ld);
    CHECK_OK(un("Neg", 13, &l, &y, 1, err), err);
    CHECK_EQ_ARRAY(int64_t, &y, 9, 0, -4);
    oh_free_outputs(1, &y);
}

static int run_isinf(const ref_tensor *x, int pos, int neg, ref_tensor *y, ref_error *err)
{
    ref_node *n = oh_node(m, "IsInf", 1, 1);
    if (pos >= 0)
        oh_attr_int(m, n, "detect_positive", pos);
    if (neg >= 0)
        oh_attr_int(m, n, "detect_negative", neg);
    const ref_tensor *in[1] = {x};
    return oh_run(n, 10, 1, in, 1, y, 0, 1, err);
}

static void test_nan_inf(void)
{
    ref_error errs, *err = &errs;
    ref_tensor y;
    float xd[] = {-1.2f, NAN, INFINITY, 2.8f, -INFINITY, INFINITY};
    ref_tensor x = oh_tensor(REF_DT_FLOAT, 1, (int64_t[]){6}, xd);
    CHECK_OK(un("IsNaN", 13, &x, &y, 1, err), err);
    CHECK(y.dtype == REF_DT_BOOL);
    CHECK_EQ_ARRAY(uint8_t, &y, 0, 1, 0, 0, 0, 0);
    oh_free_outputs(1, &y);
    CHECK_OK(run_isinf(&x, -1, -1, &y, err), err);
    CHECK(y.dtype == REF_DT_BOOL);
    CHECK_EQ_ARRAY(uint8_t, &y, 0, 0, 1, 0, 1, 1);
    oh_free_outputs(1, &y);
    CHECK_OK(run_isinf(&x, 0, -1, &y, err), err);
    CHECK_EQ_ARRAY(uint8_t, &y, 0, 0, 0, 0, 1, 0);
    oh_free_outputs(1, &y);
    CHECK_OK(run_isinf(&x, -1, 0, &y, err), err);
    CHECK_EQ_ARRAY(uint8_t, &y, 0, 0, 1, 0, 0, 1);
    oh_free_outputs(1, &y);

    double dd[] = {NAN, 1, -INFINITY};
    ref_tensor d = oh_tensor(REF_DT_DOUBLE, 1, (int64_t[]){3}, dd);
    CHECK_OK(un("IsNaN", 13, &d, &y, 1, err), err);
    CHECK_EQ_ARRAY(uint8_t, &y, 1, 0, 0);
    oh_free_outputs(1, &y);
    CHECK_OK(run_isinf(&d, -1, -1, &y, err), err);
    CHECK_EQ_ARRAY(uint8_t, &y, 0, 0, 1);
    oh_free_outputs(1, &y);

    /* float16: the NaN must survive the trip through float */
    uint16_t hd[] = {0x7e00, 0x7c00, 0x3c00};
    ref_tensor h = oh_tensor(REF_DT_FLOAT16, 1, (int64_t[]){3}, hd);
    CHECK_OK(un("IsNaN", 13, &h, &y, 1, err), err);
    CHECK_EQ_ARRAY(uint8_t, &y, 1, 0, 0);
    oh_free_outputs(1, &y);
}

static void test_half(void)
{
    ref_error errs, *err = &errs;
    ref_tensor y;
    uint16_t xd[] = {ref_f32_to_f16(4.0f), ref_f32_to_f16(1.0f), ref_f32_to_f16(0.0f)};
    ref_tensor x = oh_tensor(REF_DT_FLOAT16, 1, (int64_t[]){3}, xd);
    CHECK_OK(un("Sqrt", 13, &x, &y, 1, err), err);
    CHECK(y.dtype == REF_DT_FLOAT16);
    CHECK_EQ_ARRAY(uint16_t, &y, 0x4000, 0x3c00, 0x0000);
    oh_free_outputs(1, &y);
    CHECK_OK(un("Exp", 13, &x, &y, 1, err), err);
    /* e^4 = 54.598 -> 54.59375 (0x52d3), e = 2.71828 -> 2.71875 (0x4170), 1 */
    CHECK_EQ_ARRAY(uint16_t, &y, 0x52d3, 0x4170, 0x3c00);
    oh_free_outputs(1, &y);

    uint16_t bd[] = {0x4080 /* 4.0 */, 0xc000 /* -2.0 */};
    ref_tensor b = oh_tensor(REF_DT_BFLOAT16, 1, (int64_t[]){2}, bd);
    CHECK_OK(un("Neg", 13, &b, &y, 1, err), err);
    CHECK(y.dtype == REF_DT_BFLOAT16);
    CHECK_EQ_ARRAY(uint16_t, &y, 0xc080, 0x4000);
    oh_free_outputs(1, &y);
}

static void test_threads_and_errors(void)
{
    enum { N = 200003 };
    static float xd[N];
    for (int i = 0; i < N; i++)
        xd[i] = (float)(i % 2001) * 0.01f - 10.0f;
    ref_tensor x = oh_tensor(REF_DT_FLOAT, 1, (int64_t[]){N}, xd);
    const char *ops[] = {"Exp", "Erf", "Sqrt"};
    for (int o = 0; o < 3; o++) {
        ref_error errs, *err = &errs;
        ref_tensor y1, y2;
        CHECK_OK(un(ops[o], 13, &x, &y1, 1, err), err);
        CHECK_OK(un(ops[o], 13, &x, &y2, 2, err), err);
        CHECK(memcmp(y1.data, y2.data, sizeof xd) == 0);
        int bad = 0;
        for (int i = 0; i < N; i++) {
            double v = xd[i], want = o == 0 ? exp(v) : o == 1 ? erf(v) : sqrt(v);
            double got = ((float *)y2.data)[i];
            bad += o == 2 ? !(isnan(got) == isnan(want) && (isnan(got) || got == (float)want))
                          : !(fabs(got - want) <= 1e-6 * fabs(want) + 1e-12);
        }
        CHECK(bad == 0);
        /* whichever build ran (AVX2 or portable), the bits are those of the scalar formula */
        int differ = 0;
        for (int i = 0; i < N && o < 2; i++) {
            float s = o == 0 ? ref_fexp(xd[i]) : ref_ferf(xd[i]);
            differ += memcmp(&s, (float *)y1.data + i, sizeof s) != 0;
        }
        CHECK(differ == 0);
        oh_free_outputs(1, &y1);
        oh_free_outputs(1, &y2);
    }

    ref_error errs, *err = &errs;
    ref_tensor y;
    int32_t id[] = {1};
    ref_tensor i = oh_tensor(REF_DT_INT32, 1, (int64_t[]){1}, id);
    CHECK(un("Exp", 13, &i, &y, 1, err) == REF_E_UNSUPPORTED);
    CHECK(strstr(err->msg, "int32") != NULL);
    uint8_t bd[] = {1};
    ref_tensor b = oh_tensor(REF_DT_BOOL, 1, (int64_t[]){1}, bd);
    CHECK(un("Abs", 13, &b, &y, 1, err) == REF_E_UNSUPPORTED);
    CHECK(strstr(err->msg, "bool") != NULL);
    const ref_tensor *two[2] = {&i, &i};
    CHECK(oh_run(oh_node(m, "Sqrt", 2, 1), 13, 2, two, 1, &y, 0, 1, err) == REF_E_INVALID);
}

int main(void)
{
    m = ref_model_new();
    test_float_functions();
    test_rounding_and_signs();
    test_nan_inf();
    test_half();
    test_threads_and_errors();
    ref_model_free(m);
    ref_alloc_stats st;
    ref_alloc_get_stats(&st);
    CHECK(st.live_bytes == 0);
    return check_summary();
}
