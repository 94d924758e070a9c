/* test_ops_index.c: the index family (Gather*, Slice, Scatter*, CumSum, OneHot, Compress, TopK, NonZero,
 * EyeLike) on small hand-computed cases, known and unknown (REF_E_DYNAMIC) inputs, and bad indices.
 * It must never accept an out-of-range index quietly: each such case expects REF_E_RANGE. */
#include <stdint.h>
#include <string.h>

#include "alloc.h"
#include "check.h"
#include "model.h"
#include "op_harness.h"
#include "tensor.h"

#define ALL 0xffffu
#define DIMS(...) ((const int64_t[]){__VA_ARGS__})

static ref_model *M;
static ref_error err;

/* Run n through oh_run with inputs in[] (NULL for omitted), clearing err first. */
static int run(const ref_node *n, int opset, int n_in, const ref_tensor *const *in, int n_out, ref_tensor *out,
               unsigned mask, int threads)
{
    memset(&err, 0, sizeof err);
    return oh_run(n, opset, n_in, in, n_out, out, mask, threads, &err);
}

static void check_floats(const ref_tensor *y, const float *want, int64_t n)
{
    CHECK(ref_tensor_numel(y) == n);
    if (ref_tensor_numel(y) != n)
        return;
    for (int64_t i = 0; i < n; i++)
        CHECK_NEAR(((const float *)y->data)[i], want[i], 1e-6);
}

static void check_i64(const ref_tensor *y, const int64_t *want, int64_t n)
{
    CHECK(y->dtype == REF_DT_INT64 && ref_tensor_numel(y) == n);
    if (y->dtype != REF_DT_INT64 || ref_tensor_numel(y) != n)
        return;
    for (int64_t i = 0; i < n; i++)
        CHECK(((const int64_t *)y->data)[i] == want[i]);
}

static void check_shape(const ref_tensor *y, int rank, const int64_t *dims)
{
    CHECK(y->rank == rank);
    for (int d = 0; d < rank && d < y->rank; d++)
        CHECK(y->dims[d] == dims[d]);
}

/* ------------------------------------------------------------------------------------------------ */

static void test_gather(void)
{
    float x[12];
    for (int i = 0; i < 12; i++)
        x[i] = (float)i; /* [3,4]: x[r][c] = 4r + c */
    ref_tensor X = oh_tensor(REF_DT_FLOAT, 2, DIMS(3, 4), x);
    int64_t i64[] = {2, -3};
    ref_tensor I = oh_tensor(REF_DT_INT64, 1, DIMS(2), i64);
    const ref_tensor *in[] = {&X, &I};
    ref_tensor y;

    ref_node *n = oh_node(M, "Gather", 2, 1); /* axis 0: rows 2 and 0 */
    CHECK_OK(run(n, 13, 2, in, 1, &y, 0, 1), &err);
    check_shape(&y, 2, DIMS(2, 4));
    check_floats(&y, (const float[]){8, 9, 10, 11, 0, 1, 2, 3}, 8);
    oh_free_outputs(1, &y);

    n = oh_node(M, "Gather", 2, 1); /* axis -1 with int32 [2,1] indices: out [3,2,1] */
    oh_attr_int(M, n, "axis", -1);
    int32_t i32[] = {3, -4};
    ref_tensor I32 = oh_tensor(REF_DT_INT32, 2, DIMS(2, 1), i32);
    const ref_tensor *in32[] = {&X, &I32};
    CHECK_OK(run(n, 13, 2, in32, 1, &y, ALL, 2), &err);
    check_shape(&y, 3, DIMS(3, 2, 1));
    check_floats(&y, (const float[]){3, 0, 7, 4, 11, 8}, 6);
    oh_free_outputs(1, &y);

    n = oh_node(M, "Gather", 2, 1); /* scalar index on int64 data drops the axis */
    oh_attr_int(M, n, "axis", 1);
    int64_t xd[] = {10, 20, 30, 40, 50, 60}, one = 1;
    ref_tensor XD = oh_tensor(REF_DT_INT64, 2, DIMS(2, 3), xd);
    ref_tensor S = oh_tensor(REF_DT_INT64, 0, NULL, &one);
    const ref_tensor *ins[] = {&XD, &S};
    CHECK_OK(run(n, 13, 2, ins, 1, &y, 0, 1), &err);
    check_shape(&y, 1, DIMS(2));
    check_i64(&y, (const int64_t[]){20, 50}, 2);
    oh_free_outputs(1, &y);

    /* out of range: run catches it when infer could not see the indices, infer when it could */
    int64_t bad[] = {1, 3};
    ref_tensor B = oh_tensor(REF_DT_INT64, 1, DIMS(2), bad);
    const ref_tensor *inb[] = {&X, &B};
    n = oh_node(M, "Gather", 2, 1);
    CHECK(run(n, 13, 2, inb, 1, &y, 0, 1) == REF_E_RANGE);
    CHECK(strstr(err.msg, "= 3") != NULL);
    oh_free_outputs(1, &y);
    CHECK(run(n, 13, 2, inb, 1, &y, ALL, 1) == REF_E_RANGE);
    bad[1] = -4;
    CHECK(run(n, 13, 2, inb, 1, &y, 0, 1) == REF_E_RANGE);
    CHECK(strstr(err.msg, "-4") != NULL);
    oh_free_outputs(1, &y);
}

