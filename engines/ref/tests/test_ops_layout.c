/* test_ops_layout.c: unit tests of the "layout" family (Transpose..Trilu): hand-computed cases plus naive index loops.
 * It must never pass without checking values: every case compares shapes and every output element. */
#include <string.h>
#include <time.h>

#include "check.h"
#include "op_harness.h"

#define ALL 0xFFFFu
#define N_OF(a) (sizeof(a) / sizeof((a)[0]))

static ref_model *M;
static ref_error E;
/* pool.c's first loop can miss a worker that has not parked yet (the worker reads the generation only after
 * taking the lock, so a bump before that is lost and the loop waits forever). Until that is fixed, multi-thread
 * runs go through one long-lived pool that has had time to settle, instead of oh_run's fresh pool. */
static ref_pool *POOL2;

static ref_node *node(const char *op, int n_in, int n_out) { return oh_node(M, op, n_in, n_out); }

static ref_tensor T(int dtype, int rank, const int64_t *dims, const void *data)
{
    return oh_tensor(dtype, rank, dims, (void *)data);
}

static int run(const ref_node *n, int opset, int n_in, const ref_tensor *const *in, int n_out, ref_tensor *out,
               unsigned mask)
{
    E.msg[0] = 0;
    return oh_run(n, opset, n_in, in, n_out, out, mask, 1, &E);
}

/* Like oh_run with every input visible, on POOL2. */
static int run2(const ref_node *n, int opset, int n_in, const ref_tensor *const *in, int n_out, ref_tensor *out)
{
    const ref_op *op = ref_op_find("", n->op_type);
    ref_tensor *out_p[8];
    for (int i = 0; i < n_out; i++) {
        memset(&out[i], 0, sizeof out[i]);
        out_p[i] = &out[i];
    }
    ref_op_ctx c = {.node = n, .opset = opset, .n_in = n_in, .n_out = n_out, .in = in, .out = out_p,
                    .pool = POOL2, .n_threads = ref_pool_threads(POOL2), .err = &E};
    int rc = op->infer(&c);
    if (rc)
        return rc;
    for (int i = 0; i < n_out; i++)
        out[i].data = ref_aligned_alloc(ref_tensor_nbytes(&out[i]) + 1);
    return op->run(&c);
}

static int shape_is(const ref_tensor *t, int dtype, int rank, const int64_t *dims)
{
    if (t->dtype != dtype || t->rank != rank)
        return 0;
    for (int d = 0; d < rank; d++)
        if (t->dims[d] != dims[d])
            return 0;
    return 1;
}

static int bytes_are(const ref_tensor *t, const void *want, size_t n)
{
    return ref_tensor_nbytes(t) == n && (n == 0 || memcmp(t->data, want, n) == 0);
}

static int same(const ref_tensor *a, const ref_tensor *b)
{
    return a->dtype == b->dtype && ref_shape_equal(a, b) && bytes_are(a, b->data, ref_tensor_nbytes(b));
}

/* ---------------------------------------------------------------------------------------------
 * Transpose
 * ------------------------------------------------------------------------------------------- */

/* Naive: out[j] = in[sum_d idx_d(j) * in_stride[perm[d]]], element by element. */
static void naive_transpose(const char *src, char *dst, size_t es, int rank, const int64_t *dims, const int *perm)
{
    int64_t in_strides[REF_MAX_RANK], out_dims[REF_MAX_RANK], s = 1, n = 1;
    for (int d = rank - 1; d >= 0; d--) {
        in_strides[d] = s;
        s *= dims[d];
    }
    for (int d = 0; d < rank; d++) {
        out_dims[d] = dims[perm[d]];
        n *= out_dims[d];
    }
    for (int64_t j = 0; j < n; j++) {
        int64_t rest = j, off = 0;
        for (int d = rank - 1; d >= 0; d--) {
            off += (rest % out_dims[d]) * in_strides[perm[d]];
            rest /= out_dims[d];
        }
        memcpy(dst + j * (int64_t)es, src + off * (int64_t)es, es);
    }
}

/* Transpose x (filled with a byte pattern) by perm on 1 and 2 threads and compare both to the naive result. */
static void transpose_check(int dtype, int rank, const int64_t *dims, const int *perm)
{
    ref_tensor x = T(dtype, rank, dims, NULL);
    size_t es = ref_dtype_size(dtype), nb = ref_tensor_nbytes(&x);
    char *src = ref_malloc(nb + 1), *want = ref_malloc(nb + 1);
    for (size_t i = 0; i < nb; i++)
        src[i] = (char)(i * 131 + (i >> 8) * 7 + 3);
    x.data = src;
    naive_transpose(src, want, es, rank, dims, perm);
    ref_node *n = node("Transpose", 1, 1);
    int64_t p[REF_MAX_RANK];
    for (int d = 0; d < rank; d++)
        p[d] = perm[d];
    oh_attr_ints(M, n, "perm", (size_t)rank, p);
    const ref_tensor *in[1] = {&x};
    ref_tensor y1, y2;
    CHECK_OK(run(n, 13, 1, in, 1, &y1, 0), &E);
    CHECK_OK(run2(n, 13, 1, in, 1, &y2), &E);
    int64_t od[REF_MAX_RANK];
    for (int d = 0; d < rank; d++)
        od[d] = dims[perm[d]];
    CHECK(shape_is(&y1, dtype, rank, od) && bytes_are(&y1, want, nb));
    CHECK(same(&y2, &y1));
    oh_free_outputs(1, &y1);
    oh_free_outputs(1, &y2);
    ref_free(src);
    ref_free(want);
}

