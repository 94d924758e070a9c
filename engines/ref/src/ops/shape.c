/* shape.c: the "shape" family table, and Shape, Size, Reshape, Flatten, Squeeze, Unsqueeze, Identity, Dropout.
 * It must never allocate at run time, nor let an output alias its input: run always copies. */
#include <string.h>

#include "layout_copy.h"
#include "shape_const.h"
#include "training.h"

/* ---------------------------------------------------------------------------------------------
 * Shared pieces
 * ------------------------------------------------------------------------------------------- */

/* out[0] takes in[0]'s dtype with the given shape; the element counts must agree. */
static int set_reshaped(ref_op_ctx *c, const char *op, int rank, const int64_t *dims)
{
    const ref_tensor *x = c->in[0];
    ref_tensor *y = c->out[0];
    ref_tensor want = {.dtype = x->dtype};
    ref_tensor_set_shape(&want, rank, dims);
    if (ref_tensor_numel(&want) != ref_tensor_numel(x)) {
        char a[128], b[128];
        return ref_fail(c->err, REF_E_SHAPE, "%s: cannot reshape %s (%lld elements) to %s (%lld elements)", op,
                        ref_shape_str(x, a, sizeof a), (long long)ref_tensor_numel(x),
                        ref_shape_str(&want, b, sizeof b), (long long)ref_tensor_numel(&want));
    }
    y->dtype = x->dtype;
    ref_tensor_set_shape(y, rank, dims);
    return REF_OK;
}

/* The run of every op here whose output is its input's bytes under another shape. */
static int copy_run(ref_op_ctx *c)
{
    ref_layout_copy(c->pool, c->out[0]->data, c->in[0]->data, ref_tensor_nbytes(c->in[0]));
    return REF_OK;
}

/* Axes from the `axes` attribute (before opset 13) or the optional input 1 (from 13).
 * Returns the count, -1 when no axes are given, or a negative status (REF_E_DYNAMIC without data). */
static int read_axes(ref_op_ctx *c, const char *op, int64_t *axes)
{
    if (c->opset < 13) {
        const int64_t *a;
        size_t n = ref_attr_ints(c->node, "axes", &a);
        if (!ref_node_attr(c->node, "axes"))
            return -1;
        if (n > REF_MAX_RANK)
            return ref_fail(c->err, REF_E_UNSUPPORTED, "%s: %zu axes exceed rank %d", op, n, REF_MAX_RANK);
        memcpy(axes, a, n * sizeof *a);
        return (int)n;
    }
    const ref_tensor *t = ref_layout_in(c, 1);
    if (!t)
        return -1;
    if (t->dtype != REF_DT_INT64)
        return ref_fail(c->err, REF_E_UNSUPPORTED, "%s: axes must be int64, not %s", op, ref_dtype_name(t->dtype));
    if (!t->data)
        return ref_fail(c->err, REF_E_DYNAMIC, "%s: axes input is not known before run", op);
    int64_t n = ref_tensor_numel(t);
    if (n > REF_MAX_RANK)
        return ref_fail(c->err, REF_E_UNSUPPORTED, "%s: %lld axes exceed rank %d", op, (long long)n, REF_MAX_RANK);
    memcpy(axes, t->data, (size_t)n * sizeof *axes);
    return (int)n;
}

/* Normalize axes against rank into a mask; fails on out-of-range or repeated axes. */
static int axes_mask(ref_op_ctx *c, const char *op, const int64_t *axes, int n, int rank, bool *mask)
{
    for (int d = 0; d < rank; d++)
        mask[d] = false;
    for (int k = 0; k < n; k++) {
        int a = ref_norm_axis(axes[k], rank);
        if (a < 0)
            return ref_fail(c->err, REF_E_SHAPE, "%s: axis %lld is out of range for rank %d", op,
                            (long long)axes[k], rank);
        if (mask[a])
            return ref_fail(c->err, REF_E_SHAPE, "%s: axis %lld is repeated", op, (long long)axes[k]);
        mask[a] = true;
    }
    return REF_OK;
}

/* ---------------------------------------------------------------------------------------------
 * Shape, Size: outputs depend on the input's shape only
 * ------------------------------------------------------------------------------------------- */

