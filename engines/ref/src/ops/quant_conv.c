/* quant_conv.c: ConvInteger (int32 sums of zero-point-shifted 8-bit products) and QLinearConv (the same sums
 * requantized: y = saturate(round((sum + B) * x_scale * w_scale / y_scale) + y_zero_point)): im2col of int16
 * columns in chunks, then the integer GEMM (qgemm.h); where the CPU has VNNI and W is constant, quant_conv8.c's
 * 8-bit path instead, and depthwise ConvInteger quant_dw.c's. It must never read X outside its padded bounds:
 * padding reads as the zero point. */
#include <string.h>

#include "../alloc.h"
#include "conv_ops.h"
#include "qgemm.h"
#include "qgemm8.h"
#include "quant.h"
#include "quant_conv8.h"
#include "quant_dw.h"
#include "quant_kernels.h"
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

/* One run's view: the input image of batch n, group grp, as columns p0 .. p0+pn of the im2col matrix, each k pair
 * of a column side by side (qgemm.h's b layout), 8-bit values less x's zero point; padding is 0 (it reads as the
 * zero point). */
typedef struct {
    const ref_conv_geom *g;
    const void *x;
    bool x_signed;
    int xz;
    int64_t n, grp, p0, pn, K, Kp;
    int16_t *cols;
} qcols_job;

/* Column row k = 2kp + h (input channel ci, tap) over columns p0 .. p0+pn, into the panels (qgemm.h). */
static void qcols_row(const qcols_job *j, int64_t ci, int64_t tap, int64_t kp, int h)
{
    int16_t *cols = j->cols + h;
    const ref_conv_geom *g = j->g;
    int64_t kx = tap % g->k[2], ky = tap / g->k[2] % g->k[1], kz = tap / (g->k[2] * g->k[1]);
    int64_t ox = j->p0 % g->out[2], oy = j->p0 / g->out[2] % g->out[1], oz = j->p0 / (g->out[2] * g->out[1]);
    int64_t base = (j->n * g->cin + j->grp * g->cin_g + ci) * g->in_size;
    const uint8_t *xu = (const uint8_t *)j->x + base;
    const int8_t *xs = (const int8_t *)j->x + base;
    for (int64_t q = 0; q < j->pn;) {
        int64_t iz = oz * g->stride[0] - g->pad_lo[0] + kz * g->dil[0];
        int64_t iy = oy * g->stride[1] - g->pad_lo[1] + ky * g->dil[1];
        bool row_in = iz >= 0 && iz < g->in[0] && iy >= 0 && iy < g->in[1];
        int64_t off = (iz * g->in[1] + iy) * g->in[2], run = g->out[2] - ox < j->pn - q ? g->out[2] - ox : j->pn - q;
        /* The columns of this output row whose ix is inside the input: [lo, hi) of the run, the rest padding. */
        int64_t s = g->stride[2], c0 = kx * g->dil[2] - g->pad_lo[2], lo = 0, hi = row_in ? run : 0;
        while (lo < hi && (ox + lo) * s + c0 < 0)
            lo++;
        while (hi > lo && (ox + hi - 1) * s + c0 >= g->in[2])
            hi--;
#define DST(r) cols[ref_qgemm_b_at(j->Kp, kp, q + (r))]
        for (int64_t r = 0; r < lo; r++)
            DST(r) = 0;
        const int64_t at = off + ox * s + c0;
        if (j->x_signed)
            for (int64_t r = lo; r < hi; r++)
                DST(r) = (int16_t)(xs[at + r * s] - j->xz);
        else
            for (int64_t r = lo; r < hi; r++)
                DST(r) = (int16_t)(xu[at + r * s] - j->xz);
        for (int64_t r = hi > lo ? hi : lo; r < run; r++)
            DST(r) = 0;
#undef DST
        q += run;
        ox = 0;
        if (++oy == g->out[1]) {
            oy = 0;
            oz++;
        }
    }
}

