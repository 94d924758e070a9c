/* sequence.c: operator family "sequence": SequenceEmpty, SequenceConstruct, SequenceInsert, SequenceAt,
 * SequenceErase, SequenceLength, SplitToSequence, ConcatFromSequence, Optional, OptionalHasElement and
 * OptionalGetElement over the engine's sequence and optional blobs (seq.h). Their output sizes depend on the data,
 * so they give them when they run (sets_outputs). It must never index an element it has not bounds-checked. */
#include <string.h>

#include "../seq.h"
#include "op.h"
#include "reduce_elem.h"

/* Element i of the output being built. tmp is room for a computed element. */
typedef const ref_tensor *(*seq_gen)(ref_op_ctx *c, void *arg, int i, ref_tensor *tmp);

/* Output j: a blob of kind with n elements from gen (sized in a first pass, written in a second). */
static int emit(ref_op_ctx *c, int j, int kind, bool has, int inner, int elem_dtype, int n, seq_gen gen, void *arg)
{
    ref_tensor tmp;
    size_t bytes = ref_seq_header_bytes(n);
    for (int i = 0; i < n; i++)
        bytes = ref_seq_next(bytes, gen(c, arg, i, &tmp));
    ref_tensor shape = ref_seq_shape(kind, bytes);
    int rc = ref_op_output(c, j, &shape);
    if (rc)
        return rc;
    ref_seq_header(c->out[j]->data, kind, has, inner, elem_dtype, n);
    size_t at = ref_seq_header_bytes(n);
    for (int i = 0; i < n; i++)
        at = ref_seq_put(c->out[j]->data, i, at, gen(c, arg, i, &tmp));
    return REF_OK;
}

static int want_seq(ref_op_ctx *c, int i, ref_seq_info *s)
{
    const ref_tensor *t = i < c->n_in ? c->in[i] : NULL;
    if (!t || t->dtype != REF_DT_SEQUENCE)
        return ref_fail(c->err, REF_E_SHAPE, "%s: input %d must be a sequence", c->node->op_type, i);
    if (!t->data)
        return ref_fail(c->err, REF_E_DYNAMIC, "%s: the sequence is known at run time", c->node->op_type);
    return ref_seq_read(t, s, c->err);
}

/* Position input i (default dflt) in [-n, n + extra): normalized into *pos. */
static int position(ref_op_ctx *c, int i, int n, int extra, int dflt, int *pos)
{
    const ref_tensor *t = i < c->n_in ? c->in[i] : NULL;
    int64_t p = dflt;
    if (t && ref_tensor_numel(t) == 1)
        p = ref_elem_ldi(t->data, t->dtype, 0);
    if (p < 0)
        p += n;
    if (p < 0 || p >= n + extra)
        return ref_fail(c->err, REF_E_RANGE, "%s: position %lld outside a sequence of %d", c->node->op_type,
                        (long long)p, n);
    *pos = (int)p;
    return REF_OK;
}

/* Every sequence op's infer: inputs checked by run; the sizes come when it runs. */
static int seq_infer_dynamic(ref_op_ctx *c)
{
    return ref_fail(c->err, REF_E_DYNAMIC, "%s: its output's size is known when it runs", c->node->op_type);
}

static const ref_tensor *gen_inputs(ref_op_ctx *c, void *arg, int i, ref_tensor *tmp)
{
    (void)arg;
    (void)tmp;
    return c->in[i];
}

static int empty_run(ref_op_ctx *c)
{
    return emit(c, 0, REF_DT_SEQUENCE, true, 0, (int)ref_attr_int_or(c->node, "dtype", REF_DT_FLOAT), 0, gen_inputs,
                NULL);
}

static int construct_run(ref_op_ctx *c)
{
    for (int i = 0; i < c->n_in; i++)
        if (!c->in[i] || c->in[i]->dtype != c->in[0]->dtype || c->in[i]->dtype >= REF_DT_SEQUENCE)
            return ref_fail(c->err, REF_E_SHAPE, "SequenceConstruct: every input a tensor of one type");
    return emit(c, 0, REF_DT_SEQUENCE, true, 0, c->n_in ? c->in[0]->dtype : 0, c->n_in, gen_inputs, NULL);
}

typedef struct {
    const ref_tensor *seq, *extra;
    int at, skip; /* insert extra at `at`; leave out element `skip` (-1 none) */
} edit_arg;

