/* index_misc.c: CumSum, OneHot and EyeLike: index-driven generators and running sums.
 * It must never allocate at run time, nor write past the output shape infer set. */
#include <inttypes.h>
#include <math.h>

#include "index_util.h"

/* ------------------------------------------------------------------------------------------------
 * CumSum: running sum along an axis given as an input; exclusive and reverse attributes.
 * ---------------------------------------------------------------------------------------------- */

static int cumsum_axis(ref_op_ctx *c, int *axis)
{
    int64_t a;
    int rc = ix_read_scalar(c, 1, "axis", &a);
    if (rc)
        return rc;
    *axis = ref_norm_axis(a, c->in[0]->rank);
    if (*axis < 0)
        return ref_fail(c->err, REF_E_SHAPE, "axis %" PRId64 " is out of range for rank %d", a, c->in[0]->rank);
    return REF_OK;
}

int ix_cumsum_infer(ref_op_ctx *c)
{
    static const int types[] = {REF_DT_FLOAT, REF_DT_DOUBLE, REF_DT_INT32, REF_DT_INT64, REF_DT_UINT32,
                                REF_DT_UINT64};
    int rc = ref_op_want_dtype(c, 0, 6, types);
    if (rc)
        return rc;
    if (c->in[0]->rank < 1)
        return ref_fail(c->err, REF_E_SHAPE, "input must have rank >= 1");
    int axis;
    rc = cumsum_axis(c, &axis);
    if (rc && rc != REF_E_DYNAMIC) /* the axis only matters to run; its shape must still be right */
        return rc;
    ref_tensor *y = c->out[0];
    y->dtype = c->in[0]->dtype;
    ref_tensor_set_shape(y, c->in[0]->rank, c->in[0]->dims);
    return REF_OK;
}

typedef struct {
    const void *x;
    void *y;
    int64_t len, inner;
    int exclusive, reverse, dtype;
} cumsum_job;

/* Integer sums wrap (computed in the unsigned type) rather than overflow. */
#define CUMSUM_LINE(T, U)                                                   \
    do {                                                                    \
        const T *xs = (const T *)j->x + base;                               \
        T *ys = (T *)j->y + base;                                           \
        T acc = 0;                                                          \
        for (int64_t s = 0; s < j->len; s++) {                              \
            int64_t k = j->reverse ? j->len - 1 - s : s;                    \
            T v = xs[k * j->inner];                                         \
            if (j->exclusive) {                                             \
                ys[k * j->inner] = acc;                                     \
                acc = (T)((U)acc + (U)v);                                   \
            } else {                                                        \
                acc = (T)((U)acc + (U)v);                                   \
                ys[k * j->inner] = acc;                                     \
            }                                                               \
        }                                                                   \
    } while (0)

static void cumsum_task(void *arg, int64_t begin, int64_t end, int tid)
{
    (void)tid;
    const cumsum_job *j = arg;
    for (int64_t line = begin; line < end; line++) {
        int64_t base = (line / j->inner) * j->len * j->inner + line % j->inner;
        switch (j->dtype) {
        case REF_DT_FLOAT: CUMSUM_LINE(float, float); break;
        case REF_DT_DOUBLE: CUMSUM_LINE(double, double); break;
        case REF_DT_INT32: CUMSUM_LINE(int32_t, uint32_t); break;
        case REF_DT_INT64: CUMSUM_LINE(int64_t, uint64_t); break;
        case REF_DT_UINT32: CUMSUM_LINE(uint32_t, uint32_t); break;
        default: CUMSUM_LINE(uint64_t, uint64_t); break;
        }
    }
}

int ix_cumsum_run(ref_op_ctx *c)
{
    int axis;
    int rc = cumsum_axis(c, &axis);
    if (rc)
        return rc;
    const ref_tensor *x = c->in[0];
    cumsum_job j = {.x = x->data, .y = c->out[0]->data, .len = x->dims[axis],
                    .inner = ref_dims_prod(x->dims, axis + 1, x->rank),
                    .exclusive = ref_attr_int_or(c->node, "exclusive", 0) != 0,
                    .reverse = ref_attr_int_or(c->node, "reverse", 0) != 0, .dtype = x->dtype};
    int64_t lines = ref_dims_prod(x->dims, 0, axis) * j.inner;
    if (j.len && lines)
        ref_parallel_for(c->pool, lines, ix_grain(j.len * 8), cumsum_task, &j);
    return REF_OK;
}

/* ------------------------------------------------------------------------------------------------
 * OneHot: out has indices' shape with depth inserted at axis; values = [off, on].
 * ---------------------------------------------------------------------------------------------- */

