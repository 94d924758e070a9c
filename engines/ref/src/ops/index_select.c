/* index_select.c: Compress and NonZero, whose output shapes depend on input values.
 * It must never allocate at run time, nor write more than the shape infer computed from the same values. */
#include <inttypes.h>

#include "index_util.h"

/* ------------------------------------------------------------------------------------------------
 * Compress: keep the slices along axis (or the flattened elements) whose condition is true.
 * Condition entries past the axis length are ignored, as are slices past the condition's length.
 * ---------------------------------------------------------------------------------------------- */

typedef struct {
    int has_axis, axis;
    int64_t outer, dim, inner; /* the input viewed as [outer, dim, inner] */
    int64_t kept;              /* true entries among the first min(len, dim) */
} compress_geom;

static int compress_geometry(ref_op_ctx *c, compress_geom *g)
{
    const ref_tensor *x = c->in[0], *cond = c->in[1];
    const ref_attr *a = ref_node_attr(c->node, "axis");
    g->has_axis = a != NULL;
    if (g->has_axis) {
        g->axis = ref_norm_axis(a->i, x->rank);
        if (g->axis < 0)
            return ref_fail(c->err, REF_E_SHAPE, "axis %" PRId64 " is out of range for rank %d", a->i, x->rank);
        g->outer = ref_dims_prod(x->dims, 0, g->axis);
        g->dim = x->dims[g->axis];
        g->inner = ref_dims_prod(x->dims, g->axis + 1, x->rank);
    } else {
        g->axis = 0;
        g->outer = 1;
        g->dim = ref_tensor_numel(x);
        g->inner = 1;
    }
    if (cond->rank != 1)
        return ref_fail(c->err, REF_E_SHAPE, "condition must be 1-D, has rank %d", cond->rank);
    if (!cond->data)
        return ref_fail(c->err, REF_E_DYNAMIC, "condition is not known before run");
    int64_t n = cond->dims[0] < g->dim ? cond->dims[0] : g->dim;
    const uint8_t *b = cond->data;
    g->kept = 0;
    for (int64_t k = 0; k < n; k++)
        g->kept += b[k] != 0;
    return REF_OK;
}

int ix_compress_infer(ref_op_ctx *c)
{
    static const int bool_type[] = {REF_DT_BOOL};
    int rc = ix_want_sized(c, 0);
    if (!rc)
        rc = ref_op_want_dtype(c, 1, 1, bool_type);
    compress_geom g;
    if (!rc)
        rc = compress_geometry(c, &g);
    if (rc)
        return rc;
    const ref_tensor *x = c->in[0];
    ref_tensor *y = c->out[0];
    y->dtype = x->dtype;
    if (g.has_axis) {
        ref_tensor_set_shape(y, x->rank, x->dims);
        y->dims[g.axis] = g.kept;
    } else {
        y->rank = 1;
        y->dims[0] = g.kept;
    }
    return REF_OK;
}

typedef struct {
    const compress_geom *g;
    const uint8_t *cond, *x;
    uint8_t *y;
    int64_t n_cond;
    size_t row_bytes;
} compress_job;

static void compress_task(void *arg, int64_t begin, int64_t end, int tid)
{
    (void)tid;
    const compress_job *j = arg;
    const compress_geom *g = j->g;
    for (int64_t o = begin; o < end; o++) {
        uint8_t *dst = j->y + (size_t)(o * g->kept) * j->row_bytes;
        for (int64_t k = 0; k < j->n_cond; k++) {
            if (!j->cond[k])
                continue;
            memcpy(dst, j->x + (size_t)(o * g->dim + k) * j->row_bytes, j->row_bytes);
            dst += j->row_bytes;
        }
    }
}

int ix_compress_run(ref_op_ctx *c)
{
    compress_geom g;
    int rc = compress_geometry(c, &g);
    if (rc)
        return rc;
    const ref_tensor *y = c->out[0];
    int64_t want = g.has_axis ? y->dims[g.axis] : y->dims[0];
    if (want != g.kept)
        return ref_fail(c->err, REF_E_SHAPE, "condition keeps %" PRId64 " but the output holds %" PRId64, g.kept,
                        want);
    compress_job j = {.g = &g, .cond = c->in[1]->data, .x = c->in[0]->data, .y = y->data,
                      .n_cond = c->in[1]->dims[0] < g.dim ? c->in[1]->dims[0] : g.dim,
                      .row_bytes = (size_t)g.inner * ref_dtype_size(c->in[0]->dtype)};
    if (g.kept && j.row_bytes)
        ref_parallel_for(c->pool, g.outer, ix_grain((int64_t)j.row_bytes * g.kept), compress_task, &j);
    return REF_OK;
}

/* ------------------------------------------------------------------------------------------------
 * NonZero: [rank, n] int64 coordinates of the non-zero elements in row-major order. A scalar counts
 * as a 1-element vector.
 * ---------------------------------------------------------------------------------------------- */

static bool nz_at(const ref_tensor *t, int64_t k, size_t es)
{
    switch (t->dtype) {
    case REF_DT_FLOAT: return ((const float *)t->data)[k] != 0.0f;
    case REF_DT_DOUBLE: return ((const double *)t->data)[k] != 0.0;
    case REF_DT_FLOAT16: case REF_DT_BFLOAT16: /* +-0 differ only in the sign bit */
        return (((const uint16_t *)t->data)[k] & 0x7fff) != 0;
    default: {
        const uint8_t *b = (const uint8_t *)t->data + (size_t)k * es;
        for (size_t i = 0; i < es; i++)
            if (b[i])
                return true;
        return false;
    }
    }
}

static int64_t nz_count(const ref_tensor *x)
{
    int64_t n = ref_tensor_numel(x), nnz = 0;
    size_t es = ref_dtype_size(x->dtype);
    for (int64_t k = 0; k < n; k++)
        nnz += nz_at(x, k, es);
    return nnz;
}

int ix_nonzero_infer(ref_op_ctx *c)
{
    int rc = ix_want_sized(c, 0);
    if (rc)
        return rc;
    const ref_tensor *x = c->in[0];
    if (!x->data)
        return ref_fail(c->err, REF_E_DYNAMIC, "the output size depends on the input's values");
    ref_tensor *y = c->out[0];
    y->dtype = REF_DT_INT64;
    y->rank = 2;
    y->dims[0] = x->rank ? x->rank : 1;
    y->dims[1] = nz_count(x);
    return REF_OK;
}

int ix_nonzero_run(ref_op_ctx *c)
{
    const ref_tensor *x = c->in[0];
    ref_tensor *y = c->out[0];
    int64_t nnz = nz_count(x), rows = x->rank ? x->rank : 1;
    if (y->rank != 2 || y->dims[0] != rows || y->dims[1] != nnz)
        return ref_fail(c->err, REF_E_SHAPE, "input has %" PRId64 " non-zeros but the output is sized for %" PRId64,
                        nnz, y->rank == 2 ? y->dims[1] : -1);
    int64_t n = ref_tensor_numel(x), col = 0, coords[REF_MAX_RANK] = {0};
    size_t es = ref_dtype_size(x->dtype);
    int64_t *out = y->data;
    for (int64_t k = 0; k < n; k++) {
        if (nz_at(x, k, es)) {
            for (int d = 0; d < rows; d++)
                out[d * nnz + col] = x->rank ? coords[d] : 0;
            col++;
        }
        for (int d = x->rank - 1; d >= 0; d--) {
            if (++coords[d] < x->dims[d])
                break;
            coords[d] = 0;
        }
    }
    return REF_OK;
}