static void test_transpose(void)
{
    /* hand-computed 2x3 */
    int64_t d23[2] = {2, 3};
    float x[6] = {1, 2, 3, 4, 5, 6};
    ref_tensor t = T(REF_DT_FLOAT, 2, d23, x), y;
    const ref_tensor *in[1] = {&t};
    ref_node *n = node("Transpose", 1, 1); /* default perm reverses */
    CHECK_OK(run(n, 13, 1, in, 1, &y, 0), &E);
    CHECK(shape_is(&y, REF_DT_FLOAT, 2, (int64_t[]){3, 2}) && bytes_are(&y, (float[]){1, 4, 2, 5, 3, 6}, 24));
    oh_free_outputs(1, &y);

    /* 2-D: blocked path, sizes off the 32 tile, every element size */
    static const int types[] = {REF_DT_FLOAT, REF_DT_INT8, REF_DT_INT16, REF_DT_DOUBLE, REF_DT_BOOL};
    static const int p10[2] = {1, 0};
    for (size_t k = 0; k < N_OF(types); k++) {
        transpose_check(types[k], 2, (int64_t[]){70, 45}, p10);
        transpose_check(types[k], 2, (int64_t[]){1, 9}, p10);
        transpose_check(types[k], 2, (int64_t[]){33, 1}, p10);
    }
    transpose_check(REF_DT_FLOAT, 2, (int64_t[]){513, 300}, p10); /* big enough to split over threads */

    /* 4-D: every permutation of a small tensor, then big NCHW<->NHWC-like cases */
    int perm[4];
    for (int a = 0; a < 4; a++)
        for (int b = 0; b < 4; b++)
            for (int c = 0; c < 4; c++)
                for (int d = 0; d < 4; d++) {
                    if (a == b || a == c || a == d || b == c || b == d || c == d)
                        continue;
                    perm[0] = a, perm[1] = b, perm[2] = c, perm[3] = d;
                    transpose_check(REF_DT_FLOAT, 4, (int64_t[]){2, 3, 4, 5}, perm);
                    transpose_check(REF_DT_INT64, 4, (int64_t[]){3, 1, 2, 7}, perm);
                }
    transpose_check(REF_DT_FLOAT, 4, (int64_t[]){2, 37, 29, 41}, (int[]){0, 2, 3, 1});
    transpose_check(REF_DT_UINT8, 4, (int64_t[]){2, 41, 29, 37}, (int[]){0, 3, 1, 2});
    transpose_check(REF_DT_DOUBLE, 4, (int64_t[]){3, 40, 50, 7}, (int[]){3, 1, 0, 2});
    transpose_check(REF_DT_FLOAT, 4, (int64_t[]){2, 3, 0, 5}, (int[]){3, 2, 1, 0}); /* empty */
    transpose_check(REF_DT_INT32, 0, NULL, NULL);                                    /* scalar */

    n = node("Transpose", 1, 1);
    oh_attr_ints(M, n, "perm", 2, (int64_t[]){0, 0});
    CHECK(run(n, 13, 1, in, 1, &y, 0) == REF_E_SHAPE);
    n = node("Transpose", 1, 1);
    oh_attr_ints(M, n, "perm", 3, (int64_t[]){0, 1, 2});
    CHECK(run(n, 13, 1, in, 1, &y, 0) == REF_E_SHAPE);
}

/* ---------------------------------------------------------------------------------------------
 * Concat, Split
 * ------------------------------------------------------------------------------------------- */

