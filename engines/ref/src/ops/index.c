/* index.c: operator family "index": the table, shared index checks, and Gather, GatherElements, GatherND.
 * It must never allocate at run time, and never read data through an index it has not range-checked. */
#include <inttypes.h>

#include "index_util.h"

/* ------------------------------------------------------------------------------------------------
 * Shared helpers.
 * ---------------------------------------------------------------------------------------------- */

int ix_want_sized(ref_op_ctx *c, int i)
{
    const ref_tensor *t = ix_in(c, i);
    if (!t)
        return ref_fail(c->err, REF_E_INVALID, "input %d is required", i);
    if (!ref_dtype_size(t->dtype))
        return ref_fail(c->err, REF_E_UNSUPPORTED, "input %d has unsupported type %s", i,
                        ref_dtype_name(t->dtype));
    return REF_OK;
}

int ix_want_index(ref_op_ctx *c, int i)
{
    static const int types[] = {REF_DT_INT32, REF_DT_INT64};
    return ref_op_want_dtype(c, i, 2, types);
}

int ix_check_range(ref_op_ctx *c, const ref_tensor *idx, int64_t dim, int axis)
{
    if (!idx->data)
        return REF_OK;
    int64_t n = ref_tensor_numel(idx);
    for (int64_t k = 0; k < n; k++) {
        int64_t v = ix_int_at(idx, k);
        if (v < -dim || v >= dim)
            return ref_fail(c->err, REF_E_RANGE,
                            "indices[%" PRId64 "] = %" PRId64 " is out of range for axis %d of size %" PRId64,
                            k, v, axis, dim);
    }
    return REF_OK;
}

int ix_read_scalar(ref_op_ctx *c, int i, const char *what, int64_t *v)
{
    const ref_tensor *t = ix_in(c, i);
    if (!t)
        return ref_fail(c->err, REF_E_INVALID, "input %d (%s) is required", i, what);
    if (t->dtype != REF_DT_INT32 && t->dtype != REF_DT_INT64)
        return ref_fail(c->err, REF_E_UNSUPPORTED, "%s must be int32 or int64, not %s", what,
                        ref_dtype_name(t->dtype));
    if (ref_tensor_numel(t) != 1)
        return ref_fail(c->err, REF_E_SHAPE, "%s must hold one value, not %" PRId64, what,
                        ref_tensor_numel(t));
    if (!t->data)
        return ref_fail(c->err, REF_E_DYNAMIC, "%s is not known before run", what);
    *v = ix_int_at(t, 0);
    return REF_OK;
}

/* Advance coords (an odometer over dims) by one element. */
static void ix_next(int64_t *coords, const int64_t *dims, int rank)
{
    for (int d = rank - 1; d >= 0; d--) {
        if (++coords[d] < dims[d])
            return;
        coords[d] = 0;
    }
}

static void ix_unravel(int64_t e, const int64_t *dims, int rank, int64_t *coords)
{
    for (int d = rank - 1; d >= 0; d--) {
        coords[d] = dims[d] ? e % dims[d] : 0;
        e = dims[d] ? e / dims[d] : 0;
    }
}

/* ------------------------------------------------------------------------------------------------
 * Gather: out = data[:axis] x indices x data[axis+1:], each index picks one slab along axis.
 * ---------------------------------------------------------------------------------------------- */

int ix_gather_infer(ref_op_ctx *c)
{
    int rc = ix_want_sized(c, 0);
    if (!rc)
        rc = ix_want_index(c, 1);
    if (rc)
        return rc;
    const ref_tensor *x = c->in[0], *idx = c->in[1];
    int64_t a = ref_attr_int_or(c->node, "axis", 0);
    int axis = ref_norm_axis(a, x->rank);
    if (x->rank < 1 || axis < 0)
        return ref_fail(c->err, REF_E_SHAPE, "axis %" PRId64 " is out of range for data of rank %d", a,
                        x->rank);
    int rank = x->rank - 1 + idx->rank;
    if (rank > REF_MAX_RANK)
        return ref_fail(c->err, REF_E_UNSUPPORTED, "output rank %d exceeds %d", rank, REF_MAX_RANK);
    ref_tensor *y = c->out[0];
    y->dtype = x->dtype;
    y->rank = rank;
    int k = 0;
    for (int d = 0; d < axis; d++)
        y->dims[k++] = x->dims[d];
    for (int d = 0; d < idx->rank; d++)
        y->dims[k++] = idx->dims[d];
    for (int d = axis + 1; d < x->rank; d++)
        y->dims[k++] = x->dims[d];
    return ix_check_range(c, idx, x->dims[axis], axis);
}