/* [start, end) of the dims Shape reports; start/end attributes exist from opset 15 and clamp. */
static void shape_slice(const ref_op_ctx *c, int rank, int *start, int *end)
{
    int64_t s = 0, e = rank;
    if (c->opset >= 15) {
        s = ref_attr_int_or(c->node, "start", 0);
        e = ref_attr_int_or(c->node, "end", rank);
    }
    if (s < 0)
        s += rank;
    if (e < 0)
        e += rank;
    s = s < 0 ? 0 : s > rank ? rank : s;
    e = e < 0 ? 0 : e > rank ? rank : e;
    *start = (int)s;
    *end = (int)(e > s ? e : s);
}

static int shape_infer(ref_op_ctx *c)
{
    if (!ref_layout_in(c, 0))
        return ref_fail(c->err, REF_E_INVALID, "Shape: input 0 is required");
    int s, e;
    shape_slice(c, c->in[0]->rank, &s, &e);
    int64_t n = e - s;
    c->out[0]->dtype = REF_DT_INT64;
    ref_tensor_set_shape(c->out[0], 1, &n);
    return REF_OK;
}

static int shape_run(ref_op_ctx *c)
{
    int s, e;
    shape_slice(c, c->in[0]->rank, &s, &e);
    int64_t *y = c->out[0]->data;
    for (int d = s; d < e; d++)
        y[d - s] = c->in[0]->dims[d];
    return REF_OK;
}

static int size_infer(ref_op_ctx *c)
{
    if (!ref_layout_in(c, 0))
        return ref_fail(c->err, REF_E_INVALID, "Size: input 0 is required");
    c->out[0]->dtype = REF_DT_INT64;
    c->out[0]->rank = 0;
    return REF_OK;
}

static int size_run(ref_op_ctx *c)
{
    *(int64_t *)c->out[0]->data = ref_tensor_numel(c->in[0]);
    return REF_OK;
}

/* ---------------------------------------------------------------------------------------------
 * Reshape, Flatten
 * ------------------------------------------------------------------------------------------- */

/* The requested shape: the `shape` attribute before opset 5, input 1 after. */
static int reshape_target(ref_op_ctx *c, int64_t *shape)
{
    if (c->opset < 5) {
        const int64_t *a;
        size_t n = ref_attr_ints(c->node, "shape", &a);
        if (n > REF_MAX_RANK)
            return ref_fail(c->err, REF_E_UNSUPPORTED, "Reshape: target rank %zu exceeds %d", n, REF_MAX_RANK);
        if (n)
            memcpy(shape, a, n * sizeof *a);
        return (int)n;
    }
    const ref_tensor *t = ref_layout_in(c, 1);
    if (!t)
        return ref_fail(c->err, REF_E_INVALID, "Reshape: shape input is required");
    if (t->dtype != REF_DT_INT64 && t->dtype != REF_DT_INT32)
        return ref_fail(c->err, REF_E_UNSUPPORTED, "Reshape: shape must be int64, not %s", ref_dtype_name(t->dtype));
    if (ref_tensor_numel(t) == 0)
        return 0; /* a scalar: no values needed */
    if (!t->data)
        return ref_fail(c->err, REF_E_DYNAMIC, "Reshape: shape input is not known before run");
    if (ref_tensor_numel(t) > REF_MAX_RANK)
        return ref_fail(c->err, REF_E_UNSUPPORTED, "Reshape: target rank %lld exceeds %d",
                        (long long)ref_tensor_numel(t), REF_MAX_RANK);
    return ref_op_read_ints(c, 1, shape, REF_MAX_RANK);
}

