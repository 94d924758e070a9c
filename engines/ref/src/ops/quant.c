/* quant.c: operator family "quant": QuantizeLinear, DequantizeLinear (per tensor or per axis), MatMulInteger and
 * QLinearMatMul, and the table naming DynamicQuantizeLinear (quant_dyn.c), ConvInteger and QLinearConv (quant_conv.c).
 * Rounding is to nearest, ties to even, and results saturate to the output type. It must never read a zero point
 * or scale past its length: per-axis ones are checked against the axis. */
#include <math.h>
#include <string.h>

#include "../alloc.h"
#include "op.h"
#include "qgemm.h"
#include "qgemm8.h"
#include "quant.h"
#include "quant_kernels.h"
#include "reduce_elem.h"

bool ref_quant_int8(int dt) { return dt == REF_DT_UINT8 || dt == REF_DT_INT8; }

int64_t ref_quant_saturate(double v, int dt)
{
    double r = rint(v);
    double lo = dt == REF_DT_INT8 ? -128 : dt == REF_DT_INT32 ? -2147483648.0 : 0;
    double hi = dt == REF_DT_INT8 ? 127 : dt == REF_DT_INT32 ? 2147483647.0 : 255;
    return (int64_t)(r < lo ? lo : r > hi ? hi : r);
}

double ref_quant_at(const ref_tensor *t, int64_t i)
{
    if (!t)
        return 0;
    return ref_elem_ld(t->data, t->dtype, ref_tensor_numel(t) == 1 ? 0 : i);
}

/* ---- QuantizeLinear / DequantizeLinear ---------------------------------------------------------- */

/* Scale and zero point: one value, or one per slice along axis. *per_axis_len is 1 or that dim. */
static int qdq_check(ref_op_ctx *c, int64_t *inner, int64_t *len)
{
    const ref_tensor *x = c->in[0], *s = c->n_in > 1 ? c->in[1] : NULL, *z = c->n_in > 2 ? c->in[2] : NULL;
    if (!x || !s)
        return ref_fail(c->err, REF_E_INVALID, "%s needs x and a scale", c->node->op_type);
    int64_t n = ref_tensor_numel(s);
    *inner = 1;
    *len = 1;
    if (n != 1) {
        int axis = ref_norm_axis(ref_attr_int_or(c->node, "axis", 1), x->rank);
        if (axis < 0 || s->rank != 1 || x->dims[axis] != n || c->opset < 13)
            return ref_fail(c->err, REF_E_SHAPE, "%s: a scale of %lld values needs a matching axis",
                            c->node->op_type, (long long)n);
        *inner = ref_dims_prod(x->dims, axis + 1, x->rank);
        *len = n;
    }
    if (z && ref_tensor_numel(z) != n)
        return ref_fail(c->err, REF_E_SHAPE, "%s: zero point and scale differ in size", c->node->op_type);
    return REF_OK;
}

static int q_infer(ref_op_ctx *c)
{
    int64_t inner, len;
    int rc = qdq_check(c, &inner, &len);
    if (rc)
        return rc;
    const ref_tensor *z = c->n_in > 2 ? c->in[2] : NULL;
    int dt = z ? z->dtype : REF_DT_UINT8;
    if (!ref_quant_int8(dt) || !ref_elem_is_float(c->in[0]->dtype))
        return ref_fail(c->err, REF_E_UNSUPPORTED, "QuantizeLinear from %s to %s", ref_dtype_name(c->in[0]->dtype),
                        ref_dtype_name(dt));
    c->out[0]->dtype = dt;
    ref_tensor_set_shape(c->out[0], c->in[0]->rank, c->in[0]->dims);
    return REF_OK;
}

/* Quantize (float to 8-bit) or dequantize (8-bit to float) with float scales through quant_kernels.c, in chunks
 * over the pool, each cut where the scale changes (every inner elements, per axis). */
typedef struct {
    const ref_tensor *x, *s, *z;
    ref_tensor *y;
    int64_t n, inner, len, chunk;
    bool quant;
} qdq_job;

#define QDQ_CHUNK 65536 /* elements a task: a share of a parallel loop */