typedef struct {
    const uint8_t *x;
    uint8_t *y;
    const ref_tensor *idx;
    int64_t n_idx, dim;
    size_t row_bytes;
} gather_job;

static void gather_task(void *arg, int64_t begin, int64_t end, int tid)
{
    (void)tid;
    const gather_job *j = arg;
    for (int64_t r = begin; r < end; r++) {
        int64_t o = r / j->n_idx, v = ix_int_at(j->idx, r % j->n_idx);
        if (v < 0)
            v += j->dim;
        memcpy(j->y + (size_t)r * j->row_bytes, j->x + (size_t)(o * j->dim + v) * j->row_bytes,
               j->row_bytes);
    }
}

int ix_gather_run(ref_op_ctx *c)
{
    const ref_tensor *x = c->in[0], *idx = c->in[1];
    int axis = ref_norm_axis(ref_attr_int_or(c->node, "axis", 0), x->rank);
    int rc = ix_check_range(c, idx, x->dims[axis], axis);
    if (rc)
        return rc;
    gather_job j = {.x = x->data, .y = c->out[0]->data, .idx = idx, .n_idx = ref_tensor_numel(idx),
                    .dim = x->dims[axis]};
    j.row_bytes = (size_t)ref_dims_prod(x->dims, axis + 1, x->rank) * ref_dtype_size(x->dtype);
    int64_t rows = ref_dims_prod(x->dims, 0, axis) * j.n_idx;
    if (j.row_bytes && rows)
        ref_parallel_for(c->pool, rows, ix_grain((int64_t)j.row_bytes), gather_task, &j);
    return REF_OK;
}

/* ------------------------------------------------------------------------------------------------
 * GatherElements: out has the indices' shape; out[p] = data[p with p[axis] = indices[p]].
 * ---------------------------------------------------------------------------------------------- */

int ix_gather_elements_infer(ref_op_ctx *c)
{
    int rc = ix_want_sized(c, 0);
    if (!rc)
        rc = ix_want_index(c, 1);
    if (rc)
        return rc;
    const ref_tensor *x = c->in[0], *idx = c->in[1];
    int64_t a = ref_attr_int_or(c->node, "axis", 0);
    int axis = ref_norm_axis(a, x->rank);
    if (x->rank < 1 || axis < 0)
        return ref_fail(c->err, REF_E_SHAPE, "axis %" PRId64 " is out of range for data of rank %d", a,
                        x->rank);
    if (idx->rank != x->rank)
        return ref_fail(c->err, REF_E_SHAPE, "indices rank %d differs from data rank %d", idx->rank,
                        x->rank);
    for (int d = 0; d < x->rank; d++)
        if (d != axis && idx->dims[d] > x->dims[d])
            return ref_fail(c->err, REF_E_SHAPE, "indices dim %d is %" PRId64 ", larger than data's %" PRId64,
                            d, idx->dims[d], x->dims[d]);
    ref_tensor *y = c->out[0];
    y->dtype = x->dtype;
    ref_tensor_set_shape(y, idx->rank, idx->dims);
    return ix_check_range(c, idx, x->dims[axis], axis);
}

typedef struct {
    const uint8_t *x;
    uint8_t *y;
    const ref_tensor *idx, *xt;
    int axis;
    size_t es;
} gather_el_job;

