/* test_ops_shape.c: unit tests of the "shape" family (Shape..Range) with hand-computed expectations.
 * It must never pass without checking values: every case compares shapes and every output element. */
#include <math.h>
#include <string.h>
#include <time.h>

#include "check.h"
#include "op_harness.h"

#define ALL 0xFFFFu /* every input's value visible to infer */
#define N_OF(a) (sizeof(a) / sizeof((a)[0]))

static ref_model *M;
static ref_error E;

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

/* ---------------------------------------------------------------------------------------------
 * Shape, Size
 * ------------------------------------------------------------------------------------------- */

static void shape_case(int opset, int64_t start, int64_t end, bool has_start, bool has_end, int n_want,
                       const int64_t *want)
{
    ref_node *n = node("Shape", 1, 1);
    if (has_start)
        oh_attr_int(M, n, "start", start);
    if (has_end)
        oh_attr_int(M, n, "end", end);
    int64_t dims[3] = {3, 4, 5};
    ref_tensor x = T(REF_DT_FLOAT, 3, dims, NULL); /* Shape never reads data */
    const ref_tensor *in[1] = {&x};
    ref_tensor y;
    CHECK_OK(run(n, opset, 1, in, 1, &y, 0), &E);
    int64_t nd = n_want;
    CHECK(shape_is(&y, REF_DT_INT64, 1, &nd));
    CHECK(bytes_are(&y, want, (size_t)n_want * 8));
    oh_free_outputs(1, &y);
}

static void test_shape_size(void)
{
    CHECK(ref_op_find("", "Shape")->value_from_shape);
    CHECK(ref_op_find("", "Size")->value_from_shape);
    shape_case(15, 0, 0, false, false, 3, (int64_t[]){3, 4, 5});
    shape_case(15, 1, 0, true, false, 2, (int64_t[]){4, 5});
    shape_case(15, 0, -1, false, true, 2, (int64_t[]){3, 4});
    shape_case(15, -1, 0, true, false, 1, (int64_t[]){5});
    shape_case(15, 1, 2, true, true, 1, (int64_t[]){4});
    shape_case(15, -10, 10, true, true, 3, (int64_t[]){3, 4, 5}); /* both clamp */
    shape_case(15, 2, 1, true, true, 0, NULL);                     /* start past end: empty */
    shape_case(13, 1, 2, true, true, 3, (int64_t[]){3, 4, 5});     /* attributes did not exist before 15 */

    ref_node *n = node("Size", 1, 1);
    int64_t dims[3] = {3, 4, 5};
    ref_tensor x = T(REF_DT_UINT8, 3, dims, NULL), y;
    const ref_tensor *in[1] = {&x};
    CHECK_OK(run(n, 13, 1, in, 1, &y, 0), &E);
    CHECK(y.dtype == REF_DT_INT64 && y.rank == 0);
    CHECK(*(int64_t *)y.data == 60);
    oh_free_outputs(1, &y);
}

/* ---------------------------------------------------------------------------------------------
 * Reshape, Flatten
 * ------------------------------------------------------------------------------------------- */

static int reshape(const int64_t *xdims, int xrank, const int64_t *shape, int n_shape, int allowzero, ref_tensor *y,
                   unsigned mask)
{
    ref_node *n = node("Reshape", 2, 1);
    if (allowzero >= 0)
        oh_attr_int(M, n, "allowzero", allowzero);
    static float data[64];
    for (int i = 0; i < 64; i++)
        data[i] = (float)i;
    int64_t sd = n_shape;
    ref_tensor x = T(REF_DT_FLOAT, xrank, xdims, data), s = T(REF_DT_INT64, 1, &sd, shape);
    const ref_tensor *in[2] = {&x, &s};
    return run(n, 14, 2, in, 1, y, mask);
}

