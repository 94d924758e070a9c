/* quant_ms.c: operator family "quant_ms", ONNX Runtime's quantized contrib operators in domain com.microsoft as
 * ORT's QOperator format writes them: QLinearAdd, QLinearMul, QLinearGlobalAveragePool, QLinearConcat,
 * QLinearSigmoid, QLinearLeakyRelu, QLinearSoftmax, QLinearWhere and com.microsoft's QuantizeLinear,
 * DequantizeLinear and (channels first) QLinearConv (quant_ms_gemm.c and quant_ms_pool.c add the rest).
 * Arithmetic is ORT's: float32 ratios of scales, ties to even, then saturation; element-wise maps go through a
 * 256-entry table as ORT builds it. It must never read a scale or zero point past its one value, nor index a tensor
 * without the shape checks infer made. */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "op.h"
#include "quant.h"
#include "quant_ms.h"
#include "reduce_elem.h"

/* ---- shared parameter checks --------------------------------------------------------------------------------- */

static const ref_tensor *in_at(const ref_op_ctx *c, int i) { return i < c->n_in ? c->in[i] : NULL; }

int ref_qms_want_scale(ref_op_ctx *c, int i, const char *what, bool required)
{
    const ref_tensor *t = in_at(c, i);
    if (!t)
        return required ? ref_fail(c->err, REF_E_INVALID, "input %d (%s) is required", i, what) : REF_OK;
    if (t->dtype != REF_DT_FLOAT || ref_tensor_numel(t) != 1)
        return ref_fail(c->err, REF_E_UNSUPPORTED, "input %d (%s) must be one float (float32) value, not %s of %lld",
                        i, what, ref_dtype_name(t->dtype), (long long)ref_tensor_numel(t));
    return REF_OK;
}

int ref_qms_want_zp(ref_op_ctx *c, int i, const char *what, int dt)
{
    const ref_tensor *t = in_at(c, i);
    if (!t)
        return REF_OK;
    if (t->dtype != dt || ref_tensor_numel(t) != 1)
        return ref_fail(c->err, REF_E_UNSUPPORTED, "input %d (%s) must be one %s value, not %s of %lld", i, what,
                        ref_dtype_name(dt), ref_dtype_name(t->dtype), (long long)ref_tensor_numel(t));
    return REF_OK;
}

float ref_qms_scale(const ref_op_ctx *c, int i)
{
    const ref_tensor *t = in_at(c, i);
    return t ? ((const float *)t->data)[0] : 0.0f;
}

int ref_qms_ld8(const ref_tensor *t, int64_t i)
{
    return t->dtype == REF_DT_INT8 ? ((const int8_t *)t->data)[i] : ((const uint8_t *)t->data)[i];
}

int ref_qms_zp(const ref_op_ctx *c, int i)
{
    const ref_tensor *t = in_at(c, i);
    return t ? ref_qms_ld8(t, 0) : 0;
}

int ref_qms_requant(float v, int zp, int dt)
{
    float lo = dt == REF_DT_INT8 ? -128.0f : 0.0f, hi = dt == REF_DT_INT8 ? 127.0f : 255.0f;
    float r = rintf(v) + (float)zp;
    return (int)(r >= lo ? (r > hi ? hi : r) : lo); /* NaN (a zero scale's 0/0) goes low, never into the cast */
}

int ref_qms_set_out(ref_op_ctx *c, int j, int dt, int rank, const int64_t *dims)
{
    ref_tensor t = {.dtype = dt};
    ref_tensor_set_shape(&t, rank, dims);
    char what[32];
    snprintf(what, sizeof what, "output %d", j);
    int rc = ref_shape_check(&t, ref_op_max_tensor_bytes(c), what, c->err);
    if (rc)
        return rc;
    c->out[j]->dtype = dt;
    ref_tensor_set_shape(c->out[j], rank, dims);
    return REF_OK;
}

