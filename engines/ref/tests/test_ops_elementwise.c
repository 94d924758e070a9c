/* test_ops_elementwise.c: the binary, variadic, comparison, logic, Where and BitShift operators against
 * hand-computed values: every broadcast pattern, the integer edge cases, half inputs, legacy broadcasting,
 * thread-count independence and type errors. It must never leave engine bytes allocated. */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "check.h"
#include "op_harness.h"
#include "ops/cast_half.h"

static ref_model *m;

static ref_node *node(const char *op, int n_in) { return oh_node(m, op, n_in, 1); }

static int go(const ref_node *n, int opset, int n_in, const ref_tensor *const *in, ref_tensor *y, int threads,
              ref_error *err)
{
    return oh_run(n, opset, n_in, in, 1, y, 0, threads, err);
}

/* Two-input op without attributes at opset 14. */
static int bin(const char *op, const ref_tensor *a, const ref_tensor *b, ref_tensor *y, ref_error *err)
{
    const ref_tensor *in[2] = {a, b};
    return go(node(op, 2), 14, 2, in, y, 1, err);
}

static void check_f32(const ref_tensor *y, const float *want, int n, double tol)
{
    CHECK(y->dtype == REF_DT_FLOAT);
    CHECK(ref_tensor_numel(y) == n);
    for (int i = 0; i < n && i < ref_tensor_numel(y); i++)
        CHECK_NEAR(((const float *)y->data)[i], want[i], tol);
}

static void test_broadcast_patterns(void)
{
    ref_error errs, *err = &errs;
    float ad[] = {1, 2, 3, 4, 5, 6}, bd[] = {10, 20, 30, 40, 50, 60}, sd[] = {100}, rd[] = {1, 2, 3},
          cd[] = {-1, -2};
    ref_tensor a = oh_tensor(REF_DT_FLOAT, 2, (int64_t[]){2, 3}, ad), y;

    ref_tensor b = oh_tensor(REF_DT_FLOAT, 2, (int64_t[]){2, 3}, bd);
    CHECK_OK(bin("Add", &a, &b, &y, err), err);
    CHECK(y.rank == 2 && y.dims[0] == 2 && y.dims[1] == 3);
    check_f32(&y, (const float[]){11, 22, 33, 44, 55, 66}, 6, 0);
    oh_free_outputs(1, &y);

    ref_tensor s = oh_tensor(REF_DT_FLOAT, 0, NULL, sd);
    CHECK_OK(bin("Sub", &a, &s, &y, err), err);
    check_f32(&y, (const float[]){-99, -98, -97, -96, -95, -94}, 6, 0);
    oh_free_outputs(1, &y);
    CHECK_OK(bin("Sub", &s, &a, &y, err), err); /* the scalar on the left */
    CHECK(y.rank == 2);
    check_f32(&y, (const float[]){99, 98, 97, 96, 95, 94}, 6, 0);
    oh_free_outputs(1, &y);

    ref_tensor row = oh_tensor(REF_DT_FLOAT, 1, (int64_t[]){3}, rd);
    CHECK_OK(bin("Mul", &a, &row, &y, err), err);
    check_f32(&y, (const float[]){1, 4, 9, 4, 10, 18}, 6, 0);
    oh_free_outputs(1, &y);

    ref_tensor col = oh_tensor(REF_DT_FLOAT, 2, (int64_t[]){2, 1}, cd);
    CHECK_OK(bin("Div", &a, &col, &y, err), err);
    check_f32(&y, (const float[]){-1, -2, -3, -2, -2.5f, -3}, 6, 0);
    oh_free_outputs(1, &y);

    /* row [1,3] against column [2,1]: both broadcast, output [2,3] */
    ref_tensor row2 = oh_tensor(REF_DT_FLOAT, 2, (int64_t[]){1, 3}, rd);
    CHECK_OK(bin("Add", &col, &row2, &y, err), err);
    CHECK(y.rank == 2 && y.dims[0] == 2 && y.dims[1] == 3);
    check_f32(&y, (const float[]){0, 1, 2, -1, 0, 1}, 6, 0);
    oh_free_outputs(1, &y);

    /* rank mismatch: [2,1,3] + [4,1] -> [2,4,3], y[i,j,k] = p[i,k] + q[j] */
    float pd[6] = {1, 2, 3, 4, 5, 6}, qd[4] = {0, 10, 20, 30};
    ref_tensor p = oh_tensor(REF_DT_FLOAT, 3, (int64_t[]){2, 1, 3}, pd);
    ref_tensor q = oh_tensor(REF_DT_FLOAT, 2, (int64_t[]){4, 1}, qd);
    CHECK_OK(bin("Add", &p, &q, &y, err), err);
    CHECK(y.rank == 3 && y.dims[0] == 2 && y.dims[1] == 4 && y.dims[2] == 3);
    float want[24];
    for (int i = 0; i < 2; i++)
        for (int j = 0; j < 4; j++)
            for (int k = 0; k < 3; k++)
                want[(i * 4 + j) * 3 + k] = pd[i * 3 + k] + qd[j];
    check_f32(&y, want, 24, 0);
    oh_free_outputs(1, &y);

    /* [2,3] with [2]: trailing dims 3 vs 2 */
    ref_tensor bad = oh_tensor(REF_DT_FLOAT, 1, (int64_t[]){2}, cd);
    CHECK(bin("Add", &a, &bad, &y, err) == REF_E_SHAPE);
    CHECK(strstr(err->msg, "broadcast") != NULL);
}