static void test_reshape(void)
{
    int64_t x234[3] = {2, 3, 4};
    ref_tensor y;
    CHECK_OK(reshape(x234, 3, (int64_t[]){0, -1}, 2, -1, &y, ALL), &E);
    CHECK(shape_is(&y, REF_DT_FLOAT, 2, (int64_t[]){2, 12}));
    CHECK(((float *)y.data)[0] == 0.0f && ((float *)y.data)[23] == 23.0f && ((float *)y.data)[13] == 13.0f);
    oh_free_outputs(1, &y);

    CHECK_OK(reshape(x234, 3, (int64_t[]){4, 0, -1}, 3, -1, &y, ALL), &E); /* 0 copies dim 1 (3) */
    CHECK(shape_is(&y, REF_DT_FLOAT, 3, (int64_t[]){4, 3, 2}));
    oh_free_outputs(1, &y);

    CHECK_OK(reshape(x234, 3, (int64_t[]){-1}, 1, -1, &y, ALL), &E);
    CHECK(shape_is(&y, REF_DT_FLOAT, 1, (int64_t[]){24}));
    oh_free_outputs(1, &y);

    /* the value is needed: without it infer asks to be re-run */
    CHECK(reshape(x234, 3, (int64_t[]){6, 4}, 2, -1, &y, 1) == REF_E_DYNAMIC);
    oh_free_outputs(1, &y);

    int64_t x23[2] = {2, 3};
    CHECK(reshape(x23, 2, (int64_t[]){4, 2}, 2, -1, &y, ALL) == REF_E_SHAPE);
    CHECK(strstr(E.msg, "cannot reshape [2,3] (6 elements) to [4,2]") != NULL);
    CHECK(reshape(x23, 2, (int64_t[]){-1, -1}, 2, -1, &y, ALL) == REF_E_SHAPE);
    CHECK(reshape(x23, 2, (int64_t[]){4, -1}, 2, -1, &y, ALL) == REF_E_SHAPE);
    CHECK(reshape(x23, 2, (int64_t[]){1, 1, 0}, 3, -1, &y, ALL) == REF_E_SHAPE); /* 0 past input rank */
    CHECK(reshape(x23, 2, (int64_t[]){-2, -3}, 2, -1, &y, ALL) == REF_E_SHAPE);

    /* allowzero: a 0 is a real zero-length dim, only valid for empty inputs */
    int64_t x034[3] = {0, 3, 4};
    CHECK_OK(reshape(x034, 3, (int64_t[]){3, 4, 0}, 3, 1, &y, ALL), &E);
    CHECK(shape_is(&y, REF_DT_FLOAT, 3, (int64_t[]){3, 4, 0}));
    oh_free_outputs(1, &y);
    CHECK(reshape(x034, 3, (int64_t[]){3, 4, 0}, 3, 0, &y, ALL) == REF_E_SHAPE); /* 0 copies 4: 48 != 0 */
    CHECK(reshape(x034, 3, (int64_t[]){0, -1}, 2, 1, &y, ALL) == REF_E_SHAPE);   /* -1 with literal 0 */
    CHECK_OK(reshape(x034, 3, (int64_t[]){0, 12}, 2, 0, &y, ALL), &E);           /* copies the 0 */
    CHECK(shape_is(&y, REF_DT_FLOAT, 2, (int64_t[]){0, 12}));
    oh_free_outputs(1, &y);

    /* opset 1-4: shape attribute */
    ref_node *n = node("Reshape", 1, 1);
    oh_attr_ints(M, n, "shape", 2, (int64_t[]){3, -1});
    float d[6] = {1, 2, 3, 4, 5, 6};
    ref_tensor x = T(REF_DT_FLOAT, 2, x23, d);
    const ref_tensor *in[1] = {&x};
    CHECK_OK(run(n, 4, 1, in, 1, &y, 0), &E);
    CHECK(shape_is(&y, REF_DT_FLOAT, 2, (int64_t[]){3, 2}) && bytes_are(&y, d, sizeof d));
    oh_free_outputs(1, &y);
}

