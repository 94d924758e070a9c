/* pool.c: operator family "pool": MaxPool (with Indices), AveragePool, LpPool and their Global forms over
 * 1-D to 3-D spatial dims. It must never allocate at run time, and padded positions are never read: every
 * window is clipped to the input before the loop. */
#include <math.h>
#include <string.h>

#include "op.h"
#include "reduce_elem.h"

typedef enum { PK_MAX, PK_AVG, PK_LP } pool_kind;

/* A windowed pool seen in 3-D: 1-D and 2-D inputs get leading unit spatial dims (kernel 1, stride 1,
 * no pads), which changes neither values nor flattened indices. */
typedef struct pool_geom {
    int nsp;        /* real spatial dims, 1..3 */
    int64_t planes; /* N*C */
    int64_t in[3], out[3], k[3], s[3], d[3], pb[3], pe[3];
} pool_geom;

/* ================================================================================================
 * Geometry: kernel, strides, dilations, pads and auto_pad into output sizes.
 * ============================================================================================== */

/* Reads an INTS attribute of exactly n entries into out (default dflt when absent). */
static int pool_ints(ref_op_ctx *c, const char *name, int n, int64_t dflt, int64_t *out)
{
    const int64_t *v = NULL;
    size_t cnt = ref_attr_ints(c->node, name, &v);
    if (cnt == 0) {
        for (int i = 0; i < n; i++)
            out[i] = dflt;
        return REF_OK;
    }
    if (cnt != (size_t)n)
        return ref_fail(c->err, REF_E_SHAPE, "%s has %zu entries, expected %d", name, cnt, n);
    for (int i = 0; i < n; i++)
        out[i] = v[i];
    return REF_OK;
}

/* Output size of one spatial dim; fills pb/pe for auto_pad modes. */
static int pool_out_dim(ref_op_ctx *c, pool_geom *g, int j, const char *auto_pad, bool ceil_mode)
{
    bool ovf = false;
    int64_t in = g->in[j], s = g->s[j], eff = ref_i64_add(ref_i64_mul(g->k[j] - 1, g->d[j], &ovf), 1, &ovf);
    int r = j - (3 - g->nsp); /* the dim as the model counts them */
    if (ovf)
        return ref_fail(c->err, REF_E_RANGE, "spatial dim %d: kernel %lld and dilation %lld overflow 64 bits", r,
                        (long long)g->k[j], (long long)g->d[j]);
    if (!strcmp(auto_pad, "SAME_UPPER") || !strcmp(auto_pad, "SAME_LOWER")) {
        int64_t out = in / s + (in % s != 0);
        int64_t total = ref_i64_sub(ref_i64_add(ref_i64_mul(out - 1, s, &ovf), eff, &ovf), in, &ovf);
        if (ovf)
            return ref_fail(c->err, REF_E_RANGE, "spatial dim %d: kernel %lld, dilation %lld and stride %lld overflow "
                            "64 bits", r, (long long)g->k[j], (long long)g->d[j], (long long)s);
        if (total < 0)
            total = 0;
        g->pb[j] = auto_pad[5] == 'U' ? total / 2 : total - total / 2;
        g->pe[j] = total - g->pb[j];
        g->out[j] = out;
        return REF_OK;
    }
    if (!strcmp(auto_pad, "VALID"))
        g->pb[j] = g->pe[j] = 0;
    else if (strcmp(auto_pad, "NOTSET"))
        return ref_fail(c->err, REF_E_UNSUPPORTED, "auto_pad '%s' is not supported", auto_pad);
    int64_t padded = ref_i64_add(ref_i64_add(in, g->pb[j], &ovf), g->pe[j], &ovf);
    if (ovf)
        return ref_fail(c->err, REF_E_RANGE, "spatial dim %d: pads %lld/%lld overflow 64 bits", r,
                        (long long)g->pb[j], (long long)g->pe[j]);
    int64_t span = padded - eff; /* both non-negative: no overflow */
    if (span < 0)
        return ref_fail(c->err, REF_E_SHAPE, "window of %lld (kernel %lld, dilation %lld) exceeds padded input %lld",
                        (long long)eff, (long long)g->k[j], (long long)g->d[j], (long long)padded);
    int64_t out = (ceil_mode ? span / s + (span % s != 0) : span / s) + 1;
    /* the last window must start inside the input or the leading pad (PyTorch's and ONNX's rule):
     * (out - 1) * s >= in + pb, compared as a quotient so that nothing overflows */
    int64_t lead = in + g->pb[j];
    if (ceil_mode && out - 1 >= lead / s + (lead % s != 0))
        out--;
    g->out[j] = out;
    return REF_OK;
}