/* A bigger Gather on two threads against a loop written here. */
static void test_gather_threads(void)
{
    enum { R = 64, C = 300, K = 50 };
    static float x[R * C];
    static int64_t idx[K];
    for (int i = 0; i < R * C; i++)
        x[i] = (float)(i % 977) * 0.5f;
    for (int k = 0; k < K; k++)
        idx[k] = (k * 37) % C - (k % 3 == 0 ? C : 0);
    ref_tensor X = oh_tensor(REF_DT_FLOAT, 2, DIMS(R, C), x);
    ref_tensor I = oh_tensor(REF_DT_INT64, 1, DIMS(K), idx);
    const ref_tensor *in[] = {&X, &I};
    ref_tensor y;
    ref_node *n = oh_node(M, "Gather", 2, 1);
    oh_attr_int(M, n, "axis", 1);
    CHECK_OK(run(n, 13, 2, in, 1, &y, 0, 2), &err);
    int bad = 0;
    for (int r = 0; r < R; r++)
        for (int k = 0; k < K; k++) {
            int64_t c = idx[k] < 0 ? idx[k] + C : idx[k];
            bad += ((float *)y.data)[r * K + k] != x[r * C + c];
        }
    CHECK(bad == 0);
    oh_free_outputs(1, &y);
}

