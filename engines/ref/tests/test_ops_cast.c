/* test_ops_cast.c: Cast and CastLike between every supported type at the edges: float16 rounding (ties,
 * subnormals, overflow, inf, NaN), every half round trip, float->int truncation, saturation, wrapping, bool,
 * bfloat16, threads and the unsupported string type. It must never leave engine bytes allocated. */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "check.h"
#include "op_harness.h"

static ref_model *m;

static int cast(int opset, const ref_tensor *x, int to, ref_tensor *y, int threads, ref_error *err)
{
    ref_node *n = oh_node(m, "Cast", 1, 1);
    oh_attr_int(m, n, "to", to);
    const ref_tensor *in[1] = {x};
    return oh_run(n, opset, 1, in, 1, y, 0, threads, err);
}

static void test_to_half(void)
{
    ref_error errs, *err = &errs;
    ref_tensor y;
    const float t24 = ldexpf(1, -24); /* the smallest half subnormal */
    float xd[] = {0.0f, -0.0f, 1.0f, 65504.0f, 65519.99f, 65520.0f, 1e6f, -INFINITY, INFINITY,
                  t24, t24 / 2, t24 * 1.5f, t24 * 2.5f, t24 * 3.5f, ldexpf(1, -14),
                  1 + ldexpf(1, -11), 1 + 3 * ldexpf(1, -11), 0.1f, -2.5f};
    ref_tensor x = oh_tensor(REF_DT_FLOAT, 1, (int64_t[]){19}, xd);
    CHECK_OK(cast(13, &x, REF_DT_FLOAT16, &y, 1, err), err);
    CHECK(y.dtype == REF_DT_FLOAT16 && y.rank == 1 && y.dims[0] == 19);
    /* ties go to even: 2^-25 -> 0, 2.5*2^-24 -> 2, 3.5*2^-24 -> 4, 1+2^-11 -> 1, 1+3*2^-11 -> 1+2^-9 */
    CHECK_EQ_ARRAY(uint16_t, &y, 0x0000, 0x8000, 0x3c00, 0x7bff, 0x7bff, 0x7c00, 0x7c00, 0xfc00, 0x7c00, 0x0001,
                   0x0000, 0x0002, 0x0002, 0x0004, 0x0400, 0x3c00, 0x3c02, 0x2e66, 0xc100);
    oh_free_outputs(1, &y);

    float nd[] = {NAN, -NAN};
    ref_tensor xn = oh_tensor(REF_DT_FLOAT, 1, (int64_t[]){2}, nd);
    CHECK_OK(cast(13, &xn, REF_DT_FLOAT16, &y, 1, err), err);
    for (int i = 0; i < 2; i++) {
        uint16_t h = ((uint16_t *)y.data)[i];
        CHECK((h & 0x7c00) == 0x7c00 && (h & 0x3ff) != 0); /* still a NaN, not an infinity */
    }
    oh_free_outputs(1, &y);

    /* from double the value is rounded once: just above the 1 + 2^-11 tie rounds up, though (float)x would
     * land on the tie and go down to 1 */
    double dd[] = {1 + ldexp(1, -11) + ldexp(1, -40), 65504.0, NAN, -1e300};
    ref_tensor xd2 = oh_tensor(REF_DT_DOUBLE, 1, (int64_t[]){4}, dd);
    CHECK_OK(cast(13, &xd2, REF_DT_FLOAT16, &y, 1, err), err);
    CHECK(((uint16_t *)y.data)[0] == 0x3c01 && ((uint16_t *)y.data)[1] == 0x7bff);
    CHECK((((uint16_t *)y.data)[2] & 0x7fff) > 0x7c00 && ((uint16_t *)y.data)[3] == 0xfc00);
    oh_free_outputs(1, &y);
}

