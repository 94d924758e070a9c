/* test_ops_reduce.c: the Reduce* operators and ArgMax/ArgMin against hand-computed values: axes as attribute
 * and as input, keepdims, noop_with_empty_axes, integer paths, thread independence. It must never leave
 * engine bytes allocated. */
#include <math.h>

#include "check.h"
#include "op_harness.h"

static ref_model *m;

/* x[3,2,2] = 1..12 */
static float x12[12] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12};

/* A reduce node; axes attribute when n_axes >= 0, keepdims when keep >= 0, axes input when ax != NULL. */
static ref_node *rnode(const char *op, int n_axes, const int64_t *axes, int keep, int noop, bool axes_input)
{
    ref_node *n = oh_node(m, op, axes_input ? 2 : 1, 1);
    if (n_axes >= 0)
        oh_attr_ints(m, n, "axes", (size_t)n_axes, axes);
    if (keep >= 0)
        oh_attr_int(m, n, "keepdims", keep);
    if (noop)
        oh_attr_int(m, n, "noop_with_empty_axes", 1);
    return n;
}

static int go(const ref_node *n, int opset, const ref_tensor *x, const ref_tensor *ax, unsigned mask, ref_tensor *y,
              int threads, ref_error *err)
{
    const ref_tensor *in[2] = {x, ax};
    return oh_run(n, opset, ax ? 2 : 1, in, 1, y, mask, threads, err);
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

static void test_sum_axes_input(void)
{
    ref_error errs, *err = &errs;
    ref_tensor x = oh_tensor(REF_DT_FLOAT, 3, (int64_t[]){3, 2, 2}, x12), y;
    int64_t a1[] = {1};
    ref_tensor ax = oh_tensor(REF_DT_INT64, 1, (int64_t[]){1}, a1);

    CHECK_OK(go(rnode("ReduceSum", -1, NULL, 1, 0, true), 13, &x, &ax, 2, &y, 1, err), err);
    check_f(&y, 3, (int64_t[]){3, 1, 2}, (const float[]){4, 6, 12, 14, 20, 22}, 0);
    oh_free_outputs(1, &y);
    CHECK_OK(go(rnode("ReduceSum", -1, NULL, 0, 0, true), 13, &x, &ax, 2, &y, 1, err), err);
    check_f(&y, 2, (int64_t[]){3, 2}, (const float[]){4, 6, 12, 14, 20, 22}, 0);
    oh_free_outputs(1, &y);

    /* axes whose value is not known at infer time: the shape is dynamic */
    CHECK(go(rnode("ReduceSum", -1, NULL, 1, 0, true), 13, &x, &ax, 0, &y, 1, err) == REF_E_DYNAMIC);
    oh_free_outputs(1, &y);

    /* no axes input: every axis */
    CHECK_OK(go(rnode("ReduceSum", -1, NULL, -1, 0, false), 13, &x, NULL, 0, &y, 1, err), err);
    check_f(&y, 3, (int64_t[]){1, 1, 1}, (const float[]){78}, 0);
    oh_free_outputs(1, &y);

    /* empty axes input, known empty from its shape alone: every axis, or a copy with noop_with_empty_axes */
    ref_tensor empty = oh_tensor(REF_DT_INT64, 1, (int64_t[]){0}, a1);
    CHECK_OK(go(rnode("ReduceSum", -1, NULL, 0, 0, true), 13, &x, &empty, 0, &y, 1, err), err);
    check_f(&y, 0, NULL, (const float[]){78}, 0);
    oh_free_outputs(1, &y);
    CHECK_OK(go(rnode("ReduceSum", -1, NULL, 1, 1, true), 13, &x, &empty, 0, &y, 1, err), err);
    check_f(&y, 3, (int64_t[]){3, 2, 2}, x12, 0);
    oh_free_outputs(1, &y);

    /* before opset 13 ReduceSum takes axes as an attribute */
    CHECK_OK(go(rnode("ReduceSum", 1, (int64_t[]){-1}, 0, 0, false), 11, &x, NULL, 0, &y, 1, err), err);
    check_f(&y, 2, (int64_t[]){3, 2}, (const float[]){3, 7, 11, 15, 19, 23}, 0);
    oh_free_outputs(1, &y);
}

static void test_kinds(void)
{
    ref_error errs, *err = &errs;
    ref_tensor x = oh_tensor(REF_DT_FLOAT, 3, (int64_t[]){3, 2, 2}, x12), y;
    CHECK_OK(go(rnode("ReduceMean", 2, (int64_t[]){0, 2}, 0, 0, false), 13, &x, NULL, 0, &y, 1, err), err);
    check_f(&y, 1, (int64_t[]){2}, (const float[]){5.5f, 7.5f}, 1e-6);
    oh_free_outputs(1, &y);

    /* opset 18 moves axes to an input for every reduction */
    ref_tensor ax = oh_tensor(REF_DT_INT64, 1, (int64_t[]){1}, (int64_t[]){-1});
    CHECK_OK(go(rnode("ReduceMean", -1, NULL, -1, 0, true), 18, &x, &ax, 2, &y, 1, err), err);
    check_f(&y, 3, (int64_t[]){3, 2, 1}, (const float[]){1.5f, 3.5f, 5.5f, 7.5f, 9.5f, 11.5f}, 1e-6);
    oh_free_outputs(1, &y);

    CHECK_OK(go(rnode("ReduceMax", 1, (int64_t[]){1}, 1, 0, false), 13, &x, NULL, 0, &y, 1, err), err);
    check_f(&y, 3, (int64_t[]){3, 1, 2}, (const float[]){3, 4, 7, 8, 11, 12}, 0);
    oh_free_outputs(1, &y);
    CHECK_OK(go(rnode("ReduceMin", 1, (int64_t[]){1}, 1, 0, false), 13, &x, NULL, 0, &y, 1, err), err);
    check_f(&y, 3, (int64_t[]){3, 1, 2}, (const float[]){1, 2, 5, 6, 9, 10}, 0);
    oh_free_outputs(1, &y);
    CHECK_OK(go(rnode("ReduceProd", 1, (int64_t[]){2}, 0, 0, false), 13, &x, NULL, 0, &y, 1, err), err);
    check_f(&y, 2, (int64_t[]){3, 2}, (const float[]){2, 12, 30, 56, 90, 132}, 0);
    oh_free_outputs(1, &y);

    float sv[] = {-1, 2, -3, 4};
    ref_tensor s = oh_tensor(REF_DT_FLOAT, 2, (int64_t[]){2, 2}, sv);
    CHECK_OK(go(rnode("ReduceL1", -1, NULL, 0, 0, false), 13, &s, NULL, 0, &y, 1, err), err);
    check_f(&y, 0, NULL, (const float[]){10}, 0);
    oh_free_outputs(1, &y);
    CHECK_OK(go(rnode("ReduceL2", -1, NULL, 1, 0, false), 13, &s, NULL, 0, &y, 1, err), err);
    check_f(&y, 2, (int64_t[]){1, 1}, (const float[]){5.4772256f}, 1e-6);
    oh_free_outputs(1, &y);
    CHECK_OK(go(rnode("ReduceSumSquare", 1, (int64_t[]){0}, 0, 0, false), 13, &s, NULL, 0, &y, 1, err), err);
    check_f(&y, 1, (int64_t[]){2}, (const float[]){10, 20}, 0);
    oh_free_outputs(1, &y);
    CHECK_OK(go(rnode("ReduceLogSum", 1, (int64_t[]){1}, 0, 0, false), 13, &x, NULL, 0, &y, 1, err), err);
    check_f(&y, 2, (int64_t[]){3, 2}, (const float[]){logf(4), logf(6), logf(12), logf(14), logf(20), logf(22)},
            1e-6);
    oh_free_outputs(1, &y);

    /* LogSumExp must not overflow: log(2 e^1000) = 1000 + ln 2 */
    double big[] = {1000, 1000, 1, 2};
    ref_tensor b = oh_tensor(REF_DT_DOUBLE, 2, (int64_t[]){2, 2}, big);
    CHECK_OK(go(rnode("ReduceLogSumExp", 1, (int64_t[]){1}, 0, 0, false), 13, &b, NULL, 0, &y, 1, err), err);
    CHECK(y.dtype == REF_DT_DOUBLE && y.rank == 1 && y.dims[0] == 2);
    CHECK_NEAR(((double *)y.data)[0], 1000.6931471805599, 1e-12);
    CHECK_NEAR(((double *)y.data)[1], 2.3132616875182228, 1e-12);
    oh_free_outputs(1, &y);
}

static void test_ints_and_errors(void)
{
    ref_error errs, *err = &errs;
    /* 2^53 + 1 is not a double: the integer path must stay exact */
    int64_t iv[] = {9007199254740993LL, 2, -5, 7};
    ref_tensor xi = oh_tensor(REF_DT_INT64, 2, (int64_t[]){2, 2}, iv), y;
    CHECK_OK(go(rnode("ReduceSum", -1, NULL, 0, 0, false), 11, &xi, NULL, 0, &y, 1, err), err);
    CHECK(y.dtype == REF_DT_INT64 && y.rank == 0);
    CHECK(((int64_t *)y.data)[0] == 9007199254740997LL);
    oh_free_outputs(1, &y);
    int32_t i32[] = {3, -8, 6, 1};
    ref_tensor x32 = oh_tensor(REF_DT_INT32, 2, (int64_t[]){2, 2}, i32);
    CHECK_OK(go(rnode("ReduceMax", 1, (int64_t[]){0}, 0, 0, false), 13, &x32, NULL, 0, &y, 1, err), err);
    CHECK(((int32_t *)y.data)[0] == 6 && ((int32_t *)y.data)[1] == 1);
    oh_free_outputs(1, &y);
    CHECK_OK(go(rnode("ReduceL1", 1, (int64_t[]){1}, 0, 0, false), 13, &x32, NULL, 0, &y, 1, err), err);
    CHECK(((int32_t *)y.data)[0] == 11 && ((int32_t *)y.data)[1] == 7);
    oh_free_outputs(1, &y);

    ref_tensor x = oh_tensor(REF_DT_FLOAT, 3, (int64_t[]){3, 2, 2}, x12);
    CHECK(go(rnode("ReduceMean", 1, (int64_t[]){3}, 1, 0, false), 13, &x, NULL, 0, &y, 1, err) == REF_E_SHAPE);
    CHECK(go(rnode("ReduceMean", 2, (int64_t[]){1, -2}, 1, 0, false), 13, &x, NULL, 0, &y, 1, err) ==
          REF_E_SHAPE);
    oh_free_outputs(1, &y);
}

static void test_arg(void)
{
    ref_error errs, *err = &errs;
    float v[] = {1, 5, 5, 7, 2, 7};
    ref_tensor x = oh_tensor(REF_DT_FLOAT, 2, (int64_t[]){2, 3}, v), y;
    const ref_tensor *in[1] = {&x};

    ref_node *n = oh_node(m, "ArgMax", 1, 1);
    oh_attr_int(m, n, "axis", 1);
    CHECK_OK(oh_run(n, 13, 1, in, 1, &y, 0, 1, err), err);
    CHECK(y.dtype == REF_DT_INT64 && y.rank == 2 && y.dims[0] == 2 && y.dims[1] == 1);
    CHECK(((int64_t *)y.data)[0] == 1 && ((int64_t *)y.data)[1] == 0);
    oh_free_outputs(1, &y);

    oh_attr_int(m, n, "select_last_index", 1);
    CHECK_OK(oh_run(n, 13, 1, in, 1, &y, 0, 1, err), err);
    CHECK(((int64_t *)y.data)[0] == 2 && ((int64_t *)y.data)[1] == 2);
    oh_free_outputs(1, &y);

    n = oh_node(m, "ArgMin", 1, 1);
    oh_attr_int(m, n, "keepdims", 0);
    CHECK_OK(oh_run(n, 13, 1, in, 1, &y, 0, 1, err), err);
    CHECK(y.rank == 1 && y.dims[0] == 3);
    CHECK(((int64_t *)y.data)[0] == 0 && ((int64_t *)y.data)[1] == 1 && ((int64_t *)y.data)[2] == 0);
    oh_free_outputs(1, &y);

    n = oh_node(m, "ArgMax", 1, 1); /* default axis 0, keepdims 1 */
    CHECK_OK(oh_run(n, 13, 1, in, 1, &y, 0, 1, err), err);
    CHECK(y.rank == 2 && y.dims[0] == 1 && y.dims[1] == 3);
    CHECK(((int64_t *)y.data)[0] == 1 && ((int64_t *)y.data)[1] == 0 && ((int64_t *)y.data)[2] == 1);
    oh_free_outputs(1, &y);

    oh_attr_int(m, n, "axis", 2);
    CHECK(oh_run(n, 13, 1, in, 1, &y, 0, 1, err) == REF_E_SHAPE);
    oh_free_outputs(1, &y);
}

static void test_threads(void)
{
    enum { A = 200, B = 40, C = 30 };
    static float xd[A * B * C];
    uint32_t s = 777;
    for (int i = 0; i < A * B * C; i++) {
        s = s * 1664525u + 1013904223u;
        xd[i] = (float)((s >> 8) % 20000) / 1000.0f - 10.0f;
    }
    ref_tensor x = oh_tensor(REF_DT_FLOAT, 3, (int64_t[]){A, B, C}, xd);
    const char *ops[] = {"ReduceSum", "ReduceMean", "ReduceLogSumExp", "ReduceL2"};
    const int64_t sets[2][2] = {{1, 0}, {0, 2}};
    const int n_set[2] = {1, 2};
    for (int o = 0; o < 4; o++) {
        for (int k = 0; k < 2; k++) {
            ref_error errs, *err = &errs;
            ref_tensor y1, y2;
            ref_node *n = rnode(ops[o], n_set[k], sets[k], 0, 0, false);
            CHECK_OK(go(n, 11, &x, NULL, 0, &y1, 1, err), err);
            CHECK_OK(go(n, 11, &x, NULL, 0, &y2, 2, err), err);
            CHECK(memcmp(y1.data, y2.data, ref_tensor_nbytes(&y1)) == 0);
            if (o == 0 && k == 1) { /* spot-check output 7 against a plain double sum */
                double want = 0;
                for (int a = 0; a < A; a++)
                    for (int c = 0; c < C; c++)
                        want += xd[(a * B + 7) * C + c];
                CHECK_NEAR(((float *)y1.data)[7], want, 1e-3);
            }
            oh_free_outputs(1, &y1);
            oh_free_outputs(1, &y2);
        }
    }
    ref_error errs, *err = &errs;
    ref_tensor y1, y2;
    ref_node *n = oh_node(m, "ArgMax", 1, 1);
    oh_attr_int(m, n, "axis", 1);
    CHECK_OK(go(n, 13, &x, NULL, 0, &y1, 1, err), err);
    CHECK_OK(go(n, 13, &x, NULL, 0, &y2, 2, err), err);
    CHECK(memcmp(y1.data, y2.data, ref_tensor_nbytes(&y1)) == 0);
    oh_free_outputs(1, &y1);
    oh_free_outputs(1, &y2);
}

int main(void)
{
    m = ref_model_new();
    test_sum_axes_input();
    test_kinds();
    test_ints_and_errors();
    test_arg();
    test_threads();
    ref_model_free(m);
    ref_alloc_stats st;
    ref_alloc_get_stats(&st);
    CHECK(st.live_bytes == 0);
    return check_summary();
}
