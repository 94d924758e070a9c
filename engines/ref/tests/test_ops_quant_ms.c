/* test_ops_quant_ms.c: the com.microsoft quantized operators (quant_ms*.c) against values worked out by hand in
 * the comments: ties rounding to even, saturation at both ends, broadcasting, per-column b scales, channels_last,
 * pads counted or not, and refusals that name the input. It must never derive an expectation from the kernels. */
#include <math.h>
#include <string.h>

#include "check.h"
#include "graph_builder.h"
#include "op_harness.h"

#define F32(v) oh_tensor(REF_DT_FLOAT, 0, NULL, (float[]){v})
#define U8(v) oh_tensor(REF_DT_UINT8, 0, NULL, (uint8_t[]){v})
#define S8(v) oh_tensor(REF_DT_INT8, 0, NULL, (int8_t[]){v})

static ref_node *ms_node(ref_model *m, const char *op, int n_in)
{
    ref_node *n = oh_node(m, op, n_in, 1);
    n->domain = "com.microsoft";
    return n;
}

/* Runs n with its inputs and every input's value shown to infer (constants), 1 thread. */
static int run(const ref_node *n, int n_in, const ref_tensor *const *in, ref_tensor *out, ref_error *err)
{
    return oh_run(n, 13, n_in, in, 1, out, (1u << n_in) - 1, 1, err);
}

static void test_add_ties_saturation_broadcast(void)
{
    /* C = rint(0.5 a + 0.5 b) + 128: row 0 (1,3,5)+(0,0,255): 0.5->0, 1.5->2, 130->258->255;
     * row 1 (7,255,0)+(0,0,255): 3.5->4, 127.5->128, 127.5->128, +128: 132, 255, 255 */
    ref_model *m = ref_model_new();
    ref_node *n = ms_node(m, "QLinearAdd", 8);
    uint8_t a[] = {1, 3, 5, 7, 255, 0}, b[] = {0, 0, 255};
    ref_tensor ta = oh_tensor(REF_DT_UINT8, 2, (int64_t[]){2, 3}, a);
    ref_tensor tb = oh_tensor(REF_DT_UINT8, 1, (int64_t[]){3}, b);
    ref_tensor one = F32(1.0f), two = F32(2.0f), z = U8(0), cz = U8(128), y;
    const ref_tensor *in[] = {&ta, &one, &z, &tb, &one, &z, &two, &cz};
    ref_error err = {0};
    CHECK_OK(run(n, 8, in, &y, &err), &err);
    CHECK(y.rank == 2 && y.dims[0] == 2 && y.dims[1] == 3);
    CHECK_EQ_ARRAY(uint8_t, &y, 128, 130, 255, 132, 255, 255);
    oh_free_outputs(1, &y);
    /* B int8 against A uint8: refused naming B */
    ref_tensor tbs = oh_tensor(REF_DT_INT8, 1, (int64_t[]){3}, b);
    in[3] = &tbs;
    CHECK(run(n, 8, in, &y, &err) == REF_E_UNSUPPORTED);
    CHECK(strstr(err.msg, "input 3 (B)") != NULL);
    ref_model_free(m);
}

static void test_mul_int8(void)
{
    /* C = rint(0.5 a b - 1) (zero point added before rounding, as ORT): -8128-1 -> -128; -1.5-1 = -2.5 -> -2;
     * 2.5-1 = 1.5 -> 2; 63.5-1 = 62.5 -> 62 */
    ref_model *m = ref_model_new();
    ref_node *n = ms_node(m, "QLinearMul", 8);
    int8_t a[] = {-128, -3, 5, 127}, b[] = {127, 1, 1, 1};
    ref_tensor ta = oh_tensor(REF_DT_INT8, 1, (int64_t[]){4}, a), tb = oh_tensor(REF_DT_INT8, 1, (int64_t[]){4}, b);
    ref_tensor half = F32(0.5f), one = F32(1.0f), cz = S8(-1), y;
    const ref_tensor *in[] = {&ta, &half, NULL, &tb, &one, NULL, &one, &cz};
    ref_error err = {0};
    CHECK_OK(run(n, 8, in, &y, &err), &err);
    CHECK(y.dtype == REF_DT_INT8);
    CHECK_EQ_ARRAY(int8_t, &y, -128, -2, 2, 62);
    oh_free_outputs(1, &y);
    ref_model_free(m);
}

