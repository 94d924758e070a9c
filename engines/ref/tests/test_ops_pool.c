/* test_ops_pool.c: MaxPool (values and Indices in both storage orders), AveragePool, LpPool and the Global
 * pools against hand-computed windows: pads, strides, dilations, ceil_mode, auto_pad, count_include_pad.
 * It must never leave engine bytes allocated. */
#include <math.h>

#include "check.h"
#include "op_harness.h"

static ref_model *m;
static float x16[16] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}; /* 4x4, row-major */

/* A pool node with kernel, optional strides/pads/dilations (n = 0 leaves them out). */
static ref_node *pnode(const char *op, int n_out, int nsp, const int64_t *k, const int64_t *s, const int64_t *pads,
                       const int64_t *dil)
{
    ref_node *n = oh_node(m, op, 1, n_out);
    if (k)
        oh_attr_ints(m, n, "kernel_shape", (size_t)nsp, k);
    if (s)
        oh_attr_ints(m, n, "strides", (size_t)nsp, s);
    if (pads)
        oh_attr_ints(m, n, "pads", (size_t)(2 * nsp), pads);
    if (dil)
        oh_attr_ints(m, n, "dilations", (size_t)nsp, dil);
    return n;
}

static int go(const ref_node *n, int opset, const ref_tensor *x, int n_out, ref_tensor *y, int threads, ref_error *err)
{
    const ref_tensor *in[1] = {x};
    return oh_run(n, opset, 1, in, n_out, y, 0, threads, err);
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

static void check_i(const ref_tensor *y, const int64_t *want, int n)
{
    CHECK(y->dtype == REF_DT_INT64 && ref_tensor_numel(y) == n);
    for (int i = 0; i < n && y->data; i++)
        CHECK(((const int64_t *)y->data)[i] == want[i]);
}

static void test_maxpool_2d(void)
{
    ref_error errs, *err = &errs;
    ref_tensor x = oh_tensor(REF_DT_FLOAT, 4, (int64_t[]){1, 1, 4, 4}, x16), y[2];
    const int64_t dims[] = {1, 1, 2, 2};

    ref_node *n = pnode("MaxPool", 2, 2, (int64_t[]){2, 2}, (int64_t[]){2, 2}, NULL, NULL);
    CHECK_OK(go(n, 12, &x, 2, y, 1, err), err);
    check_f(&y[0], 4, dims, (const float[]){6, 8, 14, 16}, 0);
    check_i(&y[1], (const int64_t[]){5, 7, 13, 15}, 4);
    oh_free_outputs(2, y);
    /* column-major Indices: h + w * H */
    oh_attr_int(m, n, "storage_order", 1);
    CHECK_OK(go(n, 12, &x, 2, y, 1, err), err);
    check_i(&y[1], (const int64_t[]){5, 13, 7, 15}, 4);
    oh_free_outputs(2, y);
    /* an omitted Indices output ("" name) is never written */
    n = pnode("MaxPool", 2, 2, (int64_t[]){2, 2}, (int64_t[]){2, 2}, NULL, NULL);
    n->outputs[1] = "";
    CHECK_OK(go(n, 12, &x, 2, y, 1, err), err);
    check_f(&y[0], 4, dims, (const float[]){6, 8, 14, 16}, 0);
    for (size_t i = 0; i < ref_tensor_nbytes(&y[1]) && y[1].data; i++)
        CHECK(((const unsigned char *)y[1].data)[i] == 0);
    oh_free_outputs(2, y);

    /* ceil_mode: (4 - 3) / 2 rounds up to one more window, clipped to the input */
    n = pnode("MaxPool", 1, 2, (int64_t[]){3, 3}, (int64_t[]){2, 2}, NULL, NULL);
    CHECK_OK(go(n, 12, &x, 1, y, 1, err), err);
    check_f(&y[0], 4, (int64_t[]){1, 1, 1, 1}, (const float[]){11}, 0);
    oh_free_outputs(1, y);
    oh_attr_int(m, n, "ceil_mode", 1);
    CHECK_OK(go(n, 12, &x, 1, y, 1, err), err);
    check_f(&y[0], 4, dims, (const float[]){11, 12, 15, 16}, 0);
    oh_free_outputs(1, y);

    /* dilation 2: taps two apart, an effective 3x3 window */
    n = pnode("MaxPool", 2, 2, (int64_t[]){2, 2}, NULL, NULL, (int64_t[]){2, 2});
    CHECK_OK(go(n, 12, &x, 2, y, 1, err), err);
    check_f(&y[0], 4, dims, (const float[]){11, 12, 15, 16}, 0);
    check_i(&y[1], (const int64_t[]){10, 11, 14, 15}, 4);
    oh_free_outputs(2, y);

    /* padding is never a candidate: a window of mostly pad keeps its one real value */
    float neg[16];
    for (int i = 0; i < 16; i++)
        neg[i] = -x16[i];
    ref_tensor xn = oh_tensor(REF_DT_FLOAT, 4, (int64_t[]){1, 1, 4, 4}, neg);
    n = pnode("MaxPool", 1, 2, (int64_t[]){2, 2}, (int64_t[]){3, 3}, (int64_t[]){1, 1, 1, 1}, NULL);
    CHECK_OK(go(n, 12, &xn, 1, y, 1, err), err);
    check_f(&y[0], 4, dims, (const float[]){-1, -3, -9, -11}, 0);
    oh_free_outputs(1, y);
}

static void test_maxpool_1d_and_types(void)
{
    ref_error errs, *err = &errs;
    float v[] = {1, 3, 2, 5, 4, -1, -3, -2, -5, -4};
    ref_tensor x = oh_tensor(REF_DT_FLOAT, 3, (int64_t[]){1, 2, 5}, v), y[2];
    ref_node *n = pnode("MaxPool", 2, 1, (int64_t[]){2}, NULL, NULL, NULL);
    CHECK_OK(go(n, 12, &x, 2, y, 1, err), err);
    check_f(&y[0], 3, (int64_t[]){1, 2, 4}, (const float[]){3, 3, 5, 5, -1, -2, -2, -4}, 0);
    check_i(&y[1], (const int64_t[]){1, 1, 3, 3, 5, 7, 7, 9}, 8);
    oh_free_outputs(2, y);
    n = pnode("MaxPool", 1, 1, (int64_t[]){2}, NULL, (int64_t[]){1, 1}, NULL);
    CHECK_OK(go(n, 12, &x, 1, y, 1, err), err);
    check_f(&y[0], 3, (int64_t[]){1, 2, 6}, (const float[]){1, 3, 3, 5, 5, 4, -1, -1, -2, -2, -4, -4}, 0);
    oh_free_outputs(1, y);

    uint8_t u[] = {200, 10, 255};
    ref_tensor xu = oh_tensor(REF_DT_UINT8, 3, (int64_t[]){1, 1, 3}, u);
    n = pnode("MaxPool", 1, 1, (int64_t[]){2}, NULL, NULL, NULL);
    CHECK_OK(go(n, 12, &xu, 1, y, 1, err), err);
    CHECK(y[0].dtype == REF_DT_UINT8 && y[0].dims[2] == 2);
    CHECK(((uint8_t *)y[0].data)[0] == 200 && ((uint8_t *)y[0].data)[1] == 255);
    oh_free_outputs(1, y);

    int32_t iv[3] = {1, 2, 3};
    ref_tensor xi = oh_tensor(REF_DT_INT32, 3, (int64_t[]){1, 1, 3}, iv);
    CHECK(go(n, 12, &xi, 1, y, 1, err) == REF_E_UNSUPPORTED);
    CHECK(go(pnode("MaxPool", 1, 1, (int64_t[]){6}, NULL, NULL, NULL), 12, &xu, 1, y, 1, err) == REF_E_SHAPE);
    CHECK(go(pnode("MaxPool", 1, 1, NULL, NULL, NULL, NULL), 12, &xu, 1, y, 1, err) == REF_E_INVALID);
    CHECK(go(pnode("AveragePool", 1, 1, (int64_t[]){2}, NULL, NULL, NULL), 11, &xu, 1, y, 1, err) ==
          REF_E_UNSUPPORTED);
    oh_free_outputs(1, y);
}

static void test_averagepool(void)
{
    ref_error errs, *err = &errs;
    float v[] = {1, 2, 3, 4, 5, 6, 7, 8, 9};
    ref_tensor x = oh_tensor(REF_DT_FLOAT, 4, (int64_t[]){1, 1, 3, 3}, v), y;
    const int64_t dims[] = {1, 1, 2, 2};
    ref_node *n = pnode("AveragePool", 1, 2, (int64_t[]){2, 2}, (int64_t[]){2, 2}, (int64_t[]){1, 1, 1, 1}, NULL);
    CHECK_OK(go(n, 11, &x, 1, &y, 1, err), err);
    check_f(&y, 4, dims, (const float[]){1, 2.5f, 5.5f, 7}, 1e-6);
    oh_free_outputs(1, &y);
    oh_attr_int(m, n, "count_include_pad", 1);
    CHECK_OK(go(n, 11, &x, 1, &y, 1, err), err);
    check_f(&y, 4, dims, (const float[]){0.25f, 1.25f, 2.75f, 7}, 1e-6);
    oh_free_outputs(1, &y);

    /* ceil_mode's extra window past the end counts only real (or padded) positions, in both modes */
    float r[] = {1, 2, 3, 4, 5};
    ref_tensor x1 = oh_tensor(REF_DT_FLOAT, 3, (int64_t[]){1, 1, 5}, r);
    for (int inc = 0; inc < 2; inc++) {
        n = pnode("AveragePool", 1, 1, (int64_t[]){2}, (int64_t[]){2}, NULL, NULL);
        oh_attr_int(m, n, "ceil_mode", 1);
        oh_attr_int(m, n, "count_include_pad", inc);
        CHECK_OK(go(n, 11, &x1, 1, &y, 1, err), err);
        check_f(&y, 3, (int64_t[]){1, 1, 3}, (const float[]){1.5f, 3.5f, 5}, 1e-6);
        oh_free_outputs(1, &y);
    }

    /* auto_pad: SAME_UPPER pads at the end, SAME_LOWER at the start; VALID none */
    ref_tensor x4 = oh_tensor(REF_DT_FLOAT, 3, (int64_t[]){1, 1, 4}, r);
    n = pnode("AveragePool", 1, 1, (int64_t[]){2}, NULL, NULL, NULL);
    oh_attr_str(m, n, "auto_pad", "SAME_UPPER");
    CHECK_OK(go(n, 11, &x4, 1, &y, 1, err), err);
    check_f(&y, 3, (int64_t[]){1, 1, 4}, (const float[]){1.5f, 2.5f, 3.5f, 4}, 1e-6);
    oh_free_outputs(1, &y);
    n = pnode("AveragePool", 1, 1, (int64_t[]){2}, NULL, NULL, NULL);
    oh_attr_str(m, n, "auto_pad", "SAME_LOWER");
    CHECK_OK(go(n, 11, &x4, 1, &y, 1, err), err);
    check_f(&y, 3, (int64_t[]){1, 1, 4}, (const float[]){1, 1.5f, 2.5f, 3.5f}, 1e-6);
    oh_free_outputs(1, &y);
    n = pnode("AveragePool", 1, 1, (int64_t[]){2}, (int64_t[]){2}, (int64_t[]){3, 3}, NULL);
    oh_attr_str(m, n, "auto_pad", "VALID"); /* explicit pads are ignored */
    CHECK_OK(go(n, 11, &x1, 1, &y, 1, err), err);
    check_f(&y, 3, (int64_t[]){1, 1, 2}, (const float[]){1.5f, 3.5f}, 1e-6);
    oh_free_outputs(1, &y);
    n = pnode("AveragePool", 1, 1, (int64_t[]){2}, NULL, NULL, NULL);
    oh_attr_str(m, n, "auto_pad", "SAME");
    CHECK(go(n, 11, &x1, 1, &y, 1, err) == REF_E_UNSUPPORTED);

    float c[8] = {1, 2, 3, 4, 5, 6, 7, 8};
    ref_tensor x3 = oh_tensor(REF_DT_FLOAT, 5, (int64_t[]){1, 1, 2, 2, 2}, c);
    CHECK_OK(go(pnode("AveragePool", 1, 3, (int64_t[]){2, 2, 2}, NULL, NULL, NULL), 11, &x3, 1, &y, 1, err), err);
    check_f(&y, 5, (int64_t[]){1, 1, 1, 1, 1}, (const float[]){4.5f}, 1e-6);
    oh_free_outputs(1, &y);
}

static void test_lp_and_global(void)
{
    ref_error errs, *err = &errs;
    float v[] = {3, -4, 0};
    ref_tensor x = oh_tensor(REF_DT_FLOAT, 3, (int64_t[]){1, 1, 3}, v), y;
    CHECK_OK(go(pnode("LpPool", 1, 1, (int64_t[]){2}, NULL, NULL, NULL), 11, &x, 1, &y, 1, err), err);
    check_f(&y, 3, (int64_t[]){1, 1, 2}, (const float[]){5, 4}, 1e-6);
    oh_free_outputs(1, &y);
    /* before opset 2, p is a FLOAT attribute: (27 + 64)^(1/3) and 64^(1/3) */
    ref_node *n = pnode("LpPool", 1, 1, (int64_t[]){2}, NULL, NULL, NULL);
    oh_attr_float(m, n, "p", 3.0f);
    CHECK_OK(go(n, 1, &x, 1, &y, 1, err), err);
    check_f(&y, 3, (int64_t[]){1, 1, 2}, (const float[]){4.49794145f, 4}, 1e-5);
    oh_free_outputs(1, &y);
    n = oh_node(m, "GlobalLpPool", 1, 1);
    oh_attr_int(m, n, "p", 1);
    CHECK_OK(go(n, 2, &x, 1, &y, 1, err), err);
    check_f(&y, 3, (int64_t[]){1, 1, 1}, (const float[]){7}, 1e-6);
    oh_free_outputs(1, &y);

    float g[] = {1, 2, 3, 4, 5, 6, 7, 8};
    ref_tensor xg = oh_tensor(REF_DT_FLOAT, 4, (int64_t[]){1, 2, 2, 2}, g);
    CHECK_OK(go(oh_node(m, "GlobalAveragePool", 1, 1), 1, &xg, 1, &y, 1, err), err);
    check_f(&y, 4, (int64_t[]){1, 2, 1, 1}, (const float[]){2.5f, 6.5f}, 1e-6);
    oh_free_outputs(1, &y);
    CHECK_OK(go(oh_node(m, "GlobalMaxPool", 1, 1), 1, &xg, 1, &y, 1, err), err);
    check_f(&y, 4, (int64_t[]){1, 2, 1, 1}, (const float[]){4, 8}, 0);
    oh_free_outputs(1, &y);
}

/* Bit-identical results on 1 and 2 threads, Indices included. */
static void test_threads(void)
{
    enum { N = 2, C = 8, H = 64, W = 64 };
    static float xd[N * C * H * W];
    uint32_t s = 99;
    for (int i = 0; i < N * C * H * W; i++) {
        s = s * 1664525u + 1013904223u;
        xd[i] = (float)((s >> 8) % 20000) / 1000.0f - 10.0f;
    }
    ref_tensor x = oh_tensor(REF_DT_FLOAT, 4, (int64_t[]){N, C, H, W}, xd);
    const char *ops[] = {"MaxPool", "AveragePool", "GlobalAveragePool"};
    for (int o = 0; o < 3; o++) {
        ref_error errs, *err = &errs;
        ref_tensor y1[2], y2[2];
        int n_out = o == 0 ? 2 : 1;
        ref_node *n = o == 2 ? oh_node(m, ops[o], 1, 1)
                             : pnode(ops[o], n_out, 2, (int64_t[]){3, 3}, (int64_t[]){2, 2},
                                     (int64_t[]){1, 1, 1, 1}, NULL);
        CHECK_OK(go(n, 12, &x, n_out, y1, 1, err), err);
        CHECK_OK(go(n, 12, &x, n_out, y2, 2, err), err);
        for (int k = 0; k < n_out; k++)
            CHECK(memcmp(y1[k].data, y2[k].data, ref_tensor_nbytes(&y1[k])) == 0);
        if (o == 0) { /* output (1, 3, 5, 7) against a direct scan of its window */
            float want = -INFINITY;
            for (int h = 9; h <= 11; h++)
                for (int w = 13; w <= 15; w++)
                    want = fmaxf(want, xd[((1 * C + 3) * H + h) * W + w]);
            CHECK(((float *)y1[0].data)[((1 * C + 3) * 32 + 5) * 32 + 7] == want);
        }
        oh_free_outputs(n_out, y1);
        oh_free_outputs(n_out, y2);
    }
}

int main(void)
{
    m = ref_model_new();
    test_maxpool_2d();
    test_maxpool_1d_and_types();
    test_averagepool();
    test_lp_and_global();
    test_threads();
    ref_model_free(m);
    ref_alloc_stats st;
    ref_alloc_get_stats(&st);
    CHECK(st.live_bytes == 0);
    return check_summary();
}