static void test_integer_edges(void)
{
    ref_error errs, *err = &errs;
    ref_tensor y;
    int32_t a32[] = {INT32_MAX, -7, 7, INT32_MIN, 5, -9}, b32[] = {1, 2, -2, -1, 0, 4};
    ref_tensor a = oh_tensor(REF_DT_INT32, 1, (int64_t[]){6}, a32), b = oh_tensor(REF_DT_INT32, 1, (int64_t[]){6}, b32);
    CHECK_OK(bin("Add", &a, &b, &y, err), err);
    CHECK(y.dtype == REF_DT_INT32);
    CHECK_EQ_ARRAY(int32_t, &y, INT32_MIN, -5, 5, INT32_MAX, 5, -5); /* wraps like two's complement */
    oh_free_outputs(1, &y);
    CHECK_OK(bin("Div", &a, &b, &y, err), err);
    /* truncation toward zero; INT32_MIN / -1 wraps; x / 0 is defined as 0 */
    CHECK_EQ_ARRAY(int32_t, &y, INT32_MAX, -3, -3, INT32_MIN, 0, -2);
    oh_free_outputs(1, &y);
    CHECK_OK(bin("Mul", &a, &b, &y, err), err);
    CHECK_EQ_ARRAY(int32_t, &y, INT32_MAX, -14, -14, INT32_MIN, 0, -36);
    oh_free_outputs(1, &y);

    uint8_t u1[] = {250, 3, 16, 200}, u2[] = {10, 5, 16, 7};
    ref_tensor ua = oh_tensor(REF_DT_UINT8, 1, (int64_t[]){4}, u1), ub = oh_tensor(REF_DT_UINT8, 1, (int64_t[]){4}, u2);
    CHECK_OK(bin("Add", &ua, &ub, &y, err), err);
    CHECK_EQ_ARRAY(uint8_t, &y, 4, 8, 32, 207);
    oh_free_outputs(1, &y);
    CHECK_OK(bin("Sub", &ua, &ub, &y, err), err);
    CHECK_EQ_ARRAY(uint8_t, &y, 240, 254, 0, 193);
    oh_free_outputs(1, &y);
    CHECK_OK(bin("Mul", &ua, &ub, &y, err), err);
    CHECK_EQ_ARRAY(uint8_t, &y, 196, 15, 0, 120); /* 2500 % 256, 256 % 256, 1400 % 256 */
    oh_free_outputs(1, &y);
    CHECK_OK(bin("Div", &ua, &ub, &y, err), err);
    CHECK_EQ_ARRAY(uint8_t, &y, 25, 0, 1, 28);
    oh_free_outputs(1, &y);

    /* uint16 65535*65535 must not overflow int after promotion: 0xFFFE0001 -> 1 */
    uint16_t w1[] = {65535}, w2[] = {65535};
    ref_tensor wa = oh_tensor(REF_DT_UINT16, 1, (int64_t[]){1}, w1), wb = oh_tensor(REF_DT_UINT16, 1, (int64_t[]){1}, w2);
    CHECK_OK(bin("Mul", &wa, &wb, &y, err), err);
    CHECK_EQ_ARRAY(uint16_t, &y, 1);
    oh_free_outputs(1, &y);

    int64_t l1[] = {INT64_MAX, -3}, l2[] = {2, 4};
    ref_tensor la = oh_tensor(REF_DT_INT64, 1, (int64_t[]){2}, l1), lb = oh_tensor(REF_DT_INT64, 1, (int64_t[]){2}, l2);
    CHECK_OK(bin("Mul", &la, &lb, &y, err), err);
    CHECK_EQ_ARRAY(int64_t, &y, -2, -12);
    oh_free_outputs(1, &y);

    double d1[] = {1, -1, 0}, d2[] = {0, 0, 4};
    ref_tensor da = oh_tensor(REF_DT_DOUBLE, 1, (int64_t[]){3}, d1), db = oh_tensor(REF_DT_DOUBLE, 1, (int64_t[]){3}, d2);
    CHECK_OK(bin("Div", &da, &db, &y, err), err);
    CHECK(y.dtype == REF_DT_DOUBLE);
    CHECK(isinf(((double *)y.data)[0]) && ((double *)y.data)[0] > 0);
    CHECK(isinf(((double *)y.data)[1]) && ((double *)y.data)[1] < 0);
    CHECK(((double *)y.data)[2] == 0);
    oh_free_outputs(1, &y);
}