static void flatten_case(int64_t axis, bool has_axis, int rc_want, int64_t a, int64_t b)
{
    ref_node *n = node("Flatten", 1, 1);
    if (has_axis)
        oh_attr_int(M, n, "axis", axis);
    int64_t dims[4] = {2, 3, 4, 5};
    int32_t data[120];
    for (int i = 0; i < 120; i++)
        data[i] = i * 7 - 3;
    ref_tensor x = T(REF_DT_INT32, 4, dims, data), y;
    const ref_tensor *in[1] = {&x};
    int rc = run(n, 13, 1, in, 1, &y, 0);
    CHECK(rc == rc_want);
    if (!rc) {
        CHECK(shape_is(&y, REF_DT_INT32, 2, (int64_t[]){a, b}));
        CHECK(bytes_are(&y, data, sizeof data));
    }
    oh_free_outputs(1, &y);
}

static void test_flatten(void)
{
    flatten_case(0, false, 0, 2, 60);
    flatten_case(0, true, 0, 1, 120);
    flatten_case(2, true, 0, 6, 20);
    flatten_case(4, true, 0, 120, 1);
    flatten_case(-1, true, 0, 24, 5);
    flatten_case(-4, true, 0, 1, 120);
    flatten_case(5, true, REF_E_SHAPE, 0, 0);
    flatten_case(-5, true, REF_E_SHAPE, 0, 0);
}

/* ---------------------------------------------------------------------------------------------
 * Squeeze, Unsqueeze
 * ------------------------------------------------------------------------------------------- */

/* axes: NULL for none; as_attr picks the pre-13 attribute form. Returns the status; *y holds the result. */
static int squeeze_op(const char *op, int opset, const int64_t *xdims, int xrank, const int64_t *axes, int n_axes,
                      unsigned mask, ref_tensor *y)
{
    bool as_attr = opset < 13;
    ref_node *n = node(op, axes && !as_attr ? 2 : 1, 1);
    if (axes && as_attr)
        oh_attr_ints(M, n, "axes", (size_t)n_axes, axes);
    static double data[64];
    for (int i = 0; i < 64; i++)
        data[i] = i + 0.5;
    int64_t na = n_axes;
    ref_tensor x = T(REF_DT_DOUBLE, xrank, xdims, data), a = T(REF_DT_INT64, 1, &na, axes);
    const ref_tensor *in[2] = {&x, &a};
    int rc = run(n, opset, n->n_inputs, in, 1, y, mask);
    if (!rc)
        CHECK(bytes_are(y, data, (size_t)ref_tensor_numel(&x) * 8));
    return rc;
}

