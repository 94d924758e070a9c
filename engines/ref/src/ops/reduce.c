/* reduce.c: operator family "reduce": ReduceSum/Mean/Max/Min/Prod/L1/L2/LogSum/LogSumExp/SumSquare and
 * ArgMax/ArgMin. It must never allocate at run time, and each output folds its elements in one fixed order
 * so results do not depend on the thread count. */
#include <math.h>
#include <string.h>

#include "op.h"
#include "reduce_elem.h"
#include "reduce_plan.h"

typedef enum {
    R_SUM, R_MEAN, R_MAX, R_MIN, R_PROD, R_L1, R_L2, R_LOGSUM, R_LOGSUMEXP, R_SUMSQ
} r_kind;

static const struct {
    const char *name;
    r_kind kind;
} r_names[] = {
    {"ReduceSum", R_SUM},       {"ReduceMean", R_MEAN},           {"ReduceMax", R_MAX},
    {"ReduceMin", R_MIN},       {"ReduceProd", R_PROD},           {"ReduceL1", R_L1},
    {"ReduceL2", R_L2},         {"ReduceLogSum", R_LOGSUM},       {"ReduceLogSumExp", R_LOGSUMEXP},
    {"ReduceSumSquare", R_SUMSQ},
};

static r_kind r_kind_of(const char *op_type)
{
    for (size_t i = 0; i < sizeof r_names / sizeof r_names[0]; i++)
        if (!strcmp(r_names[i].name, op_type))
            return r_names[i].kind;
    return R_SUM;
}

/* ================================================================================================
 * Axes: attribute before the opset that moved them to an input (13 for ReduceSum, 18 for the rest).
 * ============================================================================================== */

/* Sets reduce[d] for every reduced dim; *noop when the node copies its input through.
 * REF_E_DYNAMIC when the axes input exists but its value is not known yet. */
static int r_axes(ref_op_ctx *c, bool *reduce, bool *noop)
{
    const ref_tensor *x = c->in[0];
    r_kind kind = r_kind_of(c->node->op_type);
    int64_t axes[REF_MAX_RANK];
    int n_axes = 0;
    bool from_input = c->opset >= 18 || (kind == R_SUM && c->opset >= 13);
    const ref_tensor *at = from_input && c->n_in > 1 ? c->in[1] : NULL;
    if (at) {
        int64_t n = ref_tensor_numel(at);
        if (n > 0) {
            if (!at->data)
                return ref_fail(c->err, REF_E_DYNAMIC, "axes input is not a known value");
            if (at->rank > 1)
                return ref_fail(c->err, REF_E_SHAPE, "axes must be 1-D, got rank %d", (int)at->rank);
            n_axes = ref_op_read_ints(c, 1, axes, REF_MAX_RANK);
            if (n_axes < 0)
                return ref_fail(c->err, REF_E_SHAPE, "axes must be int64 with at most %d entries",
                                REF_MAX_RANK);
        }
    } else if (!from_input) {
        const int64_t *a = NULL;
        size_t n = ref_attr_ints(c->node, "axes", &a);
        if (n > REF_MAX_RANK)
            return ref_fail(c->err, REF_E_SHAPE, "%zu axes for a tensor of rank %d", n, (int)x->rank);
        for (size_t i = 0; i < n; i++)
            axes[i] = a[i];
        n_axes = (int)n;
    }
    *noop = false;
    for (int d = 0; d < x->rank; d++)
        reduce[d] = n_axes == 0;
    if (n_axes == 0) {
        *noop = ref_attr_int_or(c->node, "noop_with_empty_axes", 0) != 0;
        if (*noop)
            for (int d = 0; d < x->rank; d++)
                reduce[d] = false;
        return REF_OK;
    }
    for (int i = 0; i < n_axes; i++) {
        int a = ref_norm_axis(axes[i], x->rank);
        if (a < 0)
            return ref_fail(c->err, REF_E_SHAPE, "axis %lld out of range for rank %d", (long long)axes[i],
                            (int)x->rank);
        if (reduce[a])
            return ref_fail(c->err, REF_E_SHAPE, "axis %lld repeated", (long long)axes[i]);
        reduce[a] = true;
    }
    return REF_OK;
}

static int reduce_infer(ref_op_ctx *c)
{
    const ref_tensor *x = c->n_in > 0 ? c->in[0] : NULL;
    if (!x)
        return ref_fail(c->err, REF_E_INVALID, "input 0 (data) is required");
    if (!ref_elem_supported(x->dtype))
        return ref_fail(c->err, REF_E_UNSUPPORTED, "data has unsupported type %s", ref_dtype_name(x->dtype));
    if (c->n_out < 1 || !c->out[0])
        return ref_fail(c->err, REF_E_INVALID, "output 0 is required");
    bool reduce[REF_MAX_RANK], noop;
    int rc = r_axes(c, reduce, &noop);
    if (rc)
        return rc;
    bool keep = ref_attr_int_or(c->node, "keepdims", 1) != 0;
    ref_tensor *y = c->out[0];
    y->dtype = x->dtype;
    y->rank = 0;
    for (int d = 0; d < x->rank; d++) {
        if (!reduce[d])
            y->dims[y->rank++] = x->dims[d];
        else if (keep)
            y->dims[y->rank++] = 1;
    }
    return REF_OK;
}