/* Every half value through float and back is itself (NaNs stay NaNs). */
static void test_half_round_trip(void)
{
    ref_error errs, *err = &errs;
    static uint16_t hd[65536];
    for (int i = 0; i < 65536; i++)
        hd[i] = (uint16_t)i;
    ref_tensor h = oh_tensor(REF_DT_FLOAT16, 1, (int64_t[]){65536}, hd), f, back, d;
    CHECK_OK(cast(13, &h, REF_DT_FLOAT, &f, 2, err), err);
    CHECK_OK(cast(13, &f, REF_DT_FLOAT16, &back, 2, err), err);
    CHECK_OK(cast(13, &h, REF_DT_DOUBLE, &d, 1, err), err);
    int bad = 0;
    for (int i = 0; i < 65536; i++) {
        uint16_t b = ((uint16_t *)back.data)[i];
        int is_nan = (i & 0x7c00) == 0x7c00 && (i & 0x3ff);
        bad += is_nan ? !((b & 0x7c00) == 0x7c00 && (b & 0x3ff)) : b != i;
        float fv = ((float *)f.data)[i];
        bad += is_nan ? !isnan(((double *)d.data)[i]) : ((double *)d.data)[i] != (double)fv;
    }
    CHECK(bad == 0);
    /* spot values of the decoding */
    const float *fv = f.data;
    CHECK(fv[0x3c00] == 1.0f && fv[0xc000] == -2.0f && fv[0x0001] == ldexpf(1, -24) && fv[0x7bff] == 65504.0f);
    CHECK(fv[0x7c00] == INFINITY && fv[0xfc00] == -INFINITY && isnan(fv[0x7e00]) && signbit(fv[0x8000]));
    CHECK(fv[0x3555] == 0.333251953125f);
    oh_free_outputs(1, &f);
    oh_free_outputs(1, &back);
    oh_free_outputs(1, &d);
}

static void test_to_int(void)
{
    ref_error errs, *err = &errs;
    ref_tensor y;
    float xd[] = {-1.7f, -0.5f, 2.9f, NAN, 100.99f, -0.0f};
    ref_tensor x = oh_tensor(REF_DT_FLOAT, 1, (int64_t[]){6}, xd);
    CHECK_OK(cast(13, &x, REF_DT_INT32, &y, 1, err), err);
    CHECK(y.dtype == REF_DT_INT32);
    CHECK_EQ_ARRAY(int32_t, &y, -1, 0, 2, 0, 100, 0); /* toward zero; NaN defined as 0 */
    oh_free_outputs(1, &y);
    CHECK_OK(cast(13, &x, REF_DT_INT8, &y, 1, err), err);
    CHECK_EQ_ARRAY(int8_t, &y, -1, 0, 2, 0, 100, 0);
    oh_free_outputs(1, &y);

    float bd[] = {1e19f, -1e19f, 3e9f, -1.0f};
    ref_tensor b = oh_tensor(REF_DT_FLOAT, 1, (int64_t[]){4}, bd);
    CHECK_OK(cast(13, &b, REF_DT_INT64, &y, 1, err), err);
    CHECK_EQ_ARRAY(int64_t, &y, INT64_MAX, INT64_MIN, 3000000000LL, -1); /* beyond int64: saturate */
    oh_free_outputs(1, &y);
    CHECK_OK(cast(13, &b, REF_DT_UINT64, &y, 1, err), err);
    CHECK(((uint64_t *)y.data)[0] == (uint64_t)1e19f && ((uint64_t *)y.data)[2] == 3000000000ULL);
    oh_free_outputs(1, &y);
    CHECK_OK(cast(13, &b, REF_DT_UINT32, &y, 1, err), err);
    CHECK(((uint32_t *)y.data)[2] == 3000000000u && ((uint32_t *)y.data)[3] == UINT32_MAX); /* -1 wraps */
    oh_free_outputs(1, &y);

    int32_t id[] = {300, -129, 127, -1};
    ref_tensor i = oh_tensor(REF_DT_INT32, 1, (int64_t[]){4}, id);
    CHECK_OK(cast(13, &i, REF_DT_INT8, &y, 1, err), err);
    CHECK_EQ_ARRAY(int8_t, &y, 44, 127, 127, -1); /* narrowing wraps */
    oh_free_outputs(1, &y);
    CHECK_OK(cast(13, &i, REF_DT_UINT16, &y, 1, err), err);
    CHECK_EQ_ARRAY(uint16_t, &y, 300, 65407, 127, 65535);
    oh_free_outputs(1, &y);

    uint8_t ud[] = {200, 7};
    ref_tensor u = oh_tensor(REF_DT_UINT8, 1, (int64_t[]){2}, ud);
    CHECK_OK(cast(13, &u, REF_DT_INT8, &y, 1, err), err);
    CHECK_EQ_ARRAY(int8_t, &y, -56, 7);
    oh_free_outputs(1, &y);

    int64_t ld[] = {16777217, -3, INT64_MAX};
    ref_tensor l = oh_tensor(REF_DT_INT64, 1, (int64_t[]){3}, ld);
    CHECK_OK(cast(13, &l, REF_DT_FLOAT, &y, 1, err), err);
    CHECK_EQ_ARRAY(float, &y, 16777216.0f, -3.0f, 9223372036854775808.0f);
    oh_free_outputs(1, &y);
    CHECK_OK(cast(13, &l, REF_DT_DOUBLE, &y, 1, err), err);
    CHECK_EQ_ARRAY(double, &y, 16777217.0, -3.0, 9223372036854775808.0);
    oh_free_outputs(1, &y);
    uint64_t qd[] = {UINT64_MAX};
    ref_tensor q = oh_tensor(REF_DT_UINT64, 1, (int64_t[]){1}, qd);
    CHECK_OK(cast(13, &q, REF_DT_DOUBLE, &y, 1, err), err);
    CHECK_EQ_ARRAY(double, &y, 18446744073709551616.0);
    oh_free_outputs(1, &y);
}

