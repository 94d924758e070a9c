/* layout_pad.c: Pad: constant/reflect/edge/wrap, attributes before opset 11, inputs after, axes from 18, crops.
 * It must never allocate, and never read the input outside its bounds whatever the pads say. */
#include <string.h>

#include "layout_copy.h"
#include "layout_ops.h"

enum { PAD_CONSTANT, PAD_REFLECT, PAD_EDGE, PAD_WRAP };

typedef struct {
    int mode;
    int64_t begin[REF_MAX_RANK], end[REF_MAX_RANK]; /* elements added (negative: removed) per dim */
} pad_spec;

/* ---------------------------------------------------------------------------------------------
 * Reading the node
 * ------------------------------------------------------------------------------------------- */

static int pad_mode(ref_op_ctx *c, int *mode)
{
    static const char *const names[] = {"constant", "reflect", "edge", "wrap"};
    const char *m = ref_attr_str_or(c->node, "mode", "constant");
    for (int k = 0; k < 4; k++)
        if (!strcmp(m, names[k])) {
            *mode = k;
            return REF_OK;
        }
    return ref_fail(c->err, REF_E_UNSUPPORTED, "Pad: mode '%s' (constant, reflect, edge or wrap)", m);
}

/* An int input that decides the output shape: REF_E_DYNAMIC without data. Returns the count or a status. */
static int pad_int_input(ref_op_ctx *c, int i, const char *what, int64_t *vals, int cap)
{
    const ref_tensor *t = ref_layout_in(c, i);
    if (t->dtype != REF_DT_INT64 && t->dtype != REF_DT_INT32)
        return ref_fail(c->err, REF_E_UNSUPPORTED, "Pad: %s must be int64, not %s", what, ref_dtype_name(t->dtype));
    if (ref_tensor_numel(t) > cap)
        return ref_fail(c->err, REF_E_SHAPE, "Pad: %s has %lld entries, at most %d fit the input", what,
                        (long long)ref_tensor_numel(t), cap);
    if (!t->data)
        return ref_fail(c->err, REF_E_DYNAMIC, "Pad: %s is not known before run", what);
    return ref_op_read_ints(c, i, vals, cap);
}

/* Which dims the pads apply to: all of them, or the axes input (opset 18). Returns the count. */
static int pad_axes(ref_op_ctx *c, int rank, int *axes)
{
    int64_t raw[REF_MAX_RANK];
    int n = rank;
    if (c->opset >= 18 && ref_layout_in(c, 3)) {
        n = pad_int_input(c, 3, "axes", raw, rank);
        if (n < 0)
            return n;
    } else {
        for (int d = 0; d < rank; d++)
            raw[d] = d;
    }
    bool seen[REF_MAX_RANK] = {false};
    for (int k = 0; k < n; k++) {
        axes[k] = ref_norm_axis(raw[k], rank);
        if (axes[k] < 0 || seen[axes[k]])
            return ref_fail(c->err, REF_E_SHAPE, "Pad: axis %lld is out of range or repeated for rank %d",
                            (long long)raw[k], rank);
        seen[axes[k]] = true;
    }
    return n;
}