static void qdq_task(void *arg, int64_t begin, int64_t end, int tid)
{
    (void)tid;
    const qdq_job *j = arg;
    int64_t i = begin * j->chunk, i1 = end * j->chunk < j->n ? end * j->chunk : j->n;
    while (i < i1) {
        int64_t a = (i / j->inner) % j->len, e = j->len == 1 ? i1 : (i / j->inner + 1) * j->inner;
        e = e < i1 ? e : i1;
        float sv = ((const float *)j->s->data)[a];
        int zv = (int)ref_quant_at(j->z, a);
        if (j->quant)
            ref_quant_f32_8((const float *)j->x->data + i, e - i, sv, zv, j->y->dtype == REF_DT_INT8,
                            (uint8_t *)j->y->data + i);
        else
            ref_dequant_8_f32((const uint8_t *)j->x->data + i, e - i, j->x->dtype == REF_DT_INT8, zv, sv,
                              (float *)j->y->data + i);
        i = e;
    }
}

static int qdq_fast(ref_op_ctx *c, bool quant, int64_t inner, int64_t len)
{
    qdq_job j = {.x = c->in[0], .s = c->in[1], .z = c->n_in > 2 ? c->in[2] : NULL, .y = c->out[0],
                 .n = ref_tensor_numel(c->in[0]), .inner = inner, .len = len, .chunk = QDQ_CHUNK, .quant = quant};
    ref_parallel_for(c->pool, (j.n + j.chunk - 1) / j.chunk, 1, qdq_task, &j);
    return REF_OK;
}

static int q_run(ref_op_ctx *c)
{
    int64_t inner, len;
    int rc = qdq_check(c, &inner, &len);
    if (rc)
        return rc;
    const ref_tensor *x = c->in[0], *s = c->in[1], *z = c->n_in > 2 ? c->in[2] : NULL;
    ref_tensor *y = c->out[0];
    if (x->dtype == REF_DT_FLOAT && s->dtype == REF_DT_FLOAT) /* the float32 formula below, a slice at a time */
        return qdq_fast(c, true, inner, len);
    for (int64_t i = 0; i < ref_tensor_numel(x); i++) {
        int64_t a = (i / inner) % len;
        double xv = ref_elem_ld(x->data, x->dtype, i), sv = ref_quant_at(s, a);
        /* In float32 when both are: the quotient's rounding decides ties, as numpy's float32 division does. */
        double qv = x->dtype == REF_DT_FLOAT && s->dtype == REF_DT_FLOAT ? (double)((float)xv / (float)sv) : xv / sv;
        double r = rint(qv) + ref_quant_at(z, a);
        ref_elem_sti(y->data, y->dtype, i, ref_quant_saturate(r, y->dtype));
    }
    return REF_OK;
}

static int dq_infer(ref_op_ctx *c)
{
    int64_t inner, len;
    int rc = qdq_check(c, &inner, &len);
    if (rc)
        return rc;
    int dt = c->in[0]->dtype;
    if (!ref_quant_int8(dt) && dt != REF_DT_INT32)
        return ref_fail(c->err, REF_E_UNSUPPORTED, "DequantizeLinear of %s", ref_dtype_name(dt));
    c->out[0]->dtype = c->in[1]->dtype;
    ref_tensor_set_shape(c->out[0], c->in[0]->rank, c->in[0]->dims);
    return REF_OK;
}

static int dq_run(ref_op_ctx *c)
{
    int64_t inner, len;
    int rc = qdq_check(c, &inner, &len);
    if (rc)
        return rc;
    const ref_tensor *x = c->in[0], *s = c->in[1], *z = c->n_in > 2 ? c->in[2] : NULL;
    if (ref_quant_int8(x->dtype) && s->dtype == REF_DT_FLOAT && c->out[0]->dtype == REF_DT_FLOAT)
        return qdq_fast(c, false, inner, len);
    for (int64_t i = 0; i < ref_tensor_numel(x); i++) {
        int64_t a = (i / inner) % len;
        double v = (ref_elem_ld(x->data, x->dtype, i) - ref_quant_at(z, a)) * ref_quant_at(s, a);
        ref_elem_st(c->out[0]->data, c->out[0]->dtype, i, v);
    }
    return REF_OK;
}

