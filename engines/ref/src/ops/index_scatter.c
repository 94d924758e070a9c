/* index_scatter.c: ScatterElements (and its old name Scatter) and ScatterND, with reductions.
 * It must never allocate at run time, and never write through an index it has not range-checked. */
#include <inttypes.h>

#include "index_util.h"

enum { SC_NONE, SC_ADD, SC_MUL, SC_MAX, SC_MIN };

static int sc_reduction(ref_op_ctx *c, int *op)
{
    const char *r = ref_attr_str_or(c->node, "reduction", "none");
    static const char *const names[] = {"none", "add", "mul", "max", "min"};
    for (int k = 0; k < 5; k++)
        if (!strcmp(r, names[k])) {
            *op = k;
            if (k >= SC_MAX && c->opset < 18)
                break;
            return REF_OK;
        }
    return ref_fail(c->err, REF_E_UNSUPPORTED, "reduction '%s' is not supported at opset %d", r, c->opset);
}

/* dst[k] = dst[k] (op) src[k] for k < n. Integer add and mul wrap (done in unsigned arithmetic). */
#define SC_LOOP(T, U)                                                             \
    do {                                                                          \
        T *d = dst;                                                               \
        const T *s = src;                                                         \
        for (int64_t k = 0; k < n; k++) {                                         \
            switch (op) {                                                         \
            case SC_ADD: d[k] = (T)((U)d[k] + (U)s[k]); break;                    \
            case SC_MUL: d[k] = (T)((U)d[k] * (U)s[k]); break;                    \
            case SC_MAX: d[k] = d[k] < s[k] ? s[k] : d[k]; break;                 \
            default: d[k] = s[k] < d[k] ? s[k] : d[k]; break;                     \
            }                                                                     \
        }                                                                         \
    } while (0)

static void sc_apply(int dtype, int op, void *dst, const void *src, int64_t n, size_t es)
{
    if (op == SC_NONE) {
        memcpy(dst, src, (size_t)n * es);
        return;
    }
    switch (dtype) {
    case REF_DT_FLOAT: SC_LOOP(float, float); break;
    case REF_DT_DOUBLE: SC_LOOP(double, double); break;
    case REF_DT_INT8: SC_LOOP(int8_t, uint32_t); break;
    case REF_DT_UINT8: SC_LOOP(uint8_t, uint32_t); break;
    case REF_DT_INT16: SC_LOOP(int16_t, uint32_t); break;
    case REF_DT_UINT16: SC_LOOP(uint16_t, uint32_t); break;
    case REF_DT_INT32: SC_LOOP(int32_t, uint32_t); break;
    case REF_DT_UINT32: SC_LOOP(uint32_t, uint32_t); break;
    case REF_DT_INT64: SC_LOOP(int64_t, uint64_t); break;
    case REF_DT_UINT64: SC_LOOP(uint64_t, uint64_t); break;
    default: break; /* refused by infer */
    }
}

static int sc_check_types(ref_op_ctx *c, int *op)
{
    int rc = ix_want_sized(c, 0);
    if (!rc)
        rc = ix_want_index(c, 1);
    if (!rc)
        rc = ix_want_sized(c, 2);
    if (!rc)
        rc = sc_reduction(c, op);
    if (rc)
        return rc;
    int dt = c->in[0]->dtype;
    if (c->in[2]->dtype != dt)
        return ref_fail(c->err, REF_E_SHAPE, "updates are %s but data is %s", ref_dtype_name(c->in[2]->dtype),
                        ref_dtype_name(dt));
    if (*op != SC_NONE && (dt == REF_DT_BOOL || dt == REF_DT_FLOAT16 || dt == REF_DT_BFLOAT16))
        return ref_fail(c->err, REF_E_UNSUPPORTED, "reduction on %s data is not supported", ref_dtype_name(dt));
    ref_tensor *y = c->out[0];
    y->dtype = dt;
    ref_tensor_set_shape(y, c->in[0]->rank, c->in[0]->dims);
    return REF_OK;
}

/* The output starts as a copy of data (unless the runtime ran the op in place). */
static void sc_copy_data(ref_op_ctx *c)
{
    if (c->out[0]->data != c->in[0]->data)
        memcpy(c->out[0]->data, c->in[0]->data, ref_tensor_nbytes(c->in[0]));
}

/* ------------------------------------------------------------------------------------------------
 * ScatterElements: out[p with p[axis] = indices[p]] (op)= updates[p].
 * ---------------------------------------------------------------------------------------------- */

