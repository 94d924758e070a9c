/* norm_layer.c: LayerNormalization (opset 17, with the optional Mean and InvStdDev outputs) and
 * MeanVarianceNormalization, the norm ops whose statistics span trailing or arbitrary axes.
 * It must never allocate at run time, and each row's statistics are folded in one fixed order. */
#include <math.h>
#include <string.h>

#include "norm_impl.h"
#include "reduce_plan.h"
#include "rows.h"

/* ================================================================================================
 * LayerNormalization: statistics over dims [axis, rank); Scale and B broadcast to those dims.
 * ============================================================================================== */

/* The normalized shape X[axis:] as a tensor, for broadcasting Scale and B into it. */
static void ln_norm_shape(const ref_tensor *x, int axis, ref_tensor *out)
{
    memset(out, 0, sizeof *out);
    ref_tensor_set_shape(out, x->rank - axis, x->dims + axis);
}

static int ln_check(ref_op_ctx *c, int *axis)
{
    int rc = ref_norm_want_float(c, 0, "X");
    if (!rc)
        rc = ref_norm_want_float(c, 1, "Scale");
    if (!rc && c->n_in > 2 && c->in[2])
        rc = ref_norm_want_float(c, 2, "B");
    if (rc)
        return rc;
    const ref_tensor *x = c->in[0];
    int64_t a = ref_attr_int_or(c->node, "axis", -1);
    *axis = ref_norm_axis(a, x->rank);
    if (*axis < 0)
        return ref_fail(c->err, REF_E_SHAPE, "axis %lld out of range for rank %d", (long long)a, (int)x->rank);
    ref_tensor ns;
    ln_norm_shape(x, *axis, &ns);
    for (int i = 1; i < 3 && i < c->n_in; i++) {
        const ref_tensor *p = c->in[i];
        if (!p)
            continue;
        bool ok = p->rank <= ns.rank;
        for (int k = 1; ok && k <= p->rank; k++) {
            int64_t pd = p->dims[p->rank - k], nd = ns.dims[ns.rank - k];
            ok = pd == nd || pd == 1;
        }
        if (!ok) {
            char b1[96], b2[96];
            return ref_fail(c->err, REF_E_SHAPE, "%s %s does not broadcast to the normalized shape %s",
                            i == 1 ? "Scale" : "B", ref_shape_str(p, b1, sizeof b1), ref_shape_str(&ns, b2, sizeof b2));
        }
    }
    int64_t stash = ref_attr_int_or(c->node, "stash_type", REF_DT_FLOAT);
    if (stash != REF_DT_FLOAT && stash != REF_DT_DOUBLE)
        return ref_fail(c->err, REF_E_UNSUPPORTED, "stash_type %lld: only float (1) and double (11)",
                        (long long)stash);
    return REF_OK;
}

int ref_norm_layer_infer(ref_op_ctx *c)
{
    int axis, rc = ln_check(c, &axis);
    if (rc)
        return rc;
    if (c->n_out < 1 || !c->out[0])
        return ref_fail(c->err, REF_E_INVALID, "output 0 is required");
    const ref_tensor *x = c->in[0];
    c->out[0]->dtype = x->dtype;
    ref_tensor_set_shape(c->out[0], x->rank, x->dims);
    for (int i = 1; i < 3 && i < c->n_out; i++) {
        ref_tensor *s = c->out[i];
        if (!s)
            continue;
        s->dtype = (int32_t)ref_attr_int_or(c->node, "stash_type", REF_DT_FLOAT);
        ref_tensor_set_shape(s, x->rank, x->dims);
        for (int d = axis; d < x->rank; d++)
            s->dims[d] = 1;
    }
    return REF_OK;
}