/* DynamicQuantizeLinear is quant_dyn.c's. */

/* ---- MatMulInteger and QLinearMatMul ------------------------------------------------------------- */

/* a [..., M, K] x b [..., K, N] with numpy broadcasting of the batch dims (both ranks >= 2). */
static int mm_shape(ref_op_ctx *c, const ref_tensor *a, const ref_tensor *b, ref_tensor *y)
{
    if (a->rank < 2 || b->rank < 2 || a->dims[a->rank - 1] != b->dims[b->rank - 2])
        return ref_fail(c->err, REF_E_SHAPE, "%s: A and B need rank >= 2 and matching K", c->node->op_type);
    ref_tensor ab = *a, bb = *b;
    ab.rank -= 2;
    bb.rank -= 2;
    const ref_tensor *both[2] = {&ab, &bb};
    int rc = ref_broadcast_shape(2, both, y, c->err);
    if (rc)
        return rc;
    y->dims[y->rank++] = a->dims[a->rank - 2];
    y->dims[y->rank++] = b->dims[b->rank - 1];
    return REF_OK;
}

/* Scratch of the integer GEMM path: A's rows as int32 pairs, B as [Kp][N] pairs, and (requantizing) the sums. */
static size_t mm_scratch(const ref_tensor *a, const ref_tensor *b, bool requant)
{
    if (!a || !b || a->rank < 2 || b->rank < 2)
        return 0;
    int64_t M = a->dims[a->rank - 2], K = a->dims[a->rank - 1], N = b->dims[b->rank - 1], Kp = (K + 1) / 2;
    /* the 8-bit path's A rows fit in the int16 path's (4 Kq <= 4 Kp bytes); its row terms come after the rest */
    return (size_t)(M * Kp * 4 + ref_qgemm_b_elems(Kp, N) * 2 + (requant ? M * N * 4 : 0) + 192 +
                    (ref_qgemm8_fast() ? 2 * M * 4 + 64 : 0));
}

static int ld8(const ref_tensor *t, int64_t i)
{
    return t->dtype == REF_DT_INT8 ? ((const int8_t *)t->data)[i] : ((const uint8_t *)t->data)[i];
}

/* B (rows ob*K ..) less its zero points as the GEMM's [Kp][N] pairs. */
static void pack_b(const ref_tensor *b, const ref_tensor *zb, int64_t ob, int64_t K, int64_t N, int16_t *bp)
{
    bool zb_one = !zb || ref_tensor_numel(zb) == 1;
    int zb0 = (int)ref_quant_at(zb, 0);
    int64_t Kp = (K + 1) / 2;
    memset(bp, 0, (size_t)ref_qgemm_b_elems(Kp, N) * sizeof *bp); /* the last panel's padding: read, never used */
    for (int64_t k = 0; k < 2 * Kp; k++)
        for (int64_t n = 0; n < N; n++)
            bp[ref_qgemm_b_at(Kp, k / 2, n) + k % 2] =
                (int16_t)(k < K ? ld8(b, ob * K * N + k * N + n) - (zb_one ? zb0 : ld8(zb, n)) : 0);
}

/* A constant 2-D B packed once at compile: int16 pairs for ref_qgemm (bp), or, where the CPU has VNNI, int8 panels
 * for ref_qgemm8 (b8, uint8 B shifted by -128 with its zero points) with the column terms K.zb - colsum (col8) and,
 * when B's zero point is one per column, those zero points (zb8col); col8 and zb8col padded to 16. */
typedef struct {
    int16_t *bp;
    uint8_t *b8;
    int32_t *col8, *zb8col, zb8; /* zb8: the one zero point, shifted, when zb8col is NULL */
    size_t bytes;
} qmm_state;

static void qmm_state_free(void *s)
{
    if (s) {
        ref_free(((qmm_state *)s)->bp);
        ref_free(((qmm_state *)s)->b8);
        ref_free(((qmm_state *)s)->col8);
        ref_free(((qmm_state *)s)->zb8col);
    }
    ref_free(s);
}