static int pool_geometry(ref_op_ctx *c, pool_geom *g)
{
    const ref_tensor *x = c->in[0];
    int nsp = x->rank - 2;
    if (nsp < 1 || nsp > 3)
        return ref_fail(c->err, nsp < 1 ? REF_E_SHAPE : REF_E_UNSUPPORTED,
                        "input rank %d: expected N, C and 1 to 3 spatial dims", (int)x->rank);
    int64_t k[3], s[3], d[3], pads[6];
    const int64_t *kv = NULL;
    if (ref_attr_ints(c->node, "kernel_shape", &kv) == 0)
        return ref_fail(c->err, REF_E_INVALID, "kernel_shape is required");
    int rc = pool_ints(c, "kernel_shape", nsp, 1, k);
    if (!rc)
        rc = pool_ints(c, "strides", nsp, 1, s);
    if (!rc)
        rc = pool_ints(c, "dilations", nsp, 1, d);
    if (!rc)
        rc = pool_ints(c, "pads", 2 * nsp, 0, pads);
    if (rc)
        return rc;
    memset(g, 0, sizeof *g);
    g->nsp = nsp;
    g->planes = x->dims[0] * x->dims[1];
    int off = 3 - nsp;
    for (int j = 0; j < 3; j++) {
        g->in[j] = g->out[j] = g->k[j] = g->s[j] = g->d[j] = 1;
        if (j < off)
            continue;
        int r = j - off;
        if (k[r] < 1 || s[r] < 1 || d[r] < 1 || pads[r] < 0 || pads[r + nsp] < 0)
            return ref_fail(c->err, REF_E_SHAPE, "spatial dim %d: kernel %lld, stride %lld, dilation %lld, "
                            "pads %lld/%lld must be positive (pads non-negative)", r, (long long)k[r],
                            (long long)s[r], (long long)d[r], (long long)pads[r], (long long)pads[r + nsp]);
        g->in[j] = x->dims[2 + r];
        g->k[j] = k[r];
        g->s[j] = s[r];
        g->d[j] = d[r];
        g->pb[j] = pads[r];
        g->pe[j] = pads[r + nsp];
    }
    const char *auto_pad = ref_attr_str_or(c->node, "auto_pad", "NOTSET");
    bool ceil_mode = ref_attr_int_or(c->node, "ceil_mode", 0) != 0;
    for (int j = off; j < 3; j++)
        if ((rc = pool_out_dim(c, g, j, auto_pad, ceil_mode)))
            return rc;
    return REF_OK;
}

static pool_kind pool_kind_of(const char *op_type)
{
    if (strstr(op_type, "MaxPool"))
        return PK_MAX;
    return strstr(op_type, "LpPool") ? PK_LP : PK_AVG;
}

static int pool_check_input(ref_op_ctx *c, pool_kind kind)
{
    static const int max_types[] = {REF_DT_FLOAT, REF_DT_DOUBLE, REF_DT_INT8, REF_DT_UINT8};
    int rc = ref_op_want_dtype(c, 0, kind == PK_MAX ? 4 : 2, max_types);
    if (rc)
        return rc;
    if (c->n_out < 1 || !c->out[0])
        return ref_fail(c->err, REF_E_INVALID, "output 0 is required");
    if (c->in[0]->rank < 2)
        return ref_fail(c->err, REF_E_SHAPE, "input rank %d: expected at least N and C", (int)c->in[0]->rank);
    return REF_OK;
}

static int pool_infer(ref_op_ctx *c)
{
    pool_kind kind = pool_kind_of(c->node->op_type);
    int rc = pool_check_input(c, kind);
    if (rc)
        return rc;
    pool_geom g;
    if ((rc = pool_geometry(c, &g)))
        return rc;
    const ref_tensor *x = c->in[0];
    ref_tensor *y = c->out[0];
    y->dtype = x->dtype;
    y->rank = x->rank;
    y->dims[0] = x->dims[0];
    y->dims[1] = x->dims[1];
    for (int r = 0; r < g.nsp; r++)
        y->dims[2 + r] = g.out[3 - g.nsp + r];
    if (ref_elem_out_present(c, 1)) {
        if (kind != PK_MAX)
            return ref_fail(c->err, REF_E_INVALID, "only MaxPool has a second output");
        int64_t so = ref_attr_int_or(c->node, "storage_order", 0);
        if (so != 0 && so != 1)
            return ref_fail(c->err, REF_E_INVALID, "storage_order %lld: expected 0 or 1", (long long)so);
        c->out[1]->dtype = REF_DT_INT64;
        ref_tensor_set_shape(c->out[1], y->rank, y->dims);
    }
    return REF_OK;
}