static void test_bool_and_bf16(void)
{
    ref_error errs, *err = &errs;
    ref_tensor y;
    float xd[] = {0.0f, -0.0f, 2.0f, NAN, -0.1f};
    ref_tensor x = oh_tensor(REF_DT_FLOAT, 1, (int64_t[]){5}, xd);
    CHECK_OK(cast(13, &x, REF_DT_BOOL, &y, 1, err), err);
    CHECK(y.dtype == REF_DT_BOOL);
    CHECK_EQ_ARRAY(uint8_t, &y, 0, 0, 1, 1, 1);
    oh_free_outputs(1, &y);
    uint8_t bd[] = {1, 0, 1};
    ref_tensor b = oh_tensor(REF_DT_BOOL, 1, (int64_t[]){3}, bd);
    CHECK_OK(cast(13, &b, REF_DT_FLOAT, &y, 1, err), err);
    CHECK_EQ_ARRAY(float, &y, 1, 0, 1);
    oh_free_outputs(1, &y);
    CHECK_OK(cast(13, &b, REF_DT_INT64, &y, 1, err), err);
    CHECK_EQ_ARRAY(int64_t, &y, 1, 0, 1);
    oh_free_outputs(1, &y);
    int32_t id[] = {0, -5, 3};
    ref_tensor i = oh_tensor(REF_DT_INT32, 1, (int64_t[]){3}, id);
    CHECK_OK(cast(13, &i, REF_DT_BOOL, &y, 1, err), err);
    CHECK_EQ_ARRAY(uint8_t, &y, 0, 1, 1);
    oh_free_outputs(1, &y);

    /* float -> bfloat16 truncates (ONNX 1.12's reference); 1 + 2^-8 + 2^-9 would round up to 0x3f81 */
    float fd[] = {1.0f + ldexpf(1, -8) + ldexpf(1, -9), -2.0f, INFINITY, NAN};
    ref_tensor f = oh_tensor(REF_DT_FLOAT, 1, (int64_t[]){4}, fd);
    CHECK_OK(cast(13, &f, REF_DT_BFLOAT16, &y, 1, err), err);
    CHECK(((uint16_t *)y.data)[0] == 0x3f80 && ((uint16_t *)y.data)[1] == 0xc000 && ((uint16_t *)y.data)[2] == 0x7f80);
    CHECK((((uint16_t *)y.data)[3] & 0x7fff) > 0x7f80);
    oh_free_outputs(1, &y);
    uint16_t hd[] = {0x4049, 0xff80};
    ref_tensor h = oh_tensor(REF_DT_BFLOAT16, 1, (int64_t[]){2}, hd);
    CHECK_OK(cast(13, &h, REF_DT_FLOAT, &y, 1, err), err);
    CHECK_EQ_ARRAY(float, &y, 3.140625f, -INFINITY);
    oh_free_outputs(1, &y);
}