static int pack_b8(const ref_tensor *b, const ref_tensor *zb, qmm_state *s)
{
    int64_t K = b->dims[0], N = b->dims[1], Kq = (K + 3) / 4, n16 = (N + 15) / 16 * 16;
    bool per_col = zb && ref_tensor_numel(zb) > 1;
    s->bytes = (size_t)(ref_qgemm8_b_bytes(Kq, N) + n16 * 4 * (per_col ? 2 : 1));
    s->b8 = ref_aligned_alloc((size_t)ref_qgemm8_b_bytes(Kq, N));
    s->col8 = ref_calloc((size_t)n16, sizeof *s->col8);
    s->zb8col = per_col ? ref_calloc((size_t)n16, sizeof *s->zb8col) : NULL;
    if (!s->b8 || !s->col8 || (per_col && !s->zb8col))
        return REF_E_NOMEM;
    memset(s->b8, 0, (size_t)ref_qgemm8_b_bytes(Kq, N)); /* rows past K and the last panel's spare columns */
    int shift = b->dtype == REF_DT_INT8 ? 0 : -128;
    for (int64_t n = 0; n < N; n++) {
        uint32_t sum = 0;
        int32_t z = (int32_t)ref_quant_at(zb, per_col ? n : 0) + shift;
        for (int64_t k = 0; k < K; k++) {
            int v = ld8(b, k * N + n) + shift;
            s->b8[ref_qgemm8_b_at(Kq, k, n)] = (uint8_t)v;
            sum += (uint32_t)v;
        }
        s->col8[n] = (int32_t)((uint32_t)K * (uint32_t)z - sum);
        if (per_col)
            s->zb8col[n] = z;
        s->zb8 = z;
    }
    return REF_OK;
}

static size_t qmm_state_bytes(const void *s) { return s ? ((const qmm_state *)s)->bytes : 0; }

static int qmm_prepare_b(ref_op_ctx *c, int bi, int zi, void **state)
{
    const ref_tensor *b = c->n_in > bi ? c->in[bi] : NULL, *zb = c->n_in > zi ? c->in[zi] : NULL;
    if (!b || !b->data || b->rank != 2 || (zb && !zb->data) || !ref_quant_int8(b->dtype))
        return REF_OK; /* packed per run */
    int64_t K = b->dims[0], N = b->dims[1], Kp = (K + 1) / 2;
    qmm_state *s = ref_calloc(1, sizeof *s);
    if (s && ref_qgemm8_fast() && (!zb || ref_tensor_numel(zb) == 1 || ref_tensor_numel(zb) == N)) {
        if (pack_b8(b, zb, s)) {
            qmm_state_free(s);
            return ref_fail(c->err, REF_E_NOMEM, "%s: out of memory packing B", c->node->op_type);
        }
        *state = s;
        return REF_OK;
    }
    if (s) {
        s->bytes = (size_t)ref_qgemm_b_elems(Kp, N) * 2;
        s->bp = ref_aligned_alloc(s->bytes + 4);
    }
    if (!s || !s->bp) {
        qmm_state_free(s);
        return ref_fail(c->err, REF_E_NOMEM, "%s: out of memory packing B", c->node->op_type);
    }
    pack_b(b, zb, 0, K, N, s->bp);
    *state = s;
    return REF_OK;
}

static int mmi_prepare(ref_op_ctx *c, void **state) { return qmm_prepare_b(c, 1, 3, state); }

static int qmm_prepare(ref_op_ctx *c, void **state) { return qmm_prepare_b(c, 3, 5, state); }

/* Sum of n bytes, vectorized (the scalar loop was 8% of transformer-u8). */
__attribute__((target_clones("avx2", "default"), optimize("tree-vectorize"))) static uint32_t
sum_u8(const uint8_t *p, int64_t n)
{
    uint32_t s = 0;
    for (int64_t i = 0; i < n; i++)
        s += p[i];
    return s;
}