/* Input i is 8-bit data (uint8 or int8), named what. */
static int want_q8(ref_op_ctx *c, int i, const char *what)
{
    const ref_tensor *t = in_at(c, i);
    if (!t)
        return ref_fail(c->err, REF_E_INVALID, "input %d (%s) is required", i, what);
    if (!ref_quant_int8(t->dtype))
        return ref_fail(c->err, REF_E_UNSUPPORTED, "input %d (%s) must be uint8 or int8, not %s", i, what,
                        ref_dtype_name(t->dtype));
    return REF_OK;
}

static void store8(ref_tensor *y, int64_t i, int v)
{
    if (y->dtype == REF_DT_INT8)
        ((int8_t *)y->data)[i] = (int8_t)v;
    else
        ((uint8_t *)y->data)[i] = (uint8_t)v;
}

/* ---- QLinearAdd, QLinearMul: A, A_scale, A_zp, B, B_scale, B_zp, C_scale, C_zp, numpy broadcasting ----------- */

static int binary_infer(ref_op_ctx *c)
{
    static const char *names[] = {"A", "A_scale", "A_zero_point", "B", "B_scale", "B_zero_point", "C_scale",
                                  "C_zero_point"};
    int rc;
    if ((rc = want_q8(c, 0, names[0])) || (rc = want_q8(c, 3, names[3])))
        return rc;
    int dt = c->in[0]->dtype;
    if (c->in[3]->dtype != dt)
        return ref_fail(c->err, REF_E_UNSUPPORTED, "input 3 (B) is %s but A is %s", ref_dtype_name(c->in[3]->dtype),
                        ref_dtype_name(dt));
    for (int i = 1; i < 8; i++) {
        if (i == 3)
            continue;
        bool scale = i == 1 || i == 4 || i == 6;
        rc = scale ? ref_qms_want_scale(c, i, names[i], true) : ref_qms_want_zp(c, i, names[i], dt);
        if (rc)
            return rc;
    }
    const ref_tensor *both[2] = {c->in[0], c->in[3]};
    ref_tensor y = {0};
    if ((rc = ref_broadcast_shape(2, both, &y, c->err)))
        return rc;
    return ref_qms_set_out(c, 0, dt, y.rank, y.dims);
}

/* Same-shape QLinearAdd, the common case (a residual): (fixed + a ra) + b rb with fused multiply-adds, as MLAS's
 * vector kernel; compiled for Haswell (FMA in hardware) too, so fmaf is one instruction there. */
__attribute__((target_clones("arch=haswell", "default"))) static void add_same(const void *a, const void *b, void *y,
                                                                               int64_t n, bool s8, float fixed,
                                                                               float ra, float rb)
{
    float lo = s8 ? -128.0f : 0.0f, hi = s8 ? 127.0f : 255.0f;
    for (int64_t i = 0; i < n; i++) {
        float qa = s8 ? ((const int8_t *)a)[i] : ((const uint8_t *)a)[i];
        float qb = s8 ? ((const int8_t *)b)[i] : ((const uint8_t *)b)[i];
        float r = rintf(fmaf(qb, rb, fmaf(qa, ra, fixed)));
        r = r >= lo ? (r > hi ? hi : r) : lo;
        if (s8)
            ((int8_t *)y)[i] = (int8_t)r;
        else
            ((uint8_t *)y)[i] = (uint8_t)r;
    }
}