static int run_mod(const ref_tensor *a, const ref_tensor *b, int fmod, ref_tensor *y, ref_error *err)
{
    ref_node *n = node("Mod", 2);
    oh_attr_int(m, n, "fmod", fmod);
    const ref_tensor *in[2] = {a, b};
    return go(n, 13, 2, in, y, 1, err);
}

static void test_mod(void)
{
    ref_error errs, *err = &errs;
    ref_tensor y;
    int32_t x[] = {-4, 7, 5, 4, -7, 8, 3, INT32_MIN}, d[] = {2, -3, 8, -2, 3, 5, 0, -1};
    ref_tensor a = oh_tensor(REF_DT_INT32, 1, (int64_t[]){8}, x), b = oh_tensor(REF_DT_INT32, 1, (int64_t[]){8}, d);
    CHECK_OK(run_mod(&a, &b, 0, &y, err), err);
    CHECK_EQ_ARRAY(int32_t, &y, 0, -2, 5, 0, 2, 3, 0, 0); /* Python %: the divisor's sign */
    oh_free_outputs(1, &y);
    CHECK_OK(run_mod(&a, &b, 1, &y, err), err);
    CHECK_EQ_ARRAY(int32_t, &y, 0, 1, 5, 0, -1, 3, 0, 0); /* C %: the dividend's sign */
    oh_free_outputs(1, &y);

    int8_t x8[] = {-4, 7, -128}, d8[] = {3, -3, 7};
    ref_tensor a8 = oh_tensor(REF_DT_INT8, 1, (int64_t[]){3}, x8), b8 = oh_tensor(REF_DT_INT8, 1, (int64_t[]){3}, d8);
    CHECK_OK(run_mod(&a8, &b8, 0, &y, err), err);
    CHECK_EQ_ARRAY(int8_t, &y, 2, -2, 5);
    oh_free_outputs(1, &y);

    float fx[] = {-4.3f, 7.2f, 5.0f, 4.3f, -7.2f, 8.0f}, fd[] = {2.1f, -3.4f, 8.0f, -2.1f, 3.4f, 5.0f};
    ref_tensor fa = oh_tensor(REF_DT_FLOAT, 1, (int64_t[]){6}, fx), fb = oh_tensor(REF_DT_FLOAT, 1, (int64_t[]){6}, fd);
    CHECK_OK(run_mod(&fa, &fb, 1, &y, err), err);
    check_f32(&y, (const float[]){-0.1f, 0.4f, 5.0f, 0.1f, -0.4f, 3.0f}, 6, 1e-5);
    oh_free_outputs(1, &y);
    CHECK_OK(run_mod(&fa, &fb, 0, &y, err), err);
    check_f32(&y, (const float[]){2.0f, -3.0f, 5.0f, -2.0f, 3.0f, 3.0f}, 6, 1e-5);
    oh_free_outputs(1, &y);

    CHECK(run_mod(&fa, &fb, 2, &y, err) == REF_E_INVALID);
}