static void gather_el_task(void *arg, int64_t begin, int64_t end, int tid)
{
    (void)tid;
    const gather_el_job *j = arg;
    const ref_tensor *it = j->idx;
    int64_t strides[REF_MAX_RANK], coords[REF_MAX_RANK];
    ref_contiguous_strides(j->xt, strides);
    ix_unravel(begin, it->dims, it->rank, coords);
    int64_t dim = j->xt->dims[j->axis];
    for (int64_t e = begin; e < end; e++) {
        int64_t off = 0;
        for (int d = 0; d < it->rank; d++)
            off += coords[d] * strides[d];
        int64_t v = ix_int_at(it, e);
        if (v < 0)
            v += dim;
        off += (v - coords[j->axis]) * strides[j->axis];
        ix_copy_elem(j->y + (size_t)e * j->es, j->x + (size_t)off * j->es, j->es);
        ix_next(coords, it->dims, it->rank);
    }
}

int ix_gather_elements_run(ref_op_ctx *c)
{
    const ref_tensor *x = c->in[0], *idx = c->in[1];
    int axis = ref_norm_axis(ref_attr_int_or(c->node, "axis", 0), x->rank);
    int rc = ix_check_range(c, idx, x->dims[axis], axis);
    if (rc)
        return rc;
    gather_el_job j = {.x = x->data, .y = c->out[0]->data, .idx = idx, .xt = x, .axis = axis,
                       .es = ref_dtype_size(x->dtype)};
    ref_parallel_for(c->pool, ref_tensor_numel(idx), 4096, gather_el_task, &j);
    return REF_OK;
}

/* ------------------------------------------------------------------------------------------------
 * GatherND: the last indices dim (k) addresses data dims [b, b+k) after b shared batch dims.
 * ---------------------------------------------------------------------------------------------- */

typedef struct {
    int b, k;
    int64_t n_batch, tuples_per_batch, batch_elems, slice_elems;
    int64_t strides[REF_MAX_RANK]; /* element strides of data */
} gnd_geom;

static int gnd_geometry(ref_op_ctx *c, gnd_geom *g)
{
    const ref_tensor *x = c->in[0], *idx = c->in[1];
    int64_t b = ref_attr_int_or(c->node, "batch_dims", 0);
    int r = x->rank, q = idx->rank;
    if (r < 1 || q < 1)
        return ref_fail(c->err, REF_E_SHAPE, "data and indices need rank >= 1 (have %d and %d)", r, q);
    if (b < 0 || b >= (r < q ? r : q))
        return ref_fail(c->err, REF_E_SHAPE, "batch_dims %" PRId64 " must be in [0, %d)", b, r < q ? r : q);
    int64_t k = idx->dims[q - 1];
    if (k < 1 || k > r - b)
        return ref_fail(c->err, REF_E_SHAPE, "indices' last dim %" PRId64 " must be in [1, %" PRId64 "]", k,
                        r - b);
    for (int d = 0; d < b; d++)
        if (x->dims[d] != idx->dims[d])
            return ref_fail(c->err, REF_E_SHAPE, "batch dim %d differs: data %" PRId64 ", indices %" PRId64, d,
                            x->dims[d], idx->dims[d]);
    g->b = (int)b;
    g->k = (int)k;
    g->n_batch = ref_dims_prod(x->dims, 0, g->b);
    g->tuples_per_batch = ref_dims_prod(idx->dims, g->b, q - 1);
    g->batch_elems = ref_dims_prod(x->dims, g->b, r);
    g->slice_elems = ref_dims_prod(x->dims, g->b + g->k, r);
    ref_contiguous_strides(x, g->strides);
    return REF_OK;
}

/* Check every index tuple against the dims it addresses. */
static int gnd_check(ref_op_ctx *c, const ref_tensor *idx, const int64_t *dims, int first, int k)
{
    if (!idx->data)
        return REF_OK;
    int64_t n = ref_tensor_numel(idx);
    for (int64_t e = 0; e < n; e++) {
        int64_t v = ix_int_at(idx, e), dim = dims[first + e % k];
        if (v < -dim || v >= dim)
            return ref_fail(c->err, REF_E_RANGE,
                            "indices[%" PRId64 "] = %" PRId64 " is out of range for axis %d of size %" PRId64,
                            e, v, first + (int)(e % k), dim);
    }
    return REF_OK;
}