static int binary_run(ref_op_ctx *c, bool mul)
{
    const ref_tensor *a = c->in[0], *b = c->in[3];
    ref_tensor *y = c->out[0];
    float as = ref_qms_scale(c, 1), bs = ref_qms_scale(c, 4), cs = ref_qms_scale(c, 6);
    int az = ref_qms_zp(c, 2), bz = ref_qms_zp(c, 5), cz = ref_qms_zp(c, 7);
    /* As MLAS's x86 kernels, in float32: QLinearAdd starts from C's zero point less both zero points' share, adds
     * each raw operand times its scale ratio with fused multiply-adds and rounds once; where B is one value along
     * the innermost dim it is added first (ORT passes it as a scalar). QLinearMul rounds the product's share plus
     * C's zero point. Measured: these orders give ORT's bytes where plain products and sums were a step off on 2
     * of 4000 int8 values. */
    float ra = as / cs, rb = bs / cs, rm = as * bs / cs;
    float fixed = (float)cz - (ra * (float)az + rb * (float)bz);
    int64_t sa[REF_MAX_RANK], sb[REF_MAX_RANK], idx[REF_MAX_RANK] = {0};
    ref_broadcast_strides(a, y, sa);
    ref_broadcast_strides(b, y, sb);
    int inner = y->rank - 1;
    while (inner > 0 && y->dims[inner] == 1)
        inner--;
    bool b_first = inner >= 0 && sb[inner] == 0 && sa[inner] != 0;
    if (!mul && ref_shape_equal(a, y) && ref_shape_equal(b, y)) {
        add_same(a->data, b->data, y->data, ref_tensor_numel(y), y->dtype == REF_DT_INT8, fixed, ra, rb);
        return REF_OK;
    }
    int64_t n = ref_tensor_numel(y), oa = 0, ob = 0;
    for (int64_t i = 0; i < n; i++) {
        int qa = ref_qms_ld8(a, oa), qb = ref_qms_ld8(b, ob);
        float v;
        if (mul)
            v = (float)((qa - az) * (qb - bz)) * rm + (float)cz;
        else if (b_first)
            v = fmaf((float)qa, ra, fmaf((float)qb, rb, fixed));
        else
            v = fmaf((float)qb, rb, fmaf((float)qa, ra, fixed));
        store8(y, i, ref_qms_requant(v, 0, y->dtype));
        for (int d = y->rank - 1; d >= 0; d--) { /* odometer over y's dims, offsets following */
            oa += sa[d];
            ob += sb[d];
            if (++idx[d] < y->dims[d])
                break;
            oa -= sa[d] * y->dims[d];
            ob -= sb[d] * y->dims[d];
            idx[d] = 0;
        }
    }
    return REF_OK;
}

static int add_run(ref_op_ctx *c) { return binary_run(c, false); }

static int mul_run(ref_op_ctx *c) { return binary_run(c, true); }

/* ---- QLinearGlobalAveragePool: X, x_scale, x_zp, y_scale, y_zp; channels_last ---------------------------------- */

static int gap_infer(ref_op_ctx *c)
{
    int rc;
    if ((rc = want_q8(c, 0, "X")))
        return rc;
    int dt = c->in[0]->dtype;
    if ((rc = ref_qms_want_scale(c, 1, "x_scale", true)) || (rc = ref_qms_want_zp(c, 2, "x_zero_point", dt)) ||
        (rc = ref_qms_want_scale(c, 3, "y_scale", true)) || (rc = ref_qms_want_zp(c, 4, "y_zero_point", dt)))
        return rc;
    const ref_tensor *x = c->in[0];
    if (x->rank < 3)
        return ref_fail(c->err, REF_E_SHAPE, "input 0 (X) has rank %d; it needs N, C and at least one spatial dim",
                        x->rank);
    bool last = ref_attr_int_or(c->node, "channels_last", 0) != 0;
    int64_t dims[REF_MAX_RANK];
    for (int d = 0; d < x->rank; d++)
        dims[d] = d == 0 || d == (last ? x->rank - 1 : 1) ? x->dims[d] : 1;
    return ref_qms_set_out(c, 0, dt, x->rank, dims);
}

int ref_qms_global_avg(ref_op_ctx *c, const ref_tensor *x, int64_t n, int64_t ch, int64_t img, bool last,
                       ref_tensor *y)
{
    int xz = ref_qms_zp(c, 2), yz = ref_qms_zp(c, 4);
    /* MLAS: one float32 multiplier x_scale / (y_scale * image size) on the int32 sum less x_zp * image size */
    float scale = ref_qms_scale(c, 1) / (ref_qms_scale(c, 3) * (float)img);
    for (int64_t b = 0; b < n; b++)
        for (int64_t k = 0; k < ch; k++) {
            int64_t sum = 0;
            for (int64_t p = 0; p < img; p++)
                sum += ref_qms_ld8(x, last ? (b * img + p) * ch + k : (b * ch + k) * img + p);
            store8(y, b * ch + k, ref_qms_requant(scale * (float)(sum - (int64_t)xz * img), yz, y->dtype));
        }
    return REF_OK;
}