static void test_squeeze(void)
{
    int64_t x[4] = {1, 3, 1, 5};
    ref_tensor y;
    CHECK_OK(squeeze_op("Squeeze", 11, x, 4, (int64_t[]){0, 2}, 2, 0, &y), &E);
    CHECK(shape_is(&y, REF_DT_DOUBLE, 2, (int64_t[]){3, 5}));
    oh_free_outputs(1, &y);
    CHECK_OK(squeeze_op("Squeeze", 13, x, 4, (int64_t[]){-2}, 1, ALL, &y), &E);
    CHECK(shape_is(&y, REF_DT_DOUBLE, 3, (int64_t[]){1, 3, 5}));
    oh_free_outputs(1, &y);
    CHECK_OK(squeeze_op("Squeeze", 13, x, 4, NULL, 0, ALL, &y), &E); /* no axes: every 1 goes */
    CHECK(shape_is(&y, REF_DT_DOUBLE, 2, (int64_t[]){3, 5}));
    oh_free_outputs(1, &y);
    CHECK(squeeze_op("Squeeze", 13, x, 4, (int64_t[]){1}, 1, ALL, &y) == REF_E_SHAPE); /* dim 3 is not 1 */
    CHECK(squeeze_op("Squeeze", 13, x, 4, (int64_t[]){4}, 1, ALL, &y) == REF_E_SHAPE);
    CHECK(squeeze_op("Squeeze", 13, x, 4, (int64_t[]){0, -4}, 2, ALL, &y) == REF_E_SHAPE); /* repeated */
    CHECK(squeeze_op("Squeeze", 13, x, 4, (int64_t[]){0}, 1, 1, &y) == REF_E_DYNAMIC);

    int64_t x345[3] = {3, 4, 5};
    CHECK_OK(squeeze_op("Unsqueeze", 13, x345, 3, (int64_t[]){0, 4}, 2, ALL, &y), &E);
    CHECK(shape_is(&y, REF_DT_DOUBLE, 5, (int64_t[]){1, 3, 4, 5, 1}));
    oh_free_outputs(1, &y);
    CHECK_OK(squeeze_op("Unsqueeze", 13, x345, 3, (int64_t[]){-1, 2, 0}, 3, ALL, &y), &E); /* unsorted */
    CHECK(shape_is(&y, REF_DT_DOUBLE, 6, (int64_t[]){1, 3, 1, 4, 5, 1}));
    oh_free_outputs(1, &y);
    CHECK_OK(squeeze_op("Unsqueeze", 11, x345, 3, (int64_t[]){3}, 1, 0, &y), &E);
    CHECK(shape_is(&y, REF_DT_DOUBLE, 4, (int64_t[]){3, 4, 5, 1}));
    oh_free_outputs(1, &y);
    CHECK(squeeze_op("Unsqueeze", 13, x345, 3, (int64_t[]){1, -4}, 2, ALL, &y) == REF_E_SHAPE); /* same axis */
    CHECK(squeeze_op("Unsqueeze", 13, x345, 3, (int64_t[]){5}, 1, ALL, &y) == REF_E_SHAPE);
    CHECK(squeeze_op("Unsqueeze", 13, x345, 3, (int64_t[]){0}, 1, 1, &y) == REF_E_DYNAMIC);
    CHECK(squeeze_op("Unsqueeze", 13, x345, 3, NULL, 0, ALL, &y) == REF_E_INVALID);

    int64_t s0[1] = {0};
    CHECK_OK(squeeze_op("Unsqueeze", 13, s0, 0, (int64_t[]){0}, 1, ALL, &y), &E); /* scalar to [1] */
    CHECK(shape_is(&y, REF_DT_DOUBLE, 1, (int64_t[]){1}));
    oh_free_outputs(1, &y);
}

/* ---------------------------------------------------------------------------------------------
 * Identity (all dtypes), Dropout
 * ------------------------------------------------------------------------------------------- */

static void test_identity_dtypes(void)
{
    static const int types[] = {REF_DT_FLOAT, REF_DT_INT64, REF_DT_INT32, REF_DT_BOOL, REF_DT_DOUBLE,
                                REF_DT_UINT8, REF_DT_INT8, REF_DT_FLOAT16, REF_DT_UINT64};
    unsigned char data[7 * 8];
    for (size_t i = 0; i < sizeof data; i++)
        data[i] = (unsigned char)(i * 37 + 1);
    int64_t dims[2] = {7, 1};
    for (size_t k = 0; k < N_OF(types); k++) {
        ref_node *n = node("Identity", 1, 1);
        ref_tensor x = T(types[k], 2, dims, data), y;
        const ref_tensor *in[1] = {&x};
        CHECK_OK(run(n, 16, 1, in, 1, &y, 0), &E);
        CHECK(shape_is(&y, types[k], 2, dims));
        CHECK(bytes_are(&y, data, 7 * ref_dtype_size(types[k])));
        CHECK(y.data != x.data);
        oh_free_outputs(1, &y);
    }
    /* Strings are fixed slots: Identity copies them like any other element. */
    ref_node *n = node("Identity", 1, 1);
    char sd[7 * REF_STRING_BYTES] = {0};
    for (int i = 0; i < 7; i++)
        sd[i * REF_STRING_BYTES] = (char)('a' + i);
    ref_tensor x = T(REF_DT_STRING, 2, dims, sd), y;
    const ref_tensor *in[1] = {&x};
    CHECK_OK(run(n, 16, 1, in, 1, &y, 0), &E);
    CHECK(shape_is(&y, REF_DT_STRING, 2, dims) && bytes_are(&y, sd, sizeof sd));
    oh_free_outputs(1, &y);
}