static int reshape_infer(ref_op_ctx *c)
{
    int rc = ref_layout_want_sized(c, 0, "Reshape");
    if (rc)
        return rc;
    int64_t dims[REF_MAX_RANK];
    int n = reshape_target(c, dims);
    if (n < 0)
        return n;
    const ref_tensor *x = c->in[0];
    bool allowzero = c->opset >= 14 && ref_attr_int_or(c->node, "allowzero", 0) != 0;
    int infer_at = -1;
    bool has_zero = false;
    int64_t known = 1;
    for (int d = 0; d < n; d++) {
        if (dims[d] == -1) {
            if (infer_at >= 0)
                return ref_fail(c->err, REF_E_SHAPE, "Reshape: more than one -1 in the target shape");
            infer_at = d;
            continue;
        }
        if (dims[d] < -1)
            return ref_fail(c->err, REF_E_SHAPE, "Reshape: invalid target dim %lld at %d", (long long)dims[d], d);
        if (dims[d] == 0 && !allowzero) {
            if (d >= x->rank)
                return ref_fail(c->err, REF_E_SHAPE, "Reshape: target dim %d is 0 (copy) but the input has rank %d",
                                d, x->rank);
            dims[d] = x->dims[d];
        }
        has_zero |= dims[d] == 0;
        if (dims[d] && known > INT64_MAX / dims[d])
            return ref_fail(c->err, REF_E_SHAPE, "Reshape: target shape overflows");
        known *= dims[d];
    }
    if (infer_at >= 0) {
        int64_t total = ref_tensor_numel(x);
        if (allowzero && has_zero)
            return ref_fail(c->err, REF_E_SHAPE, "Reshape: -1 with a literal 0 is invalid when allowzero=1");
        if (known == 0 || total % known)
            return ref_fail(c->err, REF_E_SHAPE, "Reshape: cannot infer -1: %lld elements over known product %lld",
                            (long long)total, (long long)known);
        dims[infer_at] = total / known;
    }
    return set_reshaped(c, "Reshape", n, dims);
}

static int flatten_infer(ref_op_ctx *c)
{
    int rc = ref_layout_want_sized(c, 0, "Flatten");
    if (rc)
        return rc;
    const ref_tensor *x = c->in[0];
    int64_t axis = ref_attr_int_or(c->node, "axis", 1);
    if (axis < 0)
        axis += x->rank;
    if (axis < 0 || axis > x->rank)
        return ref_fail(c->err, REF_E_SHAPE, "Flatten: axis %lld is out of range for rank %d",
                        (long long)ref_attr_int_or(c->node, "axis", 1), x->rank);
    int64_t dims[2] = {ref_dims_prod(x->dims, 0, (int)axis), ref_dims_prod(x->dims, (int)axis, x->rank)};
    return set_reshaped(c, "Flatten", 2, dims);
}

/* ---------------------------------------------------------------------------------------------
 * Squeeze, Unsqueeze
 * ------------------------------------------------------------------------------------------- */

static int squeeze_infer(ref_op_ctx *c)
{
    int rc = ref_layout_want_sized(c, 0, "Squeeze");
    if (rc)
        return rc;
    const ref_tensor *x = c->in[0];
    int64_t axes[REF_MAX_RANK];
    int n = read_axes(c, "Squeeze", axes);
    if (n < -1)
        return n;
    bool drop[REF_MAX_RANK];
    if (n == -1) {
        for (int d = 0; d < x->rank; d++)
            drop[d] = x->dims[d] == 1;
    } else if ((rc = axes_mask(c, "Squeeze", axes, n, x->rank, drop))) {
        return rc;
    }
    int64_t dims[REF_MAX_RANK];
    int r = 0;
    for (int d = 0; d < x->rank; d++) {
        if (!drop[d]) {
            dims[r++] = x->dims[d];
        } else if (x->dims[d] != 1) {
            char a[128];
            return ref_fail(c->err, REF_E_SHAPE, "Squeeze: dim %d of %s is %lld, not 1", d,
                            ref_shape_str(x, a, sizeof a), (long long)x->dims[d]);
        }
    }
    return set_reshaped(c, "Squeeze", r, dims);
}

static int unsqueeze_infer(ref_op_ctx *c)
{
    int rc = ref_layout_want_sized(c, 0, "Unsqueeze");
    if (rc)
        return rc;
    const ref_tensor *x = c->in[0];
    int64_t axes[REF_MAX_RANK];
    int n = read_axes(c, "Unsqueeze", axes);
    if (n < -1)
        return n;
    if (n == -1)
        return ref_fail(c->err, REF_E_INVALID, "Unsqueeze: axes are required");
    int rank = x->rank + n;
    if (rank > REF_MAX_RANK)
        return ref_fail(c->err, REF_E_UNSUPPORTED, "Unsqueeze: output rank %d exceeds %d", rank, REF_MAX_RANK);
    bool ins[REF_MAX_RANK];
    if ((rc = axes_mask(c, "Unsqueeze", axes, n, rank, ins)))
        return rc;
    int64_t dims[REF_MAX_RANK];
    for (int d = 0, k = 0; d < rank; d++)
        dims[d] = ins[d] ? 1 : x->dims[k++];
    return set_reshaped(c, "Unsqueeze", rank, dims);
}