typedef struct ln_task {
    const void *x;
    void *y;
    int dt;
    int64_t n;                     /* elements per row */
    const ref_tensor *p[2];        /* Scale, B (B may be NULL) */
    bool dense[2];                 /* parameter k has every element of the normalized shape */
    int64_t pstr[2][REF_MAX_RANK]; /* else its element strides in the normalized shape */
    ref_tensor ns;                 /* normalized shape */
    void *mean, *inv;              /* optional outputs, stash dtype */
    int stash;
    double eps;
    ref_rows_layernorm_fn rows;    /* float X with dense float Scale (and B), else NULL */
} ln_task;

/* Value of parameter k for element i of a row, broadcast into the normalized shape. */
static inline double ln_param(const ln_task *t, int k, int64_t i)
{
    const ref_tensor *p = t->p[k];
    if (t->dense[k])
        return ref_elem_ld(p->data, p->dtype, i);
    int64_t off = 0;
    for (int d = t->ns.rank - 1; d >= 0; d--) {
        off += (i % t->ns.dims[d]) * t->pstr[k][d];
        i /= t->ns.dims[d];
    }
    return ref_elem_ld(p->data, p->dtype, off);
}

REF_ELEM_INLINE void ln_row(const ln_task *t, int64_t row, const int dt)
{
    int64_t base = row * t->n;
    double mean, inv;
    ref_norm_stats(t->x, dt, base, t->n, &mean, &inv, t->eps);
    for (int64_t i = 0; i < t->n; i++) {
        double v = (ref_elem_ld(t->x, dt, base + i) - mean) * inv * ln_param(t, 0, i);
        if (t->p[1])
            v += ln_param(t, 1, i);
        ref_elem_st(t->y, dt, base + i, v);
    }
    if (t->mean)
        ref_elem_st(t->mean, t->stash, row, mean);
    if (t->inv)
        ref_elem_st(t->inv, t->stash, row, inv);
}

static void ln_task_fn(void *arg, int64_t begin, int64_t end, int tid)
{
    (void)tid;
    const ln_task *t = arg;
    for (int64_t row = begin; row < end; row++) {
        if (t->rows) {
            double mean, inv;
            const float *b = t->p[1] ? t->p[1]->data : NULL;
            t->rows((const float *)t->x + row * t->n, (float *)t->y + row * t->n, t->n, t->p[0]->data, b, t->eps,
                    &mean, &inv);
            if (t->mean)
                ref_elem_st(t->mean, t->stash, row, mean);
            if (t->inv)
                ref_elem_st(t->inv, t->stash, row, inv);
        } else if (t->dt == REF_DT_FLOAT)
            ln_row(t, row, REF_DT_FLOAT);
        else
            ln_row(t, row, t->dt);
    }
}

int ref_norm_layer_run(ref_op_ctx *c)
{
    int axis, rc = ln_check(c, &axis);
    if (rc)
        return rc;
    const ref_tensor *x = c->in[0];
    ln_task t = {.x = x->data, .y = c->out[0]->data, .dt = x->dtype, .n = ref_dims_prod(x->dims, axis, x->rank),
                 .p = {c->in[1], c->n_in > 2 ? c->in[2] : NULL},
                 .stash = (int)ref_attr_int_or(c->node, "stash_type", REF_DT_FLOAT),
                 .eps = ref_attr_float_or(c->node, "epsilon", 1e-5f)};
    t.mean = ref_elem_out_present(c, 1) ? c->out[1]->data : NULL;
    t.inv = ref_elem_out_present(c, 2) ? c->out[2]->data : NULL;
    ln_norm_shape(x, axis, &t.ns);
    for (int k = 0; k < 2; k++) {
        if (!t.p[k])
            continue;
        t.dense[k] = ref_tensor_numel(t.p[k]) == t.n;
        ref_broadcast_strides(t.p[k], &t.ns, t.pstr[k]);
    }
    bool dense_float = t.dt == REF_DT_FLOAT && t.dense[0] && t.p[0]->dtype == REF_DT_FLOAT &&
                       (!t.p[1] || (t.dense[1] && t.p[1]->dtype == REF_DT_FLOAT));
    t.rows = dense_float ? ref_rows_layernorm() : NULL;
    ref_parallel_for(c->pool, ref_dims_prod(x->dims, 0, axis), ref_elem_grain(3 * t.n), ln_task_fn, &t);
    return REF_OK;
}

