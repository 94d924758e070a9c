/* index_slice.c: Slice (opset 1 attributes; opset >= 10 inputs with axes and steps, negative steps).
 * It must never allocate at run time, and never address data outside the clamped ranges it computed. */
#include <inttypes.h>

#include "index_util.h"

/* Per data axis: first element, step and count taken. */
typedef struct {
    int64_t start[REF_MAX_RANK], step[REF_MAX_RANK], len[REF_MAX_RANK];
} slice_plan;

/* The n values of one list, from an attribute (opset 1) or an input; REF_E_DYNAMIC when unknown. */
typedef struct {
    const int64_t *attr;
    const ref_tensor *t;
    int64_t n;
} slice_list;

static int64_t list_at(const slice_list *l, int64_t k)
{
    return l->attr ? l->attr[k] : ix_int_at(l->t, k);
}

static int list_from_input(ref_op_ctx *c, int i, const char *what, slice_list *l)
{
    const ref_tensor *t = ix_in(c, i);
    l->attr = NULL;
    l->t = t;
    l->n = t ? ref_tensor_numel(t) : -1;
    if (!t)
        return REF_OK;
    if (t->dtype != REF_DT_INT32 && t->dtype != REF_DT_INT64)
        return ref_fail(c->err, REF_E_UNSUPPORTED, "%s must be int32 or int64, not %s", what,
                        ref_dtype_name(t->dtype));
    if (t->rank != 1)
        return ref_fail(c->err, REF_E_SHAPE, "%s must be 1-D, has rank %d", what, t->rank);
    if (!t->data)
        return ref_fail(c->err, REF_E_DYNAMIC, "%s is not known before run", what);
    return REF_OK;
}

static int read_lists(ref_op_ctx *c, slice_list *st, slice_list *en, slice_list *ax, slice_list *sp)
{
    if (c->opset < 10) {
        size_t ns = ref_attr_ints(c->node, "starts", &st->attr);
        size_t ne = ref_attr_ints(c->node, "ends", &en->attr);
        size_t na = ref_attr_ints(c->node, "axes", &ax->attr);
        if (!st->attr || !en->attr)
            return ref_fail(c->err, REF_E_INVALID, "attributes starts and ends are required");
        st->n = (int64_t)ns;
        en->n = (int64_t)ne;
        ax->n = ax->attr ? (int64_t)na : -1;
        sp->attr = NULL;
        sp->t = NULL;
        sp->n = -1;
        return REF_OK;
    }
    int rc = list_from_input(c, 1, "starts", st);
    if (!rc)
        rc = list_from_input(c, 2, "ends", en);
    if (!rc)
        rc = list_from_input(c, 3, "axes", ax);
    if (!rc)
        rc = list_from_input(c, 4, "steps", sp);
    if (!rc && (st->n < 0 || en->n < 0))
        rc = ref_fail(c->err, REF_E_INVALID, "inputs starts and ends are required");
    return rc;
}

/* Clamp one axis the way the spec says and count the elements taken. */
static void plan_axis(int64_t dim, int64_t s, int64_t e, int64_t step, slice_plan *p, int axis)
{
    if (s < 0)
        s += dim;
    if (e < 0)
        e += dim;
    int64_t len = 0;
    if (dim == 0) {
        s = 0;
    } else if (step > 0) {
        s = s < 0 ? 0 : s > dim ? dim : s;
        e = e < 0 ? 0 : e > dim ? dim : e;
        if (e > s)
            len = (int64_t)((uint64_t)(e - s - 1) / (uint64_t)step) + 1;
    } else {
        s = s < 0 ? 0 : s > dim - 1 ? dim - 1 : s;
        e = e < -1 ? -1 : e > dim - 1 ? dim - 1 : e;
        uint64_t mag = (uint64_t)(-(step + 1)) + 1; /* |step| without overflow at INT64_MIN */
        if (s > e)
            len = (int64_t)((uint64_t)(s - e - 1) / mag) + 1;
    }
    p->start[axis] = len ? s : 0;
    p->step[axis] = step;
    p->len[axis] = len;
}