static void test_global_average_pool(void)
{
    /* channel sums 10 and 2 over 4 values, x_scale 1, y_scale 1: 2.5 -> 2, 0.5 -> 0, plus 5 */
    uint8_t nchw[] = {1, 2, 3, 4, 0, 0, 0, 2}, nhwc[] = {1, 0, 2, 0, 3, 0, 4, 2};
    for (int last = 0; last < 2; last++) {
        ref_model *m = ref_model_new();
        ref_node *n = ms_node(m, "QLinearGlobalAveragePool", 5);
        oh_attr_int(m, n, "channels_last", last);
        ref_tensor x = oh_tensor(REF_DT_UINT8, 4, (int64_t[]){1, 2, 2, 2}, last ? nhwc : nchw);
        ref_tensor one = F32(1.0f), z = U8(0), yz = U8(5), y;
        const ref_tensor *in[] = {&x, &one, &z, &one, &yz};
        ref_error err = {0};
        CHECK_OK(run(n, 5, in, &y, &err), &err);
        CHECK(y.rank == 4 && y.dims[1] == (last ? 1 : 2) && y.dims[3] == (last ? 2 : 1));
        CHECK_EQ_ARRAY(uint8_t, &y, 7, 5);
        oh_free_outputs(1, &y);
        ref_model_free(m);
    }
}

static void test_concat(void)
{
    /* axis 1, Y scale 1: X1 copied (same scale and zero point); X2 at 0.5: 2.5 -> 2, 3.5 -> 4; X3 at 2: 510 -> 255,
     * 2 */
    ref_model *m = ref_model_new();
    ref_node *n = ms_node(m, "QLinearConcat", 11);
    uint8_t x1[] = {10, 20, 30, 40}, x2[] = {5, 7}, x3[] = {255, 1};
    ref_tensor t1 = oh_tensor(REF_DT_UINT8, 2, (int64_t[]){2, 2}, x1);
    ref_tensor t2 = oh_tensor(REF_DT_UINT8, 2, (int64_t[]){2, 1}, x2);
    ref_tensor t3 = oh_tensor(REF_DT_UINT8, 2, (int64_t[]){2, 1}, x3);
    ref_tensor one = F32(1.0f), half = F32(0.5f), two = F32(2.0f), z = U8(0), y;
    const ref_tensor *in[] = {&one, &z, &t1, &one, &z, &t2, &half, &z, &t3, &two, &z};
    ref_error err = {0};
    CHECK(run(n, 11, in, &y, &err) == REF_E_INVALID); /* no axis */
    CHECK(strstr(err.msg, "axis") != NULL);
    oh_attr_int(m, n, "axis", -1);
    CHECK_OK(run(n, 11, in, &y, &err), &err);
    CHECK(y.dims[0] == 2 && y.dims[1] == 4);
    CHECK_EQ_ARRAY(uint8_t, &y, 10, 20, 2, 255, 30, 40, 4, 2);
    oh_free_outputs(1, &y);
    ref_model_free(m);
}

static void test_tables(void)
{
    /* LeakyRelu alpha 0.5, int8, scales 1: -1.5 -> -2, -0.5 -> 0, 4, -64 */
    ref_model *m = ref_model_new();
    ref_node *n = ms_node(m, "QLinearLeakyRelu", 5);
    oh_attr_float(m, n, "alpha", 0.5f);
    int8_t x[] = {-3, -1, 4, -128};
    ref_tensor tx = oh_tensor(REF_DT_INT8, 1, (int64_t[]){4}, x), one = F32(1.0f), y;
    const ref_tensor *in[] = {&tx, &one, NULL, &one, NULL};
    ref_error err = {0};
    CHECK_OK(run(n, 5, in, &y, &err), &err);
    CHECK_EQ_ARRAY(int8_t, &y, -2, 0, 4, -64);
    oh_free_outputs(1, &y);
    /* Sigmoid, uint8, x zero point 128, y scale 1/256: sigmoid(0) = 0.5 -> 128; sigmoid(127) -> 256 -> 255; 0 */
    ref_node *s = ms_node(m, "QLinearSigmoid", 5);
    uint8_t xu[] = {128, 255, 0};
    ref_tensor tu = oh_tensor(REF_DT_UINT8, 1, (int64_t[]){3}, xu), xz = U8(128), ys = F32(1.0f / 256), yz = U8(0);
    const ref_tensor *ins[] = {&tu, &one, &xz, &ys, &yz};
    CHECK_OK(run(s, 5, ins, &y, &err), &err);
    CHECK_EQ_ARRAY(uint8_t, &y, 128, 255, 0);
    oh_free_outputs(1, &y);
    ref_model_free(m);
}

