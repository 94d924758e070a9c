/* test_ops_gelu.c: ONNX Gelu (both approximations) and com.microsoft Gelu, FastGelu, BiasGelu and QuickGelu against
 * libm in double, the bias broadcast over the last dim, float16 through float, thread counts giving the same bits,
 * and the refusals (an unknown approximation, a missing or ill-shaped bias). It must never take an expectation from
 * the kernels, nor leave engine bytes allocated. */
#include <math.h>
#include <string.h>

#include "check.h"
#include "ops/cast_half.h"
#include "op_harness.h"

static ref_model *m;

static double gelu_erf(double x) { return 0.5 * x * (1 + erf(x / sqrt(2.0))); }
static double gelu_tanh(double x) { return 0.5 * x * (1 + tanh(sqrt(2 / M_PI) * (x + 0.044715 * x * x * x))); }

static ref_node *node(const char *op, const char *domain, int n_in)
{
    ref_node *n = oh_node(m, op, n_in, 1);
    n->domain = domain;
    return n;
}

static int run(const ref_node *n, int n_in, const ref_tensor *const *in, ref_tensor *y, int threads, ref_error *err)
{
    return oh_run(n, 20, n_in, in, 1, y, 0, threads, err);
}

static void test_forms(void)
{
    ref_error errs, *err = &errs;
    float xv[] = {-6, -2.5f, -1, -0.25f, 0, 0.3f, 1, 2, 3.5f, 8}, bv[] = {0.5f, -0.5f};
    ref_tensor x = oh_tensor(REF_DT_FLOAT, 2, (int64_t[]){5, 2}, xv), b = oh_tensor(REF_DT_FLOAT, 1, (int64_t[]){2}, bv);
    ref_tensor y;
    const ref_tensor *in[] = {&x, &b};

    ref_node *n = node("Gelu", "", 1); /* approximate defaults to none: erf */
    CHECK_OK(run(n, 1, in, &y, 1, err), err);
    for (int i = 0; i < 10; i++)
        CHECK_NEAR(((float *)y.data)[i], gelu_erf(xv[i]), 1e-6 * (1 + fabs(xv[i])));
    oh_free_outputs(1, &y);
    n = node("Gelu", "", 1);
    oh_attr_str(m, n, "approximate", "tanh");
    CHECK_OK(run(n, 1, in, &y, 1, err), err);
    for (int i = 0; i < 10; i++)
        CHECK_NEAR(((float *)y.data)[i], gelu_tanh(xv[i]), 1e-6 * (1 + fabs(xv[i])));
    oh_free_outputs(1, &y);
    n = node("Gelu", "", 1);
    oh_attr_str(m, n, "approximate", "sigmoid");
    CHECK(run(n, 1, in, &y, 1, err) == REF_E_UNSUPPORTED);
    CHECK(strstr(err->msg, "sigmoid") != NULL);

    CHECK_OK(run(node("Gelu", "com.microsoft", 1), 1, in, &y, 1, err), err);
    CHECK_NEAR(((float *)y.data)[7], gelu_erf(2), 1e-6);
    oh_free_outputs(1, &y);
    /* FastGelu with bias: column 0 gets +0.5, column 1 -0.5 */
    CHECK_OK(run(node("FastGelu", "com.microsoft", 2), 2, in, &y, 1, err), err);
    CHECK(y.rank == 2 && y.dims[0] == 5 && y.dims[1] == 2);
    for (int i = 0; i < 10; i++)
        CHECK_NEAR(((float *)y.data)[i], gelu_tanh(xv[i] + bv[i % 2]), 1e-6 * (1 + fabs(xv[i])));
    oh_free_outputs(1, &y);
    CHECK_OK(run(node("FastGelu", "com.microsoft", 1), 1, in, &y, 1, err), err); /* bias optional */
    CHECK_NEAR(((float *)y.data)[1], gelu_tanh(-2.5), 1e-6);
    oh_free_outputs(1, &y);
    CHECK_OK(run(node("BiasGelu", "com.microsoft", 2), 2, in, &y, 1, err), err);
    for (int i = 0; i < 10; i++)
        CHECK_NEAR(((float *)y.data)[i], gelu_erf(xv[i] + bv[i % 2]), 1e-6 * (1 + fabs(xv[i])));
    oh_free_outputs(1, &y);
    n = node("QuickGelu", "com.microsoft", 1);
    oh_attr_float(m, n, "alpha", 1.5f);
    CHECK_OK(run(n, 1, in, &y, 1, err), err);
    for (int i = 0; i < 10; i++)
        CHECK_NEAR(((float *)y.data)[i], xv[i] / (1 + exp(-1.5 * xv[i])), 1e-6 * (1 + fabs(xv[i])));
    oh_free_outputs(1, &y);
    CHECK_OK(run(node("QuickGelu", "com.microsoft", 1), 1, in, &y, 1, err), err); /* alpha 1.702 */
    CHECK_NEAR(((float *)y.data)[6], 1 / (1 + exp(-1.702)), 1e-6);
    oh_free_outputs(1, &y);
}

