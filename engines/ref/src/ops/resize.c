/* resize.c: operator family "resize": Resize (opsets 10-19) and Upsample (7, 9): attributes, inputs,
 * output shapes. The kernels are in resize_kernel.c. It must never allocate at run time. */
#include <inttypes.h>
#include <math.h>
#include <string.h>

#include "resize_util.h"

/* An input that is absent or given as an empty tensor counts as not given. */
static const ref_tensor *rz_given(const ref_op_ctx *c, int i)
{
    const ref_tensor *t = i < c->n_in ? c->in[i] : NULL;
    return t && ref_tensor_numel(t) > 0 ? t : NULL;
}

static int rz_pick(ref_op_ctx *c, const char *attr, const char *dflt, const char *const *names, int n, int *out)
{
    const char *v = ref_attr_str_or(c->node, attr, dflt);
    for (int k = 0; k < n; k++)
        if (names[k] && !strcmp(v, names[k])) {
            *out = k;
            return REF_OK;
        }
    return ref_fail(c->err, REF_E_UNSUPPORTED, "%s '%s' is not supported", attr, v);
}

static int rz_attrs(ref_op_ctx *c, bool legacy, rz_params *p)
{
    static const char *const modes[] = {"nearest", "linear", "cubic"};
    static const char *const ctms[] = {"half_pixel", "half_pixel_symmetric", "pytorch_half_pixel",
                                       "align_corners", "asymmetric", "tf_half_pixel_for_nn",
                                       "tf_crop_and_resize"};
    static const char *const nearests[] = {"round_prefer_floor", "round_prefer_ceil", "floor", "ceil"};
    const char *m = ref_attr_str_or(c->node, "mode", "nearest");
    int rc;
    if (legacy && !strcmp(m, "bilinear"))
        p->mode = RZ_LINEAR;
    else if ((rc = rz_pick(c, "mode", "nearest", modes, legacy ? 2 : 3, &p->mode)))
        return rc;
    p->cubic_a = ref_attr_float_or(c->node, "cubic_coeff_a", -0.75f);
    p->exclude_outside = ref_attr_int_or(c->node, "exclude_outside", 0) != 0;
    p->extrapolation = ref_attr_float_or(c->node, "extrapolation_value", 0.0f);
    if (ref_attr_int_or(c->node, "antialias", 0))
        return ref_fail(c->err, REF_E_UNSUPPORTED, "antialias is not supported");
    if (legacy) { /* Upsample and Resize-10 map like Resize-11 with asymmetric and floor */
        p->ctm = RZ_ASYMMETRIC;
        p->nearest = RZ_FLOOR;
        return REF_OK;
    }
    rc = rz_pick(c, "coordinate_transformation_mode", "half_pixel", ctms, 7, &p->ctm);
    if (!rc)
        rc = rz_pick(c, "nearest_mode", "round_prefer_floor", nearests, 4, &p->nearest);
    return rc;
}

/* The axes scales/sizes/roi talk about (opset 18's axes attribute; all axes otherwise). */
static int rz_axes(ref_op_ctx *c, int rank, int *axes, int *n_axes)
{
    const int64_t *a = NULL;
    size_t n = c->opset >= 18 ? ref_attr_ints(c->node, "axes", &a) : 0;
    if (!a) {
        for (int d = 0; d < rank; d++)
            axes[d] = d;
        *n_axes = rank;
        return REF_OK;
    }
    if (n > (size_t)rank)
        return ref_fail(c->err, REF_E_SHAPE, "%zu axes for rank %d", n, rank);
    unsigned seen = 0;
    for (size_t i = 0; i < n; i++) {
        axes[i] = ref_norm_axis(a[i], rank);
        if (axes[i] < 0 || (seen & (1u << axes[i])))
            return ref_fail(c->err, REF_E_SHAPE, "axes[%zu] = %" PRId64 " is out of range or repeated", i, a[i]);
        seen |= 1u << axes[i];
    }
    *n_axes = (int)n;
    return REF_OK;
}

static int rz_from_scales(ref_op_ctx *c, const float *s, const int *axes, int n_axes, rz_params *p)
{
    for (int i = 0; i < n_axes; i++) {
        int d = axes[i];
        if (!(s[i] > 0.0f) || isinf(s[i]))
            return ref_fail(c->err, REF_E_RANGE, "scales[%d] = %g must be positive and finite", i, (double)s[i]);
        double out = floor((double)s[i] * (double)p->in_dims[d]);
        if (out > 1e15)
            return ref_fail(c->err, REF_E_RANGE, "scales[%d] = %g makes axis %d too long", i, (double)s[i], d);
        p->scale[d] = s[i];
        p->out_width[d] = (double)(s[i] * (float)p->in_dims[d]);
        p->out_dims[d] = (int64_t)out;
    }
    return REF_OK;
}