static void test_concat(void)
{
    int64_t d22[2] = {2, 2}, d21[2] = {2, 1}, d20[2] = {2, 0}, d0[1] = {0};
    int32_t a[4] = {1, 2, 3, 4}, b[2] = {5, 6};
    ref_tensor ta = T(REF_DT_INT32, 2, d22, a), tb = T(REF_DT_INT32, 2, d21, b), te = T(REF_DT_INT32, 2, d20, NULL);
    ref_tensor y;
    const ref_tensor *in[3] = {&ta, &te, &tb};
    ref_node *n = node("Concat", 3, 1);
    oh_attr_int(M, n, "axis", -1);
    CHECK_OK(run(n, 13, 3, in, 1, &y, 0), &E);
    CHECK(shape_is(&y, REF_DT_INT32, 2, (int64_t[]){2, 3}) && bytes_are(&y, (int32_t[]){1, 2, 5, 3, 4, 6}, 24));
    oh_free_outputs(1, &y);

    ref_tensor tc = T(REF_DT_INT32, 2, (int64_t[]){1, 2}, b);
    const ref_tensor *in0[2] = {&ta, &tc};
    n = node("Concat", 2, 1);
    oh_attr_int(M, n, "axis", 0);
    CHECK_OK(run(n, 13, 2, in0, 1, &y, 0), &E);
    CHECK(shape_is(&y, REF_DT_INT32, 2, (int64_t[]){3, 2}) && bytes_are(&y, (int32_t[]){1, 2, 3, 4, 5, 6}, 24));
    oh_free_outputs(1, &y);

    ref_tensor legacy = T(REF_DT_INT32, 1, d0, NULL); /* a [0] placeholder next to 2-D inputs */
    const ref_tensor *inl[2] = {&legacy, &ta};
    CHECK_OK(run(n, 13, 2, inl, 1, &y, 0), &E);
    CHECK(shape_is(&y, REF_DT_INT32, 2, d22) && bytes_are(&y, a, 16));
    oh_free_outputs(1, &y);

    const ref_tensor *bad[2] = {&ta, &tb}; /* axis 0: dim 1 differs */
    CHECK(run(n, 13, 2, bad, 1, &y, 0) == REF_E_SHAPE);
    float f[2] = {0, 0};
    ref_tensor tf = T(REF_DT_FLOAT, 2, (int64_t[]){1, 2}, f);
    const ref_tensor *mixed[2] = {&ta, &tf};
    CHECK(run(n, 13, 2, mixed, 1, &y, 0) == REF_E_SHAPE);
    n = node("Concat", 2, 1);
    CHECK(run(n, 13, 2, in0, 1, &y, 0) == REF_E_INVALID); /* axis is required */
    n = node("Concat", 2, 1);
    oh_attr_int(M, n, "axis", 2);
    CHECK(run(n, 13, 2, in0, 1, &y, 0) == REF_E_SHAPE);

    /* big: middle axis, compared element by element and across thread counts */
    enum { A = 3, B1 = 50, B2 = 70, C = 997 };
    float *p = ref_malloc(sizeof(float) * A * B1 * C), *q = ref_malloc(sizeof(float) * A * B2 * C);
    for (int i = 0; i < A * B1 * C; i++)
        p[i] = (float)i;
    for (int i = 0; i < A * B2 * C; i++)
        q[i] = -(float)i;
    ref_tensor tp = T(REF_DT_FLOAT, 3, (int64_t[]){A, B1, C}, p), tq = T(REF_DT_FLOAT, 3, (int64_t[]){A, B2, C}, q);
    const ref_tensor *big[2] = {&tp, &tq};
    ref_tensor y2;
    n = node("Concat", 2, 1);
    oh_attr_int(M, n, "axis", 1);
    CHECK_OK(run(n, 13, 2, big, 1, &y, 0), &E);
    CHECK_OK(run2(n, 13, 2, big, 1, &y2), &E);
    CHECK(shape_is(&y, REF_DT_FLOAT, 3, (int64_t[]){A, B1 + B2, C}) && same(&y, &y2));
    int bad_at = -1;
    for (int i = 0; i < A && bad_at < 0; i++)
        for (int j = 0; j < B1 + B2 && bad_at < 0; j++)
            for (int k = 0; k < C; k++) {
                float want = j < B1 ? p[(i * B1 + j) * C + k] : q[(i * B2 + j - B1) * C + k];
                if (((float *)y.data)[(i * (B1 + B2) + j) * C + k] != want) {
                    bad_at = (i * (B1 + B2) + j) * C + k;
                    break;
                }
            }
    CHECK(bad_at == -1);
    oh_free_outputs(1, &y);
    oh_free_outputs(1, &y2);
    ref_free(p);
    ref_free(q);
}

/* Split a 2x6 int64 tensor 0..11 along axis 1 into n_out parts. */
static int split_op(int opset, int n_out, const int64_t *sizes, int n_sizes, bool as_attr, int64_t num_outputs,
                    unsigned mask, ref_tensor *y)
{
    static const int64_t x[12] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11};
    int64_t dims[2] = {2, 6}, ns = n_sizes;
    ref_node *n = node("Split", sizes && !as_attr ? 2 : 1, n_out);
    oh_attr_int(M, n, "axis", -1);
    if (sizes && as_attr)
        oh_attr_ints(M, n, "split", (size_t)n_sizes, sizes);
    if (num_outputs)
        oh_attr_int(M, n, "num_outputs", num_outputs);
    ref_tensor tx = T(REF_DT_INT64, 2, dims, x), ts = T(REF_DT_INT64, 1, &ns, sizes);
    const ref_tensor *in[2] = {&tx, &ts};
    return run(n, opset, n->n_inputs, in, n_out, y, mask);
}

