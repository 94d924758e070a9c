/* quant_ms_pool.c: QLinearAveragePool in domain com.microsoft (X, x_scale, x_zp, y_scale, y_zp; kernel_shape, strides,
 * pads, auto_pad, ceil_mode, count_include_pad, channels_last), 1 to 3 spatial dims. As ORT does it: each window's
 * dequantized float32 values summed, divided by the window's count, quantized with y's scale (ties to even).
 * It must never read outside X: every window is clipped to the image before it is walked. */
#include <math.h>
#include <string.h>

#include "op.h"
#include "quant.h"
#include "quant_ms.h"

#define QPOOL_MAX_SPATIAL 3

typedef struct {
    int ns;                   /* spatial dims */
    bool last;                /* channels_last: N, spatial.., C */
    int64_t n, ch;
    int64_t in[QPOOL_MAX_SPATIAL], out[QPOOL_MAX_SPATIAL], k[QPOOL_MAX_SPATIAL], s[QPOOL_MAX_SPATIAL];
    int64_t pb[QPOOL_MAX_SPATIAL], pe[QPOOL_MAX_SPATIAL];
} qpool_geom;

static int ints_attr(const ref_op_ctx *c, const char *name, int want, int64_t *v, int64_t dflt)
{
    const int64_t *a = NULL;
    size_t n = ref_attr_ints(c->node, name, &a);
    for (int i = 0; i < want; i++)
        v[i] = dflt;
    if (!n)
        return 0;
    if ((int)n != want)
        return -1;
    memcpy(v, a, sizeof *v * (size_t)want);
    return 0;
}

static int geom(ref_op_ctx *c, qpool_geom *g)
{
    const ref_tensor *x = c->in[0];
    memset(g, 0, sizeof *g);
    g->ns = x->rank - 2;
    g->last = ref_attr_int_or(c->node, "channels_last", 0) != 0;
    if (g->ns < 1 || g->ns > QPOOL_MAX_SPATIAL)
        return ref_fail(c->err, REF_E_UNSUPPORTED, "input 0 (X) has rank %d; 3 to 5 are supported", x->rank);
    g->n = x->dims[0];
    g->ch = g->last ? x->dims[x->rank - 1] : x->dims[1];
    for (int d = 0; d < g->ns; d++)
        g->in[d] = x->dims[g->last ? 1 + d : 2 + d];
    int64_t pads[2 * QPOOL_MAX_SPATIAL];
    const int64_t *ks = NULL;
    if ((int)ref_attr_ints(c->node, "kernel_shape", &ks) != g->ns)
        return ref_fail(c->err, REF_E_INVALID, "kernel_shape must have %d values", g->ns);
    memcpy(g->k, ks, sizeof *ks * (size_t)g->ns);
    if (ints_attr(c, "strides", g->ns, g->s, 1) || ints_attr(c, "pads", 2 * g->ns, pads, 0))
        return ref_fail(c->err, REF_E_INVALID, "strides need %d values and pads %d", g->ns, 2 * g->ns);
    const char *ap = ref_attr_str_or(c->node, "auto_pad", "NOTSET");
    bool ceil_mode = ref_attr_int_or(c->node, "ceil_mode", 0) != 0;
    for (int d = 0; d < g->ns; d++) {
        int64_t in = g->in[d], k = g->k[d], s = g->s[d];
        if (k < 1 || s < 1 || pads[d] < 0 || pads[d + g->ns] < 0 || k > 1 << 20 || s > 1 << 20 ||
            pads[d] > 1 << 20 || pads[d + g->ns] > 1 << 20)
            return ref_fail(c->err, REF_E_INVALID, "spatial dim %d: kernel %lld, stride %lld or pads out of range", d,
                            (long long)k, (long long)s);
        if (!strcmp(ap, "SAME_UPPER") || !strcmp(ap, "SAME_LOWER")) {
            g->out[d] = (in + s - 1) / s;
            int64_t total = (g->out[d] - 1) * s + k - in;
            total = total < 0 ? 0 : total;
            g->pb[d] = !strcmp(ap, "SAME_UPPER") ? total / 2 : total - total / 2;
            g->pe[d] = total - g->pb[d];
        } else if (!strcmp(ap, "VALID")) {
            g->out[d] = in >= k ? (in - k) / s + 1 : 0;
        } else if (!strcmp(ap, "NOTSET")) {
            g->pb[d] = pads[d];
            g->pe[d] = pads[d + g->ns];
            int64_t span = in + g->pb[d] + g->pe[d] - k;
            if (span < 0)
                return ref_fail(c->err, REF_E_SHAPE, "spatial dim %d: kernel %lld exceeds the padded input %lld", d,
                                (long long)k, (long long)(in + g->pb[d] + g->pe[d]));
            g->out[d] = (ceil_mode ? (span + s - 1) / s : span / s) + 1;
            if (ceil_mode && (g->out[d] - 1) * s >= in + g->pb[d])
                g->out[d]--; /* the last window must start inside the input or its begin padding */
        } else {
            return ref_fail(c->err, REF_E_UNSUPPORTED, "auto_pad '%s'", ap);
        }
    }
    for (int d = g->ns; d < QPOOL_MAX_SPATIAL; d++)
        g->in[d] = g->out[d] = g->k[d] = g->s[d] = 1;
    return REF_OK;
}