static int rz_from_sizes(ref_op_ctx *c, const ref_tensor *t, const int *axes, int n_axes, rz_params *p)
{
    static const char *const policies[] = {"stretch", "not_larger", "not_smaller"};
    int policy = 0, rc = c->opset >= 18 ? rz_pick(c, "keep_aspect_ratio_policy", "stretch", policies, 3, &policy) : 0;
    if (rc)
        return rc;
    const int64_t *sz = t->data;
    double keep = policy == 1 ? INFINITY : 0.0;
    for (int i = 0; i < n_axes; i++) {
        int64_t in = p->in_dims[axes[i]];
        if (sz[i] < 0)
            return ref_fail(c->err, REF_E_RANGE, "sizes[%d] = %" PRId64 " is negative", i, sz[i]);
        double s = in ? (double)sz[i] / (double)in : 1.0;
        keep = policy == 1 ? fmin(keep, s) : fmax(keep, s);
    }
    for (int i = 0; i < n_axes; i++) {
        int d = axes[i];
        int64_t in = p->in_dims[d];
        double s = policy ? keep : in ? (double)sz[i] / (double)in : 1.0;
        p->scale[d] = s > 0 ? s : 1.0; /* a zero-length output reads nothing: any finite scale will do */
        p->out_width[d] = s * (double)in;
        p->out_dims[d] = sz[i];
        if (policy && !ref_dim_from_double(nearbyint(s * (double)in), &p->out_dims[d]))
            return ref_fail(c->err, REF_E_RANGE, "sizes[%d] with keep_aspect_ratio_policy makes axis %d too long", i, d);
    }
    return REF_OK;
}

/* roi holds the starts then the ends of the box, per listed axis; float or double. */
static int rz_roi(ref_op_ctx *c, const ref_tensor *roi, const int *axes, int n_axes, rz_params *p)
{
    if (roi->dtype != REF_DT_FLOAT && roi->dtype != REF_DT_DOUBLE)
        return ref_fail(c->err, REF_E_UNSUPPORTED, "roi of type %s", ref_dtype_name(roi->dtype));
    if (ref_tensor_numel(roi) != 2 * n_axes)
        return ref_fail(c->err, REF_E_SHAPE, "roi has %" PRId64 " values, expected %d", ref_tensor_numel(roi),
                        2 * n_axes);
    if (!roi->data)
        return REF_OK; /* only run reads the box */
    for (int i = 0; i < n_axes; i++) {
        const float *f = roi->data;
        const double *d = roi->data;
        bool dbl = roi->dtype == REF_DT_DOUBLE;
        p->roi_start[axes[i]] = dbl ? (float)d[i] : f[i];
        p->roi_end[axes[i]] = dbl ? (float)d[n_axes + i] : f[n_axes + i];
    }
    return REF_OK;
}

/* An empty input axis has nothing to interpolate from. */
static int rz_check_dims(ref_op_ctx *c, const rz_params *p)
{
    for (int d = 0; d < p->rank; d++)
        if (p->in_dims[d] == 0 && p->out_dims[d] > 0)
            return ref_fail(c->err, REF_E_SHAPE, "axis %d is empty but the output wants %" PRId64, d,
                            p->out_dims[d]);
    return REF_OK;
}

