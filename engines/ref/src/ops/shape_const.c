/* shape_const.c: Constant, ConstantOfShape and Range, the shape-family ops that produce values from attributes
 * or scalar inputs. It must never allocate, and never write past the output shape its own infer computed. */
#include <math.h>
#include <string.h>

#include "layout_copy.h"
#include "shape_const.h"

/* ---------------------------------------------------------------------------------------------
 * Constant
 * ------------------------------------------------------------------------------------------- */

/* The constant as a tensor over the attribute's own storage (data borrowed from the node). */
static int constant_value(ref_op_ctx *c, ref_tensor *v)
{
    static const char *const unsupported[] = {"sparse_value", "value_string", "value_strings"};
    for (size_t k = 0; k < sizeof unsupported / sizeof unsupported[0]; k++)
        if (ref_node_attr(c->node, unsupported[k]))
            return ref_fail(c->err, REF_E_UNSUPPORTED, "Constant: attribute %s is not supported", unsupported[k]);
    memset(v, 0, sizeof *v);
    const ref_attr *a;
    if ((a = ref_node_attr(c->node, "value"))) {
        if (a->type != REF_ATTR_TENSOR || !a->t)
            return ref_fail(c->err, REF_E_INVALID, "Constant: attribute value is not a tensor");
        *v = *a->t;
        if (!ref_dtype_size(v->dtype))
            return ref_fail(c->err, REF_E_UNSUPPORTED, "Constant: value of type %s", ref_dtype_name(v->dtype));
        if (!v->data && ref_tensor_numel(v) > 0)
            return ref_fail(c->err, REF_E_INVALID, "Constant: value tensor has no data");
        return REF_OK;
    }
    if ((a = ref_node_attr(c->node, "value_float"))) {
        v->dtype = REF_DT_FLOAT;
        v->data = (void *)&a->f;
    } else if ((a = ref_node_attr(c->node, "value_int"))) {
        v->dtype = REF_DT_INT64;
        v->data = (void *)&a->i;
    } else if ((a = ref_node_attr(c->node, "value_floats"))) {
        v->dtype = REF_DT_FLOAT;
        v->rank = 1;
        v->dims[0] = (int64_t)a->n;
        v->data = (void *)a->floats;
    } else if ((a = ref_node_attr(c->node, "value_ints"))) {
        v->dtype = REF_DT_INT64;
        v->rank = 1;
        v->dims[0] = (int64_t)a->n;
        v->data = (void *)a->ints;
    } else {
        return ref_fail(c->err, REF_E_INVALID, "Constant: no value attribute");
    }
    return REF_OK;
}

int ref_constant_infer(ref_op_ctx *c)
{
    ref_tensor v;
    int rc = constant_value(c, &v);
    if (rc)
        return rc;
    c->out[0]->dtype = v.dtype;
    ref_tensor_set_shape(c->out[0], v.rank, v.dims);
    return REF_OK;
}

int ref_constant_run(ref_op_ctx *c)
{
    ref_tensor v;
    int rc = constant_value(c, &v);
    if (rc)
        return rc;
    if (ref_tensor_nbytes(&v) != ref_tensor_nbytes(c->out[0]))
        return ref_fail(c->err, REF_E_STATE, "Constant: output was not sized by infer");
    ref_layout_copy(c->pool, c->out[0]->data, v.data, ref_tensor_nbytes(&v));
    return REF_OK;
}

/* ---------------------------------------------------------------------------------------------
 * ConstantOfShape
 * ------------------------------------------------------------------------------------------- */

/* The fill element: the one-element `value` tensor attribute, float 0 without it. */
static int fill_value(ref_op_ctx *c, int *dtype, const void **elem)
{
    static const float zero = 0.0f;
    const ref_attr *a = ref_node_attr(c->node, "value");
    *dtype = REF_DT_FLOAT;
    *elem = &zero;
    if (!a)
        return REF_OK;
    if (a->type != REF_ATTR_TENSOR || !a->t)
        return ref_fail(c->err, REF_E_INVALID, "ConstantOfShape: attribute value is not a tensor");
    if (ref_tensor_numel(a->t) != 1 || !a->t->data)
        return ref_fail(c->err, REF_E_SHAPE, "ConstantOfShape: value must hold one element, not %lld",
                        (long long)ref_tensor_numel(a->t));
    if (!ref_dtype_size(a->t->dtype))
        return ref_fail(c->err, REF_E_UNSUPPORTED, "ConstantOfShape: value of type %s",
                        ref_dtype_name(a->t->dtype));
    *dtype = a->t->dtype;
    *elem = a->t->data;
    return REF_OK;
}