static void test_split(void)
{
    ref_tensor y[4];
    CHECK_OK(split_op(13, 3, NULL, 0, false, 0, ALL, y), &E); /* equal */
    CHECK(shape_is(&y[0], REF_DT_INT64, 2, (int64_t[]){2, 2}) && bytes_are(&y[0], (int64_t[]){0, 1, 6, 7}, 32));
    CHECK(bytes_are(&y[1], (int64_t[]){2, 3, 8, 9}, 32) && bytes_are(&y[2], (int64_t[]){4, 5, 10, 11}, 32));
    oh_free_outputs(3, y);

    CHECK_OK(split_op(11, 2, (int64_t[]){2, 4}, 2, true, 0, ALL, y), &E); /* attribute form */
    CHECK(shape_is(&y[0], REF_DT_INT64, 2, (int64_t[]){2, 2}) && bytes_are(&y[0], (int64_t[]){0, 1, 6, 7}, 32));
    CHECK(shape_is(&y[1], REF_DT_INT64, 2, (int64_t[]){2, 4}));
    CHECK(bytes_are(&y[1], (int64_t[]){2, 3, 4, 5, 8, 9, 10, 11}, 64));
    oh_free_outputs(2, y);

    CHECK_OK(split_op(13, 3, (int64_t[]){1, 0, 5}, 3, false, 0, ALL, y), &E); /* input form, a zero part */
    CHECK(bytes_are(&y[0], (int64_t[]){0, 6}, 16) && shape_is(&y[1], REF_DT_INT64, 2, (int64_t[]){2, 0}));
    CHECK(bytes_are(&y[2], (int64_t[]){1, 2, 3, 4, 5, 7, 8, 9, 10, 11}, 80));
    oh_free_outputs(3, y);

    CHECK(split_op(13, 2, (int64_t[]){2, 4}, 2, false, 0, 1, y) == REF_E_DYNAMIC);
    CHECK(split_op(13, 4, NULL, 0, false, 0, ALL, y) == REF_E_SHAPE);                /* 6 over 4: uneven */
    CHECK(split_op(13, 2, (int64_t[]){2, 3}, 2, false, 0, ALL, y) == REF_E_SHAPE);   /* sums to 5 */
    CHECK(split_op(13, 3, (int64_t[]){2, 4}, 2, false, 0, ALL, y) == REF_E_SHAPE);   /* 2 sizes, 3 outputs */

    /* opset 18: num_outputs, last chunk smaller: 6 over 4 is 2,2,2,0 */
    CHECK_OK(split_op(18, 4, NULL, 0, false, 4, ALL, y), &E);
    CHECK(bytes_are(&y[2], (int64_t[]){4, 5, 10, 11}, 32) && shape_is(&y[3], REF_DT_INT64, 2, (int64_t[]){2, 0}));
    oh_free_outputs(4, y);
    CHECK(split_op(18, 3, NULL, 0, false, 4, ALL, y) == REF_E_SHAPE);

    /* 7 over 3 at opset 18: 3,3,1 */
    int64_t d7 = 7;
    uint8_t x7[7] = {1, 2, 3, 4, 5, 6, 7};
    ref_tensor t7 = T(REF_DT_UINT8, 1, &d7, x7);
    const ref_tensor *in7[1] = {&t7};
    ref_node *n = node("Split", 1, 3);
    oh_attr_int(M, n, "num_outputs", 3);
    CHECK_OK(run(n, 18, 1, in7, 3, y, 0), &E);
    CHECK(bytes_are(&y[0], (uint8_t[]){1, 2, 3}, 3) && bytes_are(&y[1], (uint8_t[]){4, 5, 6}, 3));
    CHECK(bytes_are(&y[2], (uint8_t[]){7}, 1));
    oh_free_outputs(3, y);
}

/* ---------------------------------------------------------------------------------------------
 * Tile, Expand
 * ------------------------------------------------------------------------------------------- */

static void test_tile_expand(void)
{
    int64_t d23[2] = {2, 3}, two = 2, three = 3;
    int64_t x[6] = {1, 2, 3, 4, 5, 6};
    int64_t reps[2] = {2, 2};
    ref_tensor tx = T(REF_DT_INT64, 2, d23, x), tr = T(REF_DT_INT64, 1, &two, reps), y, y2;
    const ref_tensor *in[2] = {&tx, &tr};
    ref_node *n = node("Tile", 2, 1);
    CHECK_OK(run(n, 13, 2, in, 1, &y, ALL), &E);
    static const int64_t want[24] = {1, 2, 3, 1, 2, 3, 4, 5, 6, 4, 5, 6, 1, 2, 3, 1, 2, 3, 4, 5, 6, 4, 5, 6};
    CHECK(shape_is(&y, REF_DT_INT64, 2, (int64_t[]){4, 6}) && bytes_are(&y, want, sizeof want));
    oh_free_outputs(1, &y);
    CHECK(run(n, 13, 2, in, 1, &y, 1) == REF_E_DYNAMIC);
    int64_t reps0[2] = {0, 5};
    ref_tensor tr0 = T(REF_DT_INT64, 1, &two, reps0);
    const ref_tensor *in0[2] = {&tx, &tr0};
    CHECK_OK(run(n, 13, 2, in0, 1, &y, ALL), &E);
    CHECK(shape_is(&y, REF_DT_INT64, 2, (int64_t[]){0, 15}));
    oh_free_outputs(1, &y);
    ref_tensor tr3 = T(REF_DT_INT64, 1, &three, (int64_t[]){1, 1, 1});
    const ref_tensor *in3[2] = {&tx, &tr3};
    CHECK(run(n, 13, 2, in3, 1, &y, ALL) == REF_E_SHAPE);

    /* Tile big, compared with naive modulo indexing and across threads */
    enum { R = 37, C = 53 };
    float *src = ref_malloc(sizeof(float) * R * C);
    for (int i = 0; i < R * C; i++)
        src[i] = (float)i;
    int64_t rc_dims[2] = {R, C}, big_reps[2] = {5, 7};
    ref_tensor tb = T(REF_DT_FLOAT, 2, rc_dims, src), tbr = T(REF_DT_INT64, 1, &two, big_reps);
    const ref_tensor *inb[2] = {&tb, &tbr};
    CHECK_OK(run(n, 13, 2, inb, 1, &y, ALL), &E);
    CHECK_OK(run2(n, 13, 2, inb, 1, &y2), &E);
    int wrong = 0;
    for (int i = 0; i < 5 * R; i++)
        for (int j = 0; j < 7 * C; j++)
            wrong += ((float *)y.data)[i * 7 * C + j] != src[(i % R) * C + j % C];
    CHECK(wrong == 0 && same(&y, &y2));
    oh_free_outputs(1, &y);
    oh_free_outputs(1, &y2);
    ref_free(src);

    /* Expand [3,1] by [2,1,6]: bidirectional, result [2,3,6] */
    int64_t d31[2] = {3, 1};
    float e[3] = {1, 2, 3};
    ref_tensor te = T(REF_DT_FLOAT, 2, d31, e), ts = T(REF_DT_INT64, 1, &three, (int64_t[]){2, 1, 6});
    const ref_tensor *ine[2] = {&te, &ts};
    n = node("Expand", 2, 1);
    CHECK_OK(run(n, 13, 2, ine, 1, &y, ALL), &E);
    CHECK(shape_is(&y, REF_DT_FLOAT, 3, (int64_t[]){2, 3, 6}));
    int ok = 1;
    for (int i = 0; i < 36; i++)
        ok &= ((float *)y.data)[i] == e[(i / 6) % 3];
    CHECK(ok);
    oh_free_outputs(1, &y);
    CHECK(run(n, 13, 2, ine, 1, &y, 1) == REF_E_DYNAMIC);
    ref_tensor ts1 = T(REF_DT_INT64, 1, &two, (int64_t[]){1, 1}); /* smaller shape keeps the input's */
    const ref_tensor *ine1[2] = {&te, &ts1};
    CHECK_OK(run(n, 13, 2, ine1, 1, &y, ALL), &E);
    CHECK(shape_is(&y, REF_DT_FLOAT, 2, d31) && bytes_are(&y, e, sizeof e));
    oh_free_outputs(1, &y);
    ref_tensor tsb = T(REF_DT_INT64, 1, &two, (int64_t[]){4, 2});
    const ref_tensor *ineb[2] = {&te, &tsb};
    CHECK(run(n, 13, 2, ineb, 1, &y, ALL) == REF_E_SHAPE);

    /* Expand big across threads: [1,1000] to [300,1000] */
    int64_t d1k[2] = {1, 1000};
    int32_t *row = ref_malloc(sizeof(int32_t) * 1000);
    for (int i = 0; i < 1000; i++)
        row[i] = i * 3;
    ref_tensor trow = T(REF_DT_INT32, 2, d1k, row), tsh = T(REF_DT_INT64, 1, &two, (int64_t[]){300, 1000});
    const ref_tensor *inr[2] = {&trow, &tsh};
    CHECK_OK(run(n, 13, 2, inr, 1, &y, ALL), &E);
    CHECK_OK(run2(n, 13, 2, inr, 1, &y2), &E);
    wrong = 0;
    for (int i = 0; i < 300 * 1000; i++)
        wrong += ((int32_t *)y.data)[i] != row[i % 1000];
    CHECK(wrong == 0 && same(&y, &y2));
    oh_free_outputs(1, &y);
    oh_free_outputs(1, &y2);
    ref_free(row);
}

