/* softmax_loss.c: NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss with inference semantics: per-class
 * weights, ignore_index, reductions none/sum/mean, and SoftmaxCrossEntropyLoss's optional log_prob output.
 * It must never allocate at run time or read a class outside [0, C): a bad target fails with REF_E_RANGE. */
#include <math.h>
#include <string.h>

#include "reduce_elem.h"
#include "softmax_impl.h"

typedef enum { LR_NONE, LR_SUM, LR_MEAN } loss_red;

/* Input [N, C, D...] seen as N*D lanes of C classes, class k of lane (n, d) at (n*C + k)*D + d. */
typedef struct loss_task {
    const void *x;      /* NLL: log-probabilities; SCE: scores */
    int dt;
    const ref_tensor *target, *weight;
    void *loss;         /* output 0 */
    void *log_prob;     /* SCE output 1, or NULL */
    int64_t n, c, d;
    bool sce, has_ignore;
    int64_t ignore;
    loss_red red;
} loss_task;

static int loss_reduction(ref_op_ctx *c, loss_red *r)
{
    const char *s = ref_attr_str_or(c->node, "reduction", "mean");
    if (!strcmp(s, "none"))
        *r = LR_NONE;
    else if (!strcmp(s, "sum"))
        *r = LR_SUM;
    else if (!strcmp(s, "mean"))
        *r = LR_MEAN;
    else
        return ref_fail(c->err, REF_E_UNSUPPORTED, "reduction '%s': expected none, sum or mean", s);
    return REF_OK;
}

static int loss_check(ref_op_ctx *c, loss_red *red)
{
    static const int ftypes[] = {REF_DT_FLOAT, REF_DT_DOUBLE}, itypes[] = {REF_DT_INT32, REF_DT_INT64};
    int rc = ref_op_want_dtype(c, 0, 2, ftypes);
    if (!rc)
        rc = ref_op_want_dtype(c, 1, 2, itypes);
    if (!rc && c->n_in > 2 && c->in[2])
        rc = ref_op_want_dtype(c, 2, 2, ftypes);
    if (!rc)
        rc = loss_reduction(c, red);
    if (rc)
        return rc;
    const ref_tensor *x = c->in[0], *t = c->in[1], *w = c->n_in > 2 ? c->in[2] : NULL;
    char b1[96], b2[96];
    bool ok = x->rank >= 2 && t->rank == x->rank - 1 && t->dims[0] == x->dims[0];
    for (int k = 1; ok && k < t->rank; k++)
        ok = t->dims[k] == x->dims[k + 1];
    if (!ok)
        return ref_fail(c->err, REF_E_SHAPE, "target %s does not match input %s without its class dim",
                        ref_shape_str(t, b1, sizeof b1), ref_shape_str(x, b2, sizeof b2));
    if (w && (w->rank != 1 || w->dims[0] != x->dims[1]))
        return ref_fail(c->err, REF_E_SHAPE, "weight %s: expected [%lld]", ref_shape_str(w, b1, sizeof b1),
                        (long long)x->dims[1]);
    if (c->n_out < 1 || !c->out[0])
        return ref_fail(c->err, REF_E_INVALID, "output 0 is required");
    return REF_OK;
}

int ref_softmax_loss_infer(ref_op_ctx *c)
{
    loss_red red;
    int rc = loss_check(c, &red);
    if (rc)
        return rc;
    const ref_tensor *x = c->in[0], *t = c->in[1];
    ref_tensor *y = c->out[0];
    y->dtype = x->dtype;
    if (red == LR_NONE)
        ref_tensor_set_shape(y, t->rank, t->dims);
    else
        y->rank = 0;
    if (c->n_out > 1 && c->out[1]) {
        if (strcmp(c->node->op_type, "SoftmaxCrossEntropyLoss"))
            return ref_fail(c->err, REF_E_INVALID, "only SoftmaxCrossEntropyLoss has a second output");
        c->out[1]->dtype = x->dtype;
        ref_tensor_set_shape(c->out[1], x->rank, x->dims);
    }
    return REF_OK;
}

/* ================================================================================================
 * Kernels.
 * ============================================================================================== */