static int se_axis(ref_op_ctx *c, int *axis)
{
    const ref_tensor *x = c->in[0];
    int64_t a = ref_attr_int_or(c->node, "axis", 0);
    *axis = ref_norm_axis(a, x->rank);
    if (x->rank < 1 || *axis < 0)
        return ref_fail(c->err, REF_E_SHAPE, "axis %" PRId64 " is out of range for data of rank %d", a,
                        x->rank);
    return REF_OK;
}

int ix_scatter_elements_infer(ref_op_ctx *c)
{
    int op, axis;
    int rc = sc_check_types(c, &op);
    if (!rc)
        rc = se_axis(c, &axis);
    if (rc)
        return rc;
    const ref_tensor *x = c->in[0], *idx = c->in[1], *upd = c->in[2];
    if (!ref_shape_equal(idx, upd)) {
        char a[96], b[96];
        return ref_fail(c->err, REF_E_SHAPE, "indices %s and updates %s must have one shape",
                        ref_shape_str(idx, a, sizeof a), ref_shape_str(upd, b, sizeof b));
    }
    if (idx->rank != x->rank)
        return ref_fail(c->err, REF_E_SHAPE, "indices rank %d differs from data rank %d", idx->rank, x->rank);
    for (int d = 0; d < x->rank; d++)
        if (d != axis && idx->dims[d] > x->dims[d])
            return ref_fail(c->err, REF_E_SHAPE, "indices dim %d is %" PRId64 ", larger than data's %" PRId64,
                            d, idx->dims[d], x->dims[d]);
    return ix_check_range(c, idx, x->dims[axis], axis);
}

typedef struct {
    const ref_tensor *x, *idx;
    const uint8_t *upd;
    uint8_t *y;
    int axis, op;
    size_t es;
} se_job;

/* One task covers a range of the dims before axis; each index position within it writes only into the
 * same outer slab of the output, so tasks never touch the same element and duplicates keep their order. */
static void se_task(void *arg, int64_t begin, int64_t end, int tid)
{
    (void)tid;
    const se_job *j = arg;
    const ref_tensor *it = j->idx, *x = j->x;
    int axis = j->axis, r = it->rank;
    int64_t xs[REF_MAX_RANK], coords[REF_MAX_RANK];
    ref_contiguous_strides(x, xs);
    int64_t per_outer = ref_dims_prod(it->dims, axis, r);
    int64_t dim = x->dims[axis];
    for (int64_t o = begin; o < end; o++) {
        int64_t e0 = o * per_outer;
        int64_t rem = e0;
        for (int d = r - 1; d >= 0; d--) {
            coords[d] = rem % it->dims[d];
            rem /= it->dims[d];
        }
        for (int64_t e = e0; e < e0 + per_outer; e++) {
            int64_t v = ix_int_at(it, e);
            if (v < 0)
                v += dim;
            int64_t off = 0;
            for (int d = 0; d < r; d++)
                off += (d == axis ? v : coords[d]) * xs[d];
            sc_apply(x->dtype, j->op, j->y + (size_t)off * j->es, j->upd + (size_t)e * j->es, 1, j->es);
            for (int d = r - 1; d >= 0; d--) {
                if (++coords[d] < it->dims[d])
                    break;
                coords[d] = 0;
            }
        }
    }
}

int ix_scatter_elements_run(ref_op_ctx *c)
{
    int op, axis;
    int rc = sc_reduction(c, &op);
    if (!rc)
        rc = se_axis(c, &axis);
    if (!rc)
        rc = ix_check_range(c, c->in[1], c->in[0]->dims[axis], axis);
    if (rc)
        return rc;
    sc_copy_data(c);
    const ref_tensor *idx = c->in[1];
    if (ref_tensor_numel(idx) == 0)
        return REF_OK;
    se_job j = {.x = c->in[0], .idx = idx, .upd = c->in[2]->data, .y = c->out[0]->data, .axis = axis,
                .op = op, .es = ref_dtype_size(c->in[0]->dtype)};
    int64_t outer = ref_dims_prod(idx->dims, 0, axis);
    int64_t per_outer = ref_dims_prod(idx->dims, axis, idx->rank);
    ref_parallel_for(c->pool, outer, ix_grain(per_outer * 8), se_task, &j);
    return REF_OK;
}