/* ---------------------------------------------------------------------------------------------
 * Pad
 * ------------------------------------------------------------------------------------------- */

/* The ONNX documentation's 3x2 example padded by pads (opset 11 inputs) in mode. */
static int pad_op(const char *mode, int opset, const int64_t *pads, int n_pads, const float *value,
                  const int64_t *axes, int n_axes, unsigned mask, ref_tensor *y)
{
    static const float x[6] = {1.0f, 1.2f, 2.3f, 3.4f, 4.5f, 5.7f};
    int64_t dims[2] = {3, 2}, np = n_pads, na = n_axes;
    ref_node *n = node("Pad", axes ? 4 : value ? 3 : 2, 1);
    oh_attr_str(M, n, "mode", mode);
    ref_tensor tx = T(REF_DT_FLOAT, 2, dims, x), tp = T(REF_DT_INT64, 1, &np, pads);
    ref_tensor tv = T(REF_DT_FLOAT, 0, NULL, value), ta = T(REF_DT_INT64, 1, &na, axes);
    const ref_tensor *in[4] = {&tx, &tp, value ? &tv : NULL, &ta};
    return run(n, opset, n->n_inputs, in, 1, y, mask);
}

static void test_pad(void)
{
    ref_tensor y;
    int64_t d34[2] = {3, 4};
    static const int64_t pads[4] = {0, 2, 0, 0};
    CHECK_OK(pad_op("constant", 11, pads, 4, NULL, NULL, 0, ALL, &y), &E);
    CHECK(shape_is(&y, REF_DT_FLOAT, 2, d34));
    CHECK(bytes_are(&y, (float[]){0, 0, 1.0f, 1.2f, 0, 0, 2.3f, 3.4f, 0, 0, 4.5f, 5.7f}, 48));
    oh_free_outputs(1, &y);
    float v = -1.5f;
    CHECK_OK(pad_op("constant", 13, pads, 4, &v, NULL, 0, ALL, &y), &E);
    CHECK(bytes_are(&y, (float[]){v, v, 1.0f, 1.2f, v, v, 2.3f, 3.4f, v, v, 4.5f, 5.7f}, 48));
    oh_free_outputs(1, &y);
    CHECK_OK(pad_op("reflect", 11, pads, 4, NULL, NULL, 0, ALL, &y), &E);
    CHECK(bytes_are(&y, (float[]){1.0f, 1.2f, 1.0f, 1.2f, 2.3f, 3.4f, 2.3f, 3.4f, 4.5f, 5.7f, 4.5f, 5.7f}, 48));
    oh_free_outputs(1, &y);
    CHECK_OK(pad_op("edge", 11, pads, 4, NULL, NULL, 0, ALL, &y), &E);
    CHECK(bytes_are(&y, (float[]){1.0f, 1.0f, 1.0f, 1.2f, 2.3f, 2.3f, 2.3f, 3.4f, 4.5f, 4.5f, 4.5f, 5.7f}, 48));
    oh_free_outputs(1, &y);

    /* rows too: reflect [1,0,1,1] on the 3x2 gives rows 1,0,1,2,1 and cols (0),1 reflected: c1,c0,c1 */
    CHECK_OK(pad_op("reflect", 11, (int64_t[]){1, 0, 1, 1}, 4, NULL, NULL, 0, ALL, &y), &E);
    CHECK(shape_is(&y, REF_DT_FLOAT, 2, (int64_t[]){5, 3}));
    CHECK(bytes_are(&y, (float[]){2.3f, 3.4f, 2.3f, 1.0f, 1.2f, 1.0f, 2.3f, 3.4f, 2.3f, 4.5f, 5.7f, 4.5f,
                                  2.3f, 3.4f, 2.3f},
                    60));
    oh_free_outputs(1, &y);
    CHECK_OK(pad_op("edge", 11, (int64_t[]){2, 1, 0, 0}, 4, NULL, NULL, 0, ALL, &y), &E);
    CHECK(shape_is(&y, REF_DT_FLOAT, 2, (int64_t[]){5, 3}));
    CHECK(bytes_are(&y, (float[]){1.0f, 1.0f, 1.2f, 1.0f, 1.0f, 1.2f, 1.0f, 1.0f, 1.2f, 2.3f, 2.3f, 3.4f,
                                  4.5f, 4.5f, 5.7f},
                    60));
    oh_free_outputs(1, &y);

}