static void test_pow(void)
{
    ref_error errs, *err = &errs;
    ref_tensor y;
    float fb[] = {2, 3, 4}, fe[] = {3, 2, 0.5f};
    ref_tensor a = oh_tensor(REF_DT_FLOAT, 1, (int64_t[]){3}, fb), b = oh_tensor(REF_DT_FLOAT, 1, (int64_t[]){3}, fe);
    CHECK_OK(bin("Pow", &a, &b, &y, err), err);
    check_f32(&y, (const float[]){8, 9, 2}, 3, 1e-6);
    oh_free_outputs(1, &y);

    float two = 2, sq[] = {1.5f, -3, 0.1f};
    ref_tensor xs = oh_tensor(REF_DT_FLOAT, 1, (int64_t[]){3}, sq), e2 = oh_tensor(REF_DT_FLOAT, 0, NULL, &two);
    CHECK_OK(bin("Pow", &xs, &e2, &y, err), err);
    check_f32(&y, (const float[]){2.25f, 9, 0.1f * 0.1f}, 3, 0);
    oh_free_outputs(1, &y);
    float three = 3, one = 1;
    ref_tensor e3 = oh_tensor(REF_DT_FLOAT, 0, NULL, &three), e1 = oh_tensor(REF_DT_FLOAT, 0, NULL, &one);
    CHECK_OK(bin("Pow", &xs, &e3, &y, err), err);
    check_f32(&y, (const float[]){3.375f, -27, 0.001f}, 3, 1e-9);
    oh_free_outputs(1, &y);
    CHECK_OK(bin("Pow", &xs, &e1, &y, err), err);
    check_f32(&y, sq, 3, 0);
    oh_free_outputs(1, &y);

    float nb[] = {2, -2, 0.5f};
    int64_t ie[] = {3, 3, -2};
    ref_tensor a2 = oh_tensor(REF_DT_FLOAT, 1, (int64_t[]){3}, nb), b2 = oh_tensor(REF_DT_INT64, 1, (int64_t[]){3}, ie);
    CHECK_OK(bin("Pow", &a2, &b2, &y, err), err);
    CHECK(y.dtype == REF_DT_FLOAT);
    check_f32(&y, (const float[]){8, -8, 4}, 3, 1e-6);
    oh_free_outputs(1, &y);

    int32_t ib[] = {2, 3, -2, 2, 1, -1, 2}, ix[] = {10, 3, 3, -1, -3, -3, 32};
    ref_tensor a3 = oh_tensor(REF_DT_INT32, 1, (int64_t[]){7}, ib), b3 = oh_tensor(REF_DT_INT32, 1, (int64_t[]){7}, ix);
    CHECK_OK(bin("Pow", &a3, &b3, &y, err), err);
    CHECK(y.dtype == REF_DT_INT32);
    CHECK_EQ_ARRAY(int32_t, &y, 1024, 27, -8, 0, 1, -1, 0);
    oh_free_outputs(1, &y);

    int64_t lb[] = {2, 9, 10, -3};
    float fx[] = {0.5f, 0.5f, 2.0f, 3.0f};
    ref_tensor a4 = oh_tensor(REF_DT_INT64, 1, (int64_t[]){4}, lb), b4 = oh_tensor(REF_DT_FLOAT, 1, (int64_t[]){4}, fx);
    CHECK_OK(bin("Pow", &a4, &b4, &y, err), err);
    CHECK(y.dtype == REF_DT_INT64);
    CHECK_EQ_ARRAY(int64_t, &y, 1, 3, 100, -27); /* sqrt(2) truncates to 1 */
    oh_free_outputs(1, &y);

    uint8_t u[] = {2};
    ref_tensor ub = oh_tensor(REF_DT_UINT8, 1, (int64_t[]){1}, u);
    CHECK(bin("Pow", &ub, &ub, &y, err) == REF_E_UNSUPPORTED);
    CHECK(strstr(err->msg, "uint8") != NULL);
}