/* ---------------------------------------------------------------------------------------------
 * Identity, Dropout (inference: the identity, with an all-kept mask)
 * ------------------------------------------------------------------------------------------- */

static int identity_infer(ref_op_ctx *c)
{
    int rc = ref_layout_want_sized(c, 0, "Identity");
    if (rc)
        return rc;
    c->out[0]->dtype = c->in[0]->dtype;
    ref_tensor_set_shape(c->out[0], c->in[0]->rank, c->in[0]->dims);
    return REF_OK;
}

/* training_mode (input 2, opset 12+): true drops at random (training.c); *on tells, when its value is known. */
static int dropout_check_training(ref_op_ctx *c, bool *on)
{
    const ref_tensor *t = c->opset >= 12 ? ref_layout_in(c, 2) : NULL;
    *on = false;
    if (!t || !t->data || ref_tensor_numel(t) < 1)
        return REF_OK;
    if (t->dtype != REF_DT_BOOL)
        return ref_fail(c->err, REF_E_UNSUPPORTED, "Dropout: training_mode must be bool, not %s",
                        ref_dtype_name(t->dtype));
    *on = *(const uint8_t *)t->data != 0;
    return *on ? ref_dropout_train_check(c) : REF_OK;
}

/* The mask is bool from opset 10; before, it had the input's type, and "kept" is the value 1. */
static int mask_one(int dtype, unsigned char *one)
{
    memset(one, 0, 8);
    switch (dtype) {
    case REF_DT_FLOAT: { float v = 1.0f; memcpy(one, &v, 4); return 4; }
    case REF_DT_DOUBLE: { double v = 1.0; memcpy(one, &v, 8); return 8; }
    case REF_DT_FLOAT16: { uint16_t v = 0x3C00; memcpy(one, &v, 2); return 2; }
    case REF_DT_BFLOAT16: { uint16_t v = 0x3F80; memcpy(one, &v, 2); return 2; }
    default: break;
    }
    size_t es = ref_dtype_size(dtype);
    if (!es)
        return 0;
    one[0] = 1; /* little-endian integers and bool */
    return (int)es;
}

static int dropout_infer(ref_op_ctx *c)
{
    bool training;
    int rc = identity_infer(c);
    if (rc || (rc = dropout_check_training(c, &training)))
        return rc;
    ref_tensor *mask = ref_layout_out(c, 1);
    if (mask) {
        mask->dtype = c->opset >= 10 ? REF_DT_BOOL : c->in[0]->dtype;
        ref_tensor_set_shape(mask, c->in[0]->rank, c->in[0]->dims);
    }
    return REF_OK;
}

static int dropout_run(ref_op_ctx *c)
{
    bool training;
    int rc = dropout_check_training(c, &training);
    if (rc)
        return rc;
    if (training)
        return ref_dropout_train_run(c);
    copy_run(c);
    ref_tensor *mask = ref_layout_out(c, 1);
    if (mask && mask->data) {
        unsigned char one[8];
        int es = mask_one(mask->dtype, one);
        if (!es)
            return ref_fail(c->err, REF_E_UNSUPPORTED, "Dropout: mask type %s", ref_dtype_name(mask->dtype));
        ref_layout_fill(mask->data, one, (size_t)es, ref_tensor_numel(mask));
    }
    return REF_OK;
}

const ref_op ref_ops_shape[] = {
    {.name = "Shape", .value_from_shape = true, .infer = shape_infer, .run = shape_run},
    {.name = "Size", .value_from_shape = true, .infer = size_infer, .run = size_run},
    {.name = "Reshape", .infer = reshape_infer, .run = copy_run},
    {.name = "Flatten", .infer = flatten_infer, .run = copy_run},
    {.name = "Squeeze", .infer = squeeze_infer, .run = copy_run},
    {.name = "Unsqueeze", .infer = unsqueeze_infer, .run = copy_run},
    {.name = "Identity", .infer = identity_infer, .run = copy_run},
    {.name = "Dropout", .infer = dropout_infer, .run = dropout_run},
    {.name = "Constant", .infer = ref_constant_infer, .run = ref_constant_run},
    {.name = "ConstantOfShape", .infer = ref_constant_of_shape_infer, .run = ref_constant_of_shape_run},
    {.name = "Range", .infer = ref_range_infer, .run = ref_range_run},
    {.name = NULL},
};