static int gap_run(ref_op_ctx *c)
{
    const ref_tensor *x = c->in[0];
    bool last = ref_attr_int_or(c->node, "channels_last", 0) != 0;
    int64_t img = ref_dims_prod(x->dims, last ? 1 : 2, last ? x->rank - 1 : x->rank);
    return ref_qms_global_avg(c, x, x->dims[0], last ? x->dims[x->rank - 1] : x->dims[1], img, last, c->out[0]);
}

/* ---- table ops: QLinearSigmoid, QLinearLeakyRelu, and QLinearConcat's requantization ---------------------------- */

typedef float (*fmap)(float v, float alpha);

static float map_id(float v, float alpha) { return (void)alpha, v; }

static float map_sigmoid(float v, float alpha) { return (void)alpha, 1.0f / (1.0f + expf(-v)); }

static float map_leaky(float v, float alpha) { return v >= 0 ? v : v * alpha; }

/* tab[q - lo] for every 8-bit q of dt: dequantize, map, quantize (divide by y_scale), as ORT's lookup tables. */
static void build_table(int dt, float xs, int xz, float ys, int yz, fmap f, float alpha, int *tab)
{
    int lo = dt == REF_DT_INT8 ? -128 : 0;
    for (int q = lo; q < lo + 256; q++)
        tab[q - lo] = ref_qms_requant(f(xs * (float)(q - xz), alpha) / ys, yz, dt);
}

static void apply_table(const ref_tensor *x, ref_tensor *y, int64_t from, int64_t to, int64_t n, const int *tab)
{
    int lo = x->dtype == REF_DT_INT8 ? -128 : 0;
    for (int64_t i = 0; i < n; i++)
        store8(y, to + i, tab[ref_qms_ld8(x, from + i) - lo]);
}

static int unary_infer(ref_op_ctx *c)
{
    int rc;
    if ((rc = want_q8(c, 0, "X")))
        return rc;
    int dt = c->in[0]->dtype;
    if ((rc = ref_qms_want_scale(c, 1, "X_scale", true)) || (rc = ref_qms_want_zp(c, 2, "X_zero_point", dt)) ||
        (rc = ref_qms_want_scale(c, 3, "Y_scale", true)) || (rc = ref_qms_want_zp(c, 4, "Y_zero_point", dt)))
        return rc;
    return ref_qms_set_out(c, 0, dt, c->in[0]->rank, c->in[0]->dims);
}

static int unary_run(ref_op_ctx *c, fmap f, float alpha)
{
    int tab[256];
    build_table(c->in[0]->dtype, ref_qms_scale(c, 1), ref_qms_zp(c, 2), ref_qms_scale(c, 3), ref_qms_zp(c, 4), f,
                alpha, tab);
    apply_table(c->in[0], c->out[0], 0, 0, ref_tensor_numel(c->in[0]), tab);
    return REF_OK;
}

static int sigmoid_run(ref_op_ctx *c) { return unary_run(c, map_sigmoid, 0); }

static int leaky_run(ref_op_ctx *c) { return unary_run(c, map_leaky, ref_attr_float_or(c->node, "alpha", 0.01f)); }

/* ---- QLinearConcat: Y_scale, Y_zp, then (X, X_scale, X_zp) per input; axis ------------------------------------- */