static void test_variadic(void)
{
    ref_error errs, *err = &errs;
    ref_tensor y;
    float ad[] = {1, 5, 3, 4, 2, 6}, bd[] = {2, 2, 2}, cd[] = {3.5f};
    ref_tensor a = oh_tensor(REF_DT_FLOAT, 2, (int64_t[]){2, 3}, ad), b = oh_tensor(REF_DT_FLOAT, 1, (int64_t[]){3}, bd),
               c = oh_tensor(REF_DT_FLOAT, 0, NULL, cd);
    const ref_tensor *abc[3] = {&a, &b, &c}, *cba[3] = {&c, &b, &a};
    CHECK_OK(go(node("Max", 3), 13, 3, abc, &y, 1, err), err);
    check_f32(&y, (const float[]){3.5f, 5, 3.5f, 4, 3.5f, 6}, 6, 0);
    oh_free_outputs(1, &y);
    /* the small operands first: the output still takes the broadcast shape */
    CHECK_OK(go(node("Min", 3), 13, 3, cba, &y, 1, err), err);
    CHECK(y.rank == 2 && y.dims[0] == 2 && y.dims[1] == 3);
    check_f32(&y, (const float[]){1, 2, 2, 2, 2, 2}, 6, 0);
    oh_free_outputs(1, &y);
    CHECK_OK(go(node("Sum", 3), 13, 3, abc, &y, 1, err), err);
    check_f32(&y, (const float[]){6.5f, 10.5f, 8.5f, 9.5f, 7.5f, 11.5f}, 6, 0);
    oh_free_outputs(1, &y);
    CHECK_OK(go(node("Mean", 3), 13, 3, abc, &y, 1, err), err);
    check_f32(&y, (const float[]){6.5f / 3, 10.5f / 3, 8.5f / 3, 9.5f / 3, 7.5f / 3, 11.5f / 3}, 6, 1e-6);
    oh_free_outputs(1, &y);
    CHECK_OK(go(node("Sum", 1), 13, 1, abc, &y, 1, err), err);
    check_f32(&y, ad, 6, 0);
    oh_free_outputs(1, &y);

    float nd[] = {NAN, 1}, md[] = {0, NAN};
    ref_tensor na = oh_tensor(REF_DT_FLOAT, 1, (int64_t[]){2}, nd), nb = oh_tensor(REF_DT_FLOAT, 1, (int64_t[]){2}, md);
    const ref_tensor *nab[2] = {&na, &nb};
    CHECK_OK(go(node("Max", 2), 13, 2, nab, &y, 1, err), err);
    CHECK(isnan(((float *)y.data)[0]) && isnan(((float *)y.data)[1]));
    oh_free_outputs(1, &y);

    int8_t i1[] = {-128, 5, 7}, i2[] = {127, -5, 7};
    ref_tensor ia = oh_tensor(REF_DT_INT8, 1, (int64_t[]){3}, i1), ib = oh_tensor(REF_DT_INT8, 1, (int64_t[]){3}, i2);
    const ref_tensor *iab[2] = {&ia, &ib};
    CHECK_OK(go(node("Min", 2), 13, 2, iab, &y, 1, err), err);
    CHECK_EQ_ARRAY(int8_t, &y, -128, -5, 7);
    oh_free_outputs(1, &y);
    CHECK(go(node("Sum", 2), 13, 2, iab, &y, 1, err) == REF_E_UNSUPPORTED); /* Sum is float-only */
    CHECK(strstr(err->msg, "int8") != NULL);
    const ref_tensor *mixed[2] = {&a, &ia};
    CHECK(go(node("Max", 2), 13, 2, mixed, &y, 1, err) == REF_E_SHAPE);

    /* float16 Max and Mean run in float and round back */
    uint16_t h1[] = {ref_f32_to_f16(1.5f), ref_f32_to_f16(-2.0f)}, h2[] = {ref_f32_to_f16(0.25f), ref_f32_to_f16(3.0f)};
    ref_tensor ha = oh_tensor(REF_DT_FLOAT16, 1, (int64_t[]){2}, h1), hb = oh_tensor(REF_DT_FLOAT16, 1, (int64_t[]){2}, h2);
    const ref_tensor *hab[2] = {&ha, &hb};
    CHECK_OK(go(node("Max", 2), 13, 2, hab, &y, 1, err), err);
    CHECK(y.dtype == REF_DT_FLOAT16);
    CHECK_EQ_ARRAY(uint16_t, &y, ref_f32_to_f16(1.5f), ref_f32_to_f16(3.0f));
    oh_free_outputs(1, &y);
    CHECK_OK(go(node("Mean", 2), 13, 2, hab, &y, 1, err), err);
    CHECK_EQ_ARRAY(uint16_t, &y, ref_f32_to_f16(0.875f), ref_f32_to_f16(0.5f));
    oh_free_outputs(1, &y);
}