static const ref_tensor *gen_edit(ref_op_ctx *c, void *arg, int i, ref_tensor *tmp)
{
    (void)c;
    edit_arg *e = arg;
    if (e->extra && i == e->at)
        return e->extra;
    int src = e->extra && i > e->at ? i - 1 : (e->skip >= 0 && i >= e->skip ? i + 1 : i);
    *tmp = ref_seq_at(e->seq, src);
    return tmp;
}

static int insert_run(ref_op_ctx *c)
{
    ref_seq_info s;
    int pos, rc = want_seq(c, 0, &s);
    if (rc)
        return rc;
    const ref_tensor *t = c->n_in > 1 ? c->in[1] : NULL;
    if (!t || t->dtype >= REF_DT_SEQUENCE || (s.elem_dtype && s.elem_dtype != t->dtype))
        return ref_fail(c->err, REF_E_SHAPE, "SequenceInsert: a tensor of the sequence's type");
    if ((rc = position(c, 2, s.n, 1, s.n, &pos)))
        return rc;
    edit_arg e = {.seq = c->in[0], .extra = t, .at = pos, .skip = -1};
    return emit(c, 0, REF_DT_SEQUENCE, true, 0, t->dtype, s.n + 1, gen_edit, &e);
}

static int erase_run(ref_op_ctx *c)
{
    ref_seq_info s;
    int pos, rc = want_seq(c, 0, &s);
    if (rc || (rc = position(c, 1, s.n, 0, s.n - 1, &pos)))
        return rc;
    edit_arg e = {.seq = c->in[0], .skip = pos};
    return emit(c, 0, REF_DT_SEQUENCE, true, 0, s.elem_dtype, s.n - 1, gen_edit, &e);
}

static int at_run(ref_op_ctx *c)
{
    ref_seq_info s;
    int pos, rc = want_seq(c, 0, &s);
    if (rc || (rc = position(c, 1, s.n, 0, 0, &pos)))
        return rc;
    ref_tensor t = ref_seq_at(c->in[0], pos);
    if ((rc = ref_op_output(c, 0, &t)))
        return rc;
    memcpy(c->out[0]->data, t.data, ref_tensor_nbytes(&t));
    return REF_OK;
}

static int length_infer(ref_op_ctx *c)
{
    if (!c->in[0] || c->in[0]->dtype != REF_DT_SEQUENCE)
        return ref_fail(c->err, REF_E_SHAPE, "SequenceLength: input must be a sequence");
    c->out[0]->dtype = REF_DT_INT64;
    c->out[0]->rank = 0;
    return REF_OK;
}

static int length_run(ref_op_ctx *c)
{
    ref_seq_info s;
    int rc = want_seq(c, 0, &s);
    if (!rc)
        *(int64_t *)c->out[0]->data = s.n;
    return rc;
}

/* ---- SplitToSequence and ConcatFromSequence ------------------------------------------------------ */

typedef struct {
    const ref_tensor *x;
    int axis;
    bool squeeze;
    int64_t sizes_from; /* chunks: equal `chunk` sizes, or from the split tensor */
    int64_t chunk;
    const ref_tensor *split;
    void *stage; /* scratch: one chunk, contiguous */
} split_arg;

static int64_t chunk_start(const split_arg *a, int i, int64_t *len)
{
    int64_t start = 0, dim = a->x->dims[a->axis];
    for (int k = 0; k < i; k++)
        start += a->split && a->split->rank == 1 ? ref_elem_ldi(a->split->data, a->split->dtype, k) : a->chunk;
    *len = a->split && a->split->rank == 1 ? ref_elem_ldi(a->split->data, a->split->dtype, i) : a->chunk;
    if (start + *len > dim)
        *len = dim - start;
    return start;
}

static const ref_tensor *gen_split(ref_op_ctx *c, void *arg, int i, ref_tensor *tmp)
{
    (void)c;
    split_arg *a = arg;
    const ref_tensor *x = a->x;
    int64_t len, start = chunk_start(a, i, &len);
    *tmp = *x;
    tmp->dims[a->axis] = len;
    size_t es = ref_dtype_size(x->dtype), inner = (size_t)ref_dims_prod(x->dims, a->axis + 1, x->rank) * es;
    int64_t outer = ref_dims_prod(x->dims, 0, a->axis);
    for (int64_t o = 0; o < outer; o++)
        memcpy((char *)a->stage + (size_t)o * (size_t)len * inner,
               (const char *)x->data + ((size_t)o * (size_t)x->dims[a->axis] + (size_t)start) * inner,
               (size_t)len * inner);
    tmp->data = a->stage;
    if (a->squeeze) {
        memmove(&tmp->dims[a->axis], &tmp->dims[a->axis + 1], sizeof(int64_t) * (size_t)(x->rank - a->axis - 1));
        tmp->rank--;
    }
    return tmp;
}

