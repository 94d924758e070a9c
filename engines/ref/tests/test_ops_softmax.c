/* test_ops_softmax.c: Softmax, LogSoftmax, Hardmax (both axis conventions) and the NLL / softmax cross-entropy
 * losses against hand-computed values. It must never leave engine bytes allocated. */
#include <math.h>

#include "check.h"
#include "op_harness.h"

static ref_model *m;

/* One input, one output; y gets a fresh buffer the caller frees with oh_free_outputs. */
static int run1(const char *op, int opset, int64_t axis, bool has_axis, const ref_tensor *x, ref_tensor *y,
                int threads, ref_error *err)
{
    ref_node *n = oh_node(m, op, 1, 1);
    if (has_axis)
        oh_attr_int(m, n, "axis", axis);
    const ref_tensor *in[1] = {x};
    return oh_run(n, opset, 1, in, 1, y, 0, threads, err);
}

static void check_vals(const ref_tensor *y, const float *want, int n, double tol)
{
    CHECK(ref_tensor_numel(y) == n);
    for (int i = 0; i < n && i < ref_tensor_numel(y); i++)
        CHECK_NEAR(((const float *)y->data)[i], want[i], tol);
}

static void test_softmax_rows(void)
{
    ref_error errs, *err = &errs;
    float xd[] = {1, 2, 3, 0, 0, 0};
    ref_tensor x = oh_tensor(REF_DT_FLOAT, 2, (int64_t[]){2, 3}, xd), y;
    CHECK_OK(run1("Softmax", 13, 0, false, &x, &y, 1, err), err);
    /* e^-2, e^-1, 1 over their sum 1.503214724 */
    const float want[] = {0.09003057f, 0.24472847f, 0.66524096f, 1 / 3.f, 1 / 3.f, 1 / 3.f};
    check_vals(&y, want, 6, 1e-6);
    CHECK(y.rank == 2 && y.dims[0] == 2 && y.dims[1] == 3 && y.dtype == REF_DT_FLOAT);
    oh_free_outputs(1, &y);

    CHECK_OK(run1("LogSoftmax", 13, 0, false, &x, &y, 1, err), err);
    const float lwant[] = {-2.40760596f, -1.40760596f, -0.40760596f, -1.09861229f, -1.09861229f, -1.09861229f};
    check_vals(&y, lwant, 6, 1e-6);
    oh_free_outputs(1, &y);
}

/* x[2,2,2] = batch 0: [[0, 0], [0, ln 3]], batch 1: zeros. */
static void test_conventions(void)
{
    ref_error errs, *err = &errs;
    float l3 = (float)log(3.0);
    float xd[] = {0, 0, 0, l3, 0, 0, 0, 0};
    ref_tensor x = oh_tensor(REF_DT_FLOAT, 3, (int64_t[]){2, 2, 2}, xd), y;

    /* opset 11, axis 1: each batch is one block of 4: e^0 x3 and 3 over 6 */
    CHECK_OK(run1("Softmax", 11, 1, true, &x, &y, 1, err), err);
    check_vals(&y, (const float[]){1 / 6.f, 1 / 6.f, 1 / 6.f, 0.5f, 0.25f, 0.25f, 0.25f, 0.25f}, 8, 1e-6);
    oh_free_outputs(1, &y);
    /* opset 11's default axis is 1 too */
    CHECK_OK(run1("Softmax", 11, 0, false, &x, &y, 1, err), err);
    check_vals(&y, (const float[]){1 / 6.f, 1 / 6.f, 1 / 6.f, 0.5f, 0.25f, 0.25f, 0.25f, 0.25f}, 8, 1e-6);
    oh_free_outputs(1, &y);

    /* opset 13, axis 1: pairs (x[n,0,k], x[n,1,k]) */
    CHECK_OK(run1("Softmax", 13, 1, true, &x, &y, 1, err), err);
    check_vals(&y, (const float[]){0.5f, 0.25f, 0.5f, 0.75f, 0.5f, 0.5f, 0.5f, 0.5f}, 8, 1e-6);
    oh_free_outputs(1, &y);
    /* opset 13 default axis -1: pairs along the last dim */
    CHECK_OK(run1("Softmax", 13, 0, false, &x, &y, 1, err), err);
    check_vals(&y, (const float[]){0.5f, 0.5f, 0.25f, 0.75f, 0.5f, 0.5f, 0.5f, 0.5f}, 8, 1e-6);
    oh_free_outputs(1, &y);

    /* opset 11 LogSoftmax, axis 0: all 8 values in one block; sum of exps = 10 */
    CHECK_OK(run1("LogSoftmax", 11, 0, true, &x, &y, 1, err), err);
    float a = (float)-log(10.0), b = (float)(log(3.0) - log(10.0));
    check_vals(&y, (const float[]){a, a, a, b, a, a, a, a}, 8, 1e-6);
    oh_free_outputs(1, &y);
}