static void qcols_task(void *arg, int64_t begin, int64_t end, int tid)
{
    (void)tid;
    const qcols_job *j = arg;
    for (int64_t kp = begin; kp < end; kp++)
        for (int h = 0; h < 2; h++) {
            int64_t k = 2 * kp + h, q = 0;
            if (k < j->K) {
                qcols_row(j, k / j->g->k_size, k % j->g->k_size, kp, h);
                q = j->pn;
            }
            for (; q < (j->pn + 15) / 16 * 16; q++) /* the last panel's padding too: the GEMM reads whole panels */
                j->cols[ref_qgemm_b_at(j->Kp, kp, q) + h] = 0;
        }
}

/* Scratch: the columns of one chunk, the group's packed weights, and (QLinearConv) the chunk's int32 sums. */
typedef struct {
    int64_t K, Kp, P, pn;
    size_t cols_bytes, w_bytes, acc_bytes;
} qconv_plan;

static void qconv_plan_of(const ref_conv_geom *g, bool requant, qconv_plan *q)
{
    q->K = g->cin_g * g->k_size;
    q->Kp = (q->K + 1) / 2;
    q->P = g->out_size;
    int64_t pn = ((int64_t)1 << 20) / (q->Kp > 0 ? q->Kp : 1); /* columns of about 4 MiB */
    pn = pn < 64 ? 64 : pn;
    q->pn = pn < q->P ? pn : q->P;
    q->cols_bytes = (size_t)(ref_qgemm_b_elems(q->Kp, q->pn) * 2 + 64) / 64 * 64;
    q->w_bytes = (size_t)(g->cout_g * q->Kp * 4 + 64) / 64 * 64;
    q->acc_bytes = requant ? (size_t)(g->cout_g * q->pn * 4 + 64) / 64 * 64 : 0;
}

typedef ref_qconv_in qconv_in;

static void pack_w(const ref_conv_geom *g, const qconv_in *q, int64_t grp, const qconv_plan *qp, int32_t *wp)
{
    bool s = q->w->dtype == REF_DT_INT8;
    for (int64_t cl = 0; cl < g->cout_g; cl++) {
        int64_t co = grp * g->cout_g + cl;
        int wz = (int)ref_quant_at(q->wz, co);
        for (int64_t kp = 0; kp < qp->Kp; kp++) {
            int v[2];
            for (int h = 0; h < 2; h++) {
                int64_t k = 2 * kp + h, at = co * qp->K + k;
                v[h] = k < qp->K ? (s ? ((const int8_t *)q->w->data)[at] : ((const uint8_t *)q->w->data)[at]) - wz : 0;
            }
            wp[cl * qp->Kp + kp] = ref_qgemm_pair(v[0], v[1]);
        }
    }
}

/* Constant weights packed once at compile, every group's rows one after another: int8 rows for the VNNI GEMM where
 * the CPU has it (w8), int16 pairs for ref_qgemm otherwise (wp). */
typedef struct {
    int32_t *wp;
    ref_qconv8_w *w8;
    size_t bytes;
} qconv_state;

void ref_qconv_state_free(void *s)
{
    if (s) {
        ref_free(((qconv_state *)s)->wp);
        ref_qconv8_w_free(((qconv_state *)s)->w8);
    }
    ref_free(s);
}

size_t ref_qconv_state_bytes(const void *s)
{
    const qconv_state *st = s;
    return st ? st->bytes + (st->w8 ? st->w8->bytes : 0) : 0;
}

static bool qconv_is_depthwise(const ref_conv_geom *g);

