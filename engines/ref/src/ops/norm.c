/* norm.c: operator family "norm": BatchNormalization (inference), InstanceNormalization and LRN, all
 * per-(n, c)-plane kernels; LayerNormalization and MeanVarianceNormalization live in norm_layer.c.
 * It must never allocate at run time, and statistics are accumulated in double in one fixed order. */
#include <math.h>
#include <string.h>

#include "elementwise_kernels.h"
#include "norm_impl.h"
#include "training.h"

/* The float BatchNormalization plane is a straight multiply-add: vectorized, and never contracted into an FMA
 * so every build gives the same bits. */
REF_EW_VECTORIZE
REF_EW_NO_CONTRACT

int ref_norm_want_float(ref_op_ctx *c, int i, const char *what)
{
    const ref_tensor *t = i < c->n_in ? c->in[i] : NULL;
    if (!t)
        return ref_fail(c->err, REF_E_INVALID, "input %d (%s) is required", i, what);
    if (!ref_elem_is_float(t->dtype))
        return ref_fail(c->err, REF_E_UNSUPPORTED, "input %d (%s) has unsupported type %s", i, what,
                        ref_dtype_name(t->dtype));
    return REF_OK;
}

/* Y like X. */
static int norm_same_shape(ref_op_ctx *c)
{
    if (c->n_out < 1 || !c->out[0])
        return ref_fail(c->err, REF_E_INVALID, "output 0 is required");
    c->out[0]->dtype = c->in[0]->dtype;
    ref_tensor_set_shape(c->out[0], c->in[0]->rank, c->in[0]->dims);
    return REF_OK;
}

/* The planes of X [N, C, D...]: N*C of them, each `inner` elements long. */
typedef struct norm_planes {
    const void *x;
    void *y;
    int dt;
    int64_t channels, inner;
    const ref_tensor *p[4]; /* per-op parameters (scale, bias, mean, var) */
    double eps;
    bool per_elem;          /* BatchNormalization with spatial=0: parameters cover C*inner */
    double alpha, beta, bias;
    int64_t size;           /* LRN */
    bool act;               /* BatchNormalization with a fused Relu/Clip (fuse_act.c): clamp to [lo, hi], NaN kept */
    float lo, hi;
} norm_planes;

/* A parallel task over planes [begin, end) calling plane_fn(t, plane, dt), with dt a constant for float so
 * the inlined element accessors lose their switch on the hot type. */
#define NORM_PLANE_TASK(task, plane_fn)                              \
    static void task(void *arg, int64_t begin, int64_t end, int tid) \
    {                                                                \
        (void)tid;                                                   \
        const norm_planes *t = arg;                                  \
        for (int64_t pl = begin; pl < end; pl++) {                   \
            if (t->dt == REF_DT_FLOAT)                               \
                plane_fn(t, pl, REF_DT_FLOAT);                       \
            else                                                     \
                plane_fn(t, pl, t->dt);                              \
        }                                                            \
    }

/* ================================================================================================
 * BatchNormalization, inference only: y = (x - mean) / sqrt(var + eps) * scale + B.
 * ============================================================================================== */

static int bn_check(ref_op_ctx *c, bool *per_elem)
{
    static const char *const names[] = {"X", "scale", "B", "input_mean", "input_var"};
    for (int i = 0; i < 5; i++) {
        int rc = ref_norm_want_float(c, i, names[i]);
        if (rc)
            return rc;
    }
    const ref_tensor *x = c->in[0];
    if (x->rank < 2)
        return ref_fail(c->err, REF_E_SHAPE, "X has rank %d, expected at least 2 (N, C)", (int)x->rank);
    if (ref_attr_int_or(c->node, "training_mode", 0) != 0)
        return ref_fail(c->err, REF_E_UNSUPPORTED, "training_mode=1 is not supported (inference only)");
    for (int i = 1; i < c->n_out; i++)
        if (ref_elem_out_present(c, i))
            return ref_fail(c->err, REF_E_UNSUPPORTED, "output %d holds training statistics: inference only", i);
    int64_t ch = x->dims[1], inner = ref_dims_prod(x->dims, 2, x->rank);
    *per_elem = c->opset < 9 && ref_attr_int_or(c->node, "spatial", 1) == 0;
    int64_t want = *per_elem ? ch * inner : ch;
    for (int i = 1; i < 5; i++)
        if (ref_tensor_numel(c->in[i]) != want)
            return ref_fail(c->err, REF_E_SHAPE, "%s has %lld elements, expected %lld", names[i],
                            (long long)ref_tensor_numel(c->in[i]), (long long)want);
    return REF_OK;
}

static int bn_infer(ref_op_ctx *c)
{
    if (ref_attr_int_or(c->node, "training_mode", 0) != 0)
        return ref_bn_train_infer(c);
    bool per_elem;
    int rc = bn_check(c, &per_elem);
    return rc ? rc : norm_same_shape(c);
}