static size_t split_scratch_bytes(const ref_op_ctx *c) { return ref_tensor_nbytes(c->in[0]) + 1; }

static int split_run(ref_op_ctx *c)
{
    const ref_tensor *x = c->in[0], *sp = c->n_in > 1 ? c->in[1] : NULL;
    split_arg a = {.x = x, .axis = ref_norm_axis(ref_attr_int_or(c->node, "axis", 0), x->rank), .split = sp,
                   .stage = c->scratch, .chunk = 1};
    if (a.axis < 0 || !ref_dtype_size(x->dtype) || x->dtype >= REF_DT_SEQUENCE)
        return ref_fail(c->err, REF_E_SHAPE, "SplitToSequence: axis out of range or not a tensor");
    int64_t dim = x->dims[a.axis], n;
    if (sp && sp->rank == 1) {
        n = sp->dims[0];
        int64_t sum = 0;
        for (int64_t k = 0; k < n; k++)
            sum += ref_elem_ldi(sp->data, sp->dtype, k);
        if (sum != dim)
            return ref_fail(c->err, REF_E_SHAPE, "SplitToSequence: split sums to %lld, the axis has %lld",
                            (long long)sum, (long long)dim);
    } else {
        a.chunk = sp ? ref_elem_ldi(sp->data, sp->dtype, 0) : 1;
        if (a.chunk <= 0)
            return ref_fail(c->err, REF_E_SHAPE, "SplitToSequence: split %lld", (long long)a.chunk);
        n = (dim + a.chunk - 1) / a.chunk;
        a.squeeze = !sp && ref_attr_int_or(c->node, "keepdims", 1) == 0;
    }
    return emit(c, 0, REF_DT_SEQUENCE, true, 0, x->dtype, (int)n, gen_split, &a);
}

static int concat_run(ref_op_ctx *c)
{
    ref_seq_info s;
    int rc = want_seq(c, 0, &s);
    if (rc)
        return rc;
    if (s.n == 0)
        return ref_fail(c->err, REF_E_SHAPE, "ConcatFromSequence of an empty sequence");
    bool stack = ref_attr_int_or(c->node, "new_axis", 0) != 0;
    ref_tensor first = ref_seq_at(c->in[0], 0), y = first;
    int axis = ref_norm_axis(ref_attr_int_or(c->node, "axis", 0), first.rank + (stack ? 1 : 0));
    if (axis < 0)
        return ref_fail(c->err, REF_E_SHAPE, "ConcatFromSequence: axis out of range");
    if (stack) {
        memmove(&y.dims[axis + 1], &y.dims[axis], sizeof(int64_t) * (size_t)(first.rank - axis));
        y.rank++;
        y.dims[axis] = s.n;
    } else {
        y.dims[axis] = 0;
        for (int i = 0; i < s.n; i++)
            if (!ref_dim_add(y.dims[axis], ref_seq_at(c->in[0], i).dims[axis], &y.dims[axis]))
                return ref_fail(c->err, REF_E_RANGE, "ConcatFromSequence: the lengths along axis %d overflow 64 bits",
                                axis);
    }
    if ((rc = ref_op_output(c, 0, &y)))
        return rc;
    size_t es = ref_dtype_size(y.dtype);
    int64_t outer = ref_dims_prod(y.dims, 0, axis), at = 0;
    for (int i = 0; i < s.n; i++) {
        ref_tensor e = ref_seq_at(c->in[0], i);
        size_t block = stack ? ref_tensor_nbytes(&e) / (size_t)(outer ? outer : 1)
                             : (size_t)ref_dims_prod(e.dims, axis, e.rank) * es;
        size_t row = stack ? block * (size_t)s.n : (size_t)ref_dims_prod(y.dims, axis, y.rank) * es;
        for (int64_t o = 0; o < outer; o++)
            memcpy((char *)c->out[0]->data + (size_t)o * row + (size_t)at, (const char *)e.data + (size_t)o * block,
                   block);
        at += (int64_t)block;
    }
    return REF_OK;
}