static void test_dropout(void)
{
    int64_t dims[2] = {2, 3};
    float d[6] = {1, -2, 3, -4, 5, -6};
    ref_tensor x = T(REF_DT_FLOAT, 2, dims, d), y[2];
    uint8_t on = 1, off = 0;
    float ratio = 0.5f;
    ref_tensor r = T(REF_DT_FLOAT, 0, NULL, &ratio);
    ref_tensor t_on = T(REF_DT_BOOL, 0, NULL, &on), t_off = T(REF_DT_BOOL, 0, NULL, &off);

    const ref_tensor *in[3] = {&x, &r, &t_off};
    ref_node *n = node("Dropout", 3, 2);
    CHECK_OK(run(n, 13, 3, in, 2, y, ALL), &E);
    CHECK(shape_is(&y[0], REF_DT_FLOAT, 2, dims) && bytes_are(&y[0], d, sizeof d));
    static const uint8_t all_true[6] = {1, 1, 1, 1, 1, 1};
    CHECK(shape_is(&y[1], REF_DT_BOOL, 2, dims) && bytes_are(&y[1], all_true, 6));
    oh_free_outputs(2, y);

    in[2] = &t_on; /* training with a constant true: random masks are not supported */
    CHECK(run(n, 13, 3, in, 2, y, ALL) == REF_E_UNSUPPORTED);
    oh_free_outputs(2, y);
    CHECK(run(n, 13, 3, in, 2, y, 1) == REF_E_UNSUPPORTED); /* still caught at run */
    oh_free_outputs(2, y);

    ref_node *old = node("Dropout", 1, 2); /* opset 7: the mask has the input's type */
    oh_attr_float(M, old, "ratio", 0.3f);
    CHECK_OK(run(old, 7, 1, in, 2, y, 0), &E);
    static const float ones[6] = {1, 1, 1, 1, 1, 1};
    CHECK(bytes_are(&y[0], d, sizeof d));
    CHECK(shape_is(&y[1], REF_DT_FLOAT, 2, dims) && bytes_are(&y[1], ones, sizeof ones));
    oh_free_outputs(2, y);

    ref_node *one = node("Dropout", 1, 1);
    CHECK_OK(run(one, 12, 1, in, 1, y, 0), &E);
    CHECK(bytes_are(&y[0], d, sizeof d));
    oh_free_outputs(1, y);
}

/* ---------------------------------------------------------------------------------------------
 * Constant, ConstantOfShape, Range
 * ------------------------------------------------------------------------------------------- */