/* y = x * a + shift for parameter index pi. */
static void bn_coef(const norm_planes *t, int64_t pi, double *a, double *shift)
{
    double sc = ref_elem_ld(t->p[0]->data, t->p[0]->dtype, pi);
    double b = ref_elem_ld(t->p[1]->data, t->p[1]->dtype, pi);
    double mean = ref_elem_ld(t->p[2]->data, t->p[2]->dtype, pi);
    double var = ref_elem_ld(t->p[3]->data, t->p[3]->dtype, pi);
    *a = sc / sqrt(var + t->eps);
    *shift = b - mean * *a;
}

/* A float plane with per-channel parameters (every inference-mode model since opset 9): the channel's scale
 * and shift are worked out in double once, then rounded to float, so the loop is one float multiply and add
 * per element. Against the all-double path this moves a result by at most a few float ulps of the larger of
 * x*a and shift (the rounding of a, of shift and of the product). */
static void bn_plane_f32(const norm_planes *t, int64_t pl)
{
    double a, shift;
    bn_coef(t, pl % t->channels, &a, &shift);
    const float af = (float)a, sf = (float)shift;
    const float *x = (const float *)t->x + pl * t->inner;
    float *y = (float *)t->y + pl * t->inner;
    if (!t->act) {
        for (int64_t i = 0; i < t->inner; i++)
            y[i] = x[i] * af + sf;
        return;
    }
    const float lo = t->lo, hi = t->hi;
    for (int64_t i = 0; i < t->inner; i++) { /* Clip's order: "lo > v ? lo : v", then "hi < u ? hi : u" */
        float v = x[i] * af + sf, u = v < lo ? lo : v;
        y[i] = u > hi ? hi : u;
    }
}

REF_ELEM_INLINE void bn_plane(const norm_planes *t, int64_t pl, const int dt)
{
    int64_t ch = pl % t->channels, base = pl * t->inner;
    double a, shift;
    if (dt == REF_DT_FLOAT && !t->per_elem) {
        bn_plane_f32(t, pl);
        return;
    }
    bn_coef(t, ch * (t->per_elem ? t->inner : 1), &a, &shift);
    for (int64_t i = 0; i < t->inner; i++) {
        if (t->per_elem && i > 0)
            bn_coef(t, ch * t->inner + i, &a, &shift);
        double v = ref_elem_ld(t->x, dt, base + i) * a + shift;
        if (t->act) { /* float bounds: clamping before or after the rounding to float gives the same value */
            v = v < t->lo ? t->lo : v;
            v = v > t->hi ? t->hi : v;
        }
        ref_elem_st(t->y, dt, base + i, v);
    }
}
NORM_PLANE_TASK(bn_task, bn_plane)

static int bn_run(ref_op_ctx *c)
{
    if (ref_attr_int_or(c->node, "training_mode", 0) != 0)
        return ref_bn_train_run(c);
    bool per_elem;
    int rc = bn_check(c, &per_elem);
    if (rc)
        return rc;
    const ref_tensor *x = c->in[0];
    norm_planes t = {.x = x->data, .y = c->out[0]->data, .dt = x->dtype, .channels = x->dims[1],
                     .inner = ref_dims_prod(x->dims, 2, x->rank), .per_elem = per_elem,
                     .eps = ref_attr_float_or(c->node, "epsilon", 1e-5f), .act = c->act, .lo = c->act_lo,
                     .hi = c->act_hi};
    for (int i = 0; i < 4; i++)
        t.p[i] = c->in[i + 1];
    ref_parallel_for(c->pool, x->dims[0] * t.channels, ref_elem_grain(t.inner), bn_task, &t);
    return REF_OK;
}

/* ================================================================================================
 * InstanceNormalization: per-plane mean and variance, then scale[c] and B[c].
 * ============================================================================================== */

static int in_check(ref_op_ctx *c)
{
    int rc = ref_norm_want_float(c, 0, "input");
    if (!rc)
        rc = ref_norm_want_float(c, 1, "scale");
    if (!rc)
        rc = ref_norm_want_float(c, 2, "B");
    if (rc)
        return rc;
    const ref_tensor *x = c->in[0];
    if (x->rank < 3)
        return ref_fail(c->err, REF_E_SHAPE, "input has rank %d, expected at least 3 (N, C, D...)",
                        (int)x->rank);
    for (int i = 1; i < 3; i++)
        if (ref_tensor_numel(c->in[i]) != x->dims[1])
            return ref_fail(c->err, REF_E_SHAPE, "input %d has %lld elements, expected C = %lld", i,
                            (long long)ref_tensor_numel(c->in[i]), (long long)x->dims[1]);
    return REF_OK;
}