/* Element k of a numeric tensor as an integer (floats truncate toward zero; NaN and huge values map
 * to INT64_MIN, which no depth accepts). Returns 0 for a dtype it cannot read. */
static int num_at(const ref_tensor *t, int64_t k, int64_t *v)
{
    double f;
    switch (t->dtype) {
    case REF_DT_INT8: *v = ((const int8_t *)t->data)[k]; return 1;
    case REF_DT_UINT8: *v = ((const uint8_t *)t->data)[k]; return 1;
    case REF_DT_INT16: *v = ((const int16_t *)t->data)[k]; return 1;
    case REF_DT_UINT16: *v = ((const uint16_t *)t->data)[k]; return 1;
    case REF_DT_INT32: *v = ((const int32_t *)t->data)[k]; return 1;
    case REF_DT_UINT32: *v = ((const uint32_t *)t->data)[k]; return 1;
    case REF_DT_INT64: *v = ((const int64_t *)t->data)[k]; return 1;
    case REF_DT_UINT64: {
        uint64_t u = ((const uint64_t *)t->data)[k];
        *v = u > INT64_MAX ? INT64_MIN : (int64_t)u;
        return 1;
    }
    case REF_DT_FLOAT: f = ((const float *)t->data)[k]; break;
    case REF_DT_DOUBLE: f = ((const double *)t->data)[k]; break;
    default: return 0;
    }
    *v = (isnan(f) || f >= 9.2e18 || f <= -9.2e18) ? INT64_MIN : (int64_t)f;
    return 1;
}

static int onehot_depth(ref_op_ctx *c, int64_t *depth)
{
    const ref_tensor *d = ix_in(c, 1);
    if (!d)
        return ref_fail(c->err, REF_E_INVALID, "input 1 (depth) is required");
    if (ref_tensor_numel(d) != 1)
        return ref_fail(c->err, REF_E_SHAPE, "depth must hold one value, not %" PRId64, ref_tensor_numel(d));
    if (!d->data)
        return ref_fail(c->err, REF_E_DYNAMIC, "depth is not known before run");
    if (!num_at(d, 0, depth))
        return ref_fail(c->err, REF_E_UNSUPPORTED, "depth of type %s", ref_dtype_name(d->dtype));
    if (*depth < 1)
        return ref_fail(c->err, REF_E_RANGE, "depth %" PRId64 " must be positive", *depth);
    return REF_OK;
}

int ix_onehot_infer(ref_op_ctx *c)
{
    static const int types[] = {REF_DT_INT8,  REF_DT_UINT8, REF_DT_INT16, REF_DT_UINT16, REF_DT_INT32,
                                REF_DT_UINT32, REF_DT_INT64, REF_DT_UINT64, REF_DT_FLOAT, REF_DT_DOUBLE};
    int rc = ref_op_want_dtype(c, 0, 10, types);
    if (!rc)
        rc = ix_want_sized(c, 2);
    if (rc)
        return rc;
    const ref_tensor *idx = c->in[0], *vals = c->in[2];
    if (ref_tensor_numel(vals) != 2)
        return ref_fail(c->err, REF_E_SHAPE, "values must hold [off, on], has %" PRId64 " elements",
                        ref_tensor_numel(vals));
    int64_t a = ref_attr_int_or(c->node, "axis", -1);
    int axis = a < 0 ? (int)(a + idx->rank + 1) : (int)a;
    if (a < -idx->rank - 1 || a > idx->rank)
        return ref_fail(c->err, REF_E_SHAPE, "axis %" PRId64 " is out of range for indices of rank %d", a,
                        idx->rank);
    if (idx->rank + 1 > REF_MAX_RANK)
        return ref_fail(c->err, REF_E_UNSUPPORTED, "output rank %d exceeds %d", idx->rank + 1, REF_MAX_RANK);
    int64_t depth;
    rc = onehot_depth(c, &depth);
    if (rc)
        return rc;
    ref_tensor *y = c->out[0];
    y->dtype = vals->dtype;
    y->rank = idx->rank + 1;
    for (int d = 0, k = 0; d < y->rank; d++)
        y->dims[d] = d == axis ? depth : idx->dims[k++];
    return REF_OK;
}

typedef struct {
    const ref_tensor *idx;
    const uint8_t *off, *on;
    uint8_t *y;
    int64_t depth, inner;
    size_t es;
} onehot_job;