static void test_castlike_and_errors(void)
{
    ref_error errs, *err = &errs;
    ref_tensor y;
    float xd[] = {2.5f, -3.5f};
    int64_t like[] = {0};
    ref_tensor x = oh_tensor(REF_DT_FLOAT, 2, (int64_t[]){1, 2}, xd), l = oh_tensor(REF_DT_INT64, 1, (int64_t[]){1}, like);
    const ref_tensor *in[2] = {&x, &l};
    CHECK_OK(oh_run(oh_node(m, "CastLike", 2, 1), 15, 2, in, 1, &y, 0, 1, err), err);
    CHECK(y.dtype == REF_DT_INT64 && y.rank == 2 && y.dims[0] == 1 && y.dims[1] == 2);
    CHECK_EQ_ARRAY(int64_t, &y, 2, -3);
    oh_free_outputs(1, &y);

    /* Cast-1 names the type */
    ref_node *n = oh_node(m, "Cast", 1, 1);
    oh_attr_str(m, n, "to", "DOUBLE");
    CHECK_OK(oh_run(n, 1, 1, in, 1, &y, 0, 1, err), err);
    CHECK(y.dtype == REF_DT_DOUBLE);
    CHECK_EQ_ARRAY(double, &y, 2.5, -3.5);
    oh_free_outputs(1, &y);

    CHECK_OK(cast(13, &x, REF_DT_FLOAT, &y, 1, err), err); /* same type: a copy */
    CHECK_EQ_ARRAY(float, &y, 2.5f, -3.5f);
    oh_free_outputs(1, &y);

    /* Strings: numbers print as numpy prints them (shortest round trip), and parse back. */
    CHECK_OK(cast(13, &x, REF_DT_STRING, &y, 1, err), err);
    CHECK(y.dtype == REF_DT_STRING && !strcmp(y.data, "2.5") && !strcmp((char *)y.data + REF_STRING_BYTES, "-3.5"));
    oh_free_outputs(1, &y);
    char sd[2 * REF_STRING_BYTES] = "0.039187793";
    memcpy(sd + REF_STRING_BYTES, "junk", 5);
    ref_tensor s = oh_tensor(REF_DT_STRING, 1, (int64_t[]){2}, sd);
    CHECK_OK(cast(13, &s, REF_DT_FLOAT, &y, 1, err), err);
    CHECK_EQ_ARRAY(float, &y, 0.039187793f, 0.0f);
    oh_free_outputs(1, &y);
    CHECK(cast(13, &x, 99, &y, 1, err) == REF_E_UNSUPPORTED);
    CHECK(oh_run(oh_node(m, "Cast", 1, 1), 13, 1, in, 1, &y, 0, 1, err) == REF_E_INVALID); /* no `to` */
    CHECK(strstr(err->msg, "'to'") != NULL);
}

/* The direct loops (integer and float sources to float, double, int32, int64): every value gives the bits of the
 * conversion through the wide type (int64 for signed sources, uint64 for unsigned), over random bit patterns of
 * every width, a length that leaves a vector tail, and 2 threads. */
#define DIRECT_SRC(X)                                                                                      \
    X(int8_t, REF_DT_INT8, int64_t) X(uint8_t, REF_DT_UINT8, uint64_t) X(int16_t, REF_DT_INT16, int64_t) \
    X(uint16_t, REF_DT_UINT16, uint64_t) X(int32_t, REF_DT_INT32, int64_t)                                \
    X(uint32_t, REF_DT_UINT32, uint64_t) X(int64_t, REF_DT_INT64, int64_t) X(uint64_t, REF_DT_UINT64, uint64_t)