static void test_large_and_hardmax(void)
{
    ref_error errs, *err = &errs;
    float big[] = {1000, 1001, -1000, -1001};
    ref_tensor x = oh_tensor(REF_DT_FLOAT, 2, (int64_t[]){2, 2}, big), y;
    CHECK_OK(run1("Softmax", 13, 0, false, &x, &y, 1, err), err);
    check_vals(&y, (const float[]){0.26894142f, 0.73105858f, 0.73105858f, 0.26894142f}, 4, 1e-6);
    oh_free_outputs(1, &y);
    CHECK_OK(run1("LogSoftmax", 13, 0, false, &x, &y, 1, err), err);
    check_vals(&y, (const float[]){-1.31326169f, -0.31326169f, -0.31326169f, -1.31326169f}, 4, 1e-5);
    oh_free_outputs(1, &y);

    /* ties go to the first maximum */
    float hd[] = {3, 1, 3, -1, 2, 2, 0, 0};
    ref_tensor h = oh_tensor(REF_DT_FLOAT, 2, (int64_t[]){2, 4}, hd);
    CHECK_OK(run1("Hardmax", 13, 0, false, &h, &y, 1, err), err);
    check_vals(&y, (const float[]){1, 0, 0, 0, 1, 0, 0, 0}, 8, 0);
    oh_free_outputs(1, &y);
    /* opset 11, axis 0: one-hot over all 8 values */
    CHECK_OK(run1("Hardmax", 11, 0, true, &h, &y, 1, err), err);
    check_vals(&y, (const float[]){1, 0, 0, 0, 0, 0, 0, 0}, 8, 0);
    oh_free_outputs(1, &y);
    /* opset 13, axis 0: per column */
    CHECK_OK(run1("Hardmax", 13, 0, true, &h, &y, 1, err), err);
    check_vals(&y, (const float[]){1, 0, 1, 0, 0, 1, 0, 1}, 8, 0);
    oh_free_outputs(1, &y);
}

static void test_double_and_errors(void)
{
    ref_error errs, *err = &errs;
    double xd[] = {0, log(3.0)};
    ref_tensor x = oh_tensor(REF_DT_DOUBLE, 1, (int64_t[]){2}, xd), y;
    CHECK_OK(run1("Softmax", 13, 0, false, &x, &y, 1, err), err);
    CHECK(y.dtype == REF_DT_DOUBLE);
    CHECK_NEAR(((double *)y.data)[0], 0.25, 1e-15);
    CHECK_NEAR(((double *)y.data)[1], 0.75, 1e-15);
    oh_free_outputs(1, &y);

    float f[8] = {0};
    ref_tensor r3 = oh_tensor(REF_DT_FLOAT, 3, (int64_t[]){2, 2, 2}, f);
    CHECK(run1("Softmax", 13, 3, true, &r3, &y, 1, err) == REF_E_SHAPE);
    oh_free_outputs(1, &y);
    CHECK(run1("Softmax", 13, -4, true, &r3, &y, 1, err) == REF_E_SHAPE);
    oh_free_outputs(1, &y);
    /* the old convention accepts axis == rank (a trailing block of one element: all ones) */
    CHECK_OK(run1("Softmax", 11, 3, true, &r3, &y, 1, err), err);
    check_vals(&y, (const float[]){1, 1, 1, 1, 1, 1, 1, 1}, 8, 0);
    oh_free_outputs(1, &y);
    int32_t iv[2] = {1, 2};
    ref_tensor xi = oh_tensor(REF_DT_INT32, 1, (int64_t[]){2}, iv);
    CHECK(run1("Softmax", 13, 0, false, &xi, &y, 1, err) == REF_E_UNSUPPORTED);
    oh_free_outputs(1, &y);
}

/* NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss: weights, ignore_index, the three reductions. */
static int run_loss(const char *op, const char *red, bool has_ii, int64_t ii, int n_in, const ref_tensor *const *in,
                    int n_out, ref_tensor *y, int threads, ref_error *err)
{
    ref_node *n = oh_node(m, op, n_in, n_out);
    oh_attr_str(m, n, "reduction", red);
    if (has_ii)
        oh_attr_int(m, n, "ignore_index", ii);
    return oh_run(n, 13, n_in, in, n_out, y, 0, threads, err);
}

static void test_losses(void)
{
    ref_error errs, *err = &errs;
    float lp[] = {-1, -2, -3, -0.5f, -1.5f, -2.5f}, wv[] = {1, 2, 4};
    int64_t tv[] = {2, 0};
    ref_tensor x = oh_tensor(REF_DT_FLOAT, 2, (int64_t[]){2, 3}, lp), y[2];
    ref_tensor t = oh_tensor(REF_DT_INT64, 1, (int64_t[]){2}, tv), w = oh_tensor(REF_DT_FLOAT, 1, (int64_t[]){3}, wv);
    const ref_tensor *in[3] = {&x, &t, &w};
    const char *nll = "NegativeLogLikelihoodLoss";

    CHECK_OK(run_loss(nll, "none", false, 0, 2, in, 1, y, 1, err), err);
    CHECK(y[0].rank == 1 && y[0].dims[0] == 2);
    check_vals(&y[0], (const float[]){3, 0.5f}, 2, 1e-6);
    oh_free_outputs(1, y);
    CHECK_OK(run_loss(nll, "sum", false, 0, 2, in, 1, y, 1, err), err);
    CHECK(y[0].rank == 0);
    check_vals(&y[0], (const float[]){3.5f}, 1, 1e-6);
    oh_free_outputs(1, y);
    CHECK_OK(run_loss(nll, "mean", false, 0, 2, in, 1, y, 1, err), err);
    check_vals(&y[0], (const float[]){1.75f}, 1, 1e-6);
    oh_free_outputs(1, y);
    /* weights: (3 * 4 + 0.5 * 1) / (4 + 1) */
    CHECK_OK(run_loss(nll, "none", false, 0, 3, in, 1, y, 1, err), err);
    check_vals(&y[0], (const float[]){12, 0.5f}, 2, 1e-6);
    oh_free_outputs(1, y);
    CHECK_OK(run_loss(nll, "mean", false, 0, 3, in, 1, y, 1, err), err);
    check_vals(&y[0], (const float[]){2.5f}, 1, 1e-6);
    oh_free_outputs(1, y);
    /* ignore_index drops lane 0 from the loss and from the mean's denominator */
    CHECK_OK(run_loss(nll, "mean", true, 2, 3, in, 1, y, 1, err), err);
    check_vals(&y[0], (const float[]){0.5f}, 1, 1e-6);
    oh_free_outputs(1, y);
    CHECK_OK(run_loss(nll, "none", true, 2, 2, in, 1, y, 1, err), err);
    check_vals(&y[0], (const float[]){0, 0.5f}, 2, 1e-6);
    oh_free_outputs(1, y);

    /* [N=1, C=2, D=2]: class k of position d sits at k * 2 + d */
    float l3[] = {-1, -2, -3, -4};
    int64_t t3v[] = {1, 0};
    ref_tensor x3 = oh_tensor(REF_DT_FLOAT, 3, (int64_t[]){1, 2, 2}, l3);
    ref_tensor t3 = oh_tensor(REF_DT_INT64, 2, (int64_t[]){1, 2}, t3v);
    const ref_tensor *in3[2] = {&x3, &t3};
    CHECK_OK(run_loss(nll, "none", false, 0, 2, in3, 1, y, 1, err), err);
    CHECK(y[0].rank == 2 && y[0].dims[0] == 1 && y[0].dims[1] == 2);
    check_vals(&y[0], (const float[]){3, 2}, 2, 1e-6);
    oh_free_outputs(1, y);

    int64_t badv[] = {3, 0};
    ref_tensor tb = oh_tensor(REF_DT_INT64, 1, (int64_t[]){2}, badv);
    const ref_tensor *inb[2] = {&x, &tb};
    CHECK(run_loss(nll, "sum", false, 0, 2, inb, 1, y, 1, err) == REF_E_RANGE);
    oh_free_outputs(1, y);
    CHECK(run_loss(nll, "avg", false, 0, 2, in, 1, y, 1, err) == REF_E_UNSUPPORTED);

    /* SCE of scores [0, ln 3]: log-probabilities ln(1/4), ln(3/4) */
    float sv[] = {0, (float)log(3.0)};
    int64_t lv[] = {1};
    ref_tensor xs = oh_tensor(REF_DT_FLOAT, 2, (int64_t[]){1, 2}, sv);
    ref_tensor ls = oh_tensor(REF_DT_INT64, 1, (int64_t[]){1}, lv);
    const ref_tensor *ins[2] = {&xs, &ls};
    CHECK_OK(run_loss("SoftmaxCrossEntropyLoss", "mean", false, 0, 2, ins, 2, y, 1, err), err);
    check_vals(&y[0], (const float[]){0.28768207f}, 1, 1e-6);
    check_vals(&y[1], (const float[]){-1.38629436f, -0.28768207f}, 2, 1e-6);
    CHECK(y[1].rank == 2 && y[1].dims[1] == 2);
    oh_free_outputs(2, y);
}