static void test_constant(void)
{
    ref_tensor y;
    int32_t v[4] = {7, -8, 9, 10};
    int64_t dims[2] = {2, 2};
    ref_tensor val = T(REF_DT_INT32, 2, dims, v);
    ref_node *n = node("Constant", 0, 1);
    oh_attr_tensor(M, n, "value", &val);
    CHECK_OK(run(n, 13, 0, NULL, 1, &y, 0), &E);
    CHECK(shape_is(&y, REF_DT_INT32, 2, dims) && bytes_are(&y, v, sizeof v));
    oh_free_outputs(1, &y);

    n = node("Constant", 0, 1);
    oh_attr_float(M, n, "value_float", 2.5f);
    CHECK_OK(run(n, 13, 0, NULL, 1, &y, 0), &E);
    CHECK(y.dtype == REF_DT_FLOAT && y.rank == 0 && *(float *)y.data == 2.5f);
    oh_free_outputs(1, &y);

    n = node("Constant", 0, 1);
    oh_attr_int(M, n, "value_int", -42);
    CHECK_OK(run(n, 13, 0, NULL, 1, &y, 0), &E);
    CHECK(y.dtype == REF_DT_INT64 && y.rank == 0 && *(int64_t *)y.data == -42);
    oh_free_outputs(1, &y);

    n = node("Constant", 0, 1);
    float fs[3] = {1.5f, -2, 3};
    oh_attr_floats(M, n, "value_floats", 3, fs);
    CHECK_OK(run(n, 13, 0, NULL, 1, &y, 0), &E);
    CHECK(shape_is(&y, REF_DT_FLOAT, 1, (int64_t[]){3}) && bytes_are(&y, fs, sizeof fs));
    oh_free_outputs(1, &y);

    n = node("Constant", 0, 1);
    int64_t is[2] = {5, -6};
    oh_attr_ints(M, n, "value_ints", 2, is);
    CHECK_OK(run(n, 13, 0, NULL, 1, &y, 0), &E);
    CHECK(shape_is(&y, REF_DT_INT64, 1, (int64_t[]){2}) && bytes_are(&y, is, sizeof is));
    oh_free_outputs(1, &y);

    n = node("Constant", 0, 1);
    oh_attr_str(M, n, "value_string", "hello");
    CHECK(run(n, 13, 0, NULL, 1, &y, 0) == REF_E_UNSUPPORTED);
    n = node("Constant", 0, 1);
    oh_attr(M, n, "sparse_value", REF_ATTR_SPARSE_TENSOR);
    CHECK(run(n, 13, 0, NULL, 1, &y, 0) == REF_E_UNSUPPORTED);
    n = node("Constant", 0, 1);
    CHECK(run(n, 13, 0, NULL, 1, &y, 0) == REF_E_INVALID);
}

static int const_of_shape(const int64_t *shape, int64_t n_shape, const ref_tensor *value, unsigned mask,
                          ref_tensor *y)
{
    ref_node *n = node("ConstantOfShape", 1, 1);
    if (value)
        oh_attr_tensor(M, n, "value", value);
    ref_tensor s = T(REF_DT_INT64, 1, &n_shape, shape);
    const ref_tensor *in[1] = {&s};
    return run(n, 9, 1, in, 1, y, mask);
}

static void test_constant_of_shape(void)
{
    ref_tensor y;
    int32_t seven = 7;
    int64_t one = 1;
    ref_tensor v = T(REF_DT_INT32, 1, &one, &seven);
    CHECK_OK(const_of_shape((int64_t[]){2, 3}, 2, &v, ALL, &y), &E);
    static const int32_t sevens[6] = {7, 7, 7, 7, 7, 7};
    CHECK(shape_is(&y, REF_DT_INT32, 2, (int64_t[]){2, 3}) && bytes_are(&y, sevens, sizeof sevens));
    oh_free_outputs(1, &y);

    CHECK_OK(const_of_shape((int64_t[]){4}, 1, NULL, ALL, &y), &E); /* default float 0 */
    static const float zeros[4] = {0, 0, 0, 0};
    CHECK(shape_is(&y, REF_DT_FLOAT, 1, (int64_t[]){4}) && bytes_are(&y, zeros, sizeof zeros));
    oh_free_outputs(1, &y);

    CHECK_OK(const_of_shape((int64_t[]){0}, 1, &v, ALL, &y), &E);
    CHECK(shape_is(&y, REF_DT_INT32, 1, (int64_t[]){0}) && ref_tensor_numel(&y) == 0);
    oh_free_outputs(1, &y);

    CHECK_OK(const_of_shape(NULL, 0, &v, ALL, &y), &E); /* empty shape: a scalar */
    CHECK(y.dtype == REF_DT_INT32 && y.rank == 0 && *(int32_t *)y.data == 7);
    oh_free_outputs(1, &y);

    CHECK(const_of_shape((int64_t[]){2, 3}, 2, &v, 0, &y) == REF_E_DYNAMIC);
    CHECK(const_of_shape((int64_t[]){2, -3}, 2, &v, ALL, &y) == REF_E_SHAPE);
    int64_t two = 2;
    int32_t pair[2] = {1, 2};
    ref_tensor v2 = T(REF_DT_INT32, 1, &two, pair);
    CHECK(const_of_shape((int64_t[]){2}, 1, &v2, ALL, &y) == REF_E_SHAPE);
}