static void test_gather_elements_nd(void)
{
    float x[] = {1, 2, 3, 4, 5, 6, 7, 8, 9}; /* [3,3] */
    ref_tensor X = oh_tensor(REF_DT_FLOAT, 2, DIMS(3, 3), x);
    int64_t idx[] = {1, 2, 0, 2, 0, -1}; /* [2,3] on axis 0 */
    ref_tensor I = oh_tensor(REF_DT_INT64, 2, DIMS(2, 3), idx);
    const ref_tensor *in[] = {&X, &I};
    ref_tensor y;
    ref_node *n = oh_node(M, "GatherElements", 2, 1);
    CHECK_OK(run(n, 13, 2, in, 1, &y, 0, 1), &err);
    check_shape(&y, 2, DIMS(2, 3));
    /* out[i][j] = x[idx[i][j]][j] */
    check_floats(&y, (const float[]){4, 8, 3, 7, 2, 9}, 6);
    oh_free_outputs(1, &y);
    idx[4] = 3;
    CHECK(run(n, 13, 2, in, 1, &y, 0, 1) == REF_E_RANGE);
    oh_free_outputs(1, &y);

    /* GatherND, batch_dims 1: data [2,2,2], indices [2,1,1] -> out [2,1,2] = data[b][idx] */
    float d[] = {0, 1, 2, 3, 4, 5, 6, 7};
    int64_t gi[] = {1, -2};
    ref_tensor D = oh_tensor(REF_DT_FLOAT, 3, DIMS(2, 2, 2), d);
    ref_tensor G = oh_tensor(REF_DT_INT64, 3, DIMS(2, 1, 1), gi);
    const ref_tensor *ing[] = {&D, &G};
    n = oh_node(M, "GatherND", 2, 1);
    oh_attr_int(M, n, "batch_dims", 1);
    CHECK_OK(run(n, 13, 2, ing, 1, &y, 0, 1), &err);
    check_shape(&y, 3, DIMS(2, 1, 2));
    check_floats(&y, (const float[]){2, 3, 4, 5}, 4);
    oh_free_outputs(1, &y);

    /* GatherND without batch dims: indices [2,2] (k = 2) pick rows data[1][1] and data[0][1] */
    int64_t gt[] = {1, 1, 0, 1};
    ref_tensor T = oh_tensor(REF_DT_INT64, 2, DIMS(2, 2), gt);
    const ref_tensor *int_[] = {&D, &T};
    n = oh_node(M, "GatherND", 2, 1);
    CHECK_OK(run(n, 13, 2, int_, 1, &y, ALL, 1), &err);
    check_shape(&y, 2, DIMS(2, 2));
    check_floats(&y, (const float[]){6, 7, 2, 3}, 4);
    oh_free_outputs(1, &y);
    gt[2] = 2;
    CHECK(run(n, 13, 2, int_, 1, &y, 0, 1) == REF_E_RANGE);
    oh_free_outputs(1, &y);
}

static void test_slice(void)
{
    float x[20];
    for (int i = 0; i < 20; i++)
        x[i] = (float)i; /* [4,5] */
    ref_tensor X = oh_tensor(REF_DT_FLOAT, 2, DIMS(4, 5), x);
    /* rows 3..0 step -2 (3,1); cols -1 down to the start clamped (INT64_MIN) step -2 (4,2,0) */
    int64_t st[] = {10, -1}, en[] = {-100, INT64_MIN}, ax[] = {0, -1}, sp[] = {-2, -2};
    ref_tensor S = oh_tensor(REF_DT_INT64, 1, DIMS(2), st), E = oh_tensor(REF_DT_INT64, 1, DIMS(2), en);
    ref_tensor A = oh_tensor(REF_DT_INT64, 1, DIMS(2), ax), P = oh_tensor(REF_DT_INT64, 1, DIMS(2), sp);
    const ref_tensor *in[] = {&X, &S, &E, &A, &P};
    ref_tensor y;
    ref_node *n = oh_node(M, "Slice", 5, 1);
    CHECK_OK(run(n, 13, 5, in, 1, &y, ALL, 1), &err);
    check_shape(&y, 2, DIMS(2, 3));
    check_floats(&y, (const float[]){19, 17, 15, 9, 7, 5}, 6);
    oh_free_outputs(1, &y);
    CHECK(run(n, 13, 5, in, 1, &y, 1u, 1) == REF_E_DYNAMIC);

    /* positive steps with clamping: start beyond the end gives an empty axis, INT64_MAX end clamps */
    int64_t st2[] = {1, 7}, en2[] = {INT64_MAX, 9};
    ref_tensor S2 = oh_tensor(REF_DT_INT64, 1, DIMS(2), st2), E2 = oh_tensor(REF_DT_INT64, 1, DIMS(2), en2);
    const ref_tensor *in2[] = {&X, &S2, &E2, NULL, NULL};
    n = oh_node(M, "Slice", 3, 1);
    CHECK_OK(run(n, 13, 3, in2, 1, &y, ALL, 1), &err);
    check_shape(&y, 2, DIMS(3, 0));
    oh_free_outputs(1, &y);
    st2[1] = -3; /* cols 2..4 */
    int64_t sp2[] = {2, 1};
    ref_tensor P2 = oh_tensor(REF_DT_INT64, 1, DIMS(2), sp2);
    const ref_tensor *in3[] = {&X, &S2, &E2, NULL, &P2};
    n = oh_node(M, "Slice", 5, 1);
    CHECK_OK(run(n, 13, 5, in3, 1, &y, ALL, 2), &err);
    check_shape(&y, 2, DIMS(2, 3));
    check_floats(&y, (const float[]){7, 8, 9, 17, 18, 19}, 6);
    oh_free_outputs(1, &y);

    /* step 0 and a repeated axis are errors */
    sp2[0] = 0;
    CHECK(run(n, 13, 5, in3, 1, &y, ALL, 1) == REF_E_INVALID);
    sp2[0] = 1;
    int64_t dup[] = {1, -1};
    ref_tensor DA = oh_tensor(REF_DT_INT64, 1, DIMS(2), dup);
    const ref_tensor *in4[] = {&X, &S2, &E2, &DA, NULL};
    n = oh_node(M, "Slice", 4, 1);
    CHECK(run(n, 13, 4, in4, 1, &y, ALL, 1) == REF_E_SHAPE);

    /* opset 1: attributes; axes [1], starts [-2], ends [1000] -> cols 3,4 */
    n = oh_node(M, "Slice", 1, 1);
    oh_attr_ints(M, n, "starts", 1, (const int64_t[]){-2});
    oh_attr_ints(M, n, "ends", 1, (const int64_t[]){1000});
    oh_attr_ints(M, n, "axes", 1, (const int64_t[]){1});
    const ref_tensor *in5[] = {&X};
    CHECK_OK(run(n, 1, 1, in5, 1, &y, 0, 1), &err);
    check_shape(&y, 2, DIMS(4, 2));
    check_floats(&y, (const float[]){3, 4, 8, 9, 13, 14, 18, 19}, 8);
    oh_free_outputs(1, &y);
}