/* Mode and per-dim pads of node c for input x. */
static int pad_read(ref_op_ctx *c, const ref_tensor *x, pad_spec *p)
{
    int rc = pad_mode(c, &p->mode);
    if (rc)
        return rc;
    int axes[REF_MAX_RANK];
    int n_axes = pad_axes(c, x->rank, axes);
    if (n_axes < 0)
        return n_axes;
    int64_t pads[2 * REF_MAX_RANK];
    int n;
    if (c->opset >= 11) {
        if (!ref_layout_in(c, 1))
            return ref_fail(c->err, REF_E_INVALID, "Pad: input pads is required");
        if ((n = pad_int_input(c, 1, "pads", pads, 2 * REF_MAX_RANK)) < 0)
            return n;
    } else {
        const int64_t *a;
        const char *name = c->opset < 2 ? "paddings" : "pads";
        size_t an = ref_attr_ints(c->node, name, &a);
        if (an > 2 * REF_MAX_RANK)
            return ref_fail(c->err, REF_E_SHAPE, "Pad: %zu pads", an);
        n = (int)an;
        if (an)
            memcpy(pads, a, an * sizeof *a);
    }
    if (n != 2 * n_axes)
        return ref_fail(c->err, REF_E_SHAPE, "Pad: %d pads for %d axes (need %d)", n, n_axes, 2 * n_axes);
    memset(p->begin, 0, sizeof p->begin);
    memset(p->end, 0, sizeof p->end);
    for (int k = 0; k < n_axes; k++) {
        p->begin[axes[k]] = pads[k];
        p->end[axes[k]] = pads[n_axes + k];
    }
    return REF_OK;
}

/* The constant fill element in x's dtype: the `value` attribute before opset 11, else input 2 (0 without). */
static int pad_value(ref_op_ctx *c, int dtype, unsigned char *v)
{
    size_t es = ref_dtype_size(dtype);
    memset(v, 0, 16);
    if (c->opset >= 11) {
        const ref_tensor *t = ref_layout_in(c, 2);
        if (t && t->dtype != dtype)
            return ref_fail(c->err, REF_E_SHAPE, "Pad: constant_value is %s but the input is %s",
                            ref_dtype_name(t->dtype), ref_dtype_name(dtype));
        if (t && t->data && ref_tensor_numel(t) > 0)
            memcpy(v, t->data, es); /* unknown at infer is fine: the value never changes the shape */
        return REF_OK;
    }
    float f = ref_attr_float_or(c->node, "value", 0.0f);
    if (f == 0.0f)
        return REF_OK;
    switch (dtype) {
    case REF_DT_FLOAT: memcpy(v, &f, 4); break;
    case REF_DT_DOUBLE: { double d = f; memcpy(v, &d, 8); break; }
    case REF_DT_INT8: case REF_DT_UINT8: case REF_DT_INT16: case REF_DT_UINT16: case REF_DT_INT32:
    case REF_DT_UINT32: case REF_DT_INT64: case REF_DT_UINT64: {
        int64_t i = (int64_t)f; /* little-endian: the low bytes are the narrower type's value */
        memcpy(v, &i, 8);
        break;
    }
    case REF_DT_BOOL: v[0] = 1; break;
    default:
        return ref_fail(c->err, REF_E_UNSUPPORTED, "Pad: value attribute for %s input", ref_dtype_name(dtype));
    }
    return REF_OK;
}

int ref_pad_infer(ref_op_ctx *c)
{
    int rc = ref_layout_want_sized(c, 0, "Pad");
    if (rc)
        return rc;
    const ref_tensor *x = c->in[0];
    pad_spec p;
    if ((rc = pad_read(c, x, &p)))
        return rc;
    ref_tensor *y = c->out[0];
    y->dtype = x->dtype;
    y->rank = x->rank;
    for (int d = 0; d < x->rank; d++) {
        /* pads may be negative (cropping), so the sum is checked as signed */
        if (__builtin_add_overflow(x->dims[d], p.begin[d], &y->dims[d]) ||
            __builtin_add_overflow(y->dims[d], p.end[d], &y->dims[d]))
            return ref_fail(c->err, REF_E_RANGE, "Pad: dim %d of length %lld padded by %lld,%lld overflows 64 bits", d,
                            (long long)x->dims[d], (long long)p.begin[d], (long long)p.end[d]);
        if (y->dims[d] < 0)
            return ref_fail(c->err, REF_E_SHAPE, "Pad: dim %d of length %lld cropped below 0 by pads %lld,%lld", d,
                            (long long)x->dims[d], (long long)p.begin[d], (long long)p.end[d]);
        if (p.mode != PAD_CONSTANT && x->dims[d] == 0 && y->dims[d] > 0)
            return ref_fail(c->err, REF_E_SHAPE, "Pad: cannot pad empty dim %d in mode %s", d,
                            ref_attr_str_or(c->node, "mode", "constant"));
    }
    unsigned char v[16];
    return pad_value(c, x->dtype, v);
}

