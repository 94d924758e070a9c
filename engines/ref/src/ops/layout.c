/* layout.c: the "layout" family table (most members live in layout_*.c), plus Concat and Split.
 * It must never allocate at run time; every output byte is written exactly once, by one thread. */
#include <string.h>

#include "layout_copy.h"
#include "layout_ops.h"

#define CAT_ROW_GRAIN_BYTES ((int64_t)256 * 1024)

/* ---------------------------------------------------------------------------------------------
 * The Concat/Split kernel: rows of the whole tensor are the pieces' rows laid side by side
 * ------------------------------------------------------------------------------------------- */

typedef struct {
    const ref_op_ctx *c;
    bool split;       /* false: pieces are the inputs, whole is out[0]; true: in[0] and the outputs */
    int axis, n_pieces;
    int64_t inner;    /* elements after the axis */
    size_t es, row_bytes;
    char *whole;      /* mutable for Concat; for Split the source (never written) */
} cat_job;

static const ref_tensor *cat_piece(const cat_job *j, int k)
{
    return j->split ? ref_layout_out(j->c, k) : ref_layout_in(j->c, k);
}

/* Bytes piece k contributes per row; empty pieces (rank-1 [0] legacy ones included) give 0. */
static size_t cat_piece_bytes(const cat_job *j, int k)
{
    const ref_tensor *t = cat_piece(j, k);
    if (!t || ref_tensor_numel(t) == 0)
        return 0;
    return (size_t)(t->dims[j->axis] * j->inner) * j->es;
}

static void cat_row(const cat_job *j, int64_t o, ref_pool *pool)
{
    size_t at = 0;
    for (int k = 0; k < j->n_pieces; k++) {
        size_t b = cat_piece_bytes(j, k);
        if (!b)
            continue;
        char *piece = (char *)cat_piece(j, k)->data + (size_t)o * b;
        char *whole = j->whole + (size_t)o * j->row_bytes + at;
        if (j->split)
            ref_layout_copy(pool, piece, whole, b);
        else
            ref_layout_copy(pool, whole, piece, b);
        at += b;
    }
}

static void cat_task(void *arg, int64_t begin, int64_t end, int tid)
{
    (void)tid;
    for (int64_t o = begin; o < end; o++)
        cat_row(arg, o, NULL);
}

static void cat_run(const ref_op_ctx *c, bool split, int axis, const ref_tensor *whole)
{
    cat_job j = {.c = c, .split = split, .axis = axis, .n_pieces = split ? c->n_out : c->n_in,
                 .inner = ref_dims_prod(whole->dims, axis + 1, whole->rank), .es = ref_dtype_size(whole->dtype),
                 .whole = whole->data};
    j.row_bytes = (size_t)(whole->dims[axis] * j.inner) * j.es;
    if (!j.row_bytes)
        return;
    int64_t outer = ref_dims_prod(whole->dims, 0, axis);
    int64_t grain = CAT_ROW_GRAIN_BYTES / (int64_t)j.row_bytes + 1;
    if (outer >= 2 * grain) {
        ref_parallel_for(c->pool, outer, grain, cat_task, &j);
        return;
    }
    /* few, long rows: split each piece's copy instead */
    for (int64_t o = 0; o < outer; o++)
        cat_row(&j, o, c->pool);
}

/* ---------------------------------------------------------------------------------------------
 * Concat
 * ------------------------------------------------------------------------------------------- */

/* A 1-D empty input next to higher-rank ones is skipped: older PyTorch exports concatenate a
 * placeholder [0] tensor, and other runtimes accept it. */
static bool concat_skippable(const ref_tensor *t, int rank)
{
    return t->rank != rank && t->rank == 1 && t->dims[0] == 0;
}