int ref_constant_of_shape_infer(ref_op_ctx *c)
{
    const ref_tensor *s = c->n_in > 0 ? c->in[0] : NULL;
    if (!s)
        return ref_fail(c->err, REF_E_INVALID, "ConstantOfShape: input 0 is required");
    if (s->dtype != REF_DT_INT64)
        return ref_fail(c->err, REF_E_UNSUPPORTED, "ConstantOfShape: shape must be int64, not %s",
                        ref_dtype_name(s->dtype));
    if (s->rank > 1)
        return ref_fail(c->err, REF_E_SHAPE, "ConstantOfShape: shape must be 1-D, got rank %d", s->rank);
    int64_t n = ref_tensor_numel(s);
    if (n > REF_MAX_RANK)
        return ref_fail(c->err, REF_E_UNSUPPORTED, "ConstantOfShape: rank %lld exceeds %d", (long long)n,
                        REF_MAX_RANK);
    if (!s->data && n > 0)
        return ref_fail(c->err, REF_E_DYNAMIC, "ConstantOfShape: shape input is not known before run");
    const int64_t *dims = n > 0 ? s->data : NULL;
    for (int64_t d = 0; d < n; d++)
        if (dims[d] < 0)
            return ref_fail(c->err, REF_E_SHAPE, "ConstantOfShape: negative dim %lld at %lld", (long long)dims[d],
                            (long long)d);
    int dtype;
    const void *elem;
    int rc = fill_value(c, &dtype, &elem);
    if (rc)
        return rc;
    c->out[0]->dtype = dtype;
    ref_tensor_set_shape(c->out[0], (int)n, dims);
    return REF_OK;
}

int ref_constant_of_shape_run(ref_op_ctx *c)
{
    int dtype;
    const void *elem;
    int rc = fill_value(c, &dtype, &elem);
    if (rc)
        return rc;
    ref_layout_fill(c->out[0]->data, elem, ref_dtype_size(dtype), ref_tensor_numel(c->out[0]));
    return REF_OK;
}

/* ---------------------------------------------------------------------------------------------
 * Range
 * ------------------------------------------------------------------------------------------- */

#define RANGE_MAX_ELEMS ((int64_t)1 << 40) /* larger counts are certainly a bad input, not a real tensor */

/* ceil(|limit-start| / |delta|) for integers, in unsigned arithmetic so int64 extremes cannot overflow. */
static int64_t range_count_int(int64_t start, int64_t limit, int64_t delta)
{
    if ((delta > 0 && limit <= start) || (delta < 0 && limit >= start))
        return 0;
    uint64_t span = delta > 0 ? (uint64_t)limit - (uint64_t)start : (uint64_t)start - (uint64_t)limit;
    uint64_t step = delta > 0 ? (uint64_t)delta : (uint64_t)0 - (uint64_t)delta;
    uint64_t n = span / step + (span % step != 0);
    return n > (uint64_t)RANGE_MAX_ELEMS ? -1 : (int64_t)n;
}

static int64_t range_count_real(double start, double limit, double delta)
{
    double n = ceil((limit - start) / delta);
    if (!(n == n) || n > (double)RANGE_MAX_ELEMS)
        return -1;
    return n > 0 ? (int64_t)n : 0;
}

static int64_t scalar_int(const ref_tensor *t)
{
    switch (t->dtype) {
    case REF_DT_INT16: return *(const int16_t *)t->data;
    case REF_DT_INT32: return *(const int32_t *)t->data;
    default: return *(const int64_t *)t->data;
    }
}

