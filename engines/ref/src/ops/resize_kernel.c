/* resize_kernel.c: Resize's coordinate maps, per-axis interpolation taps and the separable n-D kernel.
 * It must never allocate (taps live in the caller's scratch) nor read outside the input: every tap
 * index is clamped to the axis, which is what the spec's edge padding amounts to. */
#include <math.h>
#include <string.h>

#include "elementwise_kernels.h"
#include "resize_util.h"

/* The float row's vertical blend is a straight loop: vectorized, never contracted into FMA (same bits on every
 * build). */
REF_EW_VECTORIZE
REF_EW_NO_CONTRACT

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
    bool row_f32; /* float, rank >= 2, no tf_crop_and_resize: rows may take rz_row_f32 */
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

/* Output columns per block of a float row, and the input columns a block's vertical blend may span. */
#define RZ_BLOCK 128
#define RZ_SPAN 512

/* One block [ox0, ox1) of a float row from input plane x: first the vertical taps blend the input columns the
 * block reads, lo..lo+span-1, into v (a contiguous loop the compiler vectorizes), then each output sums its
 * horizontal taps over v. Both passes sum in double from 0 in tap order; they nest the axes the other way
 * round from rz_sum_f32 (rows inside columns), which can move a result by one float rounding in a rare tie. */
static void rz_block_f32(const float *x, const rz_tap *th, const rz_tap *tw, int64_t ox0, int64_t ox1, int64_t lo,
                         int64_t span, float *dst)
{
    double v[RZ_SPAN];
    const float *r0 = x + th->off[0] + lo;
    if (th->n == 2) {
        const float *r1 = x + th->off[1] + lo;
        const double w0 = th->w[0], w1 = th->w[1];
        for (int64_t i = 0; i < span; i++) {
            double s = 0;
            s += w0 * (double)r0[i];
            s += w1 * (double)r1[i];
            v[i] = s;
        }
    } else {
        for (int64_t i = 0; i < span; i++) {
            double s = 0;
            for (int k = 0; k < th->n; k++)
                s += th->w[k] * (double)x[th->off[k] + lo + i];
            v[i] = s;
        }
    }
    const double *vl = v - lo;
    for (int64_t ox = ox0; ox < ox1; ox++) {
        const rz_tap *t = &tw[ox];
        double acc = 0;
        if (t->n == 2) {
            acc += t->w[0] * vl[t->off[0]];
            acc += t->w[1] * vl[t->off[1]];
        } else {
            for (int m = 0; m < t->n; m++)
                acc += t->w[m] * vl[t->off[m]];
        }
        dst[ox] = (float)acc;
    }
}

/* The same block without the blend, for a block that reads more than RZ_SPAN input columns (a steep
 * downscale): rz_sum_f32's order, taps inline. */
static void rz_block_f32_direct(const float *x, const rz_tap *th, const rz_tap *tw, int64_t ox0, int64_t ox1,
                                float *dst)
{
    for (int64_t ox = ox0; ox < ox1; ox++) {
        const rz_tap *t = &tw[ox];
        double acc = 0;
        for (int k = 0; k < th->n; k++) {
            const float *r = x + th->off[k];
            double s = 0;
            for (int m = 0; m < t->n; m++)
                s += t->w[m] * (double)r[t->off[m]];
            acc += th->w[k] * s;
        }
        dst[ox] = (float)acc;
    }
}

/* A float row whose axes before the last two are identities (one tap of weight 1: N and C of an NCHW resize):
 * its two innermost axes read one input plane, in blocks of output columns. An identity axis multiplies a sum
 * that is never -0 (it started from +0) by 1 and adds it to 0, an exact no-op, so skipping it loses nothing.
 * Returns false, having written nothing, for a row whose outer axes are not identities. */
static bool rz_row_f32(const rz_job *j, const rz_tap *const *cur, float *dst)
{
    const rz_params *p = j->p;
    int last = p->rank - 1;
    int64_t base = 0;
    for (int d = 0; d < last - 1; d++) {
        if (cur[d]->n != 1 || cur[d]->w[0] != 1.0)
            return false;
        base += cur[d]->off[0];
    }
    const rz_tap *th = cur[last - 1], *tw = j->taps[last];
    const float *x = (const float *)j->x + base;
    int64_t w = p->out_dims[last];
    for (int64_t ox0 = 0; ox0 < w; ox0 += RZ_BLOCK) {
        int64_t ox1 = w - ox0 < RZ_BLOCK ? w : ox0 + RZ_BLOCK;
        int64_t lo = tw[ox0].off[0], hi = tw[ox1 - 1].off[tw[ox1 - 1].n - 1]; /* the taps ascend (rz_taps_ascend) */
        if (hi - lo < RZ_SPAN)
            rz_block_f32(x, th, tw, ox0, ox1, lo, hi - lo + 1, dst);
        else
            rz_block_f32_direct(x, th, tw, ox0, ox1, dst);
    }
    return true;
}

/* Do the offsets of these taps never decrease, within a tap and from one tap to the next? Then a block of
 * outputs reads from its first tap's first offset to its last tap's last. Every coordinate map is increasing for
 * positive scales and clamping keeps that, but rz_row_f32 relies on it only after this check. */
static bool rz_taps_ascend(const rz_tap *t, int64_t n)
{
    for (int64_t x = 0; x < n; x++) {
        if (t[x].n < 1)
            return false;
        for (int m = 1; m < t[x].n; m++)
            if (t[x].off[m] < t[x].off[m - 1])
                return false;
        if (x > 0 && (t[x].off[0] < t[x - 1].off[0] || t[x].off[t[x].n - 1] < t[x - 1].off[t[x - 1].n - 1]))
            return false;
    }
    return true;
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
        if (j->row_f32 && rz_row_f32(j, cur, (float *)dst))
            continue;
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
    if ((x->dtype == REF_DT_UINT8 || x->dtype == REF_DT_INT8) && p->mode != RZ_NEAREST)
        return rz_run_q8(p, x, y, scratch, err);
    if (!fp && (p->mode != RZ_NEAREST || p->ctm == RZ_TF_CROP_AND_RESIZE))
        return ref_fail(err, REF_E_UNSUPPORTED, "%s input supports nearest mode only", ref_dtype_name(x->dtype));
    if (ref_tensor_numel(y) == 0)
        return REF_OK;
    rz_job j = {.p = p, .x = x->data, .y = y->data, .dtype = x->dtype, .es = ref_dtype_size(x->dtype),
              .row_f32 = x->dtype == REF_DT_FLOAT && p->rank >= 2 && p->ctm != RZ_TF_CROP_AND_RESIZE};
    int64_t strides[REF_MAX_RANK];
    ref_contiguous_strides(x, strides);
    rz_tap *t = scratch;
    for (int d = 0; d < p->rank; d++) {
        j.taps[d] = t;
        rz_axis_taps(p, d, strides[d], t);
        t += p->out_dims[d];
    }
    int64_t rows = ref_dims_prod(p->out_dims, 0, p->rank - 1), w = p->out_dims[p->rank - 1];
    j.row_f32 = j.row_f32 && rz_taps_ascend(j.taps[p->rank - 1], w);
    int64_t per_elem = p->mode == RZ_NEAREST ? 1 : p->mode == RZ_LINEAR ? 4 : 16;
    int64_t grain = 16384 / (w * per_elem) + 1;
    ref_parallel_for(pool, rows, grain, rz_task, &j);
    return REF_OK;
}