static int concat_infer(ref_op_ctx *c)
{
    if (c->n_in < 1 || !c->in[0])
        return ref_fail(c->err, REF_E_INVALID, "Concat: needs at least one input");
    const ref_tensor *first = NULL;
    for (int k = 0; k < c->n_in; k++) {
        int rc = ref_layout_want_sized(c, k, "Concat");
        if (rc)
            return rc;
        if (c->in[k]->dtype != c->in[0]->dtype)
            return ref_fail(c->err, REF_E_SHAPE, "Concat: input %d is %s but input 0 is %s", k,
                            ref_dtype_name(c->in[k]->dtype), ref_dtype_name(c->in[0]->dtype));
        if (!first && !concat_skippable(c->in[k], -1))
            first = c->in[k];
    }
    if (!first)
        first = c->in[0];
    int64_t raw = ref_attr_int_or(c->node, "axis", c->opset < 4 ? 1 : INT64_MIN);
    if (raw == INT64_MIN)
        return ref_fail(c->err, REF_E_INVALID, "Concat: attribute axis is required");
    int axis = ref_norm_axis(raw, first->rank);
    if (axis < 0)
        return ref_fail(c->err, REF_E_SHAPE, "Concat: axis %lld is out of range for rank %d", (long long)raw,
                        first->rank);
    int64_t dims[REF_MAX_RANK];
    memcpy(dims, first->dims, sizeof dims);
    dims[axis] = 0;
    for (int k = 0; k < c->n_in; k++) {
        const ref_tensor *t = c->in[k];
        if (concat_skippable(t, first->rank))
            continue;
        bool ok = t->rank == first->rank;
        for (int d = 0; ok && d < t->rank; d++)
            ok = d == axis || t->dims[d] == first->dims[d];
        if (!ok) {
            char a[128], b[128];
            return ref_fail(c->err, REF_E_SHAPE, "Concat: input %d %s does not match input 0 %s off axis %d", k,
                            ref_shape_str(t, a, sizeof a), ref_shape_str(first, b, sizeof b), axis);
        }
        if (!ref_dim_add(dims[axis], t->dims[axis], &dims[axis]))
            return ref_fail(c->err, REF_E_RANGE, "Concat: the lengths along axis %d overflow 64 bits at input %d", axis,
                            k);
    }
    c->out[0]->dtype = first->dtype;
    ref_tensor_set_shape(c->out[0], first->rank, dims);
    return REF_OK;
}

static int concat_run(ref_op_ctx *c)
{
    const ref_tensor *y = c->out[0];
    int axis = ref_norm_axis(ref_attr_int_or(c->node, "axis", 1), y->rank);
    cat_run(c, false, axis, y);
    return REF_OK;
}

/* ---------------------------------------------------------------------------------------------
 * Split
 * ------------------------------------------------------------------------------------------- */

/* Explicit sizes: the `split` attribute before opset 13, the optional input 1 from 13.
 * Returns their count, -1 when none are given, or a status (REF_E_DYNAMIC when the input has no data). */
static int split_given(ref_op_ctx *c, const int64_t **sizes)
{
    if (c->opset < 13) {
        if (!ref_node_attr(c->node, "split"))
            return -1;
        return (int)ref_attr_ints(c->node, "split", sizes);
    }
    const ref_tensor *t = ref_layout_in(c, 1);
    if (!t)
        return -1;
    if (t->dtype != REF_DT_INT64)
        return ref_fail(c->err, REF_E_UNSUPPORTED, "Split: split must be int64, not %s", ref_dtype_name(t->dtype));
    if (!t->data)
        return ref_fail(c->err, REF_E_DYNAMIC, "Split: split input is not known before run");
    if (ref_tensor_numel(t) != c->n_out)
        return ref_fail(c->err, REF_E_SHAPE, "Split: %lld sizes for %d outputs", (long long)ref_tensor_numel(t),
                        c->n_out);
    *sizes = t->data;
    return c->n_out;
}