/* Element count of the range; a float's span is computed in float, as the spec's reference does. */
static int range_count(ref_op_ctx *c, int64_t *n)
{
    const ref_tensor *s = c->in[0], *l = c->in[1], *d = c->in[2];
    if (s->dtype == REF_DT_FLOAT) {
        float fs = *(const float *)s->data, fl = *(const float *)l->data, fd = *(const float *)d->data;
        if (fd == 0.0f)
            return ref_fail(c->err, REF_E_INVALID, "Range: delta is 0");
        float q = ceilf((fl - fs) / fd);
        *n = !(q == q) || q > (float)RANGE_MAX_ELEMS ? -1 : q > 0 ? (int64_t)q : 0;
    } else if (s->dtype == REF_DT_DOUBLE) {
        double ds = *(const double *)s->data, dl = *(const double *)l->data, dd = *(const double *)d->data;
        if (dd == 0.0)
            return ref_fail(c->err, REF_E_INVALID, "Range: delta is 0");
        *n = range_count_real(ds, dl, dd);
    } else {
        int64_t dd = scalar_int(d);
        if (dd == 0)
            return ref_fail(c->err, REF_E_INVALID, "Range: delta is 0");
        *n = range_count_int(scalar_int(s), scalar_int(l), dd);
    }
    if (*n < 0)
        return ref_fail(c->err, REF_E_RANGE, "Range: too many elements (or NaN bounds)");
    return REF_OK;
}

int ref_range_infer(ref_op_ctx *c)
{
    static const int types[] = {REF_DT_FLOAT, REF_DT_DOUBLE, REF_DT_INT16, REF_DT_INT32, REF_DT_INT64};
    static const char *const names[] = {"start", "limit", "delta"};
    for (int i = 0; i < 3; i++) {
        int rc = ref_op_want_dtype(c, i, 5, types);
        if (rc) {
            ref_fail_prefix(c->err, "Range: ");
            return rc;
        }
        if (c->in[i]->dtype != c->in[0]->dtype)
            return ref_fail(c->err, REF_E_SHAPE, "Range: %s is %s but start is %s", names[i],
                            ref_dtype_name(c->in[i]->dtype), ref_dtype_name(c->in[0]->dtype));
        if (ref_tensor_numel(c->in[i]) != 1)
            return ref_fail(c->err, REF_E_SHAPE, "Range: %s must be a scalar, has %lld elements", names[i],
                            (long long)ref_tensor_numel(c->in[i]));
    }
    for (int i = 0; i < 3; i++)
        if (!c->in[i]->data)
            return ref_fail(c->err, REF_E_DYNAMIC, "Range: %s is not known before run", names[i]);
    int64_t n;
    int rc = range_count(c, &n);
    if (rc)
        return rc;
    c->out[0]->dtype = c->in[0]->dtype;
    ref_tensor_set_shape(c->out[0], 1, &n);
    return REF_OK;
}

int ref_range_run(ref_op_ctx *c)
{
    int64_t n = c->out[0]->dims[0];
    void *y = c->out[0]->data;
    switch (c->in[0]->dtype) {
    case REF_DT_FLOAT: {
        float s = *(const float *)c->in[0]->data, d = *(const float *)c->in[2]->data;
        for (int64_t i = 0; i < n; i++)
            ((float *)y)[i] = s + (float)i * d;
        break;
    }
    case REF_DT_DOUBLE: {
        double s = *(const double *)c->in[0]->data, d = *(const double *)c->in[2]->data;
        for (int64_t i = 0; i < n; i++)
            ((double *)y)[i] = s + (double)i * d;
        break;
    }
    default: {
        /* values stay between start and limit, so the wrapped unsigned sum is the exact result */
        uint64_t s = (uint64_t)scalar_int(c->in[0]), d = (uint64_t)scalar_int(c->in[2]);
        size_t es = ref_dtype_size(c->in[0]->dtype);
        for (int64_t i = 0; i < n; i++) {
            int64_t v = (int64_t)(s + (uint64_t)i * d);
            if (es == 2) {
                int16_t w = (int16_t)v;
                memcpy((char *)y + i * 2, &w, 2);
            } else if (es == 4) {
                int32_t w = (int32_t)v;
                memcpy((char *)y + i * 4, &w, 4);
            } else {
                memcpy((char *)y + i * 8, &v, 8);
            }
        }
        break;
    }
    }
    return REF_OK;
}