/* SCE: log-softmax of lane (n, d) over the classes; all of them into log_prob, or only class k returned. */
static double loss_log_softmax(const loss_task *t, int64_t n, int64_t d, int64_t k)
{
    int64_t base = n * t->c * t->d + d;
    double mx = -INFINITY, sum = 0.0;
    for (int64_t j = 0; j < t->c; j++) {
        double v = ref_elem_ld(t->x, t->dt, base + j * t->d);
        mx = v > mx ? v : mx;
    }
    if (isinf(mx))
        mx = 0.0;
    for (int64_t j = 0; j < t->c; j++)
        sum += exp(ref_elem_ld(t->x, t->dt, base + j * t->d) - mx);
    double lse = mx + log(sum);
    if (t->log_prob)
        for (int64_t j = 0; j < t->c; j++)
            ref_elem_st(t->log_prob, t->dt, base + j * t->d, ref_elem_ld(t->x, t->dt, base + j * t->d) - lse);
    return k >= 0 ? ref_elem_ld(t->x, t->dt, base + k * t->d) - lse : 0.0;
}

/* Loss and weight of lane (n, d). Targets were range-checked before; one that is not a class still
 * reads nothing and counts as ignored. */
static double loss_lane(const loss_task *t, int64_t lane, double *w)
{
    int64_t n = lane / t->d, d = lane % t->d;
    int64_t k = ref_elem_ldi(t->target->data, t->target->dtype, lane);
    bool ignored = t->has_ignore && k == t->ignore;
    if (!ignored && (k < 0 || k >= t->c))
        k = -1;
    double logp;
    if (t->sce)
        logp = loss_log_softmax(t, n, d, ignored ? -1 : k);
    else
        logp = k >= 0 && !ignored ? ref_elem_ld(t->x, t->dt, (n * t->c + k) * t->d + d) : 0.0;
    if (ignored || k < 0) {
        *w = 0.0;
        return 0.0;
    }
    *w = t->weight ? ref_elem_ld(t->weight->data, t->weight->dtype, k) : 1.0;
    return -logp * *w;
}

static void loss_none_task(void *arg, int64_t begin, int64_t end, int tid)
{
    (void)tid;
    const loss_task *t = arg;
    for (int64_t lane = begin; lane < end; lane++) {
        double w;
        ref_elem_st(t->loss, t->dt, lane, loss_lane(t, lane, &w));
    }
}

/* First lane whose target is out of range, or -1. Checked before any output is written. */
static int64_t loss_bad_target(const loss_task *t)
{
    for (int64_t lane = 0; lane < t->n * t->d; lane++) {
        int64_t k = ref_elem_ldi(t->target->data, t->target->dtype, lane);
        if (!(t->has_ignore && k == t->ignore) && (k < 0 || k >= t->c))
            return lane;
    }
    return -1;
}

int ref_softmax_loss_run(ref_op_ctx *c)
{
    loss_red red;
    int rc = loss_check(c, &red);
    if (rc)
        return rc;
    const ref_tensor *x = c->in[0];
    loss_task t = {.x = x->data, .dt = x->dtype, .target = c->in[1], .weight = c->n_in > 2 ? c->in[2] : NULL,
                   .loss = c->out[0]->data, .n = x->dims[0], .c = x->dims[1],
                   .d = ref_dims_prod(x->dims, 2, x->rank),
                   .sce = !strcmp(c->node->op_type, "SoftmaxCrossEntropyLoss"),
                   .has_ignore = ref_node_attr(c->node, "ignore_index") != NULL,
                   .ignore = ref_attr_int_or(c->node, "ignore_index", 0), .red = red};
    t.log_prob = t.sce && ref_elem_out_present(c, 1) ? c->out[1]->data : NULL;
    int64_t bad = loss_bad_target(&t);
    if (bad >= 0)
        return ref_fail(c->err, REF_E_RANGE, "target[%lld] = %lld is outside [0, %lld) and not ignore_index",
                        (long long)bad, (long long)ref_elem_ldi(t.target->data, t.target->dtype, bad),
                        (long long)t.c);
    int64_t lanes = t.n * t.d;
    if (red == LR_NONE) {
        ref_parallel_for(c->pool, lanes, ref_elem_grain(3 * t.c), loss_none_task, &t);
        return REF_OK;
    }
    /* sum and mean fold every lane into one value, serially, so the order is fixed */
    double sum = 0.0, wsum = 0.0;
    for (int64_t lane = 0; lane < lanes; lane++) {
        double w;
        sum += loss_lane(&t, lane, &w);
        wsum += w;
    }
    ref_elem_st(t.loss, t.dt, 0, red == LR_SUM ? sum : sum / wsum);
    return REF_OK;
}
