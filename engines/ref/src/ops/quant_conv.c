/* quant_conv.c: ConvInteger (int32 sums of zero-point-shifted 8-bit products) and QLinearConv (the same sums
 * requantized: y = saturate(round((sum + B) * x_scale * w_scale / y_scale) + y_zero_point)), a direct kernel over
 * Conv's geometry. It must never read X outside its padded bounds: padding reads as the zero point. */
#include <string.h>

#include "conv_ops.h"
#include "quant.h"
#include "reduce_elem.h"

/* Conv's geometry for x, w (and bias) given as 8-bit tensors: the float kernels' checks on float-typed copies. */
static int qgeom(ref_op_ctx *c, const ref_tensor *x, const ref_tensor *w, const ref_tensor *b, ref_conv_geom *g)
{
    if (!x || !w || !ref_quant_int8(x->dtype) || !ref_quant_int8(w->dtype))
        return ref_fail(c->err, REF_E_UNSUPPORTED, "%s needs 8-bit x and w", c->node->op_type);
    ref_tensor fx = *x, fw = *w, fb = b ? *b : (ref_tensor){0};
    fx.dtype = fw.dtype = fb.dtype = REF_DT_FLOAT;
    const ref_tensor *in[3] = {&fx, &fw, b ? &fb : NULL};
    ref_op_ctx cc = *c;
    cc.in = in;
    cc.n_in = b ? 3 : 2;
    return ref_conv_geom_init(&cc, false, g);
}

typedef struct {
    const ref_tensor *x, *w, *xz, *wz, *b;
} qconv_in;

/* The int64 sum for output (n, co, oz, oy, ox). */
static int64_t qconv_sum(const ref_conv_geom *g, const qconv_in *q, int64_t n, int64_t co, const int64_t *o)
{
    int64_t gi = co / g->cout_g, acc = 0, xz = (int64_t)ref_quant_at(q->xz, 0), wz = (int64_t)ref_quant_at(q->wz, co);
    for (int64_t ci = 0; ci < g->cin_g; ci++) {
        int64_t xc = (n * g->cin + gi * g->cin_g + ci) * g->in_size, wc = (co * g->cin_g + ci) * g->k_size;
        for (int64_t kz = 0; kz < g->k[0]; kz++)
            for (int64_t ky = 0; ky < g->k[1]; ky++)
                for (int64_t kx = 0; kx < g->k[2]; kx++) {
                    int64_t iz = o[0] * g->stride[0] - g->pad_lo[0] + kz * g->dil[0];
                    int64_t iy = o[1] * g->stride[1] - g->pad_lo[1] + ky * g->dil[1];
                    int64_t ix = o[2] * g->stride[2] - g->pad_lo[2] + kx * g->dil[2];
                    if (iz < 0 || iz >= g->in[0] || iy < 0 || iy >= g->in[1] || ix < 0 || ix >= g->in[2])
                        continue;
                    int64_t xv = ref_elem_ldi(q->x->data, q->x->dtype, xc + (iz * g->in[1] + iy) * g->in[2] + ix);
                    int64_t wv = ref_elem_ldi(q->w->data, q->w->dtype, wc + (kz * g->k[1] + ky) * g->k[2] + kx);
                    acc += (xv - xz) * (wv - wz);
                }
    }
    return acc + (q->b ? ref_elem_ldi(q->b->data, q->b->dtype, co) : 0);
}

/* Every output element through store(arg, flat index, channel, sum). */
static void qconv_each(const ref_conv_geom *g, const qconv_in *q, void (*store)(void *, int64_t, int64_t, int64_t),
                       void *arg)
{
    int64_t at = 0, o[3];
    for (int64_t n = 0; n < g->batch; n++)
        for (int64_t co = 0; co < g->cout; co++)
            for (o[0] = 0; o[0] < g->out[0]; o[0]++)
                for (o[1] = 0; o[1] < g->out[1]; o[1]++)
                    for (o[2] = 0; o[2] < g->out[2]; o[2]++)
                        store(arg, at++, co, qconv_sum(g, q, n, co, o));
}

static void store_i32(void *y, int64_t i, int64_t co, int64_t v)
{
    (void)co;
    ((int32_t *)((ref_tensor *)y)->data)[i] = (int32_t)v;
}

int ref_conv_integer_infer(ref_op_ctx *c)
{
    ref_conv_geom g;
    int rc = qgeom(c, c->in[0], c->n_in > 1 ? c->in[1] : NULL, NULL, &g);
    if (rc)
        return rc;
    ref_conv_out_shape(&g, c->out[0]);
    c->out[0]->dtype = REF_DT_INT32;
    return REF_OK;
}

int ref_conv_integer_run(ref_op_ctx *c)
{
    ref_conv_geom g;
    int rc = qgeom(c, c->in[0], c->in[1], NULL, &g);
    if (rc)
        return rc;
    qconv_in q = {.x = c->in[0], .w = c->in[1], .xz = c->n_in > 2 ? c->in[2] : NULL,
                  .wz = c->n_in > 3 ? c->in[3] : NULL};
    qconv_each(&g, &q, store_i32, c->out[0]);
    return REF_OK;
}

typedef struct {
    ref_tensor *y;
    const ref_tensor *xs, *ws, *ys;
    double yz;
} qlin_conv_out;

static void store_q(void *arg, int64_t i, int64_t co, int64_t v)
{
    qlin_conv_out *q = arg;
    double m = ref_quant_at(q->xs, 0) * ref_quant_at(q->ws, co) / ref_quant_at(q->ys, 0);
    ref_elem_sti(q->y->data, q->y->dtype, i, ref_quant_saturate((double)v * m + q->yz, q->y->dtype));
}

/* x, x_scale, x_zero_point, w, w_scale, w_zero_point, y_scale, y_zero_point, B. */
int ref_qlinear_conv_infer(ref_op_ctx *c)
{
    if (c->n_in < 8 || !c->in[1] || !c->in[2] || !c->in[4] || !c->in[5] || !c->in[6] || !c->in[7])
        return ref_fail(c->err, REF_E_INVALID, "QLinearConv needs 8 inputs (B optional)");
    ref_conv_geom g;
    int rc = qgeom(c, c->in[0], c->in[3], NULL, &g);
    if (rc)
        return rc;
    int64_t nw = ref_tensor_numel(c->in[4]);
    if ((nw != 1 && nw != g.cout) || ref_tensor_numel(c->in[5]) != nw)
        return ref_fail(c->err, REF_E_SHAPE, "QLinearConv: w_scale and w_zero_point need 1 or %lld values",
                        (long long)g.cout);
    ref_conv_out_shape(&g, c->out[0]);
    c->out[0]->dtype = c->in[7]->dtype;
    return ref_quant_int8(c->in[7]->dtype) ? REF_OK : ref_fail(c->err, REF_E_UNSUPPORTED, "QLinearConv output type");
}

int ref_qlinear_conv_run(ref_op_ctx *c)
{
    ref_conv_geom g;
    int rc = qgeom(c, c->in[0], c->in[3], NULL, &g);
    if (rc)
        return rc;
    qconv_in q = {.x = c->in[0], .w = c->in[3], .xz = c->in[2], .wz = c->in[5], .b = c->n_in > 8 ? c->in[8] : NULL};
    qlin_conv_out o = {.y = c->out[0], .xs = c->in[1], .ws = c->in[4], .ys = c->in[6], .yz = ref_quant_at(c->in[7], 0)};
    qconv_each(&g, &q, store_q, &o);
    return REF_OK;
}