/* ================================================================================================
 * Windowed kernel.
 * ============================================================================================== */

typedef struct pool_task {
    const pool_geom *g;
    pool_kind kind;
    const void *x;
    void *y;
    int64_t *idx;  /* MaxPool Indices, or NULL */
    int dt;
    bool include_pad, col_major;
    double p;      /* LpPool order */
} pool_task;

/* Taps [*k0, *k1) of a window starting at `start` (in input coordinates) that land in [lo, hi). */
static inline void pool_taps(int64_t start, int64_t k, int64_t d, int64_t lo, int64_t hi, int64_t *k0, int64_t *k1)
{
    int64_t a, b;
    if (d == 1) { /* the common case, without the divisions */
        a = start >= lo ? 0 : lo - start;
        b = hi - start;
    } else {
        a = start >= lo ? 0 : (lo - start + d - 1) / d;
        b = start >= hi ? 0 : (hi - 1 - start) / d + 1;
    }
    *k0 = a;
    *k1 = b < k ? b : k;
    if (*k1 < *k0)
        *k1 = *k0;
}

/* One window along spatial dim j for output position o: first input coordinate, the taps inside the
 * input, and how many taps the average divides by. */
typedef struct pool_win {
    int64_t st, k0, k1, count;
} pool_win;

static inline pool_win pool_win_of(const pool_task *t, int j, int64_t o)
{
    const pool_geom *g = t->g;
    pool_win w;
    w.st = o * g->s[j] - g->pb[j];
    pool_taps(w.st, g->k[j], g->d[j], 0, g->in[j], &w.k0, &w.k1);
    w.count = w.k1 - w.k0;
    if (t->include_pad) {
        int64_t p0, p1;
        pool_taps(w.st, g->k[j], g->d[j], -g->pb[j], g->in[j] + g->pe[j], &p0, &p1);
        w.count = p1 - p0;
    }
    return w;
}

/* One output. Always inlined so that, called with a constant dt and kind, the per-element dtype switch
 * and the kind branches fold away. */
REF_ELEM_INLINE void pool_one(const pool_task *t, int64_t plane, const pool_win *w,
                                                           int64_t yi, const int dt, const pool_kind kind)
{
    const pool_geom *g = t->g;
    int64_t plane_elems = g->in[0] * g->in[1] * g->in[2];
    int64_t xbase = plane * plane_elems, b0 = -1, b1 = 0, b2 = 0;
    double acc = kind == PK_MAX ? -INFINITY : 0.0;
    for (int64_t a = w[0].k0; a < w[0].k1; a++) {
        int64_t i0 = w[0].st + a * g->d[0];
        for (int64_t b = w[1].k0; b < w[1].k1; b++) {
            int64_t i1 = w[1].st + b * g->d[1];
            int64_t row = xbase + (i0 * g->in[1] + i1) * g->in[2];
            for (int64_t e = w[2].k0; e < w[2].k1; e++) {
                int64_t i2 = w[2].st + e * g->d[2];
                double v = ref_elem_ld(t->x, dt, row + i2);
                if (kind == PK_MAX) {
                    if (v > acc || b0 < 0) {
                        acc = v;
                        b0 = i0, b1 = i1, b2 = i2;
                    }
                } else if (kind == PK_AVG) {
                    acc += v;
                } else {
                    acc += pow(fabs(v), t->p);
                }
            }
        }
    }
    if (kind == PK_AVG) {
        int64_t divisor = w[0].count * w[1].count * w[2].count;
        acc = divisor > 0 ? acc / (double)divisor : 0.0;
    } else if (kind == PK_LP) {
        acc = pow(acc, 1.0 / t->p);
    }
    ref_elem_st(t->y, dt, yi, acc);
    if (t->idx) {
        int64_t best = t->col_major ? b0 + b1 * g->in[0] + b2 * g->in[0] * g->in[1]
                                    : (b0 * g->in[1] + b1) * g->in[2] + b2;
        t->idx[yi] = b0 < 0 ? -1 : plane * plane_elems + best;
    }
}

