/* resize_kernel.c: Resize's coordinate maps, per-axis interpolation taps and the separable n-D kernel.
 * It must never allocate (taps live in the caller's scratch) nor read outside the input: every tap
 * index is clamped to the axis, which is what the spec's edge padding amounts to. */
#include <math.h>
#include <string.h>

#include "resize_util.h"

size_t rz_scratch_bytes(int rank, const int64_t *out_dims)
{
    int64_t n = 0;
    for (int d = 0; d < rank; d++)
        n += out_dims[d];
    return (size_t)n * sizeof(rz_tap);
}

/* Input coordinate that output coordinate x maps to along axis d. For tf_crop_and_resize, *outside
 * says it left the input. The arithmetic follows the spec's formulas in their order, in double, with
 * the roi and (for scales) the output width kept in float32 as the reference computes them. */
static double rz_coord(const rz_params *p, int d, int64_t x, bool *outside)
{
    double s = p->scale[d], ow = p->out_width[d], in = (double)p->in_dims[d], xf = (double)x;
    *outside = false;
    switch (p->ctm) {
    case RZ_HALF_PIXEL_SYMMETRIC: {
        double adjust = (double)p->out_dims[d] / ow;
        return in / 2 * (1 - adjust) + (xf + 0.5) / s - 0.5;
    }
    case RZ_PYTORCH_HALF_PIXEL:
        return ow == 1 ? -0.5 : (xf + 0.5) / s - 0.5;
    case RZ_ALIGN_CORNERS:
        return ow == 1 ? 0.0 : (double)(x * (p->in_dims[d] - 1)) / (ow - 1);
    case RZ_ASYMMETRIC:
        return xf / s;
    case RZ_TF_HALF_PIXEL_FOR_NN:
        return (xf + 0.5) / s;
    case RZ_TF_CROP_AND_RESIZE: {
        float span = p->roi_end[d] - p->roi_start[d];
        double xo;
        if (ow == 1)
            xo = (double)(span * (float)(p->in_dims[d] - 1) / 2.0f);
        else
            xo = xf * (double)span * (in - 1) / (ow - 1);
        xo += (double)(p->roi_start[d] * (float)(p->in_dims[d] - 1));
        *outside = !(xo >= 0 && xo <= in - 1);
        return xo;
    }
    default: /* half_pixel */
        return (xf + 0.5) / s - 0.5;
    }
}

static void cubic_weights(double r, double a, double *w)
{
    double s = 1 - r;
    w[0] = ((a * (r + 1) - 5 * a) * (r + 1) + 8 * a) * (r + 1) - 4 * a;
    w[1] = ((a + 2) * r - (a + 3)) * r * r + 1;
    w[2] = ((a + 2) * s - (a + 3)) * s * s + 1;
    w[3] = ((a * (s + 1) - 5 * a) * (s + 1) + 8 * a) * (s + 1) - 4 * a;
}

static int64_t clamp_idx(int64_t i, int64_t n)
{
    return i < 0 ? 0 : i >= n ? n - 1 : i;
}

/* The nearest input index of xo (its integer part floor, fraction r). */
static int64_t nearest_idx(int mode, double xo, double fl)
{
    double r = xo - fl;
    if (r == 0)
        return (int64_t)fl;
    switch (mode) {
    case RZ_ROUND_PREFER_FLOOR: return (int64_t)fl + (r > 0.5);
    case RZ_ROUND_PREFER_CEIL: return (int64_t)fl + (r >= 0.5);
    case RZ_FLOOR: return (int64_t)fl;
    default: return (int64_t)fl + 1;
    }
}

/* Taps of one output coordinate: the neighbours left of xo come first and the fraction lies in
 * (0, 1], so an integral xo puts its whole weight on the second (linear) or third (cubic) tap. */
static void rz_one_tap(const rz_params *p, int d, double xo, int64_t stride, rz_tap *t)
{
    int64_t in = p->in_dims[d];
    if (xo < -1e15)
        xo = -1e15; /* keeps the integer conversions defined; clamping makes the rest moot */
    if (xo > 1e15)
        xo = 1e15;
    double fl = floor(xo);
    if (p->mode == RZ_NEAREST) {
        t->n = 1;
        t->off[0] = clamp_idx(nearest_idx(p->nearest, xo, fl), in) * stride;
        t->w[0] = 1.0;
        return;
    }
    bool integral = xo == fl;
    int64_t base = (int64_t)fl - (integral ? 1 : 0);
    double r = integral ? 1.0 : xo - fl, w[RZ_MAX_TAPS];
    int64_t first;
    int n;
    if (p->mode == RZ_LINEAR) {
        n = 2, first = base;
        w[0] = 1 - r, w[1] = r;
    } else {
        n = 4, first = base - 1;
        cubic_weights(r, p->cubic_a, w);
        if (p->exclude_outside) {
            double sum = 0;
            for (int k = 0; k < 4; k++) {
                if (first + k < 0 || first + k >= in)
                    w[k] = 0;
                sum += w[k];
            }
            for (int k = 0; k < 4; k++)
                w[k] /= sum;
        }
    }
    t->n = 0;
    for (int k = 0; k < n; k++) {
        if (w[k] == 0)
            continue; /* identity axes (N, C) then cost one tap */
        t->off[t->n] = clamp_idx(first + k, in) * stride;
        t->w[t->n++] = w[k];
    }
    if (!t->n) {
        t->n = 1;
        t->off[0] = clamp_idx(base, in) * stride;
        t->w[0] = 0;
    }
}