/* One matrix pair on ref_qgemm8: A's rows (from a0) as uint8 groups of 4 (int8 A shifted by +128, its zero points
 * with it) with their sums, so sum (a - za)(b - zb) = dot - zb.rowsum(a) + za.(K.zb - colsum(b)), the first term
 * a product of a row's and a column's value when B's zero point is per column. terms holds 2 M int32. */
static void mm8(const ref_tensor *a, const ref_tensor *za, int64_t a0, int64_t M, int64_t N, int64_t K,
                const qmm_state *st, uint8_t *a8, int32_t *terms, int32_t *y, ref_pool *pool)
{
    int64_t Kq = (K + 3) / 4;
    int shift = a->dtype == REF_DT_INT8 ? 128 : 0;
    int32_t *row_add = terms, *row_mul = terms + M;
    for (int64_t m = 0; m < M; m++) {
        uint8_t *r = a8 + m * Kq * 4;
        uint32_t sum = 0;
        if (!shift) {
            memcpy(r, (const uint8_t *)a->data + a0 + m * K, (size_t)K);
            sum = sum_u8(r, K);
        } else {
            for (int64_t k = 0; k < K; k++) {
                r[k] = (uint8_t)(((const int8_t *)a->data)[a0 + m * K + k] + shift);
                sum += r[k];
            }
        }
        memset(r + K, 0, (size_t)(Kq * 4 - K));
        row_add[m] = (int32_t)(0u - (st->zb8col ? sum : (uint32_t)st->zb8 * sum));
        row_mul[m] = (int32_t)ref_quant_at(za, m) + shift;
    }
    ref_qgemm8_epi e = {.row_add = row_add, .row_mul = row_mul, .col = st->col8};
    if (st->zb8col) /* -rowsum(a) times each column's zero point */
        e = (ref_qgemm8_epi){.row_mul = row_mul, .col = st->col8, .row_mul2 = row_add, .col2 = st->zb8col};
    ref_qgemm8(M, N, Kq, a8, st->b8, true, &e, y, N, pool);
}

/* Integer products of y's batch of matrix pairs, zero points subtracted (per row of A, per column of B when not
 * scalar) as they are packed for the integer GEMM (qgemm.h); f maps a pair's int32 sums (n of them, from y's
 * element off) to its output, or the sums go straight into y when f is NULL (MatMulInteger). */
static int mm_each(ref_op_ctx *c, const ref_tensor *a, const ref_tensor *b, const ref_tensor *za,
                   const ref_tensor *zb, const ref_tensor *y, void (*f)(void *, int64_t, const int32_t *, int64_t),
                   void *arg)
{
    int64_t M = y->dims[y->rank - 2], N = y->dims[y->rank - 1], K = a->dims[a->rank - 1], Kp = (K + 1) / 2;
    if (Kp > REF_QGEMM_MAX_KP)
        return ref_fail(c->err, REF_E_UNSUPPORTED, "%s: K = %lld could overflow int32 sums", c->node->op_type,
                        (long long)K);
    if (c->scratch_bytes < mm_scratch(a, b, f != NULL))
        return ref_fail(c->err, REF_E_STATE, "%s: scratch too small", c->node->op_type);
    int32_t *ap = c->scratch;
    int16_t *bp = (int16_t *)((char *)c->scratch + ((M * Kp * 4 + 63) / 64 * 64));
    int32_t *acc = (int32_t *)((char *)bp + ((ref_qgemm_b_elems(Kp, N) * 2 + 63) / 64 * 64));
    ref_tensor yb = *y, ab = *a, bb = *b;
    yb.rank -= 2;
    ab.rank -= 2;
    bb.rank -= 2;
    int64_t sa[REF_MAX_RANK], sb[REF_MAX_RANK];
    ref_broadcast_strides(&ab, &yb, sa);
    ref_broadcast_strides(&bb, &yb, sb);
    int64_t batches = ref_dims_prod(yb.dims, 0, yb.rank);
    for (int64_t t = 0; t < batches; t++) {
        int64_t oa, ob;
        ref_broadcast_offsets2(yb.dims, yb.rank, sa, sb, t, &oa, &ob);
        const qmm_state *st = c->state;
        int32_t *out = f ? acc : (int32_t *)y->data + t * M * N;
        if (st && st->b8) {
            mm8(a, za, oa * M * K, M, N, K, st, (uint8_t *)ap, (int32_t *)((char *)acc + (f ? M * N * 4 : 0)), out,
                c->pool);
            if (f)
                f(arg, t * M * N, acc, M * N);
            continue;
        }
        for (int64_t m = 0; m < M; m++) {
            int z = (int)ref_quant_at(za, m);
            for (int64_t kp = 0; kp < Kp; kp++) {
                int64_t k = 2 * kp, at = oa * M * K + m * K + k;
                ap[m * Kp + kp] = ref_qgemm_pair(ld8(a, at) - z, k + 1 < K ? ld8(a, at + 1) - z : 0);
            }
        }
        if (!st)
            pack_b(b, zb, ob, K, N, bp);
        ref_qgemm(M, N, Kp, ap, st ? st->bp : bp, out, N, c->pool);
        if (f)
            f(arg, t * M * N, acc, M * N);
    }
    return REF_OK;
}