/* Everything infer and run need; REF_E_DYNAMIC when scales or sizes are not known yet. */
static int rz_parse(ref_op_ctx *c, bool upsample, rz_params *p)
{
    const ref_tensor *x = c->in[0];
    if (!x)
        return ref_fail(c->err, REF_E_INVALID, "input 0 is required");
    if (!ref_dtype_size(x->dtype))
        return ref_fail(c->err, REF_E_UNSUPPORTED, "input of type %s", ref_dtype_name(x->dtype));
    if (x->rank < 1)
        return ref_fail(c->err, REF_E_SHAPE, "input must have rank >= 1");
    memset(p, 0, sizeof *p);
    bool legacy = upsample || c->opset < 11;
    int rc = rz_attrs(c, legacy, p);
    int axes[REF_MAX_RANK], n_axes = 0;
    if (!rc)
        rc = rz_axes(c, x->rank, axes, &n_axes);
    if (rc)
        return rc;
    p->rank = x->rank;
    for (int d = 0; d < x->rank; d++) {
        p->in_dims[d] = p->out_dims[d] = x->dims[d];
        p->scale[d] = 1.0;
        p->out_width[d] = (double)x->dims[d];
        p->roi_start[d] = 0.0f;
        p->roi_end[d] = 1.0f;
    }
    if (upsample && c->opset < 9) {
        const float *s = NULL;
        size_t n = ref_attr_floats(c->node, "scales", &s);
        if (!s || n != (size_t)x->rank)
            return ref_fail(c->err, REF_E_INVALID, "attribute scales must have %d values", x->rank);
        rc = rz_from_scales(c, s, axes, n_axes, p);
        return rc ? rc : rz_check_dims(c, p);
    }
    int i_roi = legacy ? -1 : 1, i_scales = legacy ? 1 : 2, i_sizes = legacy ? -1 : 3;
    const ref_tensor *roi = i_roi > 0 ? rz_given(c, i_roi) : NULL;
    const ref_tensor *sc = rz_given(c, i_scales), *sz = i_sizes > 0 ? rz_given(c, i_sizes) : NULL;
    if (roi && p->ctm == RZ_TF_CROP_AND_RESIZE && (rc = rz_roi(c, roi, axes, n_axes, p)))
        return rc;
    if (!!sc == !!sz)
        return ref_fail(c->err, REF_E_INVALID, "exactly one of scales and sizes must be given (non-empty)");
    const ref_tensor *t = sc ? sc : sz;
    if (t->dtype != (sc ? REF_DT_FLOAT : REF_DT_INT64))
        return ref_fail(c->err, REF_E_UNSUPPORTED, "%s of type %s", sc ? "scales" : "sizes",
                        ref_dtype_name(t->dtype));
    if (ref_tensor_numel(t) != n_axes)
        return ref_fail(c->err, REF_E_SHAPE, "%s has %" PRId64 " values, expected %d", sc ? "scales" : "sizes",
                        ref_tensor_numel(t), n_axes);
    if (!t->data)
        return ref_fail(c->err, REF_E_DYNAMIC, "%s is not known before run", sc ? "scales" : "sizes");
    rc = sc ? rz_from_scales(c, sc->data, axes, n_axes, p) : rz_from_sizes(c, sz, axes, n_axes, p);
    return rc ? rc : rz_check_dims(c, p);
}

static int rz_infer_common(ref_op_ctx *c, bool upsample)
{
    rz_params p;
    int rc = rz_parse(c, upsample, &p);
    if (rc)
        return rc;
    int dt = c->in[0]->dtype;
    bool fp = dt == REF_DT_FLOAT || dt == REF_DT_DOUBLE, q8 = dt == REF_DT_UINT8 || dt == REF_DT_INT8;
    if (q8 && p.mode != RZ_NEAREST && !rz_q8_supported(&p))
        return ref_fail(c->err, REF_E_UNSUPPORTED,
                        RZ_Q8_REFUSAL,
                        ref_dtype_name(dt));
    if (!fp && ((!q8 && p.mode != RZ_NEAREST) || (p.mode == RZ_NEAREST && p.ctm == RZ_TF_CROP_AND_RESIZE)))
        return ref_fail(c->err, REF_E_UNSUPPORTED, "%s input supports nearest mode without tf_crop_and_resize only",
                        ref_dtype_name(dt));
    ref_tensor *y = c->out[0];
    y->dtype = dt;
    ref_tensor_set_shape(y, p.rank, p.out_dims);
    return REF_OK;
}

static int rz_run_common(ref_op_ctx *c, bool upsample)
{
    rz_params p;
    int rc = rz_parse(c, upsample, &p);
    if (rc)
        return rc;
    ref_tensor *y = c->out[0];
    for (int d = 0; d < p.rank; d++)
        if (y->dims[d] != p.out_dims[d])
            return ref_fail(c->err, REF_E_SHAPE, "output dim %d is %" PRId64 " but the scales give %" PRId64, d,
                            y->dims[d], p.out_dims[d]);
    if (c->scratch_bytes < rz_scratch_bytes(p.rank, p.out_dims))
        return ref_fail(c->err, REF_E_STATE, "scratch of %zu bytes is too small", c->scratch_bytes);
    return rz_run(&p, c->in[0], y, c->scratch, c->pool, c->err);
}

static int resize_infer(ref_op_ctx *c) { return rz_infer_common(c, false); }
static int resize_run(ref_op_ctx *c) { return rz_run_common(c, false); }
static int upsample_infer(ref_op_ctx *c) { return rz_infer_common(c, true); }
static int upsample_run(ref_op_ctx *c) { return rz_run_common(c, true); }

static size_t resize_scratch(const ref_op_ctx *c)
{
    return rz_scratch_bytes(c->out[0]->rank, c->out[0]->dims);
}

const ref_op ref_ops_resize[] = {
    {.name = "Resize", .infer = resize_infer, .scratch_bytes = resize_scratch, .run = resize_run},
    {.name = "Upsample", .infer = upsample_infer, .scratch_bytes = resize_scratch, .run = upsample_run},
    {.name = NULL},
};