static int in_infer(ref_op_ctx *c)
{
    int rc = in_check(c);
    return rc ? rc : norm_same_shape(c);
}

REF_ELEM_INLINE void in_plane(const norm_planes *t, int64_t pl, const int dt)
{
    int64_t ch = pl % t->channels, base = pl * t->inner;
    double mean, inv;
    ref_norm_stats(t->x, dt, base, t->inner, &mean, &inv, t->eps);
    double a = ref_elem_ld(t->p[0]->data, t->p[0]->dtype, ch) * inv;
    double b = ref_elem_ld(t->p[1]->data, t->p[1]->dtype, ch);
    for (int64_t i = 0; i < t->inner; i++)
        ref_elem_st(t->y, dt, base + i, (ref_elem_ld(t->x, dt, base + i) - mean) * a + b);
}
NORM_PLANE_TASK(in_task, in_plane)

static int in_run(ref_op_ctx *c)
{
    int rc = in_check(c);
    if (rc)
        return rc;
    const ref_tensor *x = c->in[0];
    norm_planes t = {.x = x->data, .y = c->out[0]->data, .dt = x->dtype, .channels = x->dims[1],
                     .inner = ref_dims_prod(x->dims, 2, x->rank), .p = {c->in[1], c->in[2]},
                     .eps = ref_attr_float_or(c->node, "epsilon", 1e-5f)};
    ref_parallel_for(c->pool, x->dims[0] * t.channels, ref_elem_grain(3 * t.inner), in_task, &t);
    return REF_OK;
}

/* ================================================================================================
 * LRN across channels: y = x / (bias + alpha / size * sum of x^2 over nearby channels)^beta.
 * ============================================================================================== */

static int lrn_check(ref_op_ctx *c)
{
    int rc = ref_norm_want_float(c, 0, "X");
    if (rc)
        return rc;
    if (c->in[0]->rank < 2)
        return ref_fail(c->err, REF_E_SHAPE, "X has rank %d, expected at least 2 (N, C)", (int)c->in[0]->rank);
    if (ref_attr_int_or(c->node, "size", 0) < 1)
        return ref_fail(c->err, REF_E_INVALID, "size is required and must be positive");
    return REF_OK;
}

static int lrn_infer(ref_op_ctx *c)
{
    int rc = lrn_check(c);
    return rc ? rc : norm_same_shape(c);
}

REF_ELEM_INLINE void lrn_plane(const norm_planes *t, int64_t pl, const int dt)
{
    int64_t lo_off = (t->size - 1) / 2, hi_off = t->size - 1 - lo_off;
    int64_t ch = pl % t->channels, n0 = (pl - ch) * t->inner;
    int64_t c0 = ch - lo_off < 0 ? 0 : ch - lo_off;
    int64_t c1 = ch + hi_off >= t->channels ? t->channels - 1 : ch + hi_off;
    for (int64_t i = 0; i < t->inner; i++) {
        double sq = 0.0;
        for (int64_t k = c0; k <= c1; k++) {
            double v = ref_elem_ld(t->x, dt, n0 + k * t->inner + i);
            sq += v * v;
        }
        double v = ref_elem_ld(t->x, dt, pl * t->inner + i);
        ref_elem_st(t->y, dt, pl * t->inner + i, v / pow(t->bias + t->alpha / (double)t->size * sq, t->beta));
    }
}
NORM_PLANE_TASK(lrn_task, lrn_plane)

static int lrn_run(ref_op_ctx *c)
{
    int rc = lrn_check(c);
    if (rc)
        return rc;
    const ref_tensor *x = c->in[0];
    norm_planes t = {.x = x->data, .y = c->out[0]->data, .dt = x->dtype, .channels = x->dims[1],
                     .inner = ref_dims_prod(x->dims, 2, x->rank),
                     .alpha = ref_attr_float_or(c->node, "alpha", 1e-4f),
                     .beta = ref_attr_float_or(c->node, "beta", 0.75f),
                     .bias = ref_attr_float_or(c->node, "bias", 1.0f),
                     .size = ref_attr_int_or(c->node, "size", 1)};
    ref_parallel_for(c->pool, x->dims[0] * t.channels, ref_elem_grain(t.inner * t.size), lrn_task, &t);
    return REF_OK;
}

const ref_op ref_ops_norm[] = {
    {.name = "BatchNormalization", .infer = bn_infer, .run = bn_run},
    {.name = "InstanceNormalization", .infer = in_infer, .run = in_run},
    {.name = "LRN", .infer = lrn_infer, .run = lrn_run},
    {.name = "LayerNormalization", .infer = ref_norm_layer_infer, .run = ref_norm_layer_run},
    {.name = "MeanVarianceNormalization", .infer = ref_norm_mvn_infer, .run = ref_norm_mvn_run},
    {.name = NULL},
};