static int mmi_infer(ref_op_ctx *c)
{
    if (c->n_in < 2 || !ref_quant_int8(c->in[0]->dtype) || !ref_quant_int8(c->in[1]->dtype))
        return ref_fail(c->err, REF_E_UNSUPPORTED, "MatMulInteger needs 8-bit A and B");
    c->out[0]->dtype = REF_DT_INT32;
    return mm_shape(c, c->in[0], c->in[1], c->out[0]);
}

static int mmi_run(ref_op_ctx *c)
{
    return mm_each(c, c->in[0], c->in[1], c->n_in > 2 ? c->in[2] : NULL, c->n_in > 3 ? c->in[3] : NULL, c->out[0],
                   NULL, NULL);
}

static size_t mmi_scratch(const ref_op_ctx *c) { return mm_scratch(c->in[0], c->n_in > 1 ? c->in[1] : NULL, false); }

static size_t qmm_scratch(const ref_op_ctx *c) { return mm_scratch(c->in[0], c->n_in > 3 ? c->in[3] : NULL, true); }

typedef struct {
    ref_tensor *y;
    double mult, zp;
} qlin_out;

/* n sums from y's element off on, requantized. */
static void store_q(void *arg, int64_t off, const int32_t *acc, int64_t n)
{
    qlin_out *q = arg;
    ref_requant_i32_8(acc, n, 0, q->mult, q->zp, q->y->dtype == REF_DT_INT8, (uint8_t *)q->y->data + off);
}

static int qmm_infer(ref_op_ctx *c)
{
    if (c->n_in < 8 || !c->in[0] || !c->in[3] || !ref_quant_int8(c->in[0]->dtype) || !ref_quant_int8(c->in[3]->dtype))
        return ref_fail(c->err, REF_E_UNSUPPORTED, "QLinearMatMul needs 8 inputs and 8-bit a and b");
    for (int i = 1; i < 8; i++)
        if (i != 3 && (!c->in[i] || ref_tensor_numel(c->in[i]) != 1))
            return ref_fail(c->err, REF_E_UNSUPPORTED, "QLinearMatMul: only per-tensor scales and zero points");
    c->out[0]->dtype = c->in[7]->dtype;
    return mm_shape(c, c->in[0], c->in[3], c->out[0]);
}

static int qmm_run(ref_op_ctx *c)
{
    qlin_out q = {.y = c->out[0], .zp = ref_quant_at(c->in[7], 0)};
    q.mult = ref_quant_at(c->in[1], 0) * ref_quant_at(c->in[4], 0) / ref_quant_at(c->in[6], 0);
    return mm_each(c, c->in[0], c->in[3], c->in[2], c->in[5], c->out[0], store_q, &q);
}

/* MatMulIntegerToFloat's float outputs (com.microsoft; quant_ms_gemm.c checks the inputs): each sum times
 * a_scale * b_scale (b's per column or one) in float32, then the column's bias, as MLAS scales them. */
typedef struct {
    float *y;
    const float *bs, *bias;
    float as;
    int64_t n_bs, N;
} mmif_out;