static int range_op(int dtype, const void *s, const void *l, const void *d, unsigned mask, ref_tensor *y)
{
    ref_node *n = node("Range", 3, 1);
    ref_tensor ts = T(dtype, 0, NULL, s), tl = T(dtype, 0, NULL, l), td = T(dtype, 0, NULL, d);
    const ref_tensor *in[3] = {&ts, &tl, &td};
    return run(n, 11, 3, in, 1, y, mask);
}

static void test_range(void)
{
    ref_tensor y;
    float fs = 1, fl = 5, fd = 2;
    CHECK_OK(range_op(REF_DT_FLOAT, &fs, &fl, &fd, ALL, &y), &E);
    CHECK(shape_is(&y, REF_DT_FLOAT, 1, (int64_t[]){2}) && bytes_are(&y, (float[]){1, 3}, 8));
    oh_free_outputs(1, &y);

    float gs = 0, gl = 1, gd = 0.25f; /* ceil(4) = 4 exactly */
    CHECK_OK(range_op(REF_DT_FLOAT, &gs, &gl, &gd, ALL, &y), &E);
    CHECK(shape_is(&y, REF_DT_FLOAT, 1, (int64_t[]){4}) && bytes_are(&y, (float[]){0, 0.25f, 0.5f, 0.75f}, 16));
    oh_free_outputs(1, &y);

    int32_t is = 10, il = 4, id = -3;
    CHECK_OK(range_op(REF_DT_INT32, &is, &il, &id, ALL, &y), &E);
    CHECK(shape_is(&y, REF_DT_INT32, 1, (int64_t[]){2}) && bytes_are(&y, (int32_t[]){10, 7}, 8));
    oh_free_outputs(1, &y);

    int64_t ls = 0, ll = 10, ld = 3;
    CHECK_OK(range_op(REF_DT_INT64, &ls, &ll, &ld, ALL, &y), &E);
    CHECK(shape_is(&y, REF_DT_INT64, 1, (int64_t[]){4}) && bytes_are(&y, (int64_t[]){0, 3, 6, 9}, 32));
    oh_free_outputs(1, &y);

    int64_t wrong_way = -1;
    CHECK_OK(range_op(REF_DT_INT64, &ls, &ll, &wrong_way, ALL, &y), &E);
    CHECK(shape_is(&y, REF_DT_INT64, 1, (int64_t[]){0}));
    oh_free_outputs(1, &y);

    int16_t ss = -3, sl = 3, sd = 2;
    CHECK_OK(range_op(REF_DT_INT16, &ss, &sl, &sd, ALL, &y), &E);
    CHECK(shape_is(&y, REF_DT_INT16, 1, (int64_t[]){3}) && bytes_are(&y, (int16_t[]){-3, -1, 1}, 6));
    oh_free_outputs(1, &y);

    double ds = 2.5, dl = 1.0, dd = -0.5;
    CHECK_OK(range_op(REF_DT_DOUBLE, &ds, &dl, &dd, ALL, &y), &E);
    CHECK(shape_is(&y, REF_DT_DOUBLE, 1, (int64_t[]){3}) && bytes_are(&y, (double[]){2.5, 2.0, 1.5}, 24));
    oh_free_outputs(1, &y);

    int64_t big_s = INT64_MIN + 1, big_l = INT64_MAX, big_d = INT64_MAX; /* no overflow in the count */
    CHECK_OK(range_op(REF_DT_INT64, &big_s, &big_l, &big_d, ALL, &y), &E);
    CHECK(shape_is(&y, REF_DT_INT64, 1, (int64_t[]){2}) && bytes_are(&y, (int64_t[]){INT64_MIN + 1, 0}, 16));
    oh_free_outputs(1, &y);

    CHECK(range_op(REF_DT_FLOAT, &fs, &fl, &fd, 3, &y) == REF_E_DYNAMIC);
    int64_t zero = 0;
    CHECK(range_op(REF_DT_INT64, &ls, &ll, &zero, ALL, &y) == REF_E_INVALID);
    uint8_t u = 1;
    CHECK(range_op(REF_DT_UINT8, &u, &u, &u, ALL, &y) == REF_E_UNSUPPORTED);
}