static int qconv_prepare(ref_op_ctx *c, int wi, int zi, void **state)
{
    const ref_tensor *x = c->in[0], *w = c->n_in > wi ? c->in[wi] : NULL, *wz = c->n_in > zi ? c->in[zi] : NULL;
    ref_conv_geom g;
    if (!w || !w->data || (wz && !wz->data) || qgeom(c, x, w, NULL, &g))
        return REF_OK; /* packed per run; a bad geometry fails in run with its message */
    if (qconv_is_depthwise(&g) || (wi == 1 && ref_qdw_float_ok(&g)))
        return REF_OK; /* the depthwise kernels read W as it is */
    qconv_plan qp;
    qconv_plan_of(&g, false, &qp);
    qconv_state *s = ref_calloc(1, sizeof *s);
    if (s && ref_qgemm8_fast()) {
        qconv_in q8 = {.w = w, .wz = wz};
        if (ref_qconv8_w_new(&g, &q8, &s->w8)) {
            ref_qconv_state_free(s);
            return ref_fail(c->err, REF_E_NOMEM, "%s: out of memory packing W", c->node->op_type);
        }
        *state = s;
        return REF_OK;
    }
    if (s) {
        s->bytes = (size_t)(g.cout * qp.Kp * 4);
        s->wp = ref_aligned_alloc(s->bytes + 4);
    }
    if (!s || !s->wp) {
        ref_qconv_state_free(s);
        return ref_fail(c->err, REF_E_NOMEM, "%s: out of memory packing W", c->node->op_type);
    }
    qconv_in q = {.w = w, .wz = wz};
    for (int64_t grp = 0; grp < g.group; grp++)
        pack_w(&g, &q, grp, &qp, s->wp + grp * g.cout_g * qp.Kp);
    *state = s;
    return REF_OK;
}

int ref_conv_integer_prepare(ref_op_ctx *c, void **state) { return qconv_prepare(c, 1, 3, state); }

int ref_qlinear_conv_prepare(ref_op_ctx *c, void **state) { return qconv_prepare(c, 3, 5, state); }

/* Depthwise (one input and one output channel per group, 1-D or 2-D): each plane summed tap by tap into int32 over
 * the in-bounds run of each output row, no columns built; the same exact sums as the GEMM path. */
static bool qconv_is_depthwise(const ref_conv_geom *g)
{
    return g->cin_g == 1 && g->cout_g == 1 && g->k[0] == 1 && g->in[0] == 1 && g->out[0] == 1;
}

typedef struct {
    const ref_conv_geom *g;
    const qconv_in *q;
    ref_tensor *y;
    int32_t *acc; /* out_size int32 per thread */
    double xs, ys;
} qdw_job;

/* a[ox] += wt * (x[ox * s] - xz) over [lo, hi): integer sums, so the vectorized AVX2 clone gives the same bytes. */
#define QDW_ROW(name, T)                                                                                         \
    __attribute__((target_clones("avx2", "default"), optimize("tree-vectorize"))) static void name(             \
        int32_t *a, const T *x, int64_t lo, int64_t hi, int64_t s, int wt, int xz)                              \
    {                                                                                                            \
        if (s == 1)                                                                                              \
            for (int64_t ox = lo; ox < hi; ox++)                                                                 \
                a[ox] += wt * (x[ox] - xz);                                                                      \
        else                                                                                                     \
            for (int64_t ox = lo; ox < hi; ox++)                                                                 \
                a[ox] += wt * (x[ox * s] - xz);                                                                  \
    }
QDW_ROW(qdw_row_u8, uint8_t)
QDW_ROW(qdw_row_s8, int8_t)