static void test_softmax(void)
{
    /* equal values, y_scale 1/256: opset 13 over the last axis of [2, 2] gives 1/2 -> 128, opset 12 from axis 0
     * flattens all four: 1/4 -> 64; {255, 0} at x_scale 1 is all but 1 -> 256 -> saturates at 255, the other 0 */
    uint8_t x[] = {7, 7, 7, 7}, x2[] = {255, 0};
    ref_tensor tx = oh_tensor(REF_DT_UINT8, 2, (int64_t[]){2, 2}, x);
    ref_tensor t2 = oh_tensor(REF_DT_UINT8, 1, (int64_t[]){2}, x2);
    ref_tensor one = F32(1.0f), ys = F32(1.0f / 256), z = U8(0), y;
    const ref_tensor *in[] = {&tx, &one, &z, &ys, &z};
    ref_error err = {0};
    ref_model *m = ref_model_new();
    ref_node *n = ms_node(m, "QLinearSoftmax", 5);
    CHECK(run(n, 5, in, &y, &err) == REF_E_INVALID); /* opset is required */
    CHECK(strstr(err.msg, "opset") != NULL);
    oh_attr_int(m, n, "opset", 13);
    CHECK_OK(run(n, 5, in, &y, &err), &err);
    CHECK_EQ_ARRAY(uint8_t, &y, 128, 128, 128, 128);
    oh_free_outputs(1, &y);
    ref_node *f = ms_node(m, "QLinearSoftmax", 5);
    oh_attr_int(m, f, "opset", 12);
    oh_attr_int(m, f, "axis", 0);
    CHECK_OK(run(f, 5, in, &y, &err), &err);
    CHECK_EQ_ARRAY(uint8_t, &y, 64, 64, 64, 64);
    oh_free_outputs(1, &y);
    in[0] = &t2;
    CHECK_OK(run(n, 5, in, &y, &err), &err);
    CHECK_EQ_ARRAY(uint8_t, &y, 255, 0);
    oh_free_outputs(1, &y);
    ref_model_free(m);
}

static void test_where(void)
{
    /* condition {1, 0}: X {10, 20} at scale 1 -> 10; Y {5} (broadcast) at scale 0.5 -> 2.5 -> 2; Z scale 1 */
    ref_model *m = ref_model_new();
    ref_node *n = ms_node(m, "QLinearWhere", 9);
    bool cv[] = {true, false};
    uint8_t xv[] = {10, 20}, yv[] = {5};
    ref_tensor tc = oh_tensor(REF_DT_BOOL, 1, (int64_t[]){2}, cv), tx = oh_tensor(REF_DT_UINT8, 1, (int64_t[]){2}, xv);
    ref_tensor ty = oh_tensor(REF_DT_UINT8, 1, (int64_t[]){1}, yv), one = F32(1.0f), half = F32(0.5f), z = U8(0), y;
    const ref_tensor *in[] = {&tc, &tx, &one, &z, &ty, &half, &z, &one, &z};
    ref_error err = {0};
    CHECK_OK(run(n, 9, in, &y, &err), &err);
    CHECK_EQ_ARRAY(uint8_t, &y, 10, 2);
    oh_free_outputs(1, &y);
    in[0] = &tx; /* a uint8 condition */
    CHECK(run(n, 9, in, &y, &err) == REF_E_UNSUPPORTED);
    CHECK(strstr(err.msg, "input 0 (condition)") != NULL);
    ref_model_free(m);
}