static int concat_infer(ref_op_ctx *c)
{
    int rc, n_x = (c->n_in - 2) / 3;
    if (c->n_in < 5 || (c->n_in - 2) % 3)
        return ref_fail(c->err, REF_E_INVALID, "%d inputs: it takes Y_scale, Y_zero_point, then triples of X, "
                        "X_scale, X_zero_point", c->n_in);
    if ((rc = want_q8(c, 2, "X")))
        return rc;
    const ref_tensor *x0 = c->in[2];
    const ref_attr *ax = ref_node_attr(c->node, "axis");
    int dt = x0->dtype, axis = ax && ax->type == REF_ATTR_INT ? ref_norm_axis(ax->i, x0->rank) : -1;
    if (axis < 0)
        return ref_fail(c->err, REF_E_INVALID, "attribute axis is missing or outside rank %d", x0->rank);
    if ((rc = ref_qms_want_scale(c, 0, "Y_scale", true)) || (rc = ref_qms_want_zp(c, 1, "Y_zero_point", dt)))
        return rc;
    int64_t dims[REF_MAX_RANK];
    memcpy(dims, x0->dims, sizeof dims);
    dims[axis] = 0;
    for (int k = 0; k < n_x; k++) {
        int i = 2 + 3 * k;
        const ref_tensor *x = in_at(c, i);
        if ((rc = want_q8(c, i, "X")) || (rc = ref_qms_want_scale(c, i + 1, "X_scale", true)) ||
            (rc = ref_qms_want_zp(c, i + 2, "X_zero_point", dt)))
            return rc;
        if (x->dtype != dt || x->rank != x0->rank)
            return ref_fail(c->err, REF_E_SHAPE, "input %d is %s of rank %d, the first X %s of rank %d", i,
                            ref_dtype_name(x->dtype), x->rank, ref_dtype_name(dt), x0->rank);
        for (int d = 0; d < x->rank; d++)
            if (d != axis && x->dims[d] != x0->dims[d])
                return ref_fail(c->err, REF_E_SHAPE, "input %d has dim %d = %lld, the first X %lld", i, d,
                                (long long)x->dims[d], (long long)x0->dims[d]);
        if (!ref_dim_add(dims[axis], x->dims[axis], &dims[axis]))
            return ref_fail(c->err, REF_E_SHAPE, "the concatenated axis overflows");
    }
    return ref_qms_set_out(c, 0, dt, x0->rank, dims);
}

static int concat_run(ref_op_ctx *c)
{
    ref_tensor *y = c->out[0];
    int axis = ref_norm_axis(ref_attr_int_or(c->node, "axis", 0), y->rank), n_x = (c->n_in - 2) / 3;
    int64_t outer = ref_dims_prod(y->dims, 0, axis), y_row = ref_dims_prod(y->dims, axis, y->rank), at = 0;
    float ys = ref_qms_scale(c, 0);
    int yz = ref_qms_zp(c, 1), tab[256];
    for (int k = 0; k < n_x; k++) {
        int i = 2 + 3 * k;
        const ref_tensor *x = c->in[i];
        int64_t row = ref_dims_prod(x->dims, axis, x->rank);
        float xs = ref_qms_scale(c, i + 1);
        int xz = ref_qms_zp(c, i + 2);
        bool same = xs == ys && xz == yz; /* ORT copies such an input unchanged */
        if (!same)
            build_table(y->dtype, xs, xz, ys, yz, map_id, 0, tab);
        for (int64_t o = 0; o < outer; o++) {
            if (same)
                memcpy((char *)y->data + o * y_row + at, (const char *)x->data + o * row, (size_t)row);
            else
                apply_table(x, y, o * row, o * y_row + at, row, tab);
        }
        at += row;
    }
    return REF_OK;
}

/* ---- QLinearWhere: condition, X, x_scale, x_zp, Y, y_scale, y_zp, z_scale, z_zp; X and Y requantized to Z ------ */

static int where_infer(ref_op_ctx *c)
{
    static const char *names[] = {"condition", "X", "x_scale", "x_zero_point", "Y", "y_scale", "y_zero_point",
                                  "z_scale", "z_zero_point"};
    int rc;
    const ref_tensor *cond = in_at(c, 0);
    if (!cond || cond->dtype != REF_DT_BOOL)
        return ref_fail(c->err, REF_E_UNSUPPORTED, "input 0 (condition) must be bool");
    if ((rc = want_q8(c, 1, "X")) || (rc = want_q8(c, 4, "Y")))
        return rc;
    int dt = c->in[1]->dtype;
    if (c->in[4]->dtype != dt)
        return ref_fail(c->err, REF_E_UNSUPPORTED, "input 4 (Y) is %s but X is %s", ref_dtype_name(c->in[4]->dtype),
                        ref_dtype_name(dt));
    for (int i = 2; i < 9; i++) {
        if (i == 4)
            continue;
        bool scale = i == 2 || i == 5 || i == 7;
        rc = scale ? ref_qms_want_scale(c, i, names[i], true) : ref_qms_want_zp(c, i, names[i], dt);
        if (rc)
            return rc;
    }
    const ref_tensor *three[3] = {cond, c->in[1], c->in[4]};
    ref_tensor y = {0};
    if ((rc = ref_broadcast_shape(3, three, &y, c->err)))
        return rc;
    return ref_qms_set_out(c, 0, dt, y.rank, y.dims);
}