/* ---- Optional ----------------------------------------------------------------------------------- */

static const ref_tensor *gen_of(ref_op_ctx *c, void *arg, int i, ref_tensor *tmp)
{
    (void)c;
    const ref_tensor *t = arg;
    if (t->dtype != REF_DT_SEQUENCE && t->dtype != REF_DT_OPTIONAL)
        return t;
    *tmp = ref_seq_at(t, i);
    return tmp;
}

static int optional_run(ref_op_ctx *c)
{
    const ref_tensor *t = c->n_in > 0 ? c->in[0] : NULL;
    if (!t)
        return emit(c, 0, REF_DT_OPTIONAL, false, 0, 0, 0, gen_inputs, NULL);
    if (t->dtype == REF_DT_OPTIONAL)
        return ref_fail(c->err, REF_E_UNSUPPORTED, "Optional of an optional");
    ref_seq_info s = {.n = 1};
    int rc = t->dtype == REF_DT_SEQUENCE ? ref_seq_read(t, &s, c->err) : REF_OK;
    if (rc)
        return rc;
    return emit(c, 0, REF_DT_OPTIONAL, true, t->dtype == REF_DT_SEQUENCE ? REF_DT_SEQUENCE : 0,
                t->dtype == REF_DT_SEQUENCE ? s.elem_dtype : t->dtype, s.n, gen_of, (void *)t);
}

static int has_infer(ref_op_ctx *c)
{
    c->out[0]->dtype = REF_DT_BOOL;
    c->out[0]->rank = 0;
    return REF_OK;
}

static int has_run(ref_op_ctx *c)
{
    const ref_tensor *t = c->n_in > 0 ? c->in[0] : NULL;
    ref_seq_info s = {.has_value = t != NULL};
    int rc = t && t->dtype == REF_DT_OPTIONAL ? ref_seq_read(t, &s, c->err) : REF_OK;
    if (!rc)
        *(uint8_t *)c->out[0]->data = s.has_value;
    return rc;
}

static int get_run(ref_op_ctx *c)
{
    const ref_tensor *t = c->n_in > 0 ? c->in[0] : NULL;
    if (!t)
        return ref_fail(c->err, REF_E_INVALID, "OptionalGetElement needs an input");
    ref_seq_info s;
    int rc;
    if (t->dtype != REF_DT_OPTIONAL) { /* opset 18: a tensor or sequence passes through */
        if ((rc = ref_op_output(c, 0, t)))
            return rc;
        memcpy(c->out[0]->data, t->data, ref_tensor_nbytes(t));
        return REF_OK;
    }
    if ((rc = ref_seq_read(t, &s, c->err)))
        return rc;
    if (!s.has_value)
        return ref_fail(c->err, REF_E_INVALID, "OptionalGetElement of an empty optional");
    if (s.inner == REF_DT_SEQUENCE)
        return emit(c, 0, REF_DT_SEQUENCE, true, 0, s.elem_dtype, s.n, gen_of, (void *)t);
    ref_tensor e = ref_seq_at(t, 0);
    if ((rc = ref_op_output(c, 0, &e)))
        return rc;
    memcpy(c->out[0]->data, e.data, ref_tensor_nbytes(&e));
    return REF_OK;
}

#define SEQ_OP(nm, run_fn) {.name = nm, .infer = seq_infer_dynamic, .run = run_fn, .sets_outputs = true}

const ref_op ref_ops_sequence[] = {
    SEQ_OP("SequenceEmpty", empty_run),
    SEQ_OP("SequenceConstruct", construct_run),
    SEQ_OP("SequenceInsert", insert_run),
    SEQ_OP("SequenceErase", erase_run),
    SEQ_OP("SequenceAt", at_run),
    {.name = "SequenceLength", .infer = length_infer, .run = length_run},
    {.name = "SplitToSequence", .infer = seq_infer_dynamic, .scratch_bytes = split_scratch_bytes, .run = split_run,
     .sets_outputs = true},
    SEQ_OP("ConcatFromSequence", concat_run),
    SEQ_OP("Optional", optional_run),
    {.name = "OptionalHasElement", .infer = has_infer, .run = has_run},
    SEQ_OP("OptionalGetElement", get_run),
    {.name = NULL},
};