static int qpool_infer(ref_op_ctx *c)
{
    const ref_tensor *x = c->in[0];
    if (!x || !ref_quant_int8(x->dtype))
        return ref_fail(c->err, REF_E_UNSUPPORTED, "input 0 (X) must be uint8 or int8");
    int rc, dt = x->dtype;
    if ((rc = ref_qms_want_scale(c, 1, "x_scale", true)) || (rc = ref_qms_want_zp(c, 2, "x_zero_point", dt)) ||
        (rc = ref_qms_want_scale(c, 3, "y_scale", true)) || (rc = ref_qms_want_zp(c, 4, "y_zero_point", dt)))
        return rc;
    qpool_geom g;
    if ((rc = geom(c, &g)))
        return rc;
    int64_t dims[REF_MAX_RANK];
    dims[0] = g.n;
    dims[g.last ? x->rank - 1 : 1] = g.ch;
    for (int d = 0; d < g.ns; d++)
        dims[g.last ? 1 + d : 2 + d] = g.out[d];
    return ref_qms_set_out(c, 0, dt, x->rank, dims);
}

static int qpool_run(ref_op_ctx *c)
{
    const ref_tensor *x = c->in[0];
    ref_tensor *y = c->out[0];
    qpool_geom g;
    int rc = geom(c, &g);
    if (rc)
        return rc;
    float xs = ref_qms_scale(c, 1), ys = ref_qms_scale(c, 3);
    int xz = ref_qms_zp(c, 2), yz = ref_qms_zp(c, 4);
    bool incl = ref_attr_int_or(c->node, "count_include_pad", 0) != 0, global = true;
    for (int d = 0; d < g.ns; d++)
        global = global && g.k[d] == g.in[d] && !g.pb[d] && !g.pe[d];
    if (global) /* ORT runs such a pool as QLinearGlobalAveragePool, whose arithmetic differs (integer sums) */
        return ref_qms_global_avg(c, x, g.n, g.ch, g.in[0] * g.in[1] * g.in[2], g.last, y);
    int64_t img_in = g.in[0] * g.in[1] * g.in[2], img_out = g.out[0] * g.out[1] * g.out[2];
    for (int64_t b = 0; b < g.n; b++)
        for (int64_t ch = 0; ch < g.ch; ch++)
            for (int64_t o = 0; o < img_out; o++) {
                int64_t oi[3] = {o / (g.out[1] * g.out[2]), o / g.out[2] % g.out[1], o % g.out[2]}, lo[3], hi[3];
                int64_t full = 1, inside = 1;
                for (int d = 0; d < 3; d++) {
                    int64_t st = oi[d] * g.s[d] - g.pb[d], en = st + g.k[d];
                    full *= g.k[d]; /* ORT counts the whole kernel, even past the end padding (ceil_mode) */
                    lo[d] = st < 0 ? 0 : st;
                    hi[d] = en < g.in[d] ? en : g.in[d];
                    inside *= hi[d] > lo[d] ? hi[d] - lo[d] : 0;
                }
                float sum = 0;
                for (int64_t i0 = lo[0]; i0 < hi[0]; i0++)
                    for (int64_t i1 = lo[1]; i1 < hi[1]; i1++)
                        for (int64_t i2 = lo[2]; i2 < hi[2]; i2++) {
                            int64_t p = (i0 * g.in[1] + i1) * g.in[2] + i2;
                            int64_t at = g.last ? (b * img_in + p) * g.ch + ch : (b * g.ch + ch) * img_in + p;
                            sum += xs * (float)(ref_qms_ld8(x, at) - xz);
                        }
                int64_t cnt = incl ? full : inside;
                float v = cnt > 0 ? sum / (float)cnt : 0.0f;
                int64_t yat = g.last ? (b * img_out + o) * g.ch + ch : (b * g.ch + ch) * img_out + o;
                /* ORT adds the zero point before rounding here (its quantize_value), unlike its MLAS kernels */
                float r = nearbyintf(v / ys + (float)yz), lo_q = y->dtype == REF_DT_INT8 ? -128.0f : 0.0f;
                float hi_q = y->dtype == REF_DT_INT8 ? 127.0f : 255.0f;
                int q = (int)(r >= lo_q ? (r > hi_q ? hi_q : r) : lo_q);
                if (y->dtype == REF_DT_INT8)
                    ((int8_t *)y->data)[yat] = (int8_t)q;
                else
                    ((uint8_t *)y->data)[yat] = (uint8_t)q;
            }
    return REF_OK;
}

const ref_op ref_ops_quant_ms_pool[] = {
    {.name = "QLinearAveragePool", .infer = qpool_infer, .run = qpool_run},
    {.name = NULL},
};