/* MaxPool on floats without Indices, the common case (every CNN stem): float compares and no index bookkeeping, with
 * pool_one's result (the first tap, then any greater one: a NaN first stays, a NaN later is passed over). */
static inline void maxpool_one_f32(const pool_task *t, int64_t plane, const pool_win *w, int64_t yi)
{
    const pool_geom *g = t->g;
    const float *xp = (const float *)t->x + plane * g->in[0] * g->in[1] * g->in[2];
    float acc = -INFINITY;
    bool first = true;
    for (int64_t a = w[0].k0; a < w[0].k1; a++)
        for (int64_t b = w[1].k0; b < w[1].k1; b++) {
            const float *row = xp + ((w[0].st + a * g->d[0]) * g->in[1] + w[1].st + b * g->d[1]) * g->in[2];
            for (int64_t e = w[2].k0; e < w[2].k1; e++) {
                float v = row[w[2].st + e * g->d[2]];
                acc = first || v > acc ? v : acc;
                first = false;
            }
        }
    ((float *)t->y)[yi] = acc;
}

/* Outputs [begin, end) in order, a row of the last spatial dim at a time so the outer windows are
 * computed once per row. fast: float MaxPool without Indices (maxpool_one_f32). */
REF_ELEM_INLINE void pool_range(const pool_task *t, int64_t begin, int64_t end,
                                                             const int dt, const pool_kind kind, const bool fast)
{
    const pool_geom *g = t->g;
    int64_t per_plane = g->out[0] * g->out[1] * g->out[2];
    int64_t plane = begin / per_plane, r = begin % per_plane;
    int64_t o2 = r % g->out[2], o1 = r / g->out[2] % g->out[1], o0 = r / g->out[2] / g->out[1];
    for (int64_t yi = begin; yi < end;) {
        pool_win w[3];
        w[0] = pool_win_of(t, 0, o0);
        w[1] = pool_win_of(t, 1, o1);
        int64_t row_end = yi + (g->out[2] - o2) < end ? yi + (g->out[2] - o2) : end;
        for (; yi < row_end; yi++, o2++) {
            w[2] = pool_win_of(t, 2, o2);
            if (fast)
                maxpool_one_f32(t, plane, w, yi);
            else
                pool_one(t, plane, w, yi, dt, kind);
        }
        o2 = 0;
        if (++o1 == g->out[1]) {
            o1 = 0;
            if (++o0 == g->out[0]) {
                o0 = 0;
                plane++;
            }
        }
    }
}

static void pool_task_fn(void *arg, int64_t begin, int64_t end, int tid)
{
    (void)tid;
    const pool_task *t = arg;
    if (t->dt == REF_DT_FLOAT && t->kind == PK_MAX && !t->idx)
        pool_range(t, begin, end, REF_DT_FLOAT, PK_MAX, true);
    else if (t->dt == REF_DT_FLOAT && t->kind == PK_MAX)
        pool_range(t, begin, end, REF_DT_FLOAT, PK_MAX, false);
    else if (t->dt == REF_DT_FLOAT && t->kind == PK_AVG)
        pool_range(t, begin, end, REF_DT_FLOAT, PK_AVG, false);
    else
        pool_range(t, begin, end, t->dt, t->kind, false);
}

static int pool_run(ref_op_ctx *c)
{
    pool_geom g;
    int rc = pool_geometry(c, &g);
    if (rc)
        return rc;
    pool_task t = {.g = &g, .kind = pool_kind_of(c->node->op_type), .x = c->in[0]->data,
                   .y = c->out[0]->data, .dt = c->in[0]->dtype};
    t.idx = ref_elem_out_present(c, 1) ? c->out[1]->data : NULL;
    t.include_pad = ref_attr_int_or(c->node, "count_include_pad", 0) != 0;
    t.col_major = ref_attr_int_or(c->node, "storage_order", 0) == 1;
    t.p = t.kind == PK_LP ? (double)ref_attr_float_or(c->node, "p", 2.0f) /* a float before opset 2 */ : 1.0;
    int64_t n = g.planes * g.out[0] * g.out[1] * g.out[2];
    ref_parallel_for(c->pool, n, ref_elem_grain(g.k[0] * g.k[1] * g.k[2]), pool_task_fn, &t);
    return REF_OK;
}