/* Size along the axis (of length dim) of output k. */
static int split_size(ref_op_ctx *c, int64_t dim, int k, int64_t *size)
{
    const int64_t *sizes = NULL;
    int n = split_given(c, &sizes);
    if (n < -1)
        return n;
    if (n >= 0) {
        if (n != c->n_out)
            return ref_fail(c->err, REF_E_SHAPE, "Split: %d sizes for %d outputs", n, c->n_out);
        *size = sizes[k];
        return REF_OK;
    }
    int64_t parts = c->n_out;
    if (c->opset >= 18 && ref_node_attr(c->node, "num_outputs")) {
        parts = ref_attr_int_or(c->node, "num_outputs", 0);
        if (parts != c->n_out)
            return ref_fail(c->err, REF_E_SHAPE, "Split: num_outputs=%lld but the node has %d outputs",
                            (long long)parts, c->n_out);
        /* opset 18: chunks of ceil(dim/parts); the last ones take what is left */
        int64_t chunk = (dim + parts - 1) / parts, left = dim - chunk * k;
        *size = left <= 0 ? 0 : left < chunk ? left : chunk;
        return REF_OK;
    }
    if (dim % parts)
        return ref_fail(c->err, REF_E_SHAPE, "Split: dim %lld does not split evenly into %lld parts", (long long)dim,
                        (long long)parts);
    *size = dim / parts;
    return REF_OK;
}

static int split_infer(ref_op_ctx *c)
{
    int rc = ref_layout_want_sized(c, 0, "Split");
    if (rc)
        return rc;
    const ref_tensor *x = c->in[0];
    int64_t raw = ref_attr_int_or(c->node, "axis", 0);
    int axis = ref_norm_axis(raw, x->rank);
    if (axis < 0)
        return ref_fail(c->err, REF_E_SHAPE, "Split: axis %lld is out of range for rank %d", (long long)raw, x->rank);
    if (c->n_out < 1)
        return ref_fail(c->err, REF_E_INVALID, "Split: no outputs");
    int64_t total = 0;
    for (int k = 0; k < c->n_out; k++) {
        int64_t size = 0;
        if ((rc = split_size(c, x->dims[axis], k, &size)))
            return rc;
        if (size < 0)
            return ref_fail(c->err, REF_E_SHAPE, "Split: size %lld of output %d is negative", (long long)size, k);
        ref_tensor *y = c->out[k];
        if (!y)
            return ref_fail(c->err, REF_E_UNSUPPORTED, "Split: omitted output %d", k);
        y->dtype = x->dtype;
        ref_tensor_set_shape(y, x->rank, x->dims);
        y->dims[axis] = size;
        total += size;
    }
    if (total != x->dims[axis])
        return ref_fail(c->err, REF_E_SHAPE, "Split: sizes add up to %lld, but axis %d has %lld", (long long)total,
                        axis, (long long)x->dims[axis]);
    return REF_OK;
}

static int split_run(ref_op_ctx *c)
{
    const ref_tensor *x = c->in[0];
    int axis = ref_norm_axis(ref_attr_int_or(c->node, "axis", 0), x->rank);
    cat_run(c, true, axis, x);
    return REF_OK;
}

const ref_op ref_ops_layout[] = {
    {.name = "Transpose", .infer = ref_transpose_infer, .run = ref_transpose_run},
    {.name = "Concat", .infer = concat_infer, .run = concat_run},
    {.name = "Split", .infer = split_infer, .run = split_run},
    {.name = "Tile", .infer = ref_tile_infer, .run = ref_tile_run},
    {.name = "Expand", .infer = ref_expand_infer, .run = ref_expand_run},
    {.name = "Pad", .infer = ref_pad_infer, .run = ref_pad_run},
    {.name = "DepthToSpace", .infer = ref_depth_to_space_infer, .run = ref_depth_to_space_run},
    {.name = "SpaceToDepth", .infer = ref_space_to_depth_infer, .run = ref_space_to_depth_run},
    {.name = "Trilu", .infer = ref_trilu_infer, .run = ref_trilu_run},
    {.name = NULL},
};