static void test_compare_logic(void)
{
    ref_error errs, *err = &errs;
    ref_tensor y;
    float ad[] = {1, 2, 3, NAN}, bd[] = {2, 2};
    ref_tensor a = oh_tensor(REF_DT_FLOAT, 2, (int64_t[]){2, 2}, ad), b = oh_tensor(REF_DT_FLOAT, 1, (int64_t[]){2}, bd);
    /* a = [[1,2],[3,NaN]] against b = [2,2]; NaN compares false everywhere */
    CHECK_OK(bin("Less", &a, &b, &y, err), err);
    CHECK(y.dtype == REF_DT_BOOL && y.rank == 2);
    CHECK_EQ_ARRAY(uint8_t, &y, 1, 0, 0, 0);
    oh_free_outputs(1, &y);
    CHECK_OK(bin("LessOrEqual", &a, &b, &y, err), err);
    CHECK_EQ_ARRAY(uint8_t, &y, 1, 1, 0, 0);
    oh_free_outputs(1, &y);
    CHECK_OK(bin("Greater", &a, &b, &y, err), err);
    CHECK_EQ_ARRAY(uint8_t, &y, 0, 0, 1, 0);
    oh_free_outputs(1, &y);
    CHECK_OK(bin("GreaterOrEqual", &a, &b, &y, err), err);
    CHECK_EQ_ARRAY(uint8_t, &y, 0, 1, 1, 0);
    oh_free_outputs(1, &y);
    CHECK_OK(bin("Equal", &a, &b, &y, err), err);
    CHECK_EQ_ARRAY(uint8_t, &y, 0, 1, 0, 0);
    oh_free_outputs(1, &y);

    int64_t la[] = {5, -1, 7}, lb[] = {7};
    ref_tensor ia = oh_tensor(REF_DT_INT64, 1, (int64_t[]){3}, la), ib = oh_tensor(REF_DT_INT64, 1, (int64_t[]){1}, lb);
    CHECK_OK(bin("Equal", &ia, &ib, &y, err), err);
    CHECK_EQ_ARRAY(uint8_t, &y, 0, 0, 1);
    oh_free_outputs(1, &y);

    uint8_t p[] = {0, 0, 1, 1}, q[] = {0, 1};
    ref_tensor bp = oh_tensor(REF_DT_BOOL, 2, (int64_t[]){2, 2}, p), bq = oh_tensor(REF_DT_BOOL, 1, (int64_t[]){2}, q);
    CHECK_OK(bin("And", &bp, &bq, &y, err), err);
    CHECK_EQ_ARRAY(uint8_t, &y, 0, 0, 0, 1);
    oh_free_outputs(1, &y);
    CHECK_OK(bin("Or", &bp, &bq, &y, err), err);
    CHECK_EQ_ARRAY(uint8_t, &y, 0, 1, 1, 1);
    oh_free_outputs(1, &y);
    CHECK_OK(bin("Xor", &bp, &bq, &y, err), err);
    CHECK_EQ_ARRAY(uint8_t, &y, 0, 1, 1, 0);
    oh_free_outputs(1, &y);
    CHECK_OK(bin("Equal", &bp, &bq, &y, err), err);
    CHECK_EQ_ARRAY(uint8_t, &y, 1, 0, 0, 1);
    oh_free_outputs(1, &y);
    const ref_tensor *one[1] = {&bp};
    CHECK_OK(go(node("Not", 1), 1, 1, one, &y, 1, err), err);
    CHECK_EQ_ARRAY(uint8_t, &y, 1, 1, 0, 0);
    oh_free_outputs(1, &y);

    CHECK(bin("And", &ia, &ia, &y, err) == REF_E_UNSUPPORTED);
    CHECK(strstr(err->msg, "int64") != NULL);
    CHECK(bin("Less", &a, &ia, &y, err) == REF_E_SHAPE);
}