/* A 1-D int32 Pad at opset 13 with pads [b, e]. */
static int pad_1d(const char *mode, const int32_t *x, int64_t n, int64_t b, int64_t e, const void *value,
                  int value_dtype, ref_tensor *y)
{
    ref_node *nd = node("Pad", value ? 3 : 2, 1);
    oh_attr_str(M, nd, "mode", mode);
    int64_t two = 2, pads[2] = {b, e};
    ref_tensor tx = T(REF_DT_INT32, 1, &n, x), tp = T(REF_DT_INT64, 1, &two, pads);
    ref_tensor tv = T(value_dtype, 0, NULL, value);
    const ref_tensor *in[3] = {&tx, &tp, &tv};
    return run(nd, 13, nd->n_inputs, in, 1, y, ALL);
}

static void test_pad_forms(void)
{
    ref_tensor y;
    int64_t d34[2] = {3, 4};
    static const int64_t pads[4] = {0, 2, 0, 0};
    static const int32_t x3[3] = {1, 2, 3};
    CHECK_OK(pad_1d("wrap", x3, 3, 2, 2, NULL, 0, &y), &E);
    CHECK(bytes_are(&y, (int32_t[]){2, 3, 1, 2, 3, 1, 2}, 28));
    oh_free_outputs(1, &y);
    CHECK_OK(pad_1d("reflect", x3, 3, 4, 0, NULL, 0, &y), &E); /* wider than the input: reflects again */
    CHECK(bytes_are(&y, (int32_t[]){1, 2, 3, 2, 1, 2, 3}, 28));
    oh_free_outputs(1, &y);
    int32_t seven = 7;
    CHECK_OK(pad_1d("constant", x3, 3, 1, 1, &seven, REF_DT_INT32, &y), &E);
    CHECK(bytes_are(&y, (int32_t[]){7, 1, 2, 3, 7}, 20));
    oh_free_outputs(1, &y);
    float fseven = 7;
    CHECK(pad_1d("constant", x3, 3, 1, 1, &fseven, REF_DT_FLOAT, &y) == REF_E_SHAPE);
    CHECK(pad_1d("edge", x3, 0, 1, 1, NULL, 0, &y) == REF_E_SHAPE); /* nothing to repeat */
    CHECK_OK(pad_1d("constant", x3, 0, 1, 1, &seven, REF_DT_INT32, &y), &E);
    CHECK(bytes_are(&y, (int32_t[]){7, 7}, 8));
    oh_free_outputs(1, &y);

    /* negative pads crop: drop row 0, add a column before, drop the last column */
    CHECK_OK(pad_op("constant", 11, (int64_t[]){-1, 1, 0, -1}, 4, NULL, NULL, 0, ALL, &y), &E);
    CHECK(shape_is(&y, REF_DT_FLOAT, 2, (int64_t[]){2, 2}) && bytes_are(&y, (float[]){0, 2.3f, 0, 4.5f}, 16));
    oh_free_outputs(1, &y);
    CHECK(pad_op("constant", 11, (int64_t[]){-2, 0, -2, 0}, 4, NULL, NULL, 0, ALL, &y) == REF_E_SHAPE);

    /* opset 18 axes: pads only axis -1 */
    CHECK_OK(pad_op("constant", 18, (int64_t[]){1, 1}, 2, NULL, (int64_t[]){-1}, 1, ALL, &y), &E);
    CHECK(shape_is(&y, REF_DT_FLOAT, 2, d34));
    CHECK(bytes_are(&y, (float[]){0, 1.0f, 1.2f, 0, 0, 2.3f, 3.4f, 0, 0, 4.5f, 5.7f, 0}, 48));
    oh_free_outputs(1, &y);

    CHECK(pad_op("constant", 11, pads, 4, NULL, NULL, 0, 1, &y) == REF_E_DYNAMIC);
    CHECK(pad_op("constant", 11, pads, 2, NULL, NULL, 0, ALL, &y) == REF_E_SHAPE);
    CHECK(pad_op("mirror", 11, pads, 4, NULL, NULL, 0, ALL, &y) == REF_E_UNSUPPORTED);

    /* opset 2 attribute form on int32 with a value */
    ref_node *n = node("Pad", 1, 1);
    oh_attr_ints(M, n, "pads", 2, (int64_t[]){1, 2});
    oh_attr_float(M, n, "value", 9.0f);
    int64_t d2 = 2;
    int32_t xi[2] = {-4, 5};
    ref_tensor ti = T(REF_DT_INT32, 1, &d2, xi);
    const ref_tensor *in[1] = {&ti};
    CHECK_OK(run(n, 2, 1, in, 1, &y, 0), &E);
    CHECK(shape_is(&y, REF_DT_INT32, 1, (int64_t[]){5}) && bytes_are(&y, (int32_t[]){9, -4, 5, 9, 9}, 20));
    oh_free_outputs(1, &y);

    /* big 3-D reflect/edge across threads against each other */
    enum { A = 4, B = 120, C = 130 };
    float *src = ref_malloc(sizeof(float) * A * B * C);
    for (int i = 0; i < A * B * C; i++)
        src[i] = (float)(i % 1009);
    int64_t dims[3] = {A, B, C}, six = 6;
    int64_t bp[6] = {1, 3, 5, 0, -2, 7};
    ref_tensor tb = T(REF_DT_FLOAT, 3, dims, src), tbp = T(REF_DT_INT64, 1, &six, bp), y2;
    const ref_tensor *inb[2] = {&tb, &tbp};
    n = node("Pad", 2, 1);
    oh_attr_str(M, n, "mode", "reflect");
    CHECK_OK(run(n, 13, 2, inb, 1, &y, ALL), &E);
    CHECK_OK(run2(n, 13, 2, inb, 1, &y2), &E);
    CHECK(shape_is(&y, REF_DT_FLOAT, 3, (int64_t[]){5, 121, 142}) && same(&y, &y2));
    /* spot check: out[0][0][0] = in[1][3][5] (reflected back by the begin pads) */
    CHECK(((float *)y.data)[0] == src[(1 * B + 3) * C + 5]);
    oh_free_outputs(1, &y);
    oh_free_outputs(1, &y2);
    ref_free(src);
}

