/* sample.c: operator family "sample": GridSample (nearest, bilinear and bicubic over 2-D images at normalized grid
 * points, with zeros, border and reflection padding) and RoiAlign (average or max of bilinear samples per output
 * bin of each region), both as ONNX Runtime's CPU kernels compute them. It must never read a pixel outside the
 * image: every index is padded, clamped or reflected first. */
#include <math.h>
#include <string.h>

#include "op.h"
#include "reduce_elem.h"

/* ---- GridSample --------------------------------------------------------------------------------- */

enum { GS_ZEROS, GS_BORDER, GS_REFLECT };

typedef struct {
    const ref_tensor *x;
    int64_t h, w, plane; /* plane: element offset of the current (n, c) image */
    int pad;
    double xmin, xmax, ymin, ymax;
} gs_img;

static double gs_reflect(double v, double lo, double hi)
{
    double range = hi - lo;
    if (range <= 0)
        return lo;
    if (v < lo) {
        double d = lo - v;
        int64_t n = (int64_t)(d / range);
        double r = d - (double)n * range;
        return n % 2 == 0 ? lo + r : hi - r;
    }
    if (v > hi) {
        double d = v - hi;
        int64_t n = (int64_t)(d / range);
        double r = d - (double)n * range;
        return n % 2 == 0 ? hi - r : lo + r;
    }
    return v;
}

static double gs_pixel(const gs_img *g, int64_t r, int64_t c)
{
    if (g->pad == GS_ZEROS) {
        if (r < 0 || r >= g->h || c < 0 || c >= g->w)
            return 0;
    } else if (g->pad == GS_BORDER) {
        r = r < 0 ? 0 : r >= g->h ? g->h - 1 : r;
        c = c < 0 ? 0 : c >= g->w ? g->w - 1 : c;
    } else {
        c = (int64_t)gs_reflect((double)c, g->xmin, g->xmax);
        r = (int64_t)gs_reflect((double)r, g->ymin, g->ymax);
        r = r < 0 ? 0 : r >= g->h ? g->h - 1 : r;
        c = c < 0 ? 0 : c >= g->w ? g->w - 1 : c;
    }
    return ref_elem_ld(g->x->data, g->x->dtype, g->plane + r * g->w + c);
}

static void cubic_coeffs(double t, double *k)
{
    const double a = -0.75;
    double x = fabs(t);
    k[0] = ((a * (x + 1) - 5 * a) * (x + 1) + 8 * a) * (x + 1) - 4 * a;
    k[1] = ((a + 2) * x - (a + 3)) * x * x + 1;
    k[2] = ((a + 2) * (1 - x) - (a + 3)) * (1 - x) * (1 - x) + 1;
    k[3] = ((a * (2 - x) - 5 * a) * (2 - x) + 8 * a) * (2 - x) - 4 * a;
}

static int gs_params(ref_op_ctx *c, int *mode, int *pad)
{
    const ref_tensor *x = c->in[0], *g = c->n_in > 1 ? c->in[1] : NULL;
    if (!g || x->rank != 4 || g->rank != 4 || g->dims[0] != x->dims[0] || g->dims[3] != 2 ||
        !ref_elem_is_float(x->dtype) || !ref_elem_is_float(g->dtype))
        return ref_fail(c->err, REF_E_SHAPE, "GridSample needs float X [N,C,H,W] and grid [N,Ho,Wo,2]");
    const char *m = ref_attr_str_or(c->node, "mode", "bilinear"), *p = ref_attr_str_or(c->node, "padding_mode", "zeros");
    *mode = !strcmp(m, "nearest") ? 0 : !strcmp(m, "bilinear") ? 1 : !strcmp(m, "bicubic") ? 2 : -1;
    *pad = !strcmp(p, "zeros") ? GS_ZEROS : !strcmp(p, "border") ? GS_BORDER : !strcmp(p, "reflection") ? GS_REFLECT : -1;
    if (*mode < 0 || *pad < 0)
        return ref_fail(c->err, REF_E_UNSUPPORTED, "GridSample mode '%s', padding_mode '%s'", m, p);
    return REF_OK;
}

static int gs_infer(ref_op_ctx *c)
{
    int mode, pad, rc = gs_params(c, &mode, &pad);
    if (rc)
        return rc;
    int64_t d[4] = {c->in[0]->dims[0], c->in[0]->dims[1], c->in[1]->dims[1], c->in[1]->dims[2]};
    c->out[0]->dtype = c->in[0]->dtype;
    ref_tensor_set_shape(c->out[0], 4, d);
    return REF_OK;
}