static void test_where_bitshift(void)
{
    ref_error errs, *err = &errs;
    ref_tensor y;
    uint8_t cd[] = {1, 0};
    float xd[] = {1, 2, 3}, yd[] = {-1};
    ref_tensor c = oh_tensor(REF_DT_BOOL, 2, (int64_t[]){2, 1}, cd), x = oh_tensor(REF_DT_FLOAT, 2, (int64_t[]){1, 3}, xd),
               s = oh_tensor(REF_DT_FLOAT, 0, NULL, yd);
    const ref_tensor *in[3] = {&c, &x, &s};
    CHECK_OK(go(node("Where", 3), 16, 3, in, &y, 1, err), err);
    CHECK(y.rank == 2 && y.dims[0] == 2 && y.dims[1] == 3);
    check_f32(&y, (const float[]){1, 2, 3, -1, -1, -1}, 6, 0);
    oh_free_outputs(1, &y);

    uint8_t c4[] = {1, 0, 0, 1};
    int64_t l1[] = {1, 2, 3, 4}, l2[] = {9, 8, 7, 6};
    ref_tensor cc = oh_tensor(REF_DT_BOOL, 1, (int64_t[]){4}, c4), xa = oh_tensor(REF_DT_INT64, 1, (int64_t[]){4}, l1),
               xb = oh_tensor(REF_DT_INT64, 1, (int64_t[]){4}, l2);
    const ref_tensor *in2[3] = {&cc, &xa, &xb};
    CHECK_OK(go(node("Where", 3), 16, 3, in2, &y, 1, err), err);
    CHECK_EQ_ARRAY(int64_t, &y, 1, 8, 7, 4);
    oh_free_outputs(1, &y);
    const ref_tensor *bad[3] = {&cc, &xa, &x};
    CHECK(go(node("Where", 3), 16, 3, bad, &y, 1, err) == REF_E_SHAPE);

    uint8_t v[] = {16, 4, 1, 255}, sh[] = {1, 2, 7, 8};
    ref_tensor va = oh_tensor(REF_DT_UINT8, 1, (int64_t[]){4}, v), vs = oh_tensor(REF_DT_UINT8, 1, (int64_t[]){4}, sh);
    const ref_tensor *in3[2] = {&va, &vs};
    ref_node *n = node("BitShift", 2);
    oh_attr_str(m, n, "direction", "LEFT");
    CHECK_OK(go(n, 11, 2, in3, &y, 1, err), err);
    CHECK_EQ_ARRAY(uint8_t, &y, 32, 16, 128, 0); /* shifting out every bit gives 0 */
    oh_free_outputs(1, &y);
    n = node("BitShift", 2);
    oh_attr_str(m, n, "direction", "RIGHT");
    CHECK_OK(go(n, 11, 2, in3, &y, 1, err), err);
    CHECK_EQ_ARRAY(uint8_t, &y, 8, 1, 0, 0);
    oh_free_outputs(1, &y);
    n = node("BitShift", 2);
    oh_attr_str(m, n, "direction", "UP");
    CHECK(go(n, 11, 2, in3, &y, 1, err) == REF_E_INVALID);
    const ref_tensor *in4[2] = {&xa, &xa};
    n = node("BitShift", 2);
    oh_attr_str(m, n, "direction", "LEFT");
    CHECK(go(n, 11, 2, in4, &y, 1, err) == REF_E_UNSUPPORTED);
}

/* Add-6 with broadcast=1 lines B up with A at `axis` (default: A's trailing dims). */
static void test_legacy_broadcast(void)
{
    ref_error errs, *err = &errs;
    ref_tensor y;
    float ad[] = {1, 2, 3, 4, 5, 6}, bd[] = {10, 20}, rd[] = {1, 2, 3};
    ref_tensor a = oh_tensor(REF_DT_FLOAT, 2, (int64_t[]){2, 3}, ad), b = oh_tensor(REF_DT_FLOAT, 1, (int64_t[]){2}, bd),
               r = oh_tensor(REF_DT_FLOAT, 1, (int64_t[]){3}, rd);
    ref_node *n = node("Add", 2);
    oh_attr_int(m, n, "broadcast", 1);
    oh_attr_int(m, n, "axis", 0);
    const ref_tensor *ab[2] = {&a, &b}, *ar[2] = {&a, &r};
    CHECK_OK(go(n, 6, 2, ab, &y, 1, err), err);
    check_f32(&y, (const float[]){11, 12, 13, 24, 25, 26}, 6, 0);
    oh_free_outputs(1, &y);
    n = node("Mul", 2);
    oh_attr_int(m, n, "broadcast", 1);
    CHECK_OK(go(n, 6, 2, ar, &y, 1, err), err);
    check_f32(&y, (const float[]){1, 4, 9, 4, 10, 18}, 6, 0);
    oh_free_outputs(1, &y);
    /* the same [2] at opset 7 follows numpy and does not fit [2,3] */
    CHECK(go(n, 7, 2, ab, &y, 1, err) == REF_E_SHAPE);
}

