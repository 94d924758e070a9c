/* norm_skip.c: the normalizations ONNX Runtime's transformer optimizer writes into published models:
 * com.microsoft SkipLayerNormalization and SkipSimplifiedLayerNormalization (input + skip + bias, then LayerNorm or
 * RMS norm over the last dim, the sum optionally an output), and in the default domain ORT's
 * SimplifiedLayerNormalization (RMS norm over [axis, rank)) and ONNX RMSNormalization (opset 23, the same).
 * Float only: float16 graphs reach these ops as float.
 * It must never allocate at run time, and a row's statistics are folded in one fixed order (double). */
#include <math.h>
#include <string.h>

#include "norm_impl.h"
#include "rows.h"

/* A parameter (gamma, beta, bias, skip, scale) read at element i of a row or of the whole input: t's numel divides the
 * span and t's dims, leading 1s dropped, are the span's trailing dims, so element i is t[i % numel]. */
static bool trailing_of(const ref_tensor *t, int rank, const int64_t *dims)
{
    int r = t->rank;
    while (r > 0 && t->dims[t->rank - r] == 1)
        r--;
    if (r > rank)
        return false;
    for (int k = 1; k <= r; k++)
        if (t->dims[t->rank - k] != dims[rank - k])
            return false;
    return true;
}

static int want_param(ref_op_ctx *c, int i, const char *what, int rank, const int64_t *dims, bool required)
{
    const ref_tensor *t = i < c->n_in ? c->in[i] : NULL;
    if (!t && !required)
        return REF_OK;
    if (!t)
        return ref_fail(c->err, REF_E_INVALID, "%s: input %d (%s) is required", c->node->op_type, i, what);
    if (t->dtype != REF_DT_FLOAT)
        return ref_fail(c->err, REF_E_UNSUPPORTED, "%s: input %d (%s) is %s; only float (float16 graphs run as float)",
                        c->node->op_type, i, what, ref_dtype_name(t->dtype));
    if (!trailing_of(t, rank, dims)) {
        char s1[96], s2[96];
        ref_tensor span;
        memset(&span, 0, sizeof span);
        ref_tensor_set_shape(&span, rank, dims);
        return ref_fail(c->err, REF_E_SHAPE, "%s: input %d (%s) %s is not the trailing dims of %s", c->node->op_type,
                        i, what, ref_shape_str(t, s1, sizeof s1), ref_shape_str(&span, s2, sizeof s2));
    }
    return REF_OK;
}

/* Output j (when present) shaped like x with dims from `from` on set to 1 (statistics) or like x (from = rank). */
static void stat_out(ref_op_ctx *c, int j, const ref_tensor *x, int from)
{
    if (j >= c->n_out || !c->out[j])
        return;
    c->out[j]->dtype = REF_DT_FLOAT;
    ref_tensor_set_shape(c->out[j], x->rank, x->dims);
    for (int d = from; d < x->rank; d++)
        c->out[j]->dims[d] = 1;
}

static float *out_or_null(ref_op_ctx *c, int j) { return ref_elem_out_present(c, j) ? c->out[j]->data : NULL; }

typedef struct norm_task {
    const float *x, *skip, *gamma, *beta, *bias;
    int64_t n, n_skip, n_gamma, n_beta; /* row length; elements of skip, gamma, beta (each repeats) */
    float *y, *sum, *mean, *inv;        /* sum, mean, inv may be NULL */
    double eps;
    bool rms;
    ref_rows_layernorm_fn ln; /* LayerNorm rows (dense gamma and beta), or NULL */
} norm_task;

/* x / sqrt(mean(x^2) + eps) * gamma over one row, in place in y. */
static void rms_row(const norm_task *t, float *y, int64_t row)
{
    double ss = 0.0;
    for (int64_t i = 0; i < t->n; i++)
        ss += (double)y[i] * y[i];
    double inv = 1.0 / sqrt((t->n ? ss / (double)t->n : 0.0) + t->eps);
    float fi = (float)inv;
    for (int64_t i = 0; i < t->n; i++)
        y[i] = y[i] * fi * t->gamma[i % t->n_gamma];
    if (t->inv)
        t->inv[row] = fi;
}