static double gs_sample(const gs_img *g, int mode, double x, double y)
{
    if (mode == 0) {
        x = nearbyint(x);
        y = nearbyint(y);
    }
    if (x < g->xmin || x > g->xmax || y < g->ymin || y > g->ymax) {
        if (g->pad == GS_BORDER) {
            x = fmin(fmax(x, 0), (double)(g->w - 1));
            y = fmin(fmax(y, 0), (double)(g->h - 1));
        } else if (g->pad == GS_REFLECT) {
            x = gs_reflect(x, g->xmin, g->xmax);
            y = gs_reflect(y, g->ymin, g->ymax);
        }
    }
    if (mode == 0)
        return gs_pixel(g, (int64_t)y, (int64_t)x);
    if (mode == 1) {
        double x1 = floor(x), y1 = floor(y), dx1 = x - x1, dy1 = y - y1, dx2 = 1 - dx1, dy2 = 1 - dy1;
        int64_t c1 = (int64_t)x1, r1 = (int64_t)y1;
        return dy2 * (dx2 * gs_pixel(g, r1, c1) + dx1 * gs_pixel(g, r1, c1 + 1)) +
               dy1 * (dx2 * gs_pixel(g, r1 + 1, c1) + dx1 * gs_pixel(g, r1 + 1, c1 + 1));
    }
    double x0 = floor(x) - 1, y0 = floor(y) - 1, kx[4], ky[4], v = 0;
    cubic_coeffs(x - x0 - 1, kx);
    cubic_coeffs(y - y0 - 1, ky);
    for (int i = 0; i < 4; i++) {
        double row = 0;
        for (int j = 0; j < 4; j++)
            row += kx[j] * gs_pixel(g, (int64_t)y0 + i, (int64_t)x0 + j);
        v += ky[i] * row;
    }
    return v;
}

static int gs_run(ref_op_ctx *c)
{
    int mode, pad, rc = gs_params(c, &mode, &pad);
    if (rc)
        return rc;
    const ref_tensor *x = c->in[0], *grid = c->in[1];
    bool align = ref_attr_int_or(c->node, "align_corners", 0) != 0;
    int64_t N = x->dims[0], C = x->dims[1], Ho = grid->dims[1], Wo = grid->dims[2];
    gs_img g = {.x = x, .h = x->dims[2], .w = x->dims[3], .pad = pad};
    g.xmin = align ? 0 : -0.5;
    g.ymin = g.xmin;
    g.xmax = align ? (double)g.w - 1 : (double)g.w - 0.5;
    g.ymax = align ? (double)g.h - 1 : (double)g.h - 0.5;
    for (int64_t n = 0; n < N; n++)
        for (int64_t ch = 0; ch < C; ch++) {
            g.plane = (n * C + ch) * g.h * g.w;
            for (int64_t i = 0; i < Ho * Wo; i++) {
                double gx = ref_elem_ld(grid->data, grid->dtype, (n * Ho * Wo + i) * 2);
                double gy = ref_elem_ld(grid->data, grid->dtype, (n * Ho * Wo + i) * 2 + 1);
                double px = align ? (gx + 1) / 2 * (double)(g.w - 1) : ((gx + 1) * (double)g.w - 1) / 2;
                double py = align ? (gy + 1) / 2 * (double)(g.h - 1) : ((gy + 1) * (double)g.h - 1) / 2;
                ref_elem_st(c->out[0]->data, x->dtype, (n * C + ch) * Ho * Wo + i, gs_sample(&g, mode, px, py));
            }
        }
    return REF_OK;
}

/* ---- RoiAlign ----------------------------------------------------------------------------------- */

static int roi_check(ref_op_ctx *c)
{
    const ref_tensor *x = c->in[0], *r = c->n_in > 1 ? c->in[1] : NULL, *b = c->n_in > 2 ? c->in[2] : NULL;
    if (!r || !b || x->rank != 4 || r->rank != 2 || r->dims[1] != 4 || b->rank != 1 || b->dims[0] != r->dims[0] ||
        !ref_elem_is_float(x->dtype) || !ref_elem_is_float(r->dtype))
        return ref_fail(c->err, REF_E_SHAPE, "RoiAlign needs float X [N,C,H,W], rois [R,4] and batch_indices [R]");
    const char *m = ref_attr_str_or(c->node, "mode", "avg");
    if (strcmp(m, "avg") && strcmp(m, "max"))
        return ref_fail(c->err, REF_E_UNSUPPORTED, "RoiAlign mode '%s'", m);
    return REF_OK;
}

static int roi_infer(ref_op_ctx *c)
{
    int rc = roi_check(c);
    if (rc)
        return rc;
    int64_t d[4] = {c->in[1]->dims[0], c->in[0]->dims[1], ref_attr_int_or(c->node, "output_height", 1),
                    ref_attr_int_or(c->node, "output_width", 1)};
    if (d[2] < 1 || d[3] < 1)
        return ref_fail(c->err, REF_E_SHAPE, "RoiAlign: output size %lldx%lld", (long long)d[2], (long long)d[3]);
    c->out[0]->dtype = c->in[0]->dtype;
    ref_tensor_set_shape(c->out[0], 4, d);
    return REF_OK;
}