static void test_scatter(void)
{
    float d[] = {1, 2, 3, 4, 5}; /* [1,5] */
    int64_t idx[] = {1, -4, 3};
    float u[] = {10, 20, 30};
    ref_tensor D = oh_tensor(REF_DT_FLOAT, 2, DIMS(1, 5), d);
    ref_tensor I = oh_tensor(REF_DT_INT64, 2, DIMS(1, 3), idx);
    ref_tensor U = oh_tensor(REF_DT_FLOAT, 2, DIMS(1, 3), u);
    const ref_tensor *in[] = {&D, &I, &U};
    ref_tensor y;
    ref_node *n = oh_node(M, "ScatterElements", 3, 1);
    oh_attr_int(M, n, "axis", 1);
    oh_attr_str(M, n, "reduction", "add"); /* index 1 twice: 2 + 10 + 20 */
    CHECK_OK(run(n, 16, 3, in, 1, &y, 0, 1), &err);
    check_floats(&y, (const float[]){1, 32, 3, 34, 5}, 5);
    oh_free_outputs(1, &y);
    n = oh_node(M, "ScatterElements", 3, 1);
    oh_attr_int(M, n, "axis", 1); /* none: the later duplicate wins */
    CHECK_OK(run(n, 13, 3, in, 1, &y, 0, 1), &err);
    check_floats(&y, (const float[]){1, 20, 3, 30, 5}, 5);
    oh_free_outputs(1, &y);
    idx[2] = 5;
    CHECK(run(n, 13, 3, in, 1, &y, 0, 1) == REF_E_RANGE);
    CHECK(strstr(err.msg, "= 5") != NULL);
    oh_free_outputs(1, &y);

    /* ScatterND mul: data [3,2], indices [[2],[0],[2]] multiply whole rows */
    float d2[] = {1, 2, 3, 4, 5, 6}, u2[] = {2, 3, 4, 5, 10, 10};
    int64_t i2[] = {2, 0, 2};
    ref_tensor D2 = oh_tensor(REF_DT_FLOAT, 2, DIMS(3, 2), d2), U2 = oh_tensor(REF_DT_FLOAT, 2, DIMS(3, 2), u2);
    ref_tensor I2 = oh_tensor(REF_DT_INT64, 2, DIMS(3, 1), i2);
    const ref_tensor *in2[] = {&D2, &I2, &U2};
    n = oh_node(M, "ScatterND", 3, 1);
    oh_attr_str(M, n, "reduction", "mul");
    CHECK_OK(run(n, 16, 3, in2, 1, &y, 0, 2), &err);
    check_floats(&y, (const float[]){4, 10, 3, 4, 100, 180}, 6);
    oh_free_outputs(1, &y);
    i2[1] = -4;
    CHECK(run(n, 16, 3, in2, 1, &y, 0, 1) == REF_E_RANGE);
    oh_free_outputs(1, &y);
    n = oh_node(M, "ScatterND", 3, 1);
    oh_attr_str(M, n, "reduction", "max"); /* max arrives with opset 18 */
    CHECK(run(n, 16, 3, in2, 1, &y, 0, 1) == REF_E_UNSUPPORTED);
}