static void test_average_pool(void)
{
    /* 3x3 image 1..9. kernel 2 stride 2 pads 1: windows hold {1}, {2,3}, {4,7}, {5,6,8,9} (sums 1, 5, 11, 28);
     * count_include_pad 1 divides by 4: 0.25 -> 0, 1.25 -> 1, 2.75 -> 3, 7; 0 divides by the count: 1, 2.5 -> 2,
     * 5.5 -> 6, 7. A 3x3 kernel without pads is the global pool: 45 / 9 = 5. */
    uint8_t x[] = {1, 2, 3, 4, 5, 6, 7, 8, 9};
    ref_tensor tx = oh_tensor(REF_DT_UINT8, 4, (int64_t[]){1, 1, 3, 3}, x), one = F32(1.0f), z = U8(0), y;
    const ref_tensor *in[] = {&tx, &one, &z, &one, &z};
    ref_error err = {0};
    for (int incl = 0; incl < 3; incl++) {
        ref_model *m = ref_model_new();
        ref_node *n = ms_node(m, "QLinearAveragePool", 5);
        int64_t k = incl == 2 ? 3 : 2;
        oh_attr_ints(m, n, "kernel_shape", 2, (const int64_t[]){k, k});
        if (incl < 2) {
            oh_attr_ints(m, n, "strides", 2, (const int64_t[]){2, 2});
            oh_attr_ints(m, n, "pads", 4, (const int64_t[]){1, 1, 1, 1});
            oh_attr_int(m, n, "count_include_pad", incl);
        }
        CHECK_OK(run(n, 5, in, &y, &err), &err);
        if (incl == 0)
            CHECK_EQ_ARRAY(uint8_t, &y, 1, 2, 6, 7);
        else if (incl == 1)
            CHECK_EQ_ARRAY(uint8_t, &y, 0, 1, 3, 7);
        else
            CHECK_EQ_ARRAY(uint8_t, &y, 5);
        oh_free_outputs(1, &y);
        ref_model_free(m);
    }
}

/* A [2,3] uint8 less zero point 1 = {0,1,2; 3,4,5}; B [3,2] int8 {1,-1; 2,0; 0,3} less per-column {0,1} =
 * {1,-2; 2,-1; 0,2}: sums {2,3; 11,0}. */
static uint8_t ga[] = {1, 2, 3, 4, 5, 6};
static int8_t gb[] = {1, -1, 2, 0, 0, 3}, gbt[] = {1, 2, 0, -1, 0, 3}, gbz[] = {0, 1};
static float gbs[] = {1.0f, 0.25f};

static void test_qgemm(void)
{
    ref_model *m = ref_model_new();
    ref_tensor a = oh_tensor(REF_DT_UINT8, 2, (int64_t[]){2, 3}, ga);
    ref_tensor b = oh_tensor(REF_DT_INT8, 2, (int64_t[]){3, 2}, gb);
    ref_tensor bt = oh_tensor(REF_DT_INT8, 2, (int64_t[]){2, 3}, gbt);
    ref_tensor bz = oh_tensor(REF_DT_INT8, 1, (int64_t[]){2}, gbz);
    ref_tensor bs = oh_tensor(REF_DT_FLOAT, 1, (int64_t[]){2}, gbs), as = F32(0.5f), az = U8(1), y;
    int32_t cb[] = {1, -1};
    ref_tensor c = oh_tensor(REF_DT_INT32, 1, (int64_t[]){2}, cb), one = F32(1.0f), yz = U8(0);
    ref_error err = {0};
    /* float out: (sums + C) * 0.5 * {1, 0.25} = {3,2; 12,-1} -> {1.5, 0.25; 6, -0.125} */
    ref_node *n = ms_node(m, "QGemm", 7);
    const ref_tensor *in[] = {&a, &as, &az, &b, &bs, &bz, &c, &one, &yz};
    CHECK_OK(run(n, 7, in, &y, &err), &err);
    CHECK(y.dtype == REF_DT_FLOAT);
    CHECK_EQ_ARRAY(float, &y, 1.5f, 0.25f, 6.0f, -0.125f);
    oh_free_outputs(1, &y);
    /* transB, quantized with y scale 1: 1.5 -> 2, 0.25 -> 0, 6, -0.125 -> 0 */
    ref_node *q = ms_node(m, "QGemm", 9);
    oh_attr_int(m, q, "transB", 1);
    in[3] = &bt;
    CHECK_OK(run(q, 9, in, &y, &err), &err);
    CHECK(y.dtype == REF_DT_UINT8);
    CHECK_EQ_ARRAY(uint8_t, &y, 2, 0, 6, 0);
    oh_free_outputs(1, &y);
    /* B not constant (packed per run rather than at prepare), rows on 2 threads: the same */
    CHECK_OK(oh_run(q, 13, 9, in, 1, &y, 0, 2, &err), &err);
    CHECK_EQ_ARRAY(uint8_t, &y, 2, 0, 6, 0);
    oh_free_outputs(1, &y);
    /* C of [3] does not broadcast to [2, 2] */
    ref_tensor c3 = oh_tensor(REF_DT_INT32, 1, (int64_t[]){3}, (int32_t[]){0, 0, 0});
    in[6] = &c3;
    CHECK(run(q, 9, in, &y, &err) == REF_E_SHAPE);
    CHECK(strstr(err.msg, "input 6 (C)") != NULL);
    ref_model_free(m);
}