/* ---------------------------------------------------------------------------------------------
 * DepthToSpace, SpaceToDepth, Trilu
 * ------------------------------------------------------------------------------------------- */

static void test_depth_space(void)
{
    /* [1,8,1,1] with blocksize 2: C' = 2 */
    int64_t d8[4] = {1, 8, 1, 1};
    float x[8] = {0, 1, 2, 3, 4, 5, 6, 7};
    ref_tensor t = T(REF_DT_FLOAT, 4, d8, x), y, y2;
    const ref_tensor *in[1] = {&t};
    ref_node *n = node("DepthToSpace", 1, 1);
    oh_attr_int(M, n, "blocksize", 2);
    CHECK_OK(run(n, 13, 1, in, 1, &y, 0), &E); /* DCR: out[c][i][j] = in[(i*2+j)*2 + c] */
    CHECK(shape_is(&y, REF_DT_FLOAT, 4, (int64_t[]){1, 2, 2, 2}));
    CHECK(bytes_are(&y, (float[]){0, 2, 4, 6, 1, 3, 5, 7}, 32));
    oh_free_outputs(1, &y);
    n = node("DepthToSpace", 1, 1);
    oh_attr_int(M, n, "blocksize", 2);
    oh_attr_str(M, n, "mode", "CRD");
    CHECK_OK(run(n, 13, 1, in, 1, &y, 0), &E); /* CRD: out[c][i][j] = in[c*4 + i*2 + j] */
    CHECK(bytes_are(&y, x, 32));
    oh_free_outputs(1, &y);

    /* SpaceToDepth inverts DCR DepthToSpace; check on a bigger tensor round trip */
    enum { N = 2, C = 3, H = 6, W = 8, BS = 2 };
    int64_t ds[4] = {N, C, H, W};
    int16_t *s = ref_malloc(sizeof(int16_t) * N * C * H * W);
    for (int i = 0; i < N * C * H * W; i++)
        s[i] = (int16_t)(i * 3 - 500);
    ref_tensor ts = T(REF_DT_INT16, 4, ds, s);
    const ref_tensor *ins[1] = {&ts};
    n = node("SpaceToDepth", 1, 1);
    oh_attr_int(M, n, "blocksize", BS);
    CHECK_OK(run(n, 13, 1, ins, 1, &y, 0), &E);
    CHECK(shape_is(&y, REF_DT_INT16, 4, (int64_t[]){N, C * BS * BS, H / BS, W / BS}));
    /* naive: out[n][(i*b+j)*C + c][h][w] = in[n][c][h*b+i][w*b+j] */
    int wrong = 0;
    for (int b = 0; b < N; b++)
        for (int c = 0; c < C; c++)
            for (int h = 0; h < H; h++)
                for (int w = 0; w < W; w++) {
                    int oc = ((h % BS) * BS + w % BS) * C + c;
                    int16_t got = ((int16_t *)y.data)[((b * C * BS * BS + oc) * (H / BS) + h / BS) * (W / BS) + w / BS];
                    wrong += got != s[((b * C + c) * H + h) * W + w];
                }
    CHECK(wrong == 0);
    ref_tensor back_in = y;
    const ref_tensor *inb[1] = {&back_in};
    n = node("DepthToSpace", 1, 1);
    oh_attr_int(M, n, "blocksize", BS);
    CHECK_OK(run(n, 13, 1, inb, 1, &y2, 0), &E);
    CHECK(shape_is(&y2, REF_DT_INT16, 4, ds) && bytes_are(&y2, s, sizeof(int16_t) * N * C * H * W));
    oh_free_outputs(1, &y);
    oh_free_outputs(1, &y2);

    n = node("DepthToSpace", 1, 1);
    oh_attr_int(M, n, "blocksize", 3);
    CHECK(run(n, 13, 1, in, 1, &y, 0) == REF_E_SHAPE); /* 8 channels are not a multiple of 9 */
    n = node("SpaceToDepth", 1, 1);
    oh_attr_int(M, n, "blocksize", 4);
    CHECK(run(n, 13, 1, ins, 1, &y, 0) == REF_E_SHAPE); /* 6x8 is not a multiple of 4 */
    n = node("DepthToSpace", 1, 1);
    oh_attr_int(M, n, "blocksize", 2);
    oh_attr_str(M, n, "mode", "XYZ");
    CHECK(run(n, 13, 1, in, 1, &y, 0) == REF_E_UNSUPPORTED);
    ref_free(s);
}