/* ---------------------------------------------------------------------------------------------
 * Threads: a large copy gives the same bytes on 1 and 2 threads
 * ------------------------------------------------------------------------------------------- */

/* pool.c's first loop can miss a worker that has not parked yet (the worker reads the generation only after
 * taking the lock, so a bump before that is lost and the loop waits forever). Until that is fixed, multi-thread
 * runs go through one long-lived pool that has had time to settle, instead of oh_run's fresh pool. */
static ref_pool *POOL2;

static int run_pool(const ref_node *n, int opset, int n_in, const ref_tensor *const *in, ref_tensor *out,
                    ref_pool *pool)
{
    const ref_op *op = ref_op_find("", n->op_type);
    ref_tensor *out_p[1] = {out};
    memset(out, 0, sizeof *out);
    ref_op_ctx c = {.node = n, .opset = opset, .n_in = n_in, .n_out = 1, .in = in, .out = out_p, .pool = pool,
                    .n_threads = ref_pool_threads(pool), .err = &E};
    int rc = op->infer(&c);
    if (rc)
        return rc;
    out->data = ref_aligned_alloc(ref_tensor_nbytes(out) + 1);
    return op->run(&c);
}

static void test_threads(void)
{
    enum { N = 300001 };
    int64_t dims[1] = {N}, shape[2] = {-1, 1};
    float *d = ref_malloc(N * sizeof *d);
    for (int i = 0; i < N; i++)
        d[i] = (float)i * 0.5f;
    int64_t ns = 2;
    ref_tensor x = T(REF_DT_FLOAT, 1, dims, d), s = T(REF_DT_INT64, 1, &ns, shape), y1, y2;
    const ref_tensor *in[2] = {&x, &s};
    ref_node *n = node("Reshape", 2, 1);
    CHECK_OK(oh_run(n, 14, 2, in, 1, &y1, ALL, 1, &E), &E);
    CHECK_OK(run_pool(n, 14, 2, in, &y2, POOL2), &E);
    CHECK(shape_is(&y2, REF_DT_FLOAT, 2, (int64_t[]){N, 1}));
    CHECK(bytes_are(&y1, d, N * sizeof *d) && bytes_are(&y2, d, N * sizeof *d));
    oh_free_outputs(1, &y1);
    oh_free_outputs(1, &y2);
    ref_free(d);
}

int main(void)
{
    M = ref_model_new();
    CHECK_OK(ref_pool_new(2, &POOL2, &E), &E);
    nanosleep(&(struct timespec){0, 100 * 1000 * 1000}, NULL);
    test_shape_size();
    test_reshape();
    test_flatten();
    test_squeeze();
    test_identity_dtypes();
    test_dropout();
    test_constant();
    test_constant_of_shape();
    test_range();
    test_threads();
    ref_pool_free(POOL2);
    ref_model_free(M);
    ref_alloc_stats st;
    ref_alloc_get_stats(&st);
    CHECK(st.live_bytes == 0);
    return check_summary();
}