static void test_cumsum_onehot(void)
{
    int32_t x[] = {1, 2, 3, 4, 5, 6}; /* [2,3] */
    int32_t axis = -1;
    ref_tensor X = oh_tensor(REF_DT_INT32, 2, DIMS(2, 3), x), A = oh_tensor(REF_DT_INT32, 0, NULL, &axis);
    const ref_tensor *in[] = {&X, &A};
    ref_tensor y;
    ref_node *n = oh_node(M, "CumSum", 2, 1);
    oh_attr_int(M, n, "exclusive", 1);
    oh_attr_int(M, n, "reverse", 1);
    CHECK_OK(run(n, 14, 2, in, 1, &y, 0, 1), &err); /* axis unknown to infer is fine */
    const int32_t want[] = {5, 3, 0, 11, 6, 0};
    for (int i = 0; i < 6; i++)
        CHECK(((int32_t *)y.data)[i] == want[i]);
    oh_free_outputs(1, &y);
    axis = 2;
    CHECK(run(n, 14, 2, in, 1, &y, ALL, 1) == REF_E_SHAPE);

    /* OneHot axis 0: indices [1,-1,5] depth 3 -> [3,3]; 5 is out of range: all off */
    int64_t idx[] = {1, -1, 5};
    float depth = 3.0f, vals[] = {-1, 7};
    ref_tensor I = oh_tensor(REF_DT_INT64, 1, DIMS(3), idx), Dp = oh_tensor(REF_DT_FLOAT, 0, NULL, &depth);
    ref_tensor V = oh_tensor(REF_DT_FLOAT, 1, DIMS(2), vals);
    const ref_tensor *ino[] = {&I, &Dp, &V};
    n = oh_node(M, "OneHot", 3, 1);
    oh_attr_int(M, n, "axis", 0);
    CHECK_OK(run(n, 11, 3, ino, 1, &y, ALL, 1), &err);
    check_shape(&y, 2, DIMS(3, 3));
    check_floats(&y, (const float[]){-1, -1, -1, 7, -1, -1, -1, 7, -1}, 9);
    oh_free_outputs(1, &y);
    CHECK(run(n, 11, 3, ino, 1, &y, 1u, 1) == REF_E_DYNAMIC);
}