static int trilu_op(bool upper, const int64_t *k, int dtype, int rank, const int64_t *dims, const void *x,
                    unsigned mask, ref_tensor *y)
{
    ref_node *n = node("Trilu", k ? 2 : 1, 1);
    if (!upper)
        oh_attr_int(M, n, "upper", 0);
    ref_tensor tx = T(dtype, rank, dims, x), tk = T(REF_DT_INT64, 0, NULL, k);
    const ref_tensor *in[2] = {&tx, &tk};
    return run(n, 14, n->n_inputs, in, 1, y, mask);
}

static void test_trilu(void)
{
    int64_t d34[2] = {3, 4};
    int64_t x[12] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12};
    ref_tensor y;
    CHECK_OK(trilu_op(true, NULL, REF_DT_INT64, 2, d34, x, ALL, &y), &E);
    CHECK(bytes_are(&y, (int64_t[]){1, 2, 3, 4, 0, 6, 7, 8, 0, 0, 11, 12}, 96));
    oh_free_outputs(1, &y);
    int64_t k1 = 1, km1 = -1, k9 = 9, kneg = -100;
    CHECK_OK(trilu_op(true, &k1, REF_DT_INT64, 2, d34, x, 1, &y), &E); /* k unknown at infer: fine */
    CHECK(bytes_are(&y, (int64_t[]){0, 2, 3, 4, 0, 0, 7, 8, 0, 0, 0, 12}, 96));
    oh_free_outputs(1, &y);
    CHECK_OK(trilu_op(false, NULL, REF_DT_INT64, 2, d34, x, ALL, &y), &E);
    CHECK(bytes_are(&y, (int64_t[]){1, 0, 0, 0, 5, 6, 0, 0, 9, 10, 11, 0}, 96));
    oh_free_outputs(1, &y);
    CHECK_OK(trilu_op(false, &km1, REF_DT_INT64, 2, d34, x, ALL, &y), &E);
    CHECK(bytes_are(&y, (int64_t[]){0, 0, 0, 0, 5, 0, 0, 0, 9, 10, 0, 0}, 96));
    oh_free_outputs(1, &y);
    CHECK_OK(trilu_op(true, &k9, REF_DT_INT64, 2, d34, x, ALL, &y), &E);
    static const int64_t zeros[12];
    CHECK(bytes_are(&y, zeros, 96));
    oh_free_outputs(1, &y);
    CHECK_OK(trilu_op(true, &kneg, REF_DT_INT64, 2, d34, x, ALL, &y), &E);
    CHECK(bytes_are(&y, x, 96));
    oh_free_outputs(1, &y);

    /* batched float [2,2,2], lower */
    int64_t d222[3] = {2, 2, 2};
    float f[8] = {1, 2, 3, 4, 5, 6, 7, 8};
    CHECK_OK(trilu_op(false, NULL, REF_DT_FLOAT, 3, d222, f, ALL, &y), &E);
    CHECK(bytes_are(&y, (float[]){1, 0, 3, 4, 5, 0, 7, 8}, 32));
    oh_free_outputs(1, &y);
    int64_t d30[3] = {3, 0, 5};
    CHECK_OK(trilu_op(true, NULL, REF_DT_FLOAT, 3, d30, NULL, ALL, &y), &E);
    CHECK(shape_is(&y, REF_DT_FLOAT, 3, d30));
    oh_free_outputs(1, &y);
    CHECK(trilu_op(true, NULL, REF_DT_FLOAT, 1, d30, f, ALL, &y) == REF_E_SHAPE);
}

int main(void)
{
    M = ref_model_new();
    CHECK_OK(ref_pool_new(2, &POOL2, &E), &E);
    nanosleep(&(struct timespec){0, 100 * 1000 * 1000}, NULL);
    test_transpose();
    test_concat();
    test_split();
    test_tile_expand();
    test_pad();
    test_pad_forms();
    test_depth_space();
    test_trilu();
    ref_pool_free(POOL2);
    ref_model_free(M);
    ref_alloc_stats st;
    ref_alloc_get_stats(&st);
    CHECK(st.live_bytes == 0);
    return check_summary();
}