static int make_plan(ref_op_ctx *c, slice_plan *p)
{
    const ref_tensor *x = c->in[0];
    slice_list st = {0}, en = {0}, ax = {0}, sp = {0};
    int rc = read_lists(c, &st, &en, &ax, &sp);
    if (rc)
        return rc;
    if (en.n != st.n || (ax.n >= 0 && ax.n != st.n) || (sp.n >= 0 && sp.n != st.n))
        return ref_fail(c->err, REF_E_SHAPE, "starts, ends, axes and steps must have one length (%" PRId64
                        ", %" PRId64 ", %" PRId64 ", %" PRId64 ")", st.n, en.n, ax.n, sp.n);
    if (st.n > x->rank)
        return ref_fail(c->err, REF_E_SHAPE, "%" PRId64 " starts for data of rank %d", st.n, x->rank);
    for (int d = 0; d < x->rank; d++) {
        p->start[d] = 0;
        p->step[d] = 1;
        p->len[d] = x->dims[d];
    }
    unsigned seen = 0;
    for (int64_t i = 0; i < st.n; i++) {
        int64_t a = ax.n >= 0 ? list_at(&ax, i) : i;
        int axis = ref_norm_axis(a, x->rank);
        if (axis < 0)
            return ref_fail(c->err, REF_E_SHAPE, "axes[%" PRId64 "] = %" PRId64 " is out of range for rank %d",
                            i, a, x->rank);
        if (seen & (1u << axis))
            return ref_fail(c->err, REF_E_SHAPE, "axis %d appears twice in axes", axis);
        seen |= 1u << axis;
        int64_t step = sp.n >= 0 ? list_at(&sp, i) : 1;
        if (step == 0)
            return ref_fail(c->err, REF_E_INVALID, "steps[%" PRId64 "] is 0", i);
        plan_axis(x->dims[axis], list_at(&st, i), list_at(&en, i), step, p, axis);
    }
    return REF_OK;
}

int ix_slice_infer(ref_op_ctx *c)
{
    int rc = ix_want_sized(c, 0);
    slice_plan p;
    if (!rc)
        rc = make_plan(c, &p);
    if (rc)
        return rc;
    ref_tensor *y = c->out[0];
    y->dtype = c->in[0]->dtype;
    ref_tensor_set_shape(y, c->in[0]->rank, p.len);
    return REF_OK;
}

typedef struct {
    const slice_plan *p;
    const uint8_t *x;
    uint8_t *y;
    int rank;
    int64_t istr[REF_MAX_RANK];
    size_t es;
} slice_job;

/* One task covers output rows (every dim but the last); each row is one strided run of the input. */
static void slice_task(void *arg, int64_t begin, int64_t end, int tid)
{
    (void)tid;
    const slice_job *j = arg;
    const slice_plan *p = j->p;
    int last = j->rank - 1;
    int64_t n = p->len[last], st = p->step[last] * j->istr[last];
    size_t es = j->es;
    for (int64_t r = begin; r < end; r++) {
        int64_t rem = r, off = p->start[last] * j->istr[last];
        for (int d = last - 1; d >= 0; d--) {
            int64_t o = rem % p->len[d];
            rem /= p->len[d];
            off += (p->start[d] + o * p->step[d]) * j->istr[d];
        }
        uint8_t *dst = j->y + (size_t)(r * n) * es;
        const uint8_t *src = j->x + (size_t)off * es;
        if (st == 1) {
            memcpy(dst, src, (size_t)n * es);
            continue;
        }
        for (int64_t k = 0; k < n; k++)
            ix_copy_elem(dst + (size_t)k * es, src + (k * st) * (int64_t)es, es);
    }
}

int ix_slice_run(ref_op_ctx *c)
{
    const ref_tensor *x = c->in[0];
    ref_tensor *y = c->out[0];
    slice_plan p;
    int rc = make_plan(c, &p);
    if (rc)
        return rc;
    size_t es = ref_dtype_size(x->dtype);
    if (x->rank == 0) {
        ix_copy_elem(y->data, x->data, es);
        return REF_OK;
    }
    for (int d = 0; d < x->rank; d++)
        if (p.len[d] != y->dims[d])
            return ref_fail(c->err, REF_E_SHAPE, "output dim %d is %" PRId64 " but the slice takes %" PRId64, d,
                            y->dims[d], p.len[d]);
    if (ref_tensor_numel(y) == 0)
        return REF_OK;
    slice_job j = {.p = &p, .x = x->data, .y = y->data, .rank = x->rank, .es = es};
    ref_contiguous_strides(x, j.istr);
    int64_t rows = ref_dims_prod(p.len, 0, x->rank - 1);
    ref_parallel_for(c->pool, rows, ix_grain(p.len[x->rank - 1] * (int64_t)es), slice_task, &j);
    return REF_OK;
}