/* Row r's N sums into floats: one loop per case so each vectorizes (with the scale's per-column lookup and the bias
 * test inside one loop it stayed scalar, 8% of a QDQ Whisper-tiny encoder). No FMA contraction, so both clones give
 * the same bits. */
__attribute__((target_clones("avx2", "default"), optimize("tree-vectorize", "fp-contract=off"))) static void
store_row(float *y, const int32_t *acc, int64_t N, float as, const float *bs, bool per_col, const float *bias)
{
    if (!per_col) {
        const float s = as * bs[0];
        if (bias)
            for (int64_t col = 0; col < N; col++)
                y[col] = (float)acc[col] * s + bias[col];
        else
            for (int64_t col = 0; col < N; col++)
                y[col] = (float)acc[col] * s;
    } else if (bias) {
        for (int64_t col = 0; col < N; col++)
            y[col] = (float)acc[col] * (as * bs[col]) + bias[col];
    } else {
        for (int64_t col = 0; col < N; col++)
            y[col] = (float)acc[col] * (as * bs[col]);
    }
}

static void store_f(void *arg, int64_t off, const int32_t *acc, int64_t n)
{
    const mmif_out *q = arg;
    for (int64_t r = 0; r < n / q->N; r++)
        store_row(q->y + off + r * q->N, acc + r * q->N, q->N, q->as, q->bs, q->n_bs != 1, q->bias);
}

int ref_quant_mmif_run(ref_op_ctx *c)
{
    const ref_tensor *bias = c->n_in > 6 ? c->in[6] : NULL;
    mmif_out q = {.y = c->out[0]->data, .bs = c->in[3]->data, .bias = bias ? bias->data : NULL,
                  .as = (float)ref_quant_at(c->in[2], 0), .n_bs = ref_tensor_numel(c->in[3]),
                  .N = c->out[0]->dims[c->out[0]->rank - 1]};
    if (q.N == 0)
        return REF_OK;
    return mm_each(c, c->in[0], c->in[1], c->n_in > 4 ? c->in[4] : NULL, c->n_in > 5 ? c->in[5] : NULL, c->out[0],
                   store_f, &q);
}

int ref_quant_mmif_prepare(ref_op_ctx *c, void **state) { return qmm_prepare_b(c, 1, 5, state); }

size_t ref_quant_mmif_scratch(const ref_op_ctx *c) { return mm_scratch(c->in[0], c->n_in > 1 ? c->in[1] : NULL, true); }

void ref_quant_mm_state_free(void *s) { qmm_state_free(s); }

size_t ref_quant_mm_state_bytes(const void *s) { return qmm_state_bytes(s); }

const ref_op ref_ops_quant[] = {
    {.name = "QuantizeLinear", .infer = q_infer, .run = q_run},
    {.name = "DequantizeLinear", .infer = dq_infer, .run = dq_run},
    {.name = "DynamicQuantizeLinear", .infer = ref_dyn_quant_infer, .run = ref_dyn_quant_run},
    {.name = "MatMulInteger", .infer = mmi_infer, .run = mmi_run, .scratch_bytes = mmi_scratch,
     .prepare = mmi_prepare, .state_free = qmm_state_free, .state_bytes = qmm_state_bytes},
    {.name = "QLinearMatMul", .infer = qmm_infer, .run = qmm_run, .scratch_bytes = qmm_scratch,
     .prepare = qmm_prepare, .state_free = qmm_state_free, .state_bytes = qmm_state_bytes},
    {.name = "ConvInteger", .infer = ref_conv_integer_infer, .run = ref_conv_integer_run,
     .scratch_bytes = ref_conv_integer_scratch_bytes, .prepare = ref_conv_integer_prepare,
     .state_free = ref_qconv_state_free, .state_bytes = ref_qconv_state_bytes},
    {.name = "QLinearConv", .infer = ref_qlinear_conv_infer, .run = ref_qlinear_conv_run,
     .scratch_bytes = ref_qlinear_conv_scratch_bytes, .prepare = ref_qlinear_conv_prepare,
     .state_free = ref_qconv_state_free, .state_bytes = ref_qconv_state_bytes},
    {.name = NULL},
};