/* ================================================================================================
 * Kernels: double accumulation for floats, int64 (wrapping) for integers.
 * ============================================================================================== */

typedef struct r_task {
    const ref_rplan *p;
    const void *x;
    void *y;
    int dt;
    r_kind kind;
} r_task;

REF_ELEM_INLINE double r_fold_f(const r_task *t, int64_t base, const int dt)
{
    const ref_rplan *p = t->p;
    ref_rwalk w;
    double mx = -INFINITY;
    if (t->kind == R_LOGSUMEXP) {
        ref_rplan_walk_init(p, base, &w);
        for (int64_t k = 0; k < p->n_red; k++, ref_rplan_walk_next(p, &w)) {
            double v = ref_elem_ld(t->x, dt, w.off);
            mx = v > mx ? v : mx;
        }
        if (isinf(mx))
            mx = 0.0; /* all -inf (or empty): log(sum) already gives the answer */
    }
    double acc = t->kind == R_PROD ? 1.0 : t->kind == R_MAX ? -INFINITY : t->kind == R_MIN ? INFINITY : 0.0;
    ref_rplan_walk_init(p, base, &w);
    for (int64_t k = 0; k < p->n_red; k++, ref_rplan_walk_next(p, &w)) {
        double v = ref_elem_ld(t->x, dt, w.off);
        switch (t->kind) {
        case R_MAX: acc = v > acc ? v : acc; break;
        case R_MIN: acc = v < acc ? v : acc; break;
        case R_PROD: acc *= v; break;
        case R_L1: acc += fabs(v); break;
        case R_L2: case R_SUMSQ: acc += v * v; break;
        case R_LOGSUMEXP: acc += exp(v - mx); break;
        default: acc += v; break;
        }
    }
    switch (t->kind) {
    case R_MEAN: return p->n_red ? acc / (double)p->n_red : NAN;
    case R_L2: return sqrt(acc);
    case R_LOGSUM: return log(acc);
    case R_LOGSUMEXP: return mx + log(acc);
    default: return acc;
    }
}

static int64_t r_fold_i(const r_task *t, int64_t base)
{
    const ref_rplan *p = t->p;
    ref_rwalk w;
    uint64_t acc = t->kind == R_PROD ? 1u : 0u; /* unsigned: overflow wraps instead of being undefined */
    int64_t mx = INT64_MIN, mn = INT64_MAX;
    ref_rplan_walk_init(p, base, &w);
    for (int64_t k = 0; k < p->n_red; k++, ref_rplan_walk_next(p, &w)) {
        int64_t v = ref_elem_ldi(t->x, t->dt, w.off);
        switch (t->kind) {
        case R_MAX: mx = v > mx ? v : mx; break;
        case R_MIN: mn = v < mn ? v : mn; break;
        case R_PROD: acc *= (uint64_t)v; break;
        case R_L1: acc += (uint64_t)(v < 0 ? -(uint64_t)v : (uint64_t)v); break;
        case R_SUMSQ: acc += (uint64_t)v * (uint64_t)v; break;
        default: acc += (uint64_t)v; break;
        }
    }
    if (t->kind == R_MAX)
        return mx;
    if (t->kind == R_MIN)
        return mn;
    if (t->kind == R_MEAN)
        return p->n_red ? (int64_t)acc / p->n_red : 0;
    return (int64_t)acc;
}

static void reduce_task(void *arg, int64_t begin, int64_t end, int tid)
{
    (void)tid;
    const r_task *t = arg;
    bool int_path = !ref_elem_is_float(t->dt) && t->kind != R_L2 && t->kind != R_LOGSUM &&
                    t->kind != R_LOGSUMEXP;
    for (int64_t j = begin; j < end; j++) {
        int64_t base = ref_rplan_base(t->p, j);
        if (int_path)
            ref_elem_sti(t->y, t->dt, j, r_fold_i(t, base));
        else if (t->dt == REF_DT_FLOAT)
            ref_elem_st(t->y, REF_DT_FLOAT, j, r_fold_f(t, base, REF_DT_FLOAT));
        else
            ref_elem_st(t->y, t->dt, j, r_fold_f(t, base, t->dt));
    }
}

static int reduce_run(ref_op_ctx *c)
{
    const ref_tensor *x = c->in[0];
    bool reduce[REF_MAX_RANK], noop;
    int rc = r_axes(c, reduce, &noop);
    if (rc)
        return rc;
    if (noop) {
        memcpy(c->out[0]->data, x->data, ref_tensor_nbytes(x));
        return REF_OK;
    }
    ref_rplan p;
    ref_rplan_init(&p, x, reduce);
    r_task t = {.p = &p, .x = x->data, .y = c->out[0]->data, .dt = x->dtype,
                .kind = r_kind_of(c->node->op_type)};
    ref_parallel_for(c->pool, p.n_out, ref_elem_grain(p.n_red), reduce_task, &t);
    return REF_OK;
}

