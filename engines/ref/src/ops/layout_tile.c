/* layout_tile.c: Tile and Expand, the two ops that repeat an input's elements; both run as a strided gather
 * with zero strides. It must never allocate, and never trust a repeat or shape input it has not checked. */
#include <string.h>

#include "layout_copy.h"
#include "layout_ops.h"

/* Read a 1-D int64 shape-like input i ("repeats", "shape") whose values decide the output shape. */
static int read_shape_input(ref_op_ctx *c, const char *op, const char *what, int64_t *vals, int *n)
{
    const ref_tensor *t = ref_layout_in(c, 1);
    if (!t)
        return ref_fail(c->err, REF_E_INVALID, "%s: input %s is required", op, what);
    if (t->dtype != REF_DT_INT64)
        return ref_fail(c->err, REF_E_UNSUPPORTED, "%s: %s must be int64, not %s", op, what,
                        ref_dtype_name(t->dtype));
    if (t->rank != 1)
        return ref_fail(c->err, REF_E_SHAPE, "%s: %s must be 1-D, got rank %d", op, what, t->rank);
    if (t->dims[0] > REF_MAX_RANK)
        return ref_fail(c->err, REF_E_UNSUPPORTED, "%s: %s has %lld entries, more than rank %d", op, what,
                        (long long)t->dims[0], REF_MAX_RANK);
    *n = (int)t->dims[0];
    if (!t->data && *n > 0)
        return ref_fail(c->err, REF_E_DYNAMIC, "%s: %s is not known before run", op, what);
    if (*n > 0)
        memcpy(vals, t->data, (size_t)*n * sizeof *vals);
    return REF_OK;
}

/* ---------------------------------------------------------------------------------------------
 * Tile
 * ------------------------------------------------------------------------------------------- */

int ref_tile_infer(ref_op_ctx *c)
{
    int rc = ref_layout_want_sized(c, 0, "Tile");
    if (rc)
        return rc;
    const ref_tensor *x = c->in[0];
    int64_t reps[REF_MAX_RANK];
    int n;
    if ((rc = read_shape_input(c, "Tile", "repeats", reps, &n)))
        return rc;
    if (n != x->rank)
        return ref_fail(c->err, REF_E_SHAPE, "Tile: %d repeats for an input of rank %d", n, x->rank);
    ref_tensor *y = c->out[0];
    y->dtype = x->dtype;
    y->rank = x->rank;
    for (int d = 0; d < n; d++) {
        if (reps[d] < 0)
            return ref_fail(c->err, REF_E_SHAPE, "Tile: repeats[%d] is negative (%lld)", d, (long long)reps[d]);
        if (!ref_dim_mul(x->dims[d], reps[d], &y->dims[d]))
            return ref_fail(c->err, REF_E_RANGE, "Tile: dim %d of length %lld repeated %lld times overflows 64 bits",
                            d, (long long)x->dims[d], (long long)reps[d]);
    }
    return REF_OK;
}

/* Output dim d of length rep*len is viewed as (rep, len): the rep index moves nothing in the source. */
int ref_tile_run(ref_op_ctx *c)
{
    const ref_tensor *x = c->in[0], *y = c->out[0];
    if (ref_tensor_numel(y) == 0)
        return REF_OK;
    int64_t own[REF_MAX_RANK], dims[REF_LAYOUT_MAX_RANK], strides[REF_LAYOUT_MAX_RANK];
    ref_contiguous_strides(x, own);
    for (int d = 0; d < x->rank; d++) {
        dims[2 * d] = y->dims[d] / x->dims[d];
        strides[2 * d] = 0;
        dims[2 * d + 1] = x->dims[d];
        strides[2 * d + 1] = own[d];
    }
    ref_layout_gather(c->pool, y->data, x->data, ref_dtype_size(x->dtype), 2 * x->rank, dims, strides);
    return REF_OK;
}

/* ---------------------------------------------------------------------------------------------
 * Expand
 * ------------------------------------------------------------------------------------------- */

int ref_expand_infer(ref_op_ctx *c)
{
    int rc = ref_layout_want_sized(c, 0, "Expand");
    if (rc)
        return rc;
    ref_tensor want = {.dtype = c->in[0]->dtype};
    int n;
    if ((rc = read_shape_input(c, "Expand", "shape", want.dims, &n)))
        return rc;
    want.rank = n;
    for (int d = 0; d < n; d++)
        if (want.dims[d] < 0)
            return ref_fail(c->err, REF_E_SHAPE, "Expand: shape[%d] is negative (%lld)", d, (long long)want.dims[d]);
    const ref_tensor *both[2] = {c->in[0], &want};
    if ((rc = ref_broadcast_shape(2, both, c->out[0], c->err))) {
        ref_fail_prefix(c->err, "Expand: ");
        return rc;
    }
    c->out[0]->dtype = c->in[0]->dtype;
    return REF_OK;
}

int ref_expand_run(ref_op_ctx *c)
{
    const ref_tensor *x = c->in[0], *y = c->out[0];
    int64_t strides[REF_MAX_RANK];
    ref_broadcast_strides(x, y, strides);
    ref_layout_gather(c->pool, y->data, x->data, ref_dtype_size(x->dtype), y->rank, y->dims, strides);
    return REF_OK;
}