#define DIRECT_DST(X, S, SDT, W)                                                                           \
    X(S, SDT, W, float, REF_DT_FLOAT) X(S, SDT, W, double, REF_DT_DOUBLE) X(S, SDT, W, int32_t, REF_DT_INT32) \
    X(S, SDT, W, int64_t, REF_DT_INT64)

static int direct_bad;

#define DIRECT_CHECK(S, SDT, W, D, DDT)                                                              \
    do {                                                                                             \
        S *src = (S *)buf;                                                                           \
        for (int i = 0; i < N; i++)                                                                  \
            src[i] = (S)bits[i];                                                                     \
        ref_tensor x = oh_tensor(SDT, 1, (int64_t[]){N}, src), y;                                    \
        CHECK_OK(cast(13, &x, DDT, &y, 2, err), err);                                                \
        for (int i = 0; i < N && y.data; i++) {                                                      \
            D want = (D)(W)src[i], got = ((const D *)y.data)[i];                                     \
            direct_bad += memcmp(&want, &got, sizeof want) != 0;                                     \
        }                                                                                            \
        oh_free_outputs(1, &y);                                                                      \
    } while (0);
#define DIRECT_ONE(S, SDT, W) DIRECT_DST(DIRECT_CHECK, S, SDT, W)

static void test_direct_pairs(void)
{
    enum { N = 40007 };
    static uint64_t bits[N], buf[N];
    uint64_t r = 7;
    for (int i = 0; i < N; i++) {
        r = r * 6364136223846793005ULL + 1442695040888963407ULL;
        bits[i] = r >> (i % 64); /* every width, so small and huge values, negative ones after the narrowing */
    }
    ref_error errs, *err = &errs;
    DIRECT_SRC(DIRECT_ONE)
    CHECK(direct_bad == 0);

    float fd[] = {-1.5f, 3.25f, 1e30f, -0.0f, INFINITY, 16777217.0f};
    ref_tensor f = oh_tensor(REF_DT_FLOAT, 1, (int64_t[]){6}, fd), y;
    CHECK_OK(cast(13, &f, REF_DT_DOUBLE, &y, 1, err), err);
    CHECK_EQ_ARRAY(double, &y, -1.5, 3.25, (double)1e30f, -0.0, (double)INFINITY, 16777216.0);
    CHECK(signbit(((double *)y.data)[3]));
    oh_free_outputs(1, &y);
    double dd[] = {0.1, -1e300, 3.4028235677973366e38, 1e-46};
    ref_tensor d = oh_tensor(REF_DT_DOUBLE, 1, (int64_t[]){4}, dd);
    CHECK_OK(cast(13, &d, REF_DT_FLOAT, &y, 1, err), err);
    CHECK_EQ_ARRAY(float, &y, 0.1f, -INFINITY, INFINITY, 0.0f); /* rounds to nearest: the last two overflow, underflow */
    oh_free_outputs(1, &y);
}

static void test_threads(void)
{
    enum { N = 100003 };
    static float xd[N];
    for (int i = 0; i < N; i++)
        xd[i] = (float)(i - N / 2) * 0.37f;
    ref_tensor x = oh_tensor(REF_DT_FLOAT, 1, (int64_t[]){N}, xd), y1, y2;
    ref_error errs, *err = &errs;
    CHECK_OK(cast(13, &x, REF_DT_INT32, &y1, 1, err), err);
    CHECK_OK(cast(13, &x, REF_DT_INT32, &y2, 2, err), err);
    CHECK(memcmp(y1.data, y2.data, sizeof(int32_t) * N) == 0);
    int bad = 0;
    for (int i = 0; i < N; i++)
        bad += ((int32_t *)y2.data)[i] != (int32_t)truncf(xd[i]);
    CHECK(bad == 0);
    oh_free_outputs(1, &y1);
    oh_free_outputs(1, &y2);
}

int main(void)
{
    m = ref_model_new();
    test_to_half();
    test_half_round_trip();
    test_to_int();
    test_bool_and_bf16();
    test_castlike_and_errors();
    test_direct_pairs();
    test_threads();
    ref_model_free(m);
    ref_alloc_stats st;
    ref_alloc_get_stats(&st);
    CHECK(st.live_bytes == 0);
    return check_summary();
}