static void ln_row_general(const norm_task *t, float *y, int64_t row)
{
    double mean, inv;
    ref_norm_stats(y, REF_DT_FLOAT, 0, t->n, &mean, &inv, t->eps);
    float fm = (float)mean, fi = (float)inv;
    for (int64_t i = 0; i < t->n; i++) {
        float v = (y[i] - fm) * fi * t->gamma[i % t->n_gamma];
        y[i] = t->beta ? v + t->beta[i % t->n_beta] : v;
    }
    if (t->mean)
        t->mean[row] = fm;
    if (t->inv)
        t->inv[row] = fi;
}

static void norm_task_fn(void *arg, int64_t begin, int64_t end, int tid)
{
    (void)tid;
    const norm_task *t = arg;
    for (int64_t row = begin; row < end; row++) {
        int64_t base = row * t->n;
        float *y = t->y + base;
        if (t->skip) { /* input + skip (+ bias), in ORT's order */
            for (int64_t i = 0; i < t->n; i++) {
                float v = t->x[base + i] + t->skip[(base + i) % t->n_skip];
                y[i] = t->bias ? v + t->bias[i] : v;
            }
            if (t->sum)
                memcpy(t->sum + base, y, sizeof *y * (size_t)t->n);
        } else if (y != t->x + base) {
            memcpy(y, t->x + base, sizeof *y * (size_t)t->n);
        }
        if (t->rms) {
            rms_row(t, y, row);
        } else if (t->ln) {
            double mean, inv;
            t->ln(y, y, t->n, t->gamma, t->beta, t->eps, &mean, &inv);
            if (t->mean)
                t->mean[row] = (float)mean;
            if (t->inv)
                t->inv[row] = (float)inv;
        } else {
            ln_row_general(t, y, row);
        }
    }
}

static void norm_go(ref_op_ctx *c, norm_task *t, int64_t rows)
{
    if (!t->rms && t->n_gamma == t->n && (!t->beta || t->n_beta == t->n))
        t->ln = ref_rows_layernorm();
    ref_parallel_for(c->pool, rows, ref_elem_grain(4 * t->n), norm_task_fn, t);
}

/* ---- SkipLayerNormalization and SkipSimplifiedLayerNormalization -------------------------------------------------
 * inputs: input, skip, gamma, then beta and bias (LayerNorm) or bias (simplified); outputs: output, mean, inv_std_var,
 * input_skip_bias_sum. ORT's epsilon default is 1e-12. */

static int skip_check(ref_op_ctx *c, bool rms)
{
    const ref_tensor *x = c->n_in > 0 ? c->in[0] : NULL;
    if (!x || x->dtype != REF_DT_FLOAT || x->rank < 1)
        return ref_fail(c->err, x ? REF_E_UNSUPPORTED : REF_E_INVALID, "%s: input 0 must be a float tensor of rank >= 1",
                        c->node->op_type);
    const int64_t *h = &x->dims[x->rank - 1];
    int rc = want_param(c, 1, "skip", x->rank, x->dims, true);
    if (!rc)
        rc = want_param(c, 2, "gamma", 1, h, true);
    if (!rc && !rms)
        rc = want_param(c, 3, "beta", 1, h, false);
    if (!rc)
        rc = want_param(c, rms ? 3 : 4, "bias", 1, h, false);
    const ref_tensor *bias = rms ? (c->n_in > 3 ? c->in[3] : NULL) : (c->n_in > 4 ? c->in[4] : NULL);
    if (!rc && bias && ref_tensor_numel(bias) != *h)
        return ref_fail(c->err, REF_E_SHAPE, "%s: bias has %lld values, the hidden size is %lld", c->node->op_type,
                        (long long)ref_tensor_numel(bias), (long long)*h);
    return rc;
}

static int skip_infer(ref_op_ctx *c, bool rms)
{
    int rc = skip_check(c, rms);
    if (rc)
        return rc;
    const ref_tensor *x = c->in[0];
    if (c->n_out < 1 || !c->out[0])
        return ref_fail(c->err, REF_E_INVALID, "%s: output 0 is required", c->node->op_type);
    stat_out(c, 0, x, x->rank);
    c->out[0]->dtype = x->dtype;
    stat_out(c, 1, x, x->rank - 1);
    stat_out(c, 2, x, x->rank - 1);
    stat_out(c, 3, x, x->rank);
    return REF_OK;
}