static void test_matmul_to_float(void)
{
    /* sums * 0.5 * {1, 0.25} + bias {1, 2}: {2, 2.375; 6.5, 2}, A with a batch dim */
    ref_model *m = ref_model_new();
    ref_node *n = ms_node(m, "MatMulIntegerToFloat", 7);
    ref_tensor a = oh_tensor(REF_DT_UINT8, 3, (int64_t[]){1, 2, 3}, ga);
    ref_tensor b = oh_tensor(REF_DT_INT8, 2, (int64_t[]){3, 2}, gb);
    ref_tensor bz = oh_tensor(REF_DT_INT8, 1, (int64_t[]){2}, gbz);
    ref_tensor bs = oh_tensor(REF_DT_FLOAT, 1, (int64_t[]){2}, gbs);
    ref_tensor as = F32(0.5f), az = U8(1), bias = oh_tensor(REF_DT_FLOAT, 1, (int64_t[]){2}, (float[]){1, 2}), y;
    const ref_tensor *in[] = {&a, &b, &as, &bs, &az, &bz, &bias};
    ref_error err = {0};
    CHECK_OK(run(n, 7, in, &y, &err), &err);
    CHECK(y.rank == 3 && y.dims[0] == 1 && y.dims[1] == 2 && y.dims[2] == 2);
    CHECK_EQ_ARRAY(float, &y, 2.0f, 2.375f, 6.5f, 2.0f);
    oh_free_outputs(1, &y);
    CHECK_OK(oh_run(n, 13, 7, in, 1, &y, 0, 2, &err), &err); /* B packed per run, 2 threads */
    CHECK_EQ_ARRAY(float, &y, 2.0f, 2.375f, 6.5f, 2.0f);
    oh_free_outputs(1, &y);
    ref_model_free(m);
}

static void test_dynamic_quantize_matmul(void)
{
    /* A {0, 2.55}: range [0, 2.55], scale 2.55/255 (0.01), zero point 0, A as {0, 255}; B {1, 2}: 510 * 0.01 = 5.1.
     * A all 0: empty range, scale 1: 0 + bias 0.5. */
    ref_model *m = ref_model_new();
    ref_node *n = ms_node(m, "DynamicQuantizeMatMul", 5);
    float av[] = {0.0f, 2.55f}, zero[] = {0.0f, 0.0f};
    ref_tensor a = oh_tensor(REF_DT_FLOAT, 2, (int64_t[]){1, 2}, av);
    ref_tensor b = oh_tensor(REF_DT_INT8, 2, (int64_t[]){2, 1}, (int8_t[]){1, 2});
    ref_tensor one = F32(1.0f), bias = oh_tensor(REF_DT_FLOAT, 1, (int64_t[]){1}, (float[]){0.5f}), y;
    const ref_tensor *in[] = {&a, &b, &one, NULL, NULL};
    ref_error err = {0};
    CHECK_OK(run(n, 5, in, &y, &err), &err);
    CHECK(y.data && fabsf(((float *)y.data)[0] - 5.1f) < 1e-5f);
    oh_free_outputs(1, &y);
    ref_tensor az = oh_tensor(REF_DT_FLOAT, 2, (int64_t[]){1, 2}, zero);
    const ref_tensor *in0[] = {&az, &b, &one, NULL, &bias};
    CHECK_OK(run(n, 5, in0, &y, &err), &err);
    CHECK_EQ_ARRAY(float, &y, 0.5f);
    oh_free_outputs(1, &y);
    ref_model_free(m);
}