/* Results must be bit-identical for 1 and 2 threads, and each row must sum to 1. */
static void test_threads(void)
{
    enum { R = 96, C = 700 };
    static float xd[R * C];
    uint32_t s = 12345;
    for (int i = 0; i < R * C; i++) {
        s = s * 1664525u + 1013904223u;
        xd[i] = (float)((s >> 8) % 20000) / 1000.0f - 10.0f;
    }
    const char *ops[] = {"Softmax", "LogSoftmax", "Hardmax"};
    for (int o = 0; o < 3; o++) {
        for (int axis = 0; axis < 2; axis++) {
            ref_error errs, *err = &errs;
            ref_tensor x = oh_tensor(REF_DT_FLOAT, 2, (int64_t[]){R, C}, xd), y1, y2;
            CHECK_OK(run1(ops[o], 13, axis, true, &x, &y1, 1, err), err);
            CHECK_OK(run1(ops[o], 13, axis, true, &x, &y2, 2, err), err);
            CHECK(memcmp(y1.data, y2.data, sizeof xd) == 0);
            if (o == 0 && axis == 1) {
                double sum = 0;
                for (int j = 0; j < C; j++)
                    sum += ((float *)y1.data)[5 * C + j];
                CHECK_NEAR(sum, 1.0, 1e-5);
            }
            oh_free_outputs(1, &y1);
            oh_free_outputs(1, &y2);
        }
    }
    ref_tensor x3 = oh_tensor(REF_DT_FLOAT, 3, (int64_t[]){4, 10, R * C / 40}, xd), y1[2], y2[2];
    static int64_t lab[4 * R * C / 40];
    for (int i = 0; i < 4 * R * C / 40; i++)
        lab[i] = i % 11 == 0 ? -1 : i % 10;
    ref_tensor tl = oh_tensor(REF_DT_INT64, 2, (int64_t[]){4, R * C / 40}, lab);
    const ref_tensor *in[2] = {&x3, &tl};
    ref_error errs, *err = &errs;
    CHECK_OK(run_loss("SoftmaxCrossEntropyLoss", "none", true, -1, 2, in, 2, y1, 1, err), err);
    CHECK_OK(run_loss("SoftmaxCrossEntropyLoss", "none", true, -1, 2, in, 2, y2, 2, err), err);
    CHECK(memcmp(y1[0].data, y2[0].data, ref_tensor_nbytes(&y1[0])) == 0);
    CHECK(memcmp(y1[1].data, y2[1].data, ref_tensor_nbytes(&y1[1])) == 0);
    oh_free_outputs(2, y1);
    oh_free_outputs(2, y2);
}

int main(void)
{
    m = ref_model_new();
    test_softmax_rows();
    test_conventions();
    test_large_and_hardmax();
    test_double_and_errors();
    test_losses();
    test_threads();
    ref_model_free(m);
    ref_alloc_stats st;
    ref_alloc_get_stats(&st);
    CHECK(st.live_bytes == 0);
    return check_summary();
}