static void qdw_plane(const qdw_job *j, int64_t t, int32_t *acc)
{
    const ref_conv_geom *g = j->g;
    const qconv_in *q = j->q;
    int64_t n = t / g->cout, co = t % g->cout, ow = g->out[2];
    bool xsg = q->x->dtype == REF_DT_INT8, wsg = q->w->dtype == REF_DT_INT8;
    int xz = (int)ref_quant_at(q->xz, 0), wz = (int)ref_quant_at(q->wz, co);
    int64_t base = (n * g->cin + co) * g->in_size;
    for (int64_t i = 0; i < g->out_size; i++)
        acc[i] = 0;
    for (int64_t tap = 0; tap < g->k_size; tap++) {
        int64_t at = co * g->k_size + tap, ky = tap / g->k[2], kx = tap % g->k[2];
        int wt = (wsg ? ((const int8_t *)q->w->data)[at] : ((const uint8_t *)q->w->data)[at]) - wz;
        int64_t s = g->stride[2], c0 = kx * g->dil[2] - g->pad_lo[2];
        int64_t lo = 0, hi = ow;
        while (lo < hi && lo * s + c0 < 0)
            lo++;
        while (hi > lo && (hi - 1) * s + c0 >= g->in[2])
            hi--;
        for (int64_t oy = 0; wt && oy < g->out[1]; oy++) {
            int64_t iy = oy * g->stride[1] - g->pad_lo[1] + ky * g->dil[1];
            if (iy < 0 || iy >= g->in[1])
                continue;
            int32_t *a = acc + oy * ow;
            int64_t r = base + iy * g->in[2] + c0;
            if (xsg)
                qdw_row_s8(a, (const int8_t *)q->x->data + r, lo, hi, s, wt, xz);
            else
                qdw_row_u8(a, (const uint8_t *)q->x->data + r, lo, hi, s, wt, xz);
        }
    }
    int64_t row0 = t * g->out_size;
    if (!q->ys) {
        memcpy((int32_t *)j->y->data + row0, acc, (size_t)g->out_size * sizeof *acc);
        return;
    }
    double m = j->xs * ref_quant_at(q->ws, co) / j->ys;
    int64_t b = q->b ? ref_elem_ldi(q->b->data, q->b->dtype, co) : 0;
    ref_requant_i32_8(acc, g->out_size, b, m, q->yz, j->y->dtype == REF_DT_INT8, (uint8_t *)j->y->data + row0);
}

static void qdw_task(void *arg, int64_t begin, int64_t end, int tid)
{
    const qdw_job *j = arg;
    for (int64_t t = begin; t < end; t++)
        qdw_plane(j, t, j->acc + (int64_t)tid * ((j->g->out_size + 15) / 16 * 16));
}

static size_t qdw_scratch(const ref_conv_geom *g, int threads)
{
    return (size_t)((g->out_size + 15) / 16 * 16) * 4 * (size_t)(threads > 0 ? threads : 1) + 64;
}

