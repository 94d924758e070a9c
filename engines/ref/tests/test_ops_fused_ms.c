/* test_ops_fused_ms.c: com.microsoft FusedConv (a 1x1 convolution with Z added and each activation), FusedGemm and
 * FusedMatMul (alpha, transA, transB, a broadcast batch) against values worked out in the comments, and the refusals
 * (an unknown activation, transBatchA) naming what is refused. It must never take an expectation from the kernels,
 * nor leave engine bytes allocated. */
#include <math.h>
#include <string.h>

#include "check.h"
#include "op_harness.h"

static ref_model *m;

static ref_node *ms(const char *op, int n_in)
{
    ref_node *n = oh_node(m, op, n_in, 1);
    n->domain = "com.microsoft";
    return n;
}

static void test_fused_conv(void)
{
    ref_error errs, *err = &errs;
    /* x [1, 1, 1, 4] = (-2, -0.5, 0.5, 2), w [1, 1, 1, 1] = 2, b = 0.5: conv = (-3.5, -0.5, 1.5, 4.5) */
    float xv[] = {-2, -0.5f, 0.5f, 2}, wv[] = {2}, bv[] = {0.5f}, zv[] = {1, 1, -1, -1};
    ref_tensor x = oh_tensor(REF_DT_FLOAT, 4, (int64_t[]){1, 1, 1, 4}, xv), w = oh_tensor(REF_DT_FLOAT, 4, (int64_t[]){1, 1, 1, 1}, wv);
    ref_tensor b = oh_tensor(REF_DT_FLOAT, 1, (int64_t[]){1}, bv), z = oh_tensor(REF_DT_FLOAT, 4, (int64_t[]){1, 1, 1, 4}, zv), y;
    const ref_tensor *in[] = {&x, &w, &b, &z};
    struct {
        const char *act;
        int n_p;
        float p[2];
        int n_in;
        float want[4];
    } cases[] = {
        {"Relu", 0, {0}, 3, {0, 0, 1.5f, 4.5f}},
        {"Clip", 2, {-1, 2}, 3, {-1, -0.5f, 1.5f, 2}},
        {"LeakyRelu", 1, {0.1f}, 3, {-0.35f, -0.05f, 1.5f, 4.5f}},
        {"Relu", 0, {0}, 4, {0, 0.5f, 0.5f, 3.5f}},           /* conv + Z = (-2.5, 0.5, 0.5, 3.5) */
        {"HardSigmoid", 2, {0.2f, 0.5f}, 4, {0, 0.6f, 0.6f, 1}}, /* 0.2 v + 0.5 clamped */
        {"", 0, {0}, 4, {-2.5f, 0.5f, 0.5f, 3.5f}},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        ref_node *n = ms("FusedConv", cases[i].n_in);
        if (cases[i].act[0])
            oh_attr_str(m, n, "activation", cases[i].act);
        if (cases[i].n_p)
            oh_attr_floats(m, n, "activation_params", (size_t)cases[i].n_p, cases[i].p);
        CHECK_OK(oh_run(n, 17, cases[i].n_in, in, 1, &y, 0, 1, err), err);
        for (int k = 0; k < 4; k++)
            CHECK_NEAR(((float *)y.data)[k], cases[i].want[k], 1e-6);
        oh_free_outputs(1, &y);
    }
    ref_node *n = ms("FusedConv", 3);
    oh_attr_str(m, n, "activation", "Tanh");
    CHECK_OK(oh_run(n, 17, 3, in, 1, &y, 0, 1, err), err);
    CHECK_NEAR(((float *)y.data)[0], tanh(-3.5), 1e-6);
    oh_free_outputs(1, &y);
    n = ms("FusedConv", 3);
    oh_attr_str(m, n, "activation", "Swish");
    CHECK(oh_run(n, 17, 3, in, 1, &y, 0, 1, err) == REF_E_UNSUPPORTED);
    CHECK(strstr(err->msg, "Swish") != NULL);
}

static void test_fused_gemm_matmul(void)
{
    ref_error errs, *err = &errs;
    /* Gemm: a [1, 2] = (1, -2), B^T [2, 2] rows (1, 1), (3, 0) -> (-1, 3), bias (0, 1): (-1, 4); LeakyRelu 0.5 */
    float av[] = {1, -2}, bv[] = {1, 1, 3, 0}, cv[] = {0, 1};
    ref_tensor a = oh_tensor(REF_DT_FLOAT, 2, (int64_t[]){1, 2}, av), bt = oh_tensor(REF_DT_FLOAT, 2, (int64_t[]){2, 2}, bv);
    ref_tensor cb = oh_tensor(REF_DT_FLOAT, 1, (int64_t[]){2}, cv), y;
    const ref_tensor *gin[] = {&a, &bt, &cb};
    ref_node *n = ms("FusedGemm", 3);
    oh_attr_int(m, n, "transB", 1);
    oh_attr_str(m, n, "activation", "LeakyRelu");
    oh_attr_float(m, n, "activation_alpha", 0.5f);
    CHECK_OK(oh_run(n, 17, 3, gin, 1, &y, 0, 1, err), err);
    CHECK_EQ_ARRAY(float, &y, -0.5f, 4.0f);
    oh_free_outputs(1, &y);

    /* FusedMatMul: A [2, 2, 3] with transA is used as [2, 3, 2], B [1, 2] with transB as [2, 1], alpha 0.5 */
    float am[] = {1, 2, 3, 4, 5, 6, 0, 1, 0, 1, 0, 1}, bm[] = {1, 2};
    ref_tensor ta = oh_tensor(REF_DT_FLOAT, 3, (int64_t[]){2, 2, 3}, am), tb = oh_tensor(REF_DT_FLOAT, 2, (int64_t[]){1, 2}, bm);
    const ref_tensor *min[] = {&ta, &tb};
    n = ms("FusedMatMul", 2);
    oh_attr_int(m, n, "transA", 1);
    oh_attr_int(m, n, "transB", 1);
    oh_attr_float(m, n, "alpha", 0.5f);
    CHECK_OK(oh_run(n, 17, 2, min, 1, &y, 0, 2, err), err);
    /* batch 0: A^T (1,2)^T = (1+8, 2+10, 3+12) = (9, 12, 15) * 0.5; batch 1: [[0,1],[1,0],[0,1]] -> (2, 1, 2) * 0.5 */
    CHECK(y.rank == 3 && y.dims[0] == 2 && y.dims[1] == 3 && y.dims[2] == 1);
    CHECK_EQ_ARRAY(float, &y, 4.5f, 6.0f, 7.5f, 1.0f, 0.5f, 1.0f);
    oh_free_outputs(1, &y);
    n = ms("FusedMatMul", 2);
    oh_attr_int(m, n, "transBatchA", 1);
    CHECK(oh_run(n, 17, 2, min, 1, &y, 0, 1, err) == REF_E_UNSUPPORTED);
    CHECK(strstr(err->msg, "transBatch") != NULL);
}

int main(void)
{
    m = ref_model_new();
    test_fused_conv();
    test_fused_gemm_matmul();
    ref_model_free(m);
    ref_alloc_stats st;
    ref_alloc_get_stats(&st);
    CHECK(st.live_bytes == 0);
    return check_summary();
}
