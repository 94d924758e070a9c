/* test_ops_norm_skip.c: com.microsoft SkipLayerNormalization and SkipSimplifiedLayerNormalization (the sum, mean and
 * inverse std outputs, a skip broadcast over the batch, bias and beta optional), SimplifiedLayerNormalization and
 * RMSNormalization over one and two trailing dims, against values worked out by hand in the comments, and the
 * refusals that name the input. It must never take an expectation from the kernels, nor leave engine bytes allocated. */
#include <math.h>
#include <string.h>

#include "check.h"
#include "op_harness.h"

static ref_model *m;

static ref_node *node(const char *op, const char *domain, int n_in, int n_out)
{
    ref_node *n = oh_node(m, op, n_in, n_out);
    n->domain = domain;
    return n;
}

static void check_f(const ref_tensor *y, const float *want, int n, double tol)
{
    CHECK(ref_tensor_numel(y) == n);
    for (int i = 0; i < n && i < ref_tensor_numel(y); i++)
        CHECK_NEAR(((const float *)y->data)[i], want[i], tol);
}

static void test_skip_layernorm(void)
{
    ref_error errs, *err = &errs;
    /* input [2, 2, 2], skip [2, 2] (the same for both batches), bias (1, -1): sums
     * batch 0: (1+0+1, 3+2-1) = (2, 4), (0+1+1, 0+1-1) = (2, 0); batch 1: (5+0+1, 1+2-1) = (6, 2), (2+1+1, 2+1-1) = (4, 2)
     * every row of 2 has mean (a+b)/2 and std |a-b|/2 (eps 0): normalized (-1, 1) or (1, -1);
     * gamma (2, 3), beta (0.5, 0): (-1.5, 3), (2.5, -3), (2.5, -3), (2.5, 0) */
    float xv[] = {1, 3, 0, 0, 5, 1, 2, 2}, sv[] = {0, 2, 1, 1}, gv[] = {2, 3}, bev[] = {0.5f, 0}, biv[] = {1, -1};
    ref_tensor x = oh_tensor(REF_DT_FLOAT, 3, (int64_t[]){2, 2, 2}, xv), s = oh_tensor(REF_DT_FLOAT, 2, (int64_t[]){2, 2}, sv);
    ref_tensor g = oh_tensor(REF_DT_FLOAT, 1, (int64_t[]){2}, gv), be = oh_tensor(REF_DT_FLOAT, 1, (int64_t[]){2}, bev);
    ref_tensor bi = oh_tensor(REF_DT_FLOAT, 1, (int64_t[]){2}, biv), y[4];
    const ref_tensor *in[] = {&x, &s, &g, &be, &bi};
    ref_node *n = node("SkipLayerNormalization", "com.microsoft", 5, 4);
    oh_attr_float(m, n, "epsilon", 0.0f);
    CHECK_OK(oh_run(n, 17, 5, in, 4, y, 0, 1, err), err);
    CHECK(y[0].rank == 3 && y[0].dims[2] == 2);
    check_f(&y[0], (const float[]){-1.5f, 3, 2.5f, -3, 2.5f, -3, 2.5f, -3}, 8, 1e-6);
    CHECK(y[1].rank == 3 && y[1].dims[0] == 2 && y[1].dims[1] == 2 && y[1].dims[2] == 1);
    check_f(&y[1], (const float[]){3, 1, 4, 3}, 4, 1e-6);    /* means */
    check_f(&y[2], (const float[]){1, 1, 0.5f, 1}, 4, 1e-6); /* 1/std: std 1, 1, 2, 1 */
    check_f(&y[3], (const float[]){2, 4, 2, 0, 6, 2, 4, 2}, 8, 0);
    oh_free_outputs(4, y);

    /* no beta, no bias, epsilon 1e-12 (the default): rows (1, 5), (1, 1), (5, 3), (3, 3) -> (-1, 1) * gamma,
     * (0, 0) (a zero deviation stays 0), (1, -1) * gamma, (0, 0) */
    n = node("SkipLayerNormalization", "com.microsoft", 3, 1);
    for (int threads = 1; threads <= 2; threads++) {
        CHECK_OK(oh_run(n, 17, 3, in, 1, y, 0, threads, err), err);
        check_f(&y[0], (const float[]){-2, 3, 0, 0, 2, -3, 0, 0}, 8, 1e-5);
        oh_free_outputs(1, y);
    }

    /* gamma of 3 against a hidden size of 2: refused naming gamma */
    ref_tensor g3 = oh_tensor(REF_DT_FLOAT, 1, (int64_t[]){3}, (float[]){1, 2, 3});
    in[2] = &g3;
    CHECK(oh_run(n, 17, 3, in, 1, y, 0, 1, err) == REF_E_SHAPE);
    CHECK(strstr(err->msg, "gamma") != NULL);
    in[2] = &g;
    ref_tensor s3 = oh_tensor(REF_DT_FLOAT, 2, (int64_t[]){3, 2}, (float[]){0, 0, 0, 0, 0, 0});
    in[1] = &s3;
    CHECK(oh_run(n, 17, 3, in, 1, y, 0, 1, err) == REF_E_SHAPE);
    CHECK(strstr(err->msg, "skip") != NULL);
    double dv[8] = {0};
    ref_tensor xd = oh_tensor(REF_DT_DOUBLE, 3, (int64_t[]){2, 2, 2}, dv);
    in[0] = &xd;
    in[1] = &s;
    CHECK(oh_run(n, 17, 3, in, 1, y, 0, 1, err) == REF_E_UNSUPPORTED);
}