/* Every (batch, group, column chunk): im2col, the integer GEMM, then int32 out or requantized. */
static int qconv_run(ref_op_ctx *c, const ref_conv_geom *g, const qconv_in *q, ref_tensor *y)
{
    if (!q->ys && ref_qdw_float_ok(g))
        return ref_qdw_float_run(c, g, q, y);
    if (qconv_is_depthwise(g)) {
        if (c->scratch_bytes < qdw_scratch(g, c->n_threads))
            return ref_fail(c->err, REF_E_STATE, "%s: scratch too small", c->node->op_type);
        qdw_job d = {.g = g, .q = q, .y = y, .acc = c->scratch, .xs = q->ys ? ref_quant_at(q->xs, 0) : 0,
                     .ys = q->ys ? ref_quant_at(q->ys, 0) : 1};
        double plane_ops = 2.0 * (double)g->out_size * (double)g->k_size;
        int64_t grain = plane_ops >= REF_POOL_SHARE_FLOPS ? 1 : (int64_t)(REF_POOL_SHARE_FLOPS / plane_ops) + 1;
        ref_parallel_for(c->pool, g->batch * g->cout, grain, qdw_task, &d);
        return REF_OK;
    }
    qconv_plan qp;
    qconv_plan_of(g, q->ys != NULL, &qp);
    const qconv_state *st = c->state;
    if (qp.Kp > REF_QGEMM_MAX_KP)
        return ref_fail(c->err, REF_E_UNSUPPORTED, "%s: %lld products per output could overflow int32",
                        c->node->op_type, (long long)qp.K);
    if (st && st->w8)
        return ref_qconv8_run(c, g, q, st->w8, y);
    if (c->scratch_bytes < qp.cols_bytes + qp.w_bytes + qp.acc_bytes)
        return ref_fail(c->err, REF_E_STATE, "%s: scratch too small", c->node->op_type);
    int16_t *cols = c->scratch;
    int32_t *wp = (int32_t *)((char *)c->scratch + qp.cols_bytes);
    int32_t *acc = (int32_t *)((char *)c->scratch + qp.cols_bytes + qp.w_bytes);
    qcols_job j = {.g = g, .x = q->x->data, .x_signed = q->x->dtype == REF_DT_INT8, .xz = (int)ref_quant_at(q->xz, 0),
                   .K = qp.K, .Kp = qp.Kp, .cols = cols};
    double xs = q->ys ? ref_quant_at(q->xs, 0) : 0, ys = q->ys ? ref_quant_at(q->ys, 0) : 1;
    for (int64_t grp = 0; grp < g->group; grp++) {
        if (st)
            wp = st->wp + grp * g->cout_g * qp.Kp;
        else
            pack_w(g, q, grp, &qp, wp);
        for (int64_t n = 0; n < g->batch; n++)
            for (int64_t p0 = 0; p0 < qp.P; p0 += qp.pn) {
                j.n = n, j.grp = grp, j.p0 = p0, j.pn = qp.P - p0 < qp.pn ? qp.P - p0 : qp.pn;
                ref_parallel_for(c->pool, qp.Kp, (int64_t)(65536 / (j.pn + 1)) + 1, qcols_task, &j);
                int64_t row0 = (n * g->cout + grp * g->cout_g) * qp.P + p0;
                if (!q->ys) {
                    ref_qgemm(g->cout_g, j.pn, qp.Kp, wp, cols, (int32_t *)y->data + row0, qp.P, c->pool);
                    continue;
                }
                ref_qgemm(g->cout_g, j.pn, qp.Kp, wp, cols, acc, j.pn, c->pool);
                for (int64_t cl = 0; cl < g->cout_g; cl++) {
                    int64_t co = grp * g->cout_g + cl;
                    double m = xs * ref_quant_at(q->ws, co) / ys; /* the order the spec's formula has */
                    int64_t b = q->b ? ref_elem_ldi(q->b->data, q->b->dtype, co) : 0;
                    ref_requant_i32_8(acc + cl * j.pn, j.pn, b, m, q->yz, y->dtype == REF_DT_INT8,
                                      (uint8_t *)y->data + row0 + cl * qp.P);
                }
            }
    }
    return REF_OK;
}

static size_t qconv_scratch(const ref_op_ctx *c, bool requant)
{
    ref_op_ctx cc = *c;
    ref_error e = {0};
    cc.err = &e;
    ref_conv_geom g;
    const ref_tensor *x = c->in[0], *w = c->n_in > (requant ? 3 : 1) ? c->in[requant ? 3 : 1] : NULL;
    if (qgeom(&cc, x, w, NULL, &g))
        return 0;
    if (!requant && ref_qdw_float_ok(&g))
        return ref_qdw_float_scratch_bytes(&g, c->n_threads);
    if (qconv_is_depthwise(&g))
        return qdw_scratch(&g, c->n_threads);
    qconv_plan qp;
    qconv_plan_of(&g, requant, &qp);
    size_t b16 = qp.cols_bytes + qp.w_bytes + qp.acc_bytes, b8 = 0;
    if (ref_qgemm8_fast()) /* whether W is packed for it is prepare's to say: room for either */
        b8 = ref_qconv8_scratch_bytes(&g, c->n_threads, requant);
    return b16 > b8 ? b16 : b8;
}

size_t ref_conv_integer_scratch_bytes(const ref_op_ctx *c) { return qconv_scratch(c, false); }

size_t ref_qlinear_conv_scratch_bytes(const ref_op_ctx *c) { return qconv_scratch(c, true); }

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
    return qconv_run(c, &g, &q, c->out[0]);
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
    qconv_in q = {.x = c->in[0], .w = c->in[3], .xz = c->in[2], .wz = c->in[5], .b = c->n_in > 8 ? c->in[8] : NULL,
                  .xs = c->in[1], .ws = c->in[4], .ys = c->in[6], .yz = ref_quant_at(c->in[7], 0)};
    return qconv_run(c, &g, &q, c->out[0]);
}