static void rz_axis_taps(const rz_params *p, int d, int64_t stride, rz_tap *taps)
{
    for (int64_t x = 0; x < p->out_dims[d]; x++) {
        bool outside;
        double xo = rz_coord(p, d, x, &outside);
        taps[x].outside = outside;
        if (outside) {
            taps[x].n = 0;
            continue;
        }
        rz_one_tap(p, d, xo, stride, &taps[x]);
    }
}

/* ------------------------------------------------------------------------------------------------
 * The kernel: rows are output lines along the last axis; every output element sums the product of its
 * axes' taps, outermost axis first (the order the reference nests its 1-D interpolations).
 * ---------------------------------------------------------------------------------------------- */

typedef struct {
    const rz_params *p;
    const rz_tap *taps[REF_MAX_RANK];
    const uint8_t *x;
    uint8_t *y;
    int dtype;
    size_t es;
} rz_job;

#define RZ_SUM_FN(name, T)                                                                     \
    static double name(const T *x, const rz_tap *const *t, int d, int last, int64_t off)       \
    {                                                                                          \
        const rz_tap *tp = t[d];                                                               \
        double acc = 0;                                                                        \
        if (d == last) {                                                                       \
            for (int k = 0; k < tp->n; k++)                                                    \
                acc += tp->w[k] * (double)x[off + tp->off[k]];                                 \
            return acc;                                                                        \
        }                                                                                      \
        for (int k = 0; k < tp->n; k++)                                                        \
            acc += tp->w[k] * name(x, t, d + 1, last, off + tp->off[k]);                       \
        return acc;                                                                            \
    }

RZ_SUM_FN(rz_sum_f32, float)
RZ_SUM_FN(rz_sum_f64, double)

static void rz_element(const rz_job *j, const rz_tap *const *cur, bool outside, uint8_t *dst)
{
    const rz_params *p = j->p;
    int last = p->rank - 1;
    if (j->dtype == REF_DT_FLOAT) {
        *(float *)dst = outside ? (float)p->extrapolation
                                : (float)rz_sum_f32((const float *)j->x, cur, 0, last, 0);
    } else if (j->dtype == REF_DT_DOUBLE) {
        *(double *)dst = outside ? p->extrapolation : rz_sum_f64((const double *)j->x, cur, 0, last, 0);
    } else { /* nearest on any dtype: one tap per axis, a plain copy */
        int64_t off = 0;
        for (int d = 0; d <= last; d++)
            off += cur[d]->off[0];
        memcpy(dst, j->x + (size_t)off * j->es, j->es);
    }
}

static void rz_task(void *arg, int64_t begin, int64_t end, int tid)
{
    (void)tid;
    const rz_job *j = arg;
    const rz_params *p = j->p;
    int last = p->rank - 1;
    int64_t w = p->out_dims[last];
    const rz_tap *cur[REF_MAX_RANK];
    for (int64_t r = begin; r < end; r++) {
        int64_t rem = r;
        bool outside = false;
        for (int d = last - 1; d >= 0; d--) {
            cur[d] = &j->taps[d][rem % p->out_dims[d]];
            rem /= p->out_dims[d];
            outside |= cur[d]->outside;
        }
        uint8_t *dst = j->y + (size_t)(r * w) * j->es;
        for (int64_t x = 0; x < w; x++) {
            cur[last] = &j->taps[last][x];
            rz_element(j, cur, outside || cur[last]->outside, dst + (size_t)x * j->es);
        }
    }
}

int rz_run(const rz_params *p, const ref_tensor *x, ref_tensor *y, void *scratch, ref_pool *pool,
           ref_error *err)
{
    bool fp = x->dtype == REF_DT_FLOAT || x->dtype == REF_DT_DOUBLE;
    if (!fp && (p->mode != RZ_NEAREST || p->ctm == RZ_TF_CROP_AND_RESIZE))
        return ref_fail(err, REF_E_UNSUPPORTED, "%s input supports nearest mode only", ref_dtype_name(x->dtype));
    if (ref_tensor_numel(y) == 0)
        return REF_OK;
    rz_job j = {.p = p, .x = x->data, .y = y->data, .dtype = x->dtype, .es = ref_dtype_size(x->dtype)};
    int64_t strides[REF_MAX_RANK];
    ref_contiguous_strides(x, strides);
    rz_tap *t = scratch;
    for (int d = 0; d < p->rank; d++) {
        j.taps[d] = t;
        rz_axis_taps(p, d, strides[d], t);
        t += p->out_dims[d];
    }
    int64_t rows = ref_dims_prod(p->out_dims, 0, p->rank - 1), w = p->out_dims[p->rank - 1];
    int64_t per_elem = p->mode == RZ_NEAREST ? 1 : p->mode == RZ_LINEAR ? 4 : 16;
    int64_t grain = 16384 / (w * per_elem) + 1;
    ref_parallel_for(pool, rows, grain, rz_task, &j);
    return REF_OK;
}