static void test_simplified(void)
{
    ref_error errs, *err = &errs;
    /* rows (3, 4) and (1, -7) plus skip (1, 0) and bias (0, 0): (4, 4) and (2, -7);
     * rms sqrt((16 + 16) / 2) = 4 -> (1, 1); sqrt((4 + 49) / 2) = sqrt(26.5) -> (2, -7) / 5.1478150; gamma (1, 2) */
    float xv[] = {3, 4, 1, -7}, sv[] = {1, 0}, gv[] = {1, 2}, biv[] = {0, 0};
    ref_tensor x = oh_tensor(REF_DT_FLOAT, 2, (int64_t[]){2, 2}, xv), s = oh_tensor(REF_DT_FLOAT, 1, (int64_t[]){2}, sv);
    ref_tensor g = oh_tensor(REF_DT_FLOAT, 1, (int64_t[]){2}, gv), bi = oh_tensor(REF_DT_FLOAT, 1, (int64_t[]){2}, biv);
    ref_tensor y[4];
    const ref_tensor *in[] = {&x, &s, &g, &bi};
    ref_node *n = node("SkipSimplifiedLayerNormalization", "com.microsoft", 4, 4);
    oh_attr_float(m, n, "epsilon", 0.0f);
    CHECK_OK(oh_run(n, 17, 4, in, 4, y, 0, 1, err), err);
    double r = sqrt(26.5);
    check_f(&y[0], (const float[]){1, 2, (float)(2 / r), (float)(-14 / r)}, 4, 1e-6);
    check_f(&y[2], (const float[]){0.25f, (float)(1 / r)}, 2, 1e-7);
    check_f(&y[3], (const float[]){4, 4, 2, -7}, 4, 0);
    oh_free_outputs(4, y);

    /* SimplifiedLayerNormalization over the last dim, no skip: rows (3, 4) -> rms sqrt(12.5); (1, -7) -> 5 */
    n = node("SimplifiedLayerNormalization", "", 2, 2);
    oh_attr_float(m, n, "epsilon", 0.0f);
    const ref_tensor *in2[] = {&x, &g};
    CHECK_OK(oh_run(n, 17, 2, in2, 2, y, 0, 1, err), err);
    double q = sqrt(12.5);
    check_f(&y[0], (const float[]){(float)(3 / q), (float)(8 / q), 0.2f, -2.8f}, 4, 1e-6);
    CHECK(y[1].rank == 2 && y[1].dims[0] == 2 && y[1].dims[1] == 1);
    oh_free_outputs(2, y);

    /* RMSNormalization over both dims (axis 0), scale (1, 2) repeating over the rows: rms sqrt(75 / 4) */
    n = node("RMSNormalization", "", 2, 1);
    oh_attr_int(m, n, "axis", 0);
    oh_attr_float(m, n, "epsilon", 0.0f);
    CHECK_OK(oh_run(n, 23, 2, in2, 1, y, 0, 1, err), err);
    double a = sqrt(75.0 / 4);
    check_f(&y[0], (const float[]){(float)(3 / a), (float)(8 / a), (float)(1 / a), (float)(-14 / a)}, 4, 1e-6);
    oh_free_outputs(1, y);
    n = node("RMSNormalization", "", 2, 1);
    oh_attr_int(m, n, "axis", 2);
    CHECK(oh_run(n, 23, 2, in2, 1, y, 0, 1, err) == REF_E_SHAPE);
    CHECK(strstr(err->msg, "axis 2") != NULL);
}

int main(void)
{
    m = ref_model_new();
    test_skip_layernorm();
    test_simplified();
    ref_model_free(m);
    ref_alloc_stats st;
    ref_alloc_get_stats(&st);
    CHECK(st.live_bytes == 0);
    return check_summary();
}