/* ---------------------------------------------------------------------------------------------
 * Kernel
 * ------------------------------------------------------------------------------------------- */

typedef struct {
    const ref_tensor *x, *y;
    pad_spec p;
    size_t es;
    int64_t strides[REF_MAX_RANK];
    unsigned char value[16];
} pad_job;

/* Input index for output index j along a dim of n input elements with `begin` added; -1 for the fill. */
static int64_t pad_map(int64_t j, int64_t begin, int64_t n, int mode)
{
    int64_t i = j - begin;
    if (i >= 0 && i < n)
        return i;
    switch (mode) {
    case PAD_EDGE: return i < 0 ? 0 : n - 1;
    case PAD_WRAP: return (i % n + n) % n;
    case PAD_REFLECT: {
        if (n == 1)
            return 0;
        int64_t period = 2 * (n - 1);
        i = (i % period + period) % period;
        return i < n ? i : period - i;
    }
    default: return -1;
    }
}

static void pad_row(const pad_job *j, int64_t row, char *dst)
{
    int r = j->y->rank, last = r - 1;
    int64_t off = 0;
    for (int d = last - 1; d >= 0; d--) {
        int64_t o = row % j->y->dims[d];
        row /= j->y->dims[d];
        int64_t i = pad_map(o, j->p.begin[d], j->x->dims[d], j->p.mode);
        if (i < 0) {
            ref_layout_fill(dst, j->value, j->es, j->y->dims[last]);
            return;
        }
        off += i * j->strides[d];
    }
    const char *src = (const char *)j->x->data + (size_t)off * j->es;
    int64_t len = j->y->dims[last], n = j->x->dims[last], b = j->p.begin[last];
    int64_t lo = b > 0 ? b : 0, hi = b + n < len ? b + n : len; /* output span read straight from src */
    if (hi > lo)
        memcpy(dst + (size_t)lo * j->es, src + (size_t)(lo - b) * j->es, (size_t)(hi - lo) * j->es);
    for (int64_t o = 0; o < len; o++) {
        if (o == lo && hi > lo)
            o = hi;
        if (o >= len)
            break;
        int64_t i = pad_map(o, b, n, j->p.mode);
        if (i < 0)
            memcpy(dst + (size_t)o * j->es, j->value, j->es);
        else
            memcpy(dst + (size_t)o * j->es, src + (size_t)i * j->es, j->es);
    }
}

static void pad_task(void *arg, int64_t begin, int64_t end, int tid)
{
    (void)tid;
    const pad_job *j = arg;
    size_t row_bytes = (size_t)j->y->dims[j->y->rank - 1] * j->es;
    for (int64_t r = begin; r < end; r++)
        pad_row(j, r, (char *)j->y->data + (size_t)r * row_bytes);
}

int ref_pad_run(ref_op_ctx *c)
{
    pad_job j = {.x = c->in[0], .y = c->out[0], .es = ref_dtype_size(c->in[0]->dtype)};
    int rc = pad_read(c, j.x, &j.p);
    if (rc || (rc = pad_value(c, j.x->dtype, j.value)))
        return rc;
    if (j.y->rank == 0) {
        memcpy(j.y->data, j.x->data, j.es);
        return REF_OK;
    }
    int64_t len = j.y->dims[j.y->rank - 1];
    if (ref_tensor_numel(j.y) == 0)
        return REF_OK;
    ref_contiguous_strides(j.x, j.strides);
    int64_t rows = ref_tensor_numel(j.y) / len;
    ref_parallel_for(c->pool, rows, 32768 / len + 1, pad_task, &j);
    return REF_OK;
}