static int where_run(ref_op_ctx *c)
{
    const ref_tensor *cond = c->in[0], *x = c->in[1], *yv = c->in[4];
    ref_tensor *z = c->out[0];
    int tx[256], ty[256], lo = z->dtype == REF_DT_INT8 ? -128 : 0;
    float zs = ref_qms_scale(c, 7);
    int zz = ref_qms_zp(c, 8);
    build_table(z->dtype, ref_qms_scale(c, 2), ref_qms_zp(c, 3), zs, zz, map_id, 0, tx);
    build_table(z->dtype, ref_qms_scale(c, 5), ref_qms_zp(c, 6), zs, zz, map_id, 0, ty);
    int64_t sc[REF_MAX_RANK], sx[REF_MAX_RANK], sy[REF_MAX_RANK], idx[REF_MAX_RANK] = {0};
    ref_broadcast_strides(cond, z, sc);
    ref_broadcast_strides(x, z, sx);
    ref_broadcast_strides(yv, z, sy);
    int64_t n = ref_tensor_numel(z), oc = 0, ox = 0, oy = 0;
    for (int64_t i = 0; i < n; i++) {
        bool take_x = ((const uint8_t *)cond->data)[oc] != 0;
        store8(z, i, take_x ? tx[ref_qms_ld8(x, ox) - lo] : ty[ref_qms_ld8(yv, oy) - lo]);
        for (int d = z->rank - 1; d >= 0; d--) { /* odometer over z's dims, offsets following */
            oc += sc[d], ox += sx[d], oy += sy[d];
            if (++idx[d] < z->dims[d])
                break;
            oc -= sc[d] * z->dims[d], ox -= sx[d] * z->dims[d], oy -= sy[d] * z->dims[d];
            idx[d] = 0;
        }
    }
    return REF_OK;
}

/* ---- QLinearSoftmax: X, X_scale, x_zp, y_scale, y_zp; axis, opset (below 13: the dims from axis on are one row) - */

static int softmax_infer(ref_op_ctx *c)
{
    int rc = unary_infer(c);
    if (rc)
        return rc;
    const ref_attr *op = ref_node_attr(c->node, "opset");
    if (!op || op->type != REF_ATTR_INT)
        return ref_fail(c->err, REF_E_INVALID, "attribute opset (the Softmax version it follows) is required");
    int64_t dflt = op->i < 13 ? 1 : -1;
    if (ref_norm_axis(ref_attr_int_or(c->node, "axis", dflt), c->in[0]->rank) < 0)
        return ref_fail(c->err, REF_E_INVALID, "axis %lld is outside rank %d",
                        (long long)ref_attr_int_or(c->node, "axis", dflt), c->in[0]->rank);
    return REF_OK;
}

/* As ORT: a table of exp((q - 255 + shift) * x_scale) (float, from double), shift keeping a row's sum of D values
 * within float range; each row looked up from its max, summed in float32, and y = rint(e * floor(1 / y_scale) / sum)
 * + y_zp. ORT's int8 kernel then wraps values above 127; this one saturates them. */