static void test_refusals(void)
{
    ref_error errs, *err = &errs;
    float xv[6] = {0}, bv[3] = {0};
    ref_tensor x = oh_tensor(REF_DT_FLOAT, 2, (int64_t[]){2, 3}, xv), y;
    ref_tensor b2 = oh_tensor(REF_DT_FLOAT, 1, (int64_t[]){2}, bv), b3 = oh_tensor(REF_DT_FLOAT, 2, (int64_t[]){3, 1}, bv);
    const ref_tensor *in[] = {&x, &b2};
    CHECK(run(node("BiasGelu", "com.microsoft", 1), 1, in, &y, 1, err) == REF_E_INVALID);
    CHECK(strstr(err->msg, "bias") != NULL);
    CHECK(run(node("FastGelu", "com.microsoft", 2), 2, in, &y, 1, err) == REF_E_SHAPE);
    CHECK(strstr(err->msg, "[2]") != NULL || strstr(err->msg, "2") != NULL);
    in[1] = &b3; /* [3, 1] would grow [2, 3] to [3, 3]... no: it does not broadcast into [2, 3] */
    CHECK(run(node("BiasGelu", "com.microsoft", 2), 2, in, &y, 1, err) == REF_E_SHAPE);
    int32_t iv[2] = {1, 2};
    ref_tensor xi = oh_tensor(REF_DT_INT32, 1, (int64_t[]){2}, iv);
    in[0] = &xi;
    CHECK(run(node("Gelu", "com.microsoft", 1), 1, in, &y, 1, err) == REF_E_UNSUPPORTED);
    CHECK(strstr(err->msg, "int32") != NULL);
}

static void test_half_and_threads(void)
{
    ref_error errs, *err = &errs;
    uint16_t hv[] = {ref_f32_to_f16(-1.0f), ref_f32_to_f16(0.5f), ref_f32_to_f16(2.0f)};
    ref_tensor h = oh_tensor(REF_DT_FLOAT16, 1, (int64_t[]){3}, hv), y;
    const ref_tensor *in[] = {&h};
    CHECK_OK(run(node("Gelu", "", 1), 1, in, &y, 1, err), err);
    CHECK(y.dtype == REF_DT_FLOAT16);
    for (int i = 0; i < 3; i++)
        CHECK(((uint16_t *)y.data)[i] == ref_f32_to_f16((float)gelu_erf(ref_f16_to_f32(hv[i]))));
    oh_free_outputs(1, &y);

    /* 200000 values (past the parallel threshold): 1 and 2 threads, the same bits */
    enum { N = 200000 };
    float *xv = ref_aligned_alloc(N * sizeof *xv), bv[4] = {0.1f, -0.2f, 0.3f, -0.4f};
    for (int i = 0; i < N; i++)
        xv[i] = (float)((i % 1999) - 999) / 150.0f;
    ref_tensor x = oh_tensor(REF_DT_FLOAT, 2, (int64_t[]){N / 4, 4}, xv), b = oh_tensor(REF_DT_FLOAT, 1, (int64_t[]){4}, bv);
    const ref_tensor *in2[] = {&x, &b};
    ref_tensor y1, y2;
    ref_node *n = node("FastGelu", "com.microsoft", 2);
    CHECK_OK(run(n, 2, in2, &y1, 1, err), err);
    CHECK_OK(run(n, 2, in2, &y2, 2, err), err);
    CHECK(memcmp(y1.data, y2.data, N * sizeof(float)) == 0);
    double worst = 0;
    for (int i = 0; i < N; i++) {
        double d = fabs(((float *)y1.data)[i] - gelu_tanh((double)xv[i] + bv[i % 4])) / (1 + fabs(xv[i]));
        worst = d > worst ? d : worst;
    }
    CHECK(worst < 1e-6);
    oh_free_outputs(1, &y1);
    oh_free_outputs(1, &y2);
    ref_free(xv);
}

int main(void)
{
    m = ref_model_new();
    test_forms();
    test_refusals();
    test_half_and_threads();
    ref_model_free(m);
    ref_alloc_stats st;
    ref_alloc_get_stats(&st);
    CHECK(st.live_bytes == 0);
    return check_summary();
}