/* ------------------------------------------------------------------------------------------------
 * ScatterND: each index tuple (the last indices dim, k) addresses a slab of data dims [k, r).
 * ---------------------------------------------------------------------------------------------- */

static int snd_check(ref_op_ctx *c, const ref_tensor *idx, const int64_t *dims, int64_t k)
{
    if (!idx->data)
        return REF_OK;
    int64_t n = ref_tensor_numel(idx);
    for (int64_t e = 0; e < n; e++) {
        int64_t v = ix_int_at(idx, e), dim = dims[e % k];
        if (v < -dim || v >= dim)
            return ref_fail(c->err, REF_E_RANGE,
                            "indices[%" PRId64 "] = %" PRId64 " is out of range for axis %d of size %" PRId64,
                            e, v, (int)(e % k), dim);
    }
    return REF_OK;
}

int ix_scatter_nd_infer(ref_op_ctx *c)
{
    int op;
    int rc = sc_check_types(c, &op);
    if (rc)
        return rc;
    const ref_tensor *x = c->in[0], *idx = c->in[1], *upd = c->in[2];
    int r = x->rank, q = idx->rank;
    if (r < 1 || q < 1)
        return ref_fail(c->err, REF_E_SHAPE, "data and indices need rank >= 1 (have %d and %d)", r, q);
    int64_t k = idx->dims[q - 1];
    if (k < 1 || k > r)
        return ref_fail(c->err, REF_E_SHAPE, "indices' last dim %" PRId64 " must be in [1, %d]", k, r);
    /* updates = indices.shape[:-1] + data.shape[k:] */
    bool ok = upd->rank == q - 1 + r - (int)k;
    for (int d = 0; ok && d < q - 1; d++)
        ok = upd->dims[d] == idx->dims[d];
    for (int d = (int)k; ok && d < r; d++)
        ok = upd->dims[q - 1 + d - (int)k] == x->dims[d];
    if (!ok) {
        char a[96], b[96], u[96];
        return ref_fail(c->err, REF_E_SHAPE, "updates %s do not fit data %s and indices %s",
                        ref_shape_str(upd, u, sizeof u), ref_shape_str(x, a, sizeof a),
                        ref_shape_str(idx, b, sizeof b));
    }
    return snd_check(c, idx, x->dims, k);
}

typedef struct {
    const ref_tensor *idx;
    const int64_t *dims, *strides;
    const uint8_t *upd;
    uint8_t *y;
    int64_t k, n_tuples, slice;
    int op, dtype;
    size_t es;
} snd_job;

/* A task owns a range of positions inside the slab and applies every tuple to it in order. */
static void snd_task(void *arg, int64_t begin, int64_t end, int tid)
{
    (void)tid;
    const snd_job *j = arg;
    for (int64_t t = 0; t < j->n_tuples; t++) {
        int64_t off = 0;
        for (int64_t m = 0; m < j->k; m++) {
            int64_t v = ix_int_at(j->idx, t * j->k + m);
            if (v < 0)
                v += j->dims[m];
            off += v * j->strides[m];
        }
        sc_apply(j->dtype, j->op, j->y + (size_t)(off + begin) * j->es,
                 j->upd + (size_t)(t * j->slice + begin) * j->es, end - begin, j->es);
    }
}

int ix_scatter_nd_run(ref_op_ctx *c)
{
    int op;
    int rc = sc_reduction(c, &op);
    const ref_tensor *x = c->in[0], *idx = c->in[1];
    int64_t k = idx->dims[idx->rank - 1];
    if (!rc)
        rc = snd_check(c, idx, x->dims, k);
    if (rc)
        return rc;
    sc_copy_data(c);
    int64_t strides[REF_MAX_RANK];
    ref_contiguous_strides(x, strides);
    snd_job j = {.idx = idx, .dims = x->dims, .strides = strides, .upd = c->in[2]->data, .y = c->out[0]->data,
                 .k = k, .n_tuples = ref_dims_prod(idx->dims, 0, idx->rank - 1),
                 .slice = ref_dims_prod(x->dims, (int)k, x->rank), .op = op, .dtype = x->dtype,
                 .es = ref_dtype_size(x->dtype)};
    if (j.n_tuples == 0 || j.slice == 0)
        return REF_OK;
    int64_t grain = 16384 / j.n_tuples;
    ref_parallel_for(c->pool, j.slice, grain < 64 ? 64 : grain, snd_task, &j);
    return REF_OK;
}
