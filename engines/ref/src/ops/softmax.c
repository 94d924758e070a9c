/* softmax.c: operator family "softmax": Softmax, LogSoftmax and Hardmax in the opset < 13 (2-D coercion at
 * axis) and >= 13 (one axis) conventions; the losses are in softmax_loss.c. It must never allocate at run
 * time, and it always subtracts the lane's max before exp so large inputs cannot overflow. */
#include <math.h>
#include <string.h>

#include "reduce_elem.h"
#include "rows.h"
#include "softmax_impl.h"

typedef enum { SM_SOFT, SM_LOG, SM_HARD } sm_kind;

/* The input seen as [outer, n, inner]: each of the outer*inner lanes normalizes n elements spaced
 * inner apart. Before opset 13 the lane is the whole flattened block dims[axis:], so inner is 1. */
typedef struct sm_geom {
    int64_t outer, n, inner;
} sm_geom;

static int sm_geometry(ref_op_ctx *c, sm_geom *g)
{
    const ref_tensor *x = c->in[0];
    int r = x->rank;
    if (c->opset >= 13) {
        int64_t a = ref_attr_int_or(c->node, "axis", -1);
        int axis = ref_norm_axis(a, r);
        if (axis < 0)
            return ref_fail(c->err, REF_E_SHAPE, "axis %lld out of range for rank %d", (long long)a, r);
        g->outer = ref_dims_prod(x->dims, 0, axis);
        g->n = x->dims[axis];
        g->inner = ref_dims_prod(x->dims, axis + 1, r);
        return REF_OK;
    }
    int64_t a = ref_attr_int_or(c->node, "axis", 1);
    /* the 2-D coercion accepts axis == rank (an empty trailing block of one element) */
    if (a < -r || a > r)
        return ref_fail(c->err, REF_E_SHAPE, "axis %lld out of range for rank %d", (long long)a, r);
    int axis = (int)(a < 0 ? a + r : a);
    g->outer = ref_dims_prod(x->dims, 0, axis);
    g->n = ref_dims_prod(x->dims, axis, r);
    g->inner = 1;
    return REF_OK;
}

static int sm_infer(ref_op_ctx *c)
{
    static const int types[] = {REF_DT_FLOAT, REF_DT_DOUBLE};
    int rc = ref_op_want_dtype(c, 0, 2, types);
    if (rc)
        return rc;
    if (c->n_out < 1 || !c->out[0])
        return ref_fail(c->err, REF_E_INVALID, "output 0 is required");
    sm_geom g;
    rc = sm_geometry(c, &g);
    if (rc)
        return rc;
    const ref_tensor *x = c->in[0];
    ref_tensor *y = c->out[0];
    y->dtype = x->dtype;
    ref_tensor_set_shape(y, x->rank, x->dims);
    return REF_OK;
}

typedef struct sm_task {
    const void *x;
    void *y;
    int dt;
    sm_kind kind;
    sm_geom g;
    ref_rows_softmax_fn rows; /* float Softmax over contiguous lanes (inner 1), else NULL */
} sm_task;

/* One lane. Each element is read before the same index is written, so y may alias x. */
REF_ELEM_INLINE void sm_lane(const sm_task *t, int64_t base, const int dt)
{
    const int64_t n = t->g.n, st = t->g.inner;
    double mx = -INFINITY;
    int64_t arg = 0;
    for (int64_t k = 0; k < n; k++) {
        double v = ref_elem_ld(t->x, dt, base + k * st);
        if (v > mx) {
            mx = v;
            arg = k;
        }
    }
    if (t->kind == SM_HARD) {
        for (int64_t k = 0; k < n; k++)
            ref_elem_st(t->y, dt, base + k * st, k == arg ? 1.0 : 0.0);
        return;
    }
    if (isinf(mx))
        mx = 0.0; /* all -inf or +inf present: let exp/log produce the IEEE answer */
    double sum = 0.0;
    for (int64_t k = 0; k < n; k++) {
        double d = ref_elem_ld(t->x, dt, base + k * st) - mx;
        /* expf is within an ulp of float and much cheaper than exp for the hot type */
        double e = dt == REF_DT_FLOAT ? (double)expf((float)d) : exp(d);
        sum += e;
        if (t->kind == SM_SOFT)
            ref_elem_st(t->y, dt, base + k * st, e);
    }
    if (t->kind == SM_SOFT) {
        double inv = 1.0 / sum;
        for (int64_t k = 0; k < n; k++)
            ref_elem_st(t->y, dt, base + k * st, ref_elem_ld(t->y, dt, base + k * st) * inv);
        return;
    }
    double lse = log(sum);
    for (int64_t k = 0; k < n; k++)
        ref_elem_st(t->y, dt, base + k * st, ref_elem_ld(t->x, dt, base + k * st) - mx - lse);
}

static void sm_task_fn(void *arg, int64_t begin, int64_t end, int tid)
{
    (void)tid;
    const sm_task *t = arg;
    if (t->rows) {
        for (int64_t lane = begin; lane < end; lane++)
            t->rows((const float *)t->x + lane * t->g.n, (float *)t->y + lane * t->g.n, t->g.n);
        return;
    }
    for (int64_t lane = begin; lane < end; lane++) {
        int64_t o = lane / t->g.inner, i = lane % t->g.inner;
        if (t->dt == REF_DT_FLOAT)
            sm_lane(t, o * t->g.n * t->g.inner + i, REF_DT_FLOAT);
        else
            sm_lane(t, o * t->g.n * t->g.inner + i, t->dt);
    }
}

static int sm_run(ref_op_ctx *c)
{
    sm_task t;
    int rc = sm_geometry(c, &t.g);
    if (rc)
        return rc;
    const char *op = c->node->op_type;
    t.kind = !strcmp(op, "LogSoftmax") ? SM_LOG : !strcmp(op, "Hardmax") ? SM_HARD : SM_SOFT;
    t.x = c->in[0]->data;
    t.y = c->out[0]->data;
    t.dt = c->in[0]->dtype;
    t.rows = t.kind == SM_SOFT && t.dt == REF_DT_FLOAT && t.g.inner == 1 ? ref_rows_softmax() : NULL;
    if (t.g.n == 0)
        return REF_OK;
    ref_parallel_for(c->pool, t.g.outer * t.g.inner, ref_elem_grain(3 * t.g.n), sm_task_fn, &t);
    return REF_OK;
}

const ref_op ref_ops_softmax[] = {
    {.name = "Softmax", .infer = sm_infer, .run = sm_run},
    {.name = "LogSoftmax", .infer = sm_infer, .run = sm_run},
    {.name = "Hardmax", .infer = sm_infer, .run = sm_run},
    {.name = "NegativeLogLikelihoodLoss", .infer = ref_softmax_loss_infer, .run = ref_softmax_loss_run},
    {.name = "SoftmaxCrossEntropyLoss", .infer = ref_softmax_loss_infer, .run = ref_softmax_loss_run},
    {.name = NULL},
};