/* ================================================================================================
 * ArgMax / ArgMin: int64 index along one axis; ties go to the first (or last) occurrence.
 * ============================================================================================== */

static int arg_axis(ref_op_ctx *c, int *axis)
{
    const ref_tensor *x = c->in[0];
    int64_t a = ref_attr_int_or(c->node, "axis", 0);
    *axis = ref_norm_axis(a, x->rank);
    if (*axis < 0)
        return ref_fail(c->err, REF_E_SHAPE, "axis %lld out of range for rank %d", (long long)a, (int)x->rank);
    if (x->dims[*axis] == 0)
        return ref_fail(c->err, REF_E_SHAPE, "axis %d has size 0: no element to select", *axis);
    return REF_OK;
}

static int arg_infer(ref_op_ctx *c)
{
    const ref_tensor *x = c->n_in > 0 ? c->in[0] : NULL;
    if (!x)
        return ref_fail(c->err, REF_E_INVALID, "input 0 (data) is required");
    if (!ref_elem_supported(x->dtype))
        return ref_fail(c->err, REF_E_UNSUPPORTED, "data has unsupported type %s", ref_dtype_name(x->dtype));
    if (c->n_out < 1 || !c->out[0])
        return ref_fail(c->err, REF_E_INVALID, "output 0 is required");
    int axis, rc = arg_axis(c, &axis);
    if (rc)
        return rc;
    bool keep = ref_attr_int_or(c->node, "keepdims", 1) != 0;
    ref_tensor *y = c->out[0];
    y->dtype = REF_DT_INT64;
    y->rank = 0;
    for (int d = 0; d < x->rank; d++) {
        if (d != axis)
            y->dims[y->rank++] = x->dims[d];
        else if (keep)
            y->dims[y->rank++] = 1;
    }
    return REF_OK;
}

typedef struct arg_task {
    const void *x;
    int64_t *y;
    int dt;
    int64_t n, inner;
    bool is_max, last;
} arg_task;

/* Sign of x[i] - x[j], in the element type's own precision. */
static inline int arg_cmp(const arg_task *t, int64_t i, int64_t j)
{
    if (ref_elem_is_float(t->dt)) {
        double a = ref_elem_ld(t->x, t->dt, i), b = ref_elem_ld(t->x, t->dt, j);
        return a > b ? 1 : a < b ? -1 : 0;
    }
    int64_t a = ref_elem_ldi(t->x, t->dt, i), b = ref_elem_ldi(t->x, t->dt, j);
    return a > b ? 1 : a < b ? -1 : 0;
}

static void arg_task_fn(void *arg, int64_t begin, int64_t end, int tid)
{
    (void)tid;
    const arg_task *t = arg;
    for (int64_t lane = begin; lane < end; lane++) {
        int64_t o = lane / t->inner, i = lane % t->inner;
        int64_t base = o * t->n * t->inner + i, best = 0;
        for (int64_t k = 1; k < t->n; k++) {
            int s = arg_cmp(t, base + k * t->inner, base + best * t->inner);
            if (!t->is_max)
                s = -s;
            if (s > 0 || (s == 0 && t->last))
                best = k;
        }
        t->y[lane] = best;
    }
}

static int arg_run(ref_op_ctx *c)
{
    const ref_tensor *x = c->in[0];
    int axis, rc = arg_axis(c, &axis);
    if (rc)
        return rc;
    arg_task t = {.x = x->data, .y = c->out[0]->data, .dt = x->dtype, .n = x->dims[axis],
                  .inner = ref_dims_prod(x->dims, axis + 1, x->rank),
                  .is_max = !strcmp(c->node->op_type, "ArgMax"),
                  .last = ref_attr_int_or(c->node, "select_last_index", 0) != 0};
    int64_t lanes = ref_dims_prod(x->dims, 0, axis) * t.inner;
    ref_parallel_for(c->pool, lanes, ref_elem_grain(t.n), arg_task_fn, &t);
    return REF_OK;
}

#define R_OP(nm) {.name = nm, .infer = reduce_infer, .run = reduce_run}

const ref_op ref_ops_reduce[] = {
    R_OP("ReduceSum"),
    R_OP("ReduceMean"),
    R_OP("ReduceMax"),
    R_OP("ReduceMin"),
    R_OP("ReduceProd"),
    R_OP("ReduceL1"),
    R_OP("ReduceL2"),
    R_OP("ReduceLogSum"),
    R_OP("ReduceLogSumExp"),
    R_OP("ReduceSumSquare"),
    {.name = "ArgMax", .infer = arg_infer, .run = arg_run},
    {.name = "ArgMin", .infer = arg_infer, .run = arg_run},
    {.name = NULL},
};