/* A row is (outer o, class d): inner elements, each on when its index names class d. */
static void onehot_task(void *arg, int64_t begin, int64_t end, int tid)
{
    (void)tid;
    const onehot_job *j = arg;
    for (int64_t r = begin; r < end; r++) {
        int64_t o = r / j->depth, cls = r % j->depth;
        uint8_t *dst = j->y + (size_t)(r * j->inner) * j->es;
        for (int64_t i = 0; i < j->inner; i++) {
            int64_t v;
            num_at(j->idx, o * j->inner + i, &v);
            if (v < 0 && v >= -j->depth)
                v += j->depth;
            ix_copy_elem(dst + (size_t)i * j->es, v == cls ? j->on : j->off, j->es);
        }
    }
}

int ix_onehot_run(ref_op_ctx *c)
{
    int64_t depth;
    int rc = onehot_depth(c, &depth);
    if (rc)
        return rc;
    const ref_tensor *idx = c->in[0], *vals = c->in[2];
    ref_tensor *y = c->out[0];
    int64_t a = ref_attr_int_or(c->node, "axis", -1);
    int axis = a < 0 ? (int)(a + idx->rank + 1) : (int)a;
    if (y->dims[axis] != depth)
        return ref_fail(c->err, REF_E_SHAPE, "depth %" PRId64 " differs from the inferred %" PRId64, depth,
                        y->dims[axis]);
    size_t es = ref_dtype_size(vals->dtype);
    onehot_job j = {.idx = idx, .off = vals->data, .on = (const uint8_t *)vals->data + es, .y = y->data,
                    .depth = depth, .inner = ref_dims_prod(idx->dims, axis, idx->rank), .es = es};
    int64_t rows = ref_dims_prod(idx->dims, 0, axis) * depth;
    if (j.inner)
        ref_parallel_for(c->pool, rows, ix_grain(j.inner * 8), onehot_task, &j);
    return REF_OK;
}

/* ------------------------------------------------------------------------------------------------
 * EyeLike: a 2-D tensor of zeros with ones on diagonal k, shaped like the input.
 * ---------------------------------------------------------------------------------------------- */

/* The bytes of 1 in dtype; 0 when the dtype has no 1 we can write. */
static size_t one_of(int dtype, uint8_t *buf)
{
    union {
        float f;
        double d;
        int64_t i64;
        uint16_t h;
        uint8_t b[8];
    } u;
    memset(&u, 0, sizeof u);
    size_t es = ref_dtype_size(dtype);
    switch (dtype) {
    case REF_DT_FLOAT: u.f = 1.0f; break;
    case REF_DT_DOUBLE: u.d = 1.0; break;
    case REF_DT_FLOAT16: u.h = 0x3C00; break;
    case REF_DT_BFLOAT16: u.h = 0x3F80; break;
    case REF_DT_INT8: case REF_DT_UINT8: case REF_DT_BOOL: case REF_DT_INT16: case REF_DT_UINT16:
    case REF_DT_INT32: case REF_DT_UINT32: case REF_DT_INT64: case REF_DT_UINT64:
        u.i64 = 1; /* little-endian: the low bytes hold 1 for every width */
        break;
    default: return 0;
    }
    memcpy(buf, u.b, es);
    return es;
}

int ix_eyelike_infer(ref_op_ctx *c)
{
    int rc = ix_want_sized(c, 0);
    if (rc)
        return rc;
    const ref_tensor *x = c->in[0];
    if (x->rank != 2)
        return ref_fail(c->err, REF_E_SHAPE, "input must be 2-D, has rank %d", x->rank);
    int dt = (int)ref_attr_int_or(c->node, "dtype", x->dtype);
    uint8_t one[8];
    if (!one_of(dt, one))
        return ref_fail(c->err, REF_E_UNSUPPORTED, "output type %s", ref_dtype_name(dt));
    ref_tensor *y = c->out[0];
    y->dtype = dt;
    ref_tensor_set_shape(y, 2, x->dims);
    return REF_OK;
}

int ix_eyelike_run(ref_op_ctx *c)
{
    ref_tensor *y = c->out[0];
    uint8_t one[8];
    size_t es = one_of(y->dtype, one);
    int64_t k = ref_attr_int_or(c->node, "k", 0), rows = y->dims[0], cols = y->dims[1];
    memset(y->data, 0, ref_tensor_nbytes(y));
    if (k <= -rows || k >= cols) /* the diagonal misses the matrix; also keeps -k from overflowing */
        return REF_OK;
    int64_t i0 = k < 0 ? -k : 0, i1 = cols - k < rows ? cols - k : rows;
    for (int64_t i = i0; i < i1; i++)
        ix_copy_elem((uint8_t *)y->data + (size_t)(i * cols + i + k) * es, one, es);
    return REF_OK;
}