/* ================================================================================================
 * Global pools: one value per (n, c) plane over every spatial position.
 * ============================================================================================== */

static int gpool_infer(ref_op_ctx *c)
{
    pool_kind kind = pool_kind_of(c->node->op_type);
    int rc = pool_check_input(c, kind);
    if (rc)
        return rc;
    const ref_tensor *x = c->in[0];
    ref_tensor *y = c->out[0];
    y->dtype = x->dtype;
    ref_tensor_set_shape(y, x->rank, x->dims);
    for (int r = 2; r < x->rank; r++)
        y->dims[r] = 1;
    return REF_OK;
}

typedef struct gpool_task {
    const void *x;
    void *y;
    int dt;
    pool_kind kind;
    int64_t plane_elems;
    double p;
} gpool_task;

/* A float plane's sum in double over eight partial sums: one running sum waits on each add's latency (a 1280x7x7
 * average pool took 60 us), eight let the adds overlap; the order moves only double rounding, far below float's. */
static double sum_f32(const float *x, int64_t n)
{
    double s[8] = {0, 0, 0, 0, 0, 0, 0, 0}, tail = 0;
    int64_t i = 0;
    for (; i + 8 <= n; i += 8)
        for (int k = 0; k < 8; k++)
            s[k] += x[i + k];
    for (; i < n; i++)
        tail += x[i];
    return ((s[0] + s[1]) + (s[2] + s[3])) + ((s[4] + s[5]) + (s[6] + s[7])) + tail;
}

REF_ELEM_INLINE void gpool_plane(const gpool_task *t, int64_t pl, const int dt)
{
    int64_t base = pl * t->plane_elems;
    if (dt == REF_DT_FLOAT && t->kind == PK_AVG) {
        double sum = sum_f32((const float *)t->x + base, t->plane_elems);
        ref_elem_st(t->y, dt, pl, t->plane_elems ? sum / (double)t->plane_elems : NAN);
        return;
    }
    double acc = t->kind == PK_MAX ? -INFINITY : 0.0;
    for (int64_t i = 0; i < t->plane_elems; i++) {
        double v = ref_elem_ld(t->x, dt, base + i);
        if (t->kind == PK_MAX)
            acc = v > acc || i == 0 ? v : acc;
        else if (t->kind == PK_AVG)
            acc += v;
        else
            acc += pow(fabs(v), t->p);
    }
    if (t->kind == PK_AVG)
        acc = t->plane_elems ? acc / (double)t->plane_elems : NAN;
    else if (t->kind == PK_LP)
        acc = pow(acc, 1.0 / t->p);
    ref_elem_st(t->y, dt, pl, acc);
}

static void gpool_task_fn(void *arg, int64_t begin, int64_t end, int tid)
{
    (void)tid;
    const gpool_task *t = arg;
    for (int64_t pl = begin; pl < end; pl++) {
        if (t->dt == REF_DT_FLOAT)
            gpool_plane(t, pl, REF_DT_FLOAT);
        else
            gpool_plane(t, pl, t->dt);
    }
}

static int gpool_run(ref_op_ctx *c)
{
    const ref_tensor *x = c->in[0];
    gpool_task t = {.x = x->data, .y = c->out[0]->data, .dt = x->dtype,
                    .kind = pool_kind_of(c->node->op_type), .plane_elems = ref_dims_prod(x->dims, 2, x->rank)};
    t.p = t.kind == PK_LP ? (double)ref_attr_float_or(c->node, "p", 2.0f) /* a float before opset 2 */ : 1.0;
    ref_parallel_for(c->pool, x->dims[0] * x->dims[1], ref_elem_grain(t.plane_elems), gpool_task_fn, &t);
    return REF_OK;
}

const ref_op ref_ops_pool[] = {
    {.name = "MaxPool", .infer = pool_infer, .run = pool_run},
    {.name = "AveragePool", .infer = pool_infer, .run = pool_run},
    {.name = "LpPool", .infer = pool_infer, .run = pool_run},
    {.name = "GlobalMaxPool", .infer = gpool_infer, .run = gpool_run},
    {.name = "GlobalAveragePool", .infer = gpool_infer, .run = gpool_run},
    {.name = "GlobalLpPool", .infer = gpool_infer, .run = gpool_run},
    {.name = NULL},
};
