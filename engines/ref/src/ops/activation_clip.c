/* activation_clip.c: Clip (bounds from attributes before opset 11, from optional scalar inputs after, for
 * every numeric type) and PRelu (slope broadcast onto X). It must never allocate at run time, and never read
 * a bound tensor that is not exactly one element of X's type. */
#include <float.h>
#include <math.h>
#include <string.h>

#include "activation_ops.h"
#include "cast_half.h"
#include "elementwise_kernels.h"

REF_EW_VECTORIZE

/* ------------------------------------------------------------------------------------------------
 * Clip.
 * ---------------------------------------------------------------------------------------------- */

/* Bounds in the kernel's own type (float for the half types), as raw bytes. */
typedef struct clip_arg {
    unsigned char lo[8], hi[8];
} clip_arg;

/* max then min, so a NaN input stays NaN and lo > hi gives hi everywhere, as ONNX specifies. */
#define DEF_CLIP(OP, T, S, W, DT)                                                   \
    static inline T clip1_##S(T x, T lo, T hi)                                      \
    {                                                                               \
        const T t = x < lo ? lo : x;                                                \
        return t > hi ? hi : t;                                                     \
    }                                                                               \
    static void clip_##S(REF_EW_ROW_ARGS)                                           \
    {                                                                               \
        const clip_arg *p = arg;                                                    \
        T lo, hi;                                                                   \
        memcpy(&lo, p->lo, sizeof lo);                                              \
        memcpy(&hi, p->hi, sizeof hi);                                              \
        REF_EW_UN_BODY(T, T, clip1_##S(x, lo, hi))                                  \
    }
REF_EW_NUMERIC(DEF_CLIP, _)

static const ref_ew_row_fn clip_tab[REF_EW_NDT] = {REF_EW_NUMERIC(REF_EW_TAB, clip)};

static int kernel_dt(int dt) { return ref_ew_is_half(dt) ? REF_DT_FLOAT : dt; }

#define LIMITS(T, LO, HI)                       \
    do {                                        \
        T lo_ = (LO), hi_ = (HI);               \
        memcpy(p->lo, &lo_, sizeof lo_);        \
        memcpy(p->hi, &hi_, sizeof hi_);        \
    } while (0)

/* An omitted bound does nothing: the type's own extremes. */
static void clip_defaults(int kdt, clip_arg *p)
{
    switch (kdt) {
    case REF_DT_FLOAT: LIMITS(float, -INFINITY, INFINITY); break;
    case REF_DT_DOUBLE: LIMITS(double, -INFINITY, INFINITY); break;
    case REF_DT_INT8: LIMITS(int8_t, INT8_MIN, INT8_MAX); break;
    case REF_DT_INT16: LIMITS(int16_t, INT16_MIN, INT16_MAX); break;
    case REF_DT_INT32: LIMITS(int32_t, INT32_MIN, INT32_MAX); break;
    case REF_DT_INT64: LIMITS(int64_t, INT64_MIN, INT64_MAX); break;
    case REF_DT_UINT8: LIMITS(uint8_t, 0, UINT8_MAX); break;
    case REF_DT_UINT16: LIMITS(uint16_t, 0, UINT16_MAX); break;
    case REF_DT_UINT32: LIMITS(uint32_t, 0, UINT32_MAX); break;
    case REF_DT_UINT64: LIMITS(uint64_t, 0, UINT64_MAX); break;
    default: break;
    }
}

/* Fill p from the attributes (opset < 11) or the bound inputs. A bound input must be one element of X's
 * type; when its value is not known yet (infer) only that is checked. */
static int clip_bounds(ref_op_ctx *c, clip_arg *p)
{
    const ref_tensor *x = c->in[0];
    const int kdt = kernel_dt(x->dtype);
    clip_defaults(kdt, p);
    if (c->opset < 11) {
        float lo = ref_attr_float_or(c->node, "min", -FLT_MAX), hi = ref_attr_float_or(c->node, "max", FLT_MAX);
        if (kdt == REF_DT_DOUBLE) {
            double dlo = lo, dhi = hi;
            memcpy(p->lo, &dlo, sizeof dlo);
            memcpy(p->hi, &dhi, sizeof dhi);
        } else if (kdt == REF_DT_FLOAT) {
            memcpy(p->lo, &lo, sizeof lo);
            memcpy(p->hi, &hi, sizeof hi);
        } else {
            return ref_fail(c->err, REF_E_UNSUPPORTED, "Clip-%d does not support type %s", c->opset,
                            ref_dtype_name(x->dtype));
        }
        return REF_OK;
    }
    for (int k = 1; k <= 2; k++) {
        const ref_tensor *b = k < c->n_in ? c->in[k] : NULL;
        if (!b)
            continue;
        const char *what = k == 1 ? "min" : "max";
        if (b->dtype != x->dtype)
            return ref_fail(c->err, REF_E_SHAPE, "Clip: %s is %s but the input is %s", what,
                            ref_dtype_name(b->dtype), ref_dtype_name(x->dtype));
        if (ref_tensor_numel(b) != 1)
            return ref_fail(c->err, REF_E_SHAPE, "Clip: %s must be a scalar, has %lld elements", what,
                            (long long)ref_tensor_numel(b));
        if (!b->data)
            continue;
        unsigned char *dst = k == 1 ? p->lo : p->hi;
        if (ref_ew_is_half(b->dtype)) {
            uint16_t h;
            memcpy(&h, b->data, sizeof h);
            float f = b->dtype == REF_DT_FLOAT16 ? ref_f16_to_f32(h) : ref_bf16_to_f32(h);
            memcpy(dst, &f, sizeof f);
        } else {
            memcpy(dst, b->data, ref_dtype_size(b->dtype));
        }
    }
    return REF_OK;
}

int ref_act_clip_infer(ref_op_ctx *c)
{
    if (c->n_in < 1 || c->n_in > 3 || !c->in[0])
        return ref_fail(c->err, REF_E_INVALID, "Clip takes 1 to 3 inputs with the first present, got %d", c->n_in);
    const ref_tensor *x = c->in[0];
    int kdt = kernel_dt(x->dtype);
    if (kdt < 0 || kdt >= REF_EW_NDT || !clip_tab[kdt])
        return ref_fail(c->err, REF_E_UNSUPPORTED, "Clip does not support type %s", ref_dtype_name(x->dtype));
    clip_arg p;
    int rc = clip_bounds(c, &p);
    if (rc)
        return rc;
    c->out[0]->dtype = x->dtype;
    ref_tensor_set_shape(c->out[0], x->rank, x->dims);
    return REF_OK;
}

int ref_act_clip_run(ref_op_ctx *c)
{
    clip_arg p;
    int rc = clip_bounds(c, &p);
    if (rc)
        return rc;
    ref_ew_apply(c, c->out[0], 1, c->in, clip_tab[kernel_dt(c->in[0]->dtype)], &p);
    return REF_OK;
}

/* ------------------------------------------------------------------------------------------------
 * PRelu: y = x < 0 ? slope * x : x, slope broadcast to X's shape (one way only).
 * ---------------------------------------------------------------------------------------------- */

#define DEF_PRELU_FLOAT(OP, T, S, W, DT) \
    static void prelu_##S(REF_EW_ROW_ARGS) { REF_EW_BIN_BODY(T, T, x < 0 ? y * x : x) }
REF_EW_FLOATS(DEF_PRELU_FLOAT, _)
#define DEF_PRELU_INT(OP, T, S, W, DT) \
    static void prelu_##S(REF_EW_ROW_ARGS) { REF_EW_BIN_BODY(T, T, x < 0 ? (T)((W)y * (W)x) : x) }
REF_EW_SINTS(DEF_PRELU_INT, _)

static const ref_ew_row_fn prelu_tab[REF_EW_NDT] = {REF_EW_SIGNED(REF_EW_TAB, prelu)};

/* The slope as the kernel sees it. PRelu-6 and older apply a 1-D slope of X's channel count along axis 1;
 * later opsets broadcast numpy-style, which must leave X's shape unchanged. */
static int prelu_slope(ref_op_ctx *c, ref_tensor *view)
{
    const ref_tensor *x = c->in[0], *s = c->in[1];
    *view = *s;
    if (c->opset < 7 && s->rank == 1 && x->rank >= 2 && s->dims[0] == x->dims[1] && s->dims[0] != 1) {
        view->rank = x->rank - 1;
        for (int d = 1; d < view->rank; d++)
            view->dims[d] = 1;
    }
    ref_tensor shape;
    const ref_tensor *ops[2] = {x, view};
    char a[96], b[96];
    if (ref_broadcast_shape(2, ops, &shape, NULL) || !ref_shape_equal(&shape, x))
        return ref_fail(c->err, REF_E_SHAPE, "PRelu: slope %s does not broadcast to X %s",
                        ref_shape_str(s, b, sizeof b), ref_shape_str(x, a, sizeof a));
    return REF_OK;
}

int ref_act_prelu_infer(ref_op_ctx *c)
{
    if (c->n_in != 2 || !c->in[0] || !c->in[1])
        return ref_fail(c->err, REF_E_INVALID, "PRelu takes exactly 2 inputs, got %d", c->n_in);
    const ref_tensor *x = c->in[0];
    if (c->in[1]->dtype != x->dtype)
        return ref_fail(c->err, REF_E_SHAPE, "PRelu: slope is %s but X is %s", ref_dtype_name(c->in[1]->dtype),
                        ref_dtype_name(x->dtype));
    int kdt = kernel_dt(x->dtype);
    if (kdt < 0 || kdt >= REF_EW_NDT || !prelu_tab[kdt])
        return ref_fail(c->err, REF_E_UNSUPPORTED, "PRelu does not support type %s", ref_dtype_name(x->dtype));
    ref_tensor view;
    int rc = prelu_slope(c, &view);
    if (rc)
        return rc;
    c->out[0]->dtype = x->dtype;
    ref_tensor_set_shape(c->out[0], x->rank, x->dims);
    return REF_OK;
}

int ref_act_prelu_run(ref_op_ctx *c)
{
    ref_tensor view;
    int rc = prelu_slope(c, &view);
    if (rc)
        return rc;
    const ref_tensor *ins[2] = {c->in[0], &view};
    ref_ew_apply(c, c->out[0], 2, ins, prelu_tab[kernel_dt(c->in[0]->dtype)], NULL);
    return REF_OK;
}