static int softmax_run(ref_op_ctx *c)
{
    const ref_tensor *x = c->in[0];
    ref_tensor *y = c->out[0];
    int64_t opset = ref_attr_int_or(c->node, "opset", 13);
    int axis = ref_norm_axis(ref_attr_int_or(c->node, "axis", opset < 13 ? 1 : -1), x->rank);
    int64_t outer = ref_dims_prod(x->dims, 0, axis);
    int64_t d = opset < 13 ? ref_dims_prod(x->dims, axis, x->rank) : x->dims[axis];
    int64_t inner = opset < 13 ? 1 : ref_dims_prod(x->dims, axis + 1, x->rank);
    if (d <= 0 || ref_tensor_numel(x) == 0)
        return REF_OK;
    double xs = ref_qms_scale(c, 1), shift = log((double)(FLT_MAX / (float)d)) - 5;
    shift = (shift > 0 ? shift : 0) / xs;
    float tab[256], ys = floorf(1.0f / ref_qms_scale(c, 3));
    for (int i = 0; i < 256; i++)
        tab[i] = (float)exp(((double)i - 255 + shift) * xs);
    int yz = ref_qms_zp(c, 4), lo = x->dtype == REF_DT_INT8 ? -128 : 0;
    for (int64_t o = 0; o < outer; o++)
        for (int64_t in = 0; in < inner; in++) {
            int64_t base = o * d * inner + in;
            int xmax = lo;
            for (int64_t j = 0; j < d; j++) {
                int v = ref_qms_ld8(x, base + j * inner);
                xmax = v > xmax ? v : xmax;
            }
            float sum = 0;
            for (int64_t j = 0; j < d; j++)
                sum += tab[255 - (xmax - ref_qms_ld8(x, base + j * inner))];
            for (int64_t j = 0; j < d; j++) {
                float e = tab[255 - (xmax - ref_qms_ld8(x, base + j * inner))];
                store8(y, base + j * inner, ref_qms_requant(e * ys / sum, yz, y->dtype));
            }
        }
    return REF_OK;
}

/* ---- com.microsoft QuantizeLinear / DequantizeLinear: the default domain's kernels, axis allowed at any opset -- */

static int forward(ref_op_ctx *c, const char *name, bool infer)
{
    const ref_op *op = ref_op_find("", name);
    if (!op)
        return ref_fail(c->err, REF_E_STATE, "no default-domain %s to run", name);
    ref_op_ctx d = *c;
    d.opset = d.opset < 13 ? 13 : d.opset; /* com.microsoft's versions take per-axis scales whatever the opset */
    int rc = infer ? op->infer(&d) : op->run(&d);
    return rc;
}

/* ORT registers QLinearConv in com.microsoft too (its NHWC rewrite emits channels_last = 1); channels first it is
 * the standard operator (quant_conv.c). */
static int qconv_infer(ref_op_ctx *c)
{
    if (ref_attr_int_or(c->node, "channels_last", 0))
        return ref_fail(c->err, REF_E_UNSUPPORTED, "QLinearConv with channels_last = 1");
    return ref_qlinear_conv_infer(c);
}

static int q_infer(ref_op_ctx *c) { return forward(c, "QuantizeLinear", true); }
static int q_run(ref_op_ctx *c) { return forward(c, "QuantizeLinear", false); }
static int dq_infer(ref_op_ctx *c) { return forward(c, "DequantizeLinear", true); }
static int dq_run(ref_op_ctx *c) { return forward(c, "DequantizeLinear", false); }

const ref_op ref_ops_quant_ms[] = {
    {.name = "QLinearAdd", .infer = binary_infer, .run = add_run},
    {.name = "QLinearMul", .infer = binary_infer, .run = mul_run},
    {.name = "QLinearGlobalAveragePool", .infer = gap_infer, .run = gap_run},
    {.name = "QLinearConcat", .infer = concat_infer, .run = concat_run},
    {.name = "QLinearSigmoid", .infer = unary_infer, .run = sigmoid_run},
    {.name = "QLinearLeakyRelu", .infer = unary_infer, .run = leaky_run},
    {.name = "QLinearSoftmax", .infer = softmax_infer, .run = softmax_run},
    {.name = "QLinearWhere", .infer = where_infer, .run = where_run},
    {.name = "QLinearConv", .infer = qconv_infer, .run = ref_qlinear_conv_run,
     .scratch_bytes = ref_qlinear_conv_scratch_bytes, .prepare = ref_qlinear_conv_prepare,
     .state_free = ref_qconv_state_free, .state_bytes = ref_qconv_state_bytes},
    {.name = "QuantizeLinear", .infer = q_infer, .run = q_run},
    {.name = "DequantizeLinear", .infer = dq_infer, .run = dq_run},
    {.name = NULL},
};