static void test_quantize_linear_ms(void)
{
    /* com.microsoft QuantizeLinear per axis even in an opset-10 model: columns at scales 1 and 2:
     * {1, 1 / 2 = 0.5 -> 0; 2.5 -> 2, 4 / 2 = 2} */
    ref_model *m = ref_model_new();
    ref_node *n = ms_node(m, "QuantizeLinear", 3);
    float xv[] = {1, 1, 2.5f, 4};
    ref_tensor x = oh_tensor(REF_DT_FLOAT, 2, (int64_t[]){2, 2}, xv), y;
    ref_tensor s = oh_tensor(REF_DT_FLOAT, 1, (int64_t[]){2}, (float[]){1, 2});
    ref_tensor z = oh_tensor(REF_DT_UINT8, 1, (int64_t[]){2}, (uint8_t[]){0, 0});
    const ref_tensor *in[] = {&x, &s, &z};
    ref_error err = {0};
    CHECK_OK(oh_run(n, 10, 3, in, 1, &y, 7u, 1, &err), &err);
    CHECK_EQ_ARRAY(uint8_t, &y, 1, 0, 2, 2);
    oh_free_outputs(1, &y);
    ref_model_free(m);
    CHECK(ref_op_find("com.microsoft", "QLinearAdd") != NULL);
    CHECK(ref_op_find("com.microsoft", "Add") == NULL);     /* only the contrib table in that domain */
    CHECK(ref_op_find("", "QLinearAdd") == NULL);           /* and none of it in the default domain */
}

/* A QGemm model (B constant, so packed at prepare) through compile, request and infer with the k-th allocation
 * failing, k = 0, 1, ...: every failure is REF_E_NOMEM with nothing leaked, and the first full run gives the
 * hand-worked {2, 0, 6, 0} of test_qgemm. */
static void test_oom_loop(void)
{
    int failures = 0, succeeded = 0;
    for (int64_t k = 0; k < 2000 && !succeeded; k++) {
        ref_alloc_stats s0, s1;
        ref_alloc_get_stats(&s0);
        ref_model *m = gb_model(13);
        int64_t ad[] = {2, 3}, bd[] = {3, 2}, nd[] = {2};
        float as = 0.5f, one = 1.0f;
        uint8_t az = 1, yz = 0;
        int32_t cb[] = {1, -1};
        ref_node *n = NULL;
        int built = m && !ref_model_add_opset(m, "com.microsoft", 1) && !gb_input(m, "a", REF_DT_UINT8, 2, ad, NULL) &&
                    !gb_init(m, "as", REF_DT_FLOAT, 0, NULL, &as) && !gb_init(m, "az", REF_DT_UINT8, 0, NULL, &az) &&
                    !gb_init(m, "b", REF_DT_INT8, 2, bd, gb) && !gb_init(m, "bs", REF_DT_FLOAT, 1, nd, gbs) &&
                    !gb_init(m, "bz", REF_DT_INT8, 1, nd, gbz) && !gb_init(m, "c", REF_DT_INT32, 1, nd, cb) &&
                    !gb_init(m, "ys", REF_DT_FLOAT, 0, NULL, &one) && !gb_init(m, "yz", REF_DT_UINT8, 0, NULL, &yz) &&
                    (n = gb_node(m, "QGemm", "a,as,az,b,bs,bz,c,ys,yz", "y")) && !gb_output(m, "y", REF_DT_UINT8);
        if (n)
            n->domain = "com.microsoft";
        ref_compiled *c = NULL;
        ref_request *r = NULL;
        ref_error err = {0};
        ref_tensor t = oh_tensor(REF_DT_UINT8, 2, ad, ga);
        ref_alloc_fail_after(k, 0);
        int rc = built ? oh_compile_infer(m, NULL, &t, &c, &r, &err) : REF_E_NOMEM;
        ref_alloc_fail_after(-1, 0);
        if (rc) {
            failures++;
            CHECK(rc == REF_E_NOMEM);
        } else {
            ref_tensor y;
            CHECK_OK(ref_request_output(r, 0, &y, &err), &err);
            CHECK_EQ_ARRAY(uint8_t, &y, 2, 0, 6, 0);
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
    test_add_ties_saturation_broadcast();
    test_mul_int8();
    test_global_average_pool();
    test_concat();
    test_tables();
    test_softmax();
    test_where();
    test_average_pool();
    test_qgemm();
    test_matmul_to_float();
    test_dynamic_quantize_matmul();
    test_quantize_linear_ms();
    test_oom_loop();
    return check_summary();
}