int ix_gather_nd_infer(ref_op_ctx *c)
{
    int rc = ix_want_sized(c, 0);
    if (!rc)
        rc = ix_want_index(c, 1);
    gnd_geom g;
    if (!rc)
        rc = gnd_geometry(c, &g);
    if (rc)
        return rc;
    const ref_tensor *x = c->in[0], *idx = c->in[1];
    int rank = idx->rank - 1 + x->rank - g.b - g.k;
    if (rank > REF_MAX_RANK)
        return ref_fail(c->err, REF_E_UNSUPPORTED, "output rank %d exceeds %d", rank, REF_MAX_RANK);
    ref_tensor *y = c->out[0];
    y->dtype = x->dtype;
    y->rank = rank;
    int n = 0;
    for (int d = 0; d < idx->rank - 1; d++)
        y->dims[n++] = idx->dims[d];
    for (int d = g.b + g.k; d < x->rank; d++)
        y->dims[n++] = x->dims[d];
    return gnd_check(c, idx, x->dims, g.b, g.k);
}

typedef struct {
    const gnd_geom *g;
    const ref_tensor *idx;
    const int64_t *dims;
    const uint8_t *x;
    uint8_t *y;
    size_t es;
} gnd_job;

static void gnd_task(void *arg, int64_t begin, int64_t end, int tid)
{
    (void)tid;
    const gnd_job *j = arg;
    const gnd_geom *g = j->g;
    size_t slice_bytes = (size_t)g->slice_elems * j->es;
    for (int64_t t = begin; t < end; t++) {
        int64_t off = (t / g->tuples_per_batch) * g->batch_elems;
        for (int m = 0; m < g->k; m++) {
            int64_t v = ix_int_at(j->idx, t * g->k + m);
            if (v < 0)
                v += j->dims[g->b + m];
            off += v * g->strides[g->b + m];
        }
        memcpy(j->y + (size_t)t * slice_bytes, j->x + (size_t)off * j->es, slice_bytes);
    }
}

int ix_gather_nd_run(ref_op_ctx *c)
{
    gnd_geom g;
    int rc = gnd_geometry(c, &g);
    if (!rc)
        rc = gnd_check(c, c->in[1], c->in[0]->dims, g.b, g.k);
    if (rc)
        return rc;
    gnd_job j = {.g = &g, .idx = c->in[1], .dims = c->in[0]->dims, .x = c->in[0]->data,
                 .y = c->out[0]->data, .es = ref_dtype_size(c->in[0]->dtype)};
    int64_t n = g.n_batch * g.tuples_per_batch;
    if (g.slice_elems)
        ref_parallel_for(c->pool, n, ix_grain(g.slice_elems * (int64_t)j.es), gnd_task, &j);
    return REF_OK;
}

/* ------------------------------------------------------------------------------------------------
 * The table.
 * ---------------------------------------------------------------------------------------------- */

const ref_op ref_ops_index[] = {
    {.name = "Gather", .infer = ix_gather_infer, .run = ix_gather_run},
    {.name = "GatherElements", .infer = ix_gather_elements_infer, .run = ix_gather_elements_run},
    {.name = "GatherND", .infer = ix_gather_nd_infer, .run = ix_gather_nd_run},
    {.name = "Slice", .infer = ix_slice_infer, .run = ix_slice_run},
    {.name = "ScatterElements", .infer = ix_scatter_elements_infer, .run = ix_scatter_elements_run},
    /* Scatter (opsets 9-10) is ScatterElements without reduction under its old name. */
    {.name = "Scatter", .infer = ix_scatter_elements_infer, .run = ix_scatter_elements_run},
    {.name = "ScatterND", .infer = ix_scatter_nd_infer, .run = ix_scatter_nd_run},
    {.name = "CumSum", .infer = ix_cumsum_infer, .run = ix_cumsum_run},
    {.name = "OneHot", .infer = ix_onehot_infer, .run = ix_onehot_run},
    {.name = "Compress", .infer = ix_compress_infer, .run = ix_compress_run},
    {.name = "TopK", .infer = ix_topk_infer, .scratch_bytes = ix_topk_scratch_bytes, .run = ix_topk_run},
    {.name = "NonZero", .infer = ix_nonzero_infer, .run = ix_nonzero_run},
    {.name = "EyeLike", .infer = ix_eyelike_infer, .run = ix_eyelike_run},
    {.name = NULL},
};