/* A large broadcast case whose thread chunks split rows: each thread count must give the exact values. */
static void test_threads(void)
{
    enum { R = 300, C = 997 };
    static float xd[R * C], rowd[C], cold[R], want[R * C];
    for (int i = 0; i < R * C; i++)
        xd[i] = (float)((i * 37) % 1000) * 0.01f - 5.0f;
    for (int j = 0; j < C; j++)
        rowd[j] = (float)(j % 13) - 6.0f;
    for (int i = 0; i < R; i++)
        cold[i] = (float)(i % 7) + 0.5f;
    ref_tensor x = oh_tensor(REF_DT_FLOAT, 2, (int64_t[]){R, C}, xd), row = oh_tensor(REF_DT_FLOAT, 1, (int64_t[]){C}, rowd),
               col = oh_tensor(REF_DT_FLOAT, 2, (int64_t[]){R, 1}, cold);
    for (int i = 0; i < R; i++)
        for (int j = 0; j < C; j++)
            want[i * C + j] = (xd[i * C + j] * rowd[j]) > cold[i] ? (xd[i * C + j] * rowd[j]) : cold[i];
    for (int threads = 1; threads <= 2; threads++) {
        ref_error errs, *err = &errs;
        ref_tensor p, y;
        const ref_tensor *xr[2] = {&x, &row};
        CHECK_OK(go(node("Mul", 2), 14, 2, xr, &p, threads, err), err);
        const ref_tensor *pc[2] = {&p, &col};
        CHECK_OK(go(node("Max", 2), 13, 2, pc, &y, threads, err), err);
        CHECK(memcmp(y.data, want, sizeof want) == 0);
        oh_free_outputs(1, &p);
        oh_free_outputs(1, &y);
    }
}

static void test_errors(void)
{
    ref_error errs, *err = &errs;
    ref_tensor y;
    char sd[16] = {0};
    uint8_t bd[2] = {1, 0};
    float fd[2] = {1, 2};
    int64_t ld[2] = {1, 2};
    ref_tensor s = oh_tensor(REF_DT_STRING, 1, (int64_t[]){2}, sd), b = oh_tensor(REF_DT_BOOL, 1, (int64_t[]){2}, bd),
               f = oh_tensor(REF_DT_FLOAT, 1, (int64_t[]){2}, fd), l = oh_tensor(REF_DT_INT64, 1, (int64_t[]){2}, ld);
    CHECK(bin("Add", &s, &s, &y, err) == REF_E_UNSUPPORTED);
    CHECK(strstr(err->msg, "string") != NULL);
    CHECK(bin("Mul", &b, &b, &y, err) == REF_E_UNSUPPORTED);
    CHECK(strstr(err->msg, "bool") != NULL);
    CHECK(bin("Add", &f, &l, &y, err) == REF_E_SHAPE);
    CHECK(strstr(err->msg, "int64") != NULL && strstr(err->msg, "float") != NULL);
    const ref_tensor *one[1] = {&f};
    CHECK(go(node("Add", 1), 14, 1, one, &y, 1, err) == REF_E_INVALID);
}

int main(void)
{
    m = ref_model_new();
    test_broadcast_patterns();
    test_integer_edges();
    test_mod();
    test_pow();
    test_variadic();
    test_compare_logic();
    test_where_bitshift();
    test_legacy_broadcast();
    test_threads();
    test_errors();
    ref_model_free(m);
    ref_alloc_stats st;
    ref_alloc_get_stats(&st);
    CHECK(st.live_bytes == 0);
    return check_summary();
}