static int skip_run(ref_op_ctx *c, bool rms)
{
    int rc = skip_check(c, rms);
    if (rc)
        return rc;
    const ref_tensor *x = c->in[0], *beta = rms || c->n_in < 4 ? NULL : c->in[3];
    const ref_tensor *bias = rms ? (c->n_in > 3 ? c->in[3] : NULL) : (c->n_in > 4 ? c->in[4] : NULL);
    norm_task t = {.x = x->data, .skip = c->in[1]->data, .gamma = c->in[2]->data, .beta = beta ? beta->data : NULL,
                   .bias = bias ? bias->data : NULL, .n = x->dims[x->rank - 1], .n_skip = ref_tensor_numel(c->in[1]),
                   .n_gamma = ref_tensor_numel(c->in[2]), .n_beta = beta ? ref_tensor_numel(beta) : 1,
                   .y = c->out[0]->data, .sum = out_or_null(c, 3), .mean = rms ? NULL : out_or_null(c, 1),
                   .inv = out_or_null(c, 2), .eps = ref_attr_float_or(c->node, "epsilon", 1e-12f), .rms = rms};
    if (t.n == 0 || t.n_skip == 0 || t.n_gamma == 0)
        return REF_OK;
    norm_go(c, &t, ref_tensor_numel(x) / t.n);
    return REF_OK;
}

static int skip_ln_infer(ref_op_ctx *c) { return skip_infer(c, false); }
static int skip_ln_run(ref_op_ctx *c) { return skip_run(c, false); }
static int skip_rms_infer(ref_op_ctx *c) { return skip_infer(c, true); }
static int skip_rms_run(ref_op_ctx *c) { return skip_run(c, true); }

/* ---- SimplifiedLayerNormalization (outputs Y, inv_std_var) and RMSNormalization (Y): X, scale; axis, epsilon -- */

static int rms_check(ref_op_ctx *c, int *axis)
{
    const ref_tensor *x = c->n_in > 0 ? c->in[0] : NULL;
    if (!x || x->dtype != REF_DT_FLOAT)
        return ref_fail(c->err, x ? REF_E_UNSUPPORTED : REF_E_INVALID, "%s: input 0 must be a float tensor",
                        c->node->op_type);
    int64_t a = ref_attr_int_or(c->node, "axis", -1);
    *axis = (int)(a < 0 ? a + x->rank : a);
    if (a < -x->rank || a >= x->rank)
        return ref_fail(c->err, REF_E_SHAPE, "%s: axis %lld out of range for rank %d", c->node->op_type, (long long)a,
                        (int)x->rank);
    return want_param(c, 1, "scale", x->rank - *axis, x->dims + *axis, true);
}

static int rms_infer(ref_op_ctx *c)
{
    int axis, rc = rms_check(c, &axis);
    if (rc)
        return rc;
    if (c->n_out < 1 || !c->out[0])
        return ref_fail(c->err, REF_E_INVALID, "%s: output 0 is required", c->node->op_type);
    stat_out(c, 0, c->in[0], c->in[0]->rank);
    stat_out(c, 1, c->in[0], axis);
    return REF_OK;
}

static int rms_run(ref_op_ctx *c)
{
    int axis, rc = rms_check(c, &axis);
    if (rc)
        return rc;
    const ref_tensor *x = c->in[0];
    norm_task t = {.x = x->data, .gamma = c->in[1]->data, .n = ref_dims_prod(x->dims, axis, x->rank),
                   .n_gamma = ref_tensor_numel(c->in[1]), .y = c->out[0]->data, .inv = out_or_null(c, 1),
                   .eps = ref_attr_float_or(c->node, "epsilon", 1e-5f), .rms = true};
    if (t.n == 0 || t.n_gamma == 0)
        return REF_OK;
    norm_go(c, &t, ref_tensor_numel(x) / t.n);
    return REF_OK;
}

const ref_op ref_ops_norm_rms[] = {
    {.name = "SimplifiedLayerNormalization", .infer = rms_infer, .run = rms_run},
    {.name = "RMSNormalization", .infer = rms_infer, .run = rms_run},
    {.name = NULL},
};

const ref_op ref_ops_norm_ms[] = {
    {.name = "SkipLayerNormalization", .infer = skip_ln_infer, .run = skip_ln_run},
    {.name = "SkipSimplifiedLayerNormalization", .infer = skip_rms_infer, .run = skip_rms_run},
    {.name = NULL},
};