/* ================================================================================================
 * MeanVarianceNormalization: y = (x - mean) / (sqrt(variance) + 1e-9) over `axes` (default 0, 2, 3).
 * ============================================================================================== */

static int mvn_mask(ref_op_ctx *c, bool *reduce)
{
    static const int64_t dflt[] = {0, 2, 3};
    const ref_tensor *x = c->in[0];
    const int64_t *axes = NULL;
    size_t n = ref_attr_ints(c->node, "axes", &axes);
    if (!axes) {
        axes = dflt;
        n = 3;
    }
    for (int d = 0; d < x->rank; d++)
        reduce[d] = false;
    for (size_t i = 0; i < n; i++) {
        int a = ref_norm_axis(axes[i], x->rank);
        if (a < 0)
            return ref_fail(c->err, REF_E_SHAPE, "axis %lld out of range for rank %d", (long long)axes[i],
                            (int)x->rank);
        reduce[a] = true;
    }
    return REF_OK;
}

int ref_norm_mvn_infer(ref_op_ctx *c)
{
    int rc = ref_norm_want_float(c, 0, "X");
    bool reduce[REF_MAX_RANK];
    if (!rc)
        rc = mvn_mask(c, reduce);
    if (rc)
        return rc;
    if (c->n_out < 1 || !c->out[0])
        return ref_fail(c->err, REF_E_INVALID, "output 0 is required");
    c->out[0]->dtype = c->in[0]->dtype;
    ref_tensor_set_shape(c->out[0], c->in[0]->rank, c->in[0]->dims);
    return REF_OK;
}

typedef struct mvn_task {
    const ref_rplan *p;
    const void *x;
    void *y;
    int dt;
} mvn_task;

static void mvn_task_fn(void *arg, int64_t begin, int64_t end, int tid)
{
    (void)tid;
    const mvn_task *t = arg;
    const ref_rplan *p = t->p;
    for (int64_t j = begin; j < end; j++) {
        int64_t base = ref_rplan_base(p, j);
        ref_rwalk w;
        double sum = 0.0, ss = 0.0;
        ref_rplan_walk_init(p, base, &w);
        for (int64_t k = 0; k < p->n_red; k++, ref_rplan_walk_next(p, &w))
            sum += ref_elem_ld(t->x, t->dt, w.off);
        double mean = p->n_red ? sum / (double)p->n_red : 0.0;
        ref_rplan_walk_init(p, base, &w);
        for (int64_t k = 0; k < p->n_red; k++, ref_rplan_walk_next(p, &w)) {
            double d = ref_elem_ld(t->x, t->dt, w.off) - mean;
            ss += d * d;
        }
        double den = sqrt(p->n_red ? ss / (double)p->n_red : 0.0) + 1e-9;
        ref_rplan_walk_init(p, base, &w);
        for (int64_t k = 0; k < p->n_red; k++, ref_rplan_walk_next(p, &w))
            ref_elem_st(t->y, t->dt, w.off, (ref_elem_ld(t->x, t->dt, w.off) - mean) / den);
    }
}

int ref_norm_mvn_run(ref_op_ctx *c)
{
    bool reduce[REF_MAX_RANK];
    int rc = mvn_mask(c, reduce);
    if (rc)
        return rc;
    ref_rplan p;
    ref_rplan_init(&p, c->in[0], reduce);
    mvn_task t = {.p = &p, .x = c->in[0]->data, .y = c->out[0]->data, .dt = c->in[0]->dtype};
    ref_parallel_for(c->pool, p.n_out, ref_elem_grain(3 * p.n_red), mvn_task_fn, &t);
    return REF_OK;
}