static void test_compress_nonzero_eye(void)
{
    float x[] = {1, 2, 3, 4, 5, 6}; /* [3,2] */
    uint8_t cond[] = {0, 1, 1};
    ref_tensor X = oh_tensor(REF_DT_FLOAT, 2, DIMS(3, 2), x), C = oh_tensor(REF_DT_BOOL, 1, DIMS(3), cond);
    const ref_tensor *in[] = {&X, &C};
    ref_tensor y;
    ref_node *n = oh_node(M, "Compress", 2, 1);
    oh_attr_int(M, n, "axis", 0);
    CHECK_OK(run(n, 11, 2, in, 1, &y, ALL, 1), &err);
    check_shape(&y, 2, DIMS(2, 2));
    check_floats(&y, (const float[]){3, 4, 5, 6}, 4);
    oh_free_outputs(1, &y);
    CHECK(run(n, 11, 2, in, 1, &y, 1u, 1) == REF_E_DYNAMIC);
    n = oh_node(M, "Compress", 2, 1); /* flattened */
    CHECK_OK(run(n, 11, 2, in, 1, &y, ALL, 1), &err);
    check_shape(&y, 1, DIMS(2));
    check_floats(&y, (const float[]){2, 3}, 2);
    oh_free_outputs(1, &y);

    float z[] = {0, 3, -0.0f, 0, 0, 1}; /* [2,3] */
    ref_tensor Z = oh_tensor(REF_DT_FLOAT, 2, DIMS(2, 3), z);
    const ref_tensor *inz[] = {&Z};
    n = oh_node(M, "NonZero", 1, 1);
    CHECK(run(n, 13, 1, inz, 1, &y, 0, 1) == REF_E_DYNAMIC);
    CHECK_OK(run(n, 13, 1, inz, 1, &y, ALL, 1), &err);
    check_shape(&y, 2, DIMS(2, 2));
    check_i64(&y, (const int64_t[]){0, 1, 1, 2}, 4);
    oh_free_outputs(1, &y);

    n = oh_node(M, "EyeLike", 1, 1);
    oh_attr_int(M, n, "k", -1);
    oh_attr_int(M, n, "dtype", REF_DT_INT64);
    CHECK_OK(run(n, 9, 1, inz, 1, &y, 0, 1), &err);
    check_i64(&y, (const int64_t[]){0, 0, 0, 1, 0, 0}, 6);
    oh_free_outputs(1, &y);
}

/* TopK on [3,4] rows with ties (lower index first), largest and smallest, K unknown to infer. */
static void test_topk(void)
{
    float x[] = {3, 1, 3, 2, 0, -1, 5, 5, 7, 7, 7, 7};
    int64_t k = 3;
    ref_tensor X = oh_tensor(REF_DT_FLOAT, 2, DIMS(3, 4), x), K = oh_tensor(REF_DT_INT64, 1, DIMS(1), &k);
    const ref_tensor *in[] = {&X, &K};
    ref_tensor y[2];
    ref_node *n = oh_node(M, "TopK", 2, 2);
    CHECK(run(n, 11, 2, in, 2, y, 1u, 1) == REF_E_DYNAMIC);
    CHECK_OK(run(n, 11, 2, in, 2, y, ALL, 2), &err);
    check_floats(&y[0], (const float[]){3, 3, 2, 5, 5, 0, 7, 7, 7}, 9);
    check_i64(&y[1], (const int64_t[]){0, 2, 3, 2, 3, 0, 0, 1, 2}, 9);
    oh_free_outputs(2, y);
    n = oh_node(M, "TopK", 2, 2);
    oh_attr_int(M, n, "largest", 0);
    oh_attr_int(M, n, "axis", 0);
    k = 2;
    CHECK_OK(run(n, 11, 2, in, 2, y, ALL, 1), &err);
    check_shape(&y[0], 2, DIMS(2, 4));
    check_floats(&y[0], (const float[]){0, -1, 3, 2, 3, 1, 5, 5}, 8);
    check_i64(&y[1], (const int64_t[]){1, 1, 0, 0, 0, 0, 1, 1}, 8);
    oh_free_outputs(2, y);
    k = 5;
    CHECK(run(n, 11, 2, in, 2, y, ALL, 1) == REF_E_RANGE);
}

int main(void)
{
    M = ref_model_new();
    if (!M) {
        printf("cannot make a model\n");
        return 1;
    }
    test_gather();
    test_gather_threads();
    test_gather_elements_nd();
    test_slice();
    test_scatter();
    test_cumsum_onehot();
    test_compress_nonzero_eye();
    test_topk();
    ref_model_free(M);
    ref_alloc_stats st;
    ref_alloc_get_stats(&st);
    CHECK(st.live_bytes == 0);
    return check_summary();
}