/* One bilinear sample at (y, x) of plane p (h x w); the four weighted pixels in v (for max mode). */
static void roi_sample(const ref_tensor *t, int64_t p, int64_t h, int64_t w, double y, double x, double *v)
{
    v[0] = v[1] = v[2] = v[3] = 0;
    if (y < -1.0 || y > (double)h || x < -1.0 || x > (double)w)
        return;
    y = y <= 0 ? 0 : y;
    x = x <= 0 ? 0 : x;
    int64_t yl = (int64_t)y, xl = (int64_t)x, yh, xh;
    if (yl >= h - 1) {
        yh = yl = h - 1;
        y = (double)yl;
    } else {
        yh = yl + 1;
    }
    if (xl >= w - 1) {
        xh = xl = w - 1;
        x = (double)xl;
    } else {
        xh = xl + 1;
    }
    double ly = y - (double)yl, lx = x - (double)xl, hy = 1 - ly, hx = 1 - lx;
    v[0] = hy * hx * ref_elem_ld(t->data, t->dtype, p + yl * w + xl);
    v[1] = hy * lx * ref_elem_ld(t->data, t->dtype, p + yl * w + xh);
    v[2] = ly * hx * ref_elem_ld(t->data, t->dtype, p + yh * w + xl);
    v[3] = ly * lx * ref_elem_ld(t->data, t->dtype, p + yh * w + xh);
}

static int roi_run(ref_op_ctx *c)
{
    int rc = roi_check(c);
    if (rc)
        return rc;
    const ref_tensor *x = c->in[0], *rois = c->in[1], *bi = c->in[2];
    ref_tensor *y = c->out[0];
    int64_t C = x->dims[1], H = x->dims[2], W = x->dims[3], oh = y->dims[2], ow = y->dims[3];
    double scale = ref_attr_float_or(c->node, "spatial_scale", 1.0f);
    int64_t ratio = ref_attr_int_or(c->node, "sampling_ratio", 0);
    bool half = strcmp(ref_attr_str_or(c->node, "coordinate_transformation_mode", "half_pixel"), "output_half_pixel");
    bool maxm = !strcmp(ref_attr_str_or(c->node, "mode", "avg"), "max");
    double off = half ? 0.5 : 0.0;
    for (int64_t r = 0; r < rois->dims[0]; r++) {
        int64_t b = ref_elem_ldi(bi->data, bi->dtype, r);
        if (b < 0 || b >= x->dims[0])
            return ref_fail(c->err, REF_E_RANGE, "RoiAlign: batch index %lld of %lld", (long long)b,
                            (long long)x->dims[0]);
        double x1 = ref_elem_ld(rois->data, rois->dtype, r * 4) * scale - off;
        double y1 = ref_elem_ld(rois->data, rois->dtype, r * 4 + 1) * scale - off;
        double rw = ref_elem_ld(rois->data, rois->dtype, r * 4 + 2) * scale - off - x1;
        double rh = ref_elem_ld(rois->data, rois->dtype, r * 4 + 3) * scale - off - y1;
        if (!half) {
            rw = fmax(rw, 1.0);
            rh = fmax(rh, 1.0);
        }
        double bh = rh / (double)oh, bw = rw / (double)ow;
        int64_t gh = ratio > 0 ? ratio : (int64_t)ceil(rh / (double)oh), gw = ratio > 0 ? ratio : (int64_t)ceil(rw / (double)ow);
        double count = (double)(gh * gw > 1 ? gh * gw : 1);
        for (int64_t ch = 0; ch < C; ch++) {
            int64_t plane = (b * C + ch) * H * W;
            for (int64_t py = 0; py < oh; py++)
                for (int64_t px = 0; px < ow; px++) {
                    double acc = 0, best = 0;
                    bool any = false;
                    for (int64_t iy = 0; iy < gh; iy++)
                        for (int64_t ix = 0; ix < gw; ix++) {
                            double v[4], sy = y1 + (double)py * bh + ((double)iy + 0.5) * bh / (double)gh;
                            double sx = x1 + (double)px * bw + ((double)ix + 0.5) * bw / (double)gw;
                            roi_sample(x, plane, H, W, sy, sx, v);
                            acc += v[0] + v[1] + v[2] + v[3];
                            double m = fmax(fmax(v[0], v[1]), fmax(v[2], v[3]));
                            best = !any || m > best ? m : best;
                            any = true;
                        }
                    ref_elem_st(y->data, y->dtype, ((r * C + ch) * oh + py) * ow + px, maxm ? best : acc / count);
                }
        }
    }
    return REF_OK;
}

const ref_op ref_ops_sample[] = {
    {.name = "GridSample", .infer = gs_infer, .run = gs_run},
    {.name = "RoiAlign", .infer = roi_infer, .run = roi_run},
    {.name = NULL},
};
