/* quant_ms_gemm.c: ONNX Runtime's quantized matrix products in domain com.microsoft: QGemm (A, a_scale, a_zp, B,
 * b_scale, b_zp, C, y_scale, y_zp; transA, transB, alpha), MatMulIntegerToFloat (A, B, a_scale, b_scale, a_zp, b_zp,
 * bias; its kernel is quant.c's integer GEMM) and DynamicQuantizeMatMul (float A quantized to uint8 from its range, B, b_scale, b_zp, bias). Sums are exact
 * (int64) and scaled in float32 as MLAS does, b's scale and zero point per tensor or per column. It must never read
 * a per-column parameter past N, nor allocate while running: B less its zero points and each thread's accumulator
 * row live in planned scratch. */
#include <math.h>
#include <string.h>

#include "../alloc.h"
#include "op.h"
#include "quant.h"
#include "quant_ms.h"

static const ref_tensor *in_at(const ref_op_ctx *c, int i) { return i < c->n_in ? c->in[i] : NULL; }

/* One 2-D product: y[m][n] from sum_k (a[m,k] - az) * (b[k,n] - bz[n]) (+ cb[m,n]), then per column either
 * float32 acc * col[n] + bias[n] or requantized acc * col[n] + yz. Strides in elements. */
typedef struct {
    int64_t M, N, K;
    const void *a;
    int adt, az;
    int64_t a_sm, a_sk;
    const void *b;
    int bdt;
    int64_t b_sk, b_sn;
    const ref_tensor *bz;    /* NULL, one value or N */
    const int32_t *cb;       /* QGemm's C, or NULL */
    int64_t c_sm, c_sn;
    const float *col;        /* N multipliers */
    const float *bias;       /* N float biases, or NULL */
    void *y;
    int ydt, yz;
    const int16_t *bq;       /* B less its zero points, [K][N]: prepared state or scratch */
    int64_t *acc;            /* scratch N per thread */
} mm_job;

static int ld(const void *p, int dt, int64_t i)
{
    return dt == REF_DT_INT8 ? ((const int8_t *)p)[i] : ((const uint8_t *)p)[i];
}

/* Rows [m0, m1) of the product, with tid's own accumulator row. */
static void mm_rows(void *arg, int64_t m0, int64_t m1, int tid)
{
    const mm_job *j = arg;
    int64_t *acc = j->acc + (int64_t)tid * j->N;
    for (int64_t m = m0; m < m1; m++) {
        for (int64_t n = 0; n < j->N; n++)
            acc[n] = j->cb ? j->cb[m * j->c_sm + n * j->c_sn] : 0;
        for (int64_t k = 0; k < j->K; k++) {
            int64_t av = ld(j->a, j->adt, m * j->a_sm + k * j->a_sk) - j->az;
            const int16_t *row = j->bq + k * j->N;
            for (int64_t n = 0; av && n < j->N; n++)
                acc[n] += av * row[n];
        }
        for (int64_t n = 0; n < j->N; n++) {
            float v = (float)acc[n] * j->col[n];
            if (j->ydt == REF_DT_FLOAT)
                ((float *)j->y)[m * j->N + n] = j->bias ? v + j->bias[n] : v;
            else if (j->ydt == REF_DT_INT8)
                ((int8_t *)j->y)[m * j->N + n] = (int8_t)ref_qms_requant(v, j->yz, j->ydt);
            else
                ((uint8_t *)j->y)[m * j->N + n] = (uint8_t)ref_qms_requant(v, j->yz, j->ydt);
        }
    }
}

/* B (K x N at strides sk, sn) less its zero points (none, one, or one per column) as [K][N] int16. */
static void pack_b(const void *b, int bdt, int64_t sk, int64_t sn, const ref_tensor *bz, int64_t K, int64_t N,
                   int16_t *bq)
{
    bool bz_one = !bz || ref_tensor_numel(bz) == 1;
    for (int64_t k = 0; k < K; k++)
        for (int64_t n = 0; n < N; n++) {
            int z = !bz ? 0 : ref_qms_ld8(bz, bz_one ? 0 : n);
            bq[k * N + n] = (int16_t)(ld(b, bdt, k * sk + n * sn) - z);
        }
}

/* A constant 2-D B (and its zero points) packed once at compile. */
typedef struct {
    int16_t *bq;
    size_t bytes;
} mm_state;

/* B packed into scratch unless prepare packed it, then the rows split over the pool in shares of about
 * REF_POOL_SHARE_FLOPS. */
static void mm_run(mm_job *j, const void *state, int16_t *scratch_bq, ref_pool *pool)
{
    const int16_t *pre = state ? ((const mm_state *)state)->bq : NULL;
    if (!pre)
        pack_b(j->b, j->bdt, j->b_sk, j->b_sn, j->bz, j->K, j->N, scratch_bq);
    j->bq = pre ? pre : scratch_bq;
    double row_flops = 2.0 * (double)j->N * (double)(j->K ? j->K : 1);
    int64_t grain = (int64_t)(REF_POOL_SHARE_FLOPS / row_flops) + 1;
    ref_parallel_for(pool, j->M, grain, mm_rows, j);
}

static void mm_state_free(void *s)
{
    if (s)
        ref_free(((mm_state *)s)->bq);
    ref_free(s);
}

static size_t mm_state_bytes(const void *s) { return s ? ((const mm_state *)s)->bytes : 0; }

/* B at input bi (K x N, or N x K when trans), zero points at bzi; nothing kept unless both are constant. */
static int mm_prepare(ref_op_ctx *c, int bi, int bzi, bool trans, void **state)
{
    const ref_tensor *b = bi < c->n_in ? c->in[bi] : NULL, *bz = bzi < c->n_in ? c->in[bzi] : NULL;
    if (!b || !b->data || b->rank != 2 || !ref_quant_int8(b->dtype) || (bz && !bz->data))
        return REF_OK; /* packed per run */
    int64_t K = b->dims[trans ? 1 : 0], N = b->dims[trans ? 0 : 1];
    if (bz && ref_tensor_numel(bz) != 1 && ref_tensor_numel(bz) != N)
        return REF_OK; /* infer refuses it */
    mm_state *s = ref_calloc(1, sizeof *s);
    if (s) {
        s->bytes = (size_t)(K * N) * sizeof *s->bq;
        s->bq = ref_aligned_alloc(s->bytes + 2);
    }
    if (!s || !s->bq) {
        mm_state_free(s);
        return ref_fail(c->err, REF_E_NOMEM, "out of memory packing B (%lld x %lld)", (long long)K, (long long)N);
    }
    pack_b(b->data, b->dtype, trans ? 1 : N, trans ? K : 1, bz, K, N, s->bq);
    *state = s;
    return REF_OK;
}

static int qgemm_prepare(ref_op_ctx *c, void **state)
{
    return mm_prepare(c, 3, 5, ref_attr_int_or(c->node, "transB", 0) != 0, state);
}


static int dqmm_prepare(ref_op_ctx *c, void **state) { return mm_prepare(c, 1, 3, false, state); }

/* Scratch: acc (N int64 per thread), col (N float), bq (K*N int16), then extra bytes (DynamicQuantizeMatMul's
 * quantized A). */
static size_t mm_scratch(int64_t K, int64_t N, int64_t extra, int threads)
{
    return (size_t)((threads > 1 ? threads : 1) * N * 8 + N * 4 + K * N * 2 + extra + 64);
}

static void mm_carve(void *scratch, int64_t K, int64_t N, int threads, mm_job *j, float **col, int16_t **bq,
                     uint8_t **extra)
{
    char *p = scratch;
    int64_t at = (threads > 1 ? threads : 1) * N * 8;
    j->acc = (int64_t *)p;
    *col = (float *)(p + at);
    *bq = (int16_t *)(p + at + N * 4);
    if (extra)
        *extra = (uint8_t *)(p + at + N * 4 + K * N * 2);
}

/* in[i] (what) is absent, one value, or N values of dtype dt (per column). */
static int want_col(ref_op_ctx *c, int i, const char *what, int dt, int64_t N, bool required)
{
    const ref_tensor *t = in_at(c, i);
    if (!t)
        return required ? ref_fail(c->err, REF_E_INVALID, "input %d (%s) is required", i, what) : REF_OK;
    int64_t n = ref_tensor_numel(t);
    if (t->dtype != dt || t->rank > 1 || (n != 1 && n != N))
        return ref_fail(c->err, REF_E_UNSUPPORTED, "input %d (%s) must be one %s value or %lld (one per column), "
                        "not %s of %lld", i, what, ref_dtype_name(dt), (long long)N, ref_dtype_name(t->dtype),
                        (long long)n);
    return REF_OK;
}

static int want8(ref_op_ctx *c, int i, const char *what, int min_rank)
{
    const ref_tensor *t = in_at(c, i);
    if (!t)
        return ref_fail(c->err, REF_E_INVALID, "input %d (%s) is required", i, what);
    if (!ref_quant_int8(t->dtype) || t->rank < min_rank)
        return ref_fail(c->err, REF_E_UNSUPPORTED, "input %d (%s) must be uint8 or int8 of rank >= %d, not %s of "
                        "rank %d", i, what, min_rank, ref_dtype_name(t->dtype), t->rank);
    return REF_OK;
}

/* ---- QGemm ----------------------------------------------------------------------------------------------------- */

static void qgemm_dims(const ref_op_ctx *c, int64_t *M, int64_t *K, int64_t *N, int64_t *Kb)
{
    const ref_tensor *a = c->in[0], *b = c->in[3];
    bool ta = ref_attr_int_or(c->node, "transA", 0), tb = ref_attr_int_or(c->node, "transB", 0);
    *M = a->dims[ta ? 1 : 0];
    *K = a->dims[ta ? 0 : 1];
    *Kb = b->dims[tb ? 1 : 0];
    *N = b->dims[tb ? 0 : 1];
}

static int qgemm_infer(ref_op_ctx *c)
{
    int rc;
    if ((rc = want8(c, 0, "A", 2)) || (rc = want8(c, 3, "B", 2)))
        return rc;
    if (c->in[0]->rank != 2 || c->in[3]->rank != 2)
        return ref_fail(c->err, REF_E_SHAPE, "A and B must be 2-D, not rank %d and %d", c->in[0]->rank,
                        c->in[3]->rank);
    int64_t M, K, N, Kb;
    qgemm_dims(c, &M, &K, &N, &Kb);
    if (K != Kb)
        return ref_fail(c->err, REF_E_SHAPE, "A's K (%lld) differs from B's (%lld)", (long long)K, (long long)Kb);
    const ref_tensor *cb = in_at(c, 6), *yzt = in_at(c, 8);
    if ((rc = ref_qms_want_scale(c, 1, "a_scale", true)) ||
        (rc = ref_qms_want_zp(c, 2, "a_zero_point", c->in[0]->dtype)) ||
        (rc = want_col(c, 4, "b_scale", REF_DT_FLOAT, N, true)) ||
        (rc = want_col(c, 5, "b_zero_point", c->in[3]->dtype, N, false)) ||
        (rc = ref_qms_want_scale(c, 7, "y_scale", false)))
        return rc;
    if (yzt && (!ref_quant_int8(yzt->dtype) || (rc = ref_qms_want_zp(c, 8, "y_zero_point", yzt->dtype))))
        return rc ? rc : ref_fail(c->err, REF_E_UNSUPPORTED, "input 8 (y_zero_point) must be uint8 or int8");
    if (cb) {
        ref_tensor mn = {.rank = 2, .dims = {M, N}}, out = {0};
        const ref_tensor *two[2] = {cb, &mn};
        if (cb->dtype != REF_DT_INT32 || cb->rank > 2 || ref_broadcast_shape(2, two, &out, c->err) ||
            !ref_shape_equal(&out, &mn))
            return ref_fail(c->err, REF_E_SHAPE, "input 6 (C) must be int32 broadcasting to [%lld, %lld]",
                            (long long)M, (long long)N);
    }
    int ydt = !in_at(c, 7) ? REF_DT_FLOAT : yzt ? yzt->dtype : REF_DT_UINT8;
    return ref_qms_set_out(c, 0, ydt, 2, (const int64_t[]){M, N});
}

static size_t qgemm_scratch(const ref_op_ctx *c)
{
    const ref_tensor *a = c->in[0], *b = in_at(c, 3);
    if (!a || !b || a->rank != 2 || b->rank != 2)
        return 0;
    int64_t M, K, N, Kb;
    qgemm_dims(c, &M, &K, &N, &Kb);
    return mm_scratch(K, N, 0, c->n_threads);
}

static int qgemm_run(ref_op_ctx *c)
{
    const ref_tensor *a = c->in[0], *b = c->in[3], *cb = in_at(c, 6), *bs = c->in[4];
    bool ta = ref_attr_int_or(c->node, "transA", 0), tb = ref_attr_int_or(c->node, "transB", 0);
    int64_t M, K, N, Kb;
    qgemm_dims(c, &M, &K, &N, &Kb);
    if (c->scratch_bytes < mm_scratch(K, N, 0, c->n_threads))
        return ref_fail(c->err, REF_E_STATE, "scratch too small");
    mm_job j = {.M = M, .N = N, .K = K, .a = a->data, .adt = a->dtype, .az = ref_qms_zp(c, 2),
                .a_sm = ta ? 1 : K, .a_sk = ta ? M : 1, .b = b->data, .bdt = b->dtype, .b_sk = tb ? 1 : N,
                .b_sn = tb ? K : 1, .bz = in_at(c, 5), .y = c->out[0]->data, .ydt = c->out[0]->dtype,
                .yz = ref_qms_zp(c, 8)};
    float *col;
    int16_t *bq;
    mm_carve(c->scratch, K, N, c->n_threads, &j, &col, &bq, NULL);
    if (cb) {
        ref_tensor mn = {.rank = 2, .dims = {M, N}};
        int64_t st[2];
        ref_broadcast_strides(cb, &mn, st);
        j.cb = cb->data;
        j.c_sm = st[0];
        j.c_sn = st[1];
    }
    /* MLAS: one float32 multiplier alpha * a_scale * b_scale (/ y_scale when requantizing) per column */
    float alpha = ref_attr_float_or(c->node, "alpha", 1.0f), as = ref_qms_scale(c, 1);
    float ys = in_at(c, 7) ? ref_qms_scale(c, 7) : 1.0f;
    for (int64_t n = 0; n < N; n++) {
        float m = alpha * as * ((const float *)bs->data)[ref_tensor_numel(bs) == 1 ? 0 : n];
        col[n] = in_at(c, 7) ? m / ys : m;
    }
    j.col = col;
    mm_run(&j, c->state, bq, c->pool);
    return REF_OK;
}

/* ---- MatMulIntegerToFloat and DynamicQuantizeMatMul: A [.., M, K] x B [.., K, N], batch dims broadcast ---------- */

static int batch_shape(ref_op_ctx *c, const ref_tensor *a, const ref_tensor *b, int64_t *dims, int *rank)
{
    if (a->rank < 2 || b->rank < 2 || a->dims[a->rank - 1] != b->dims[b->rank - 2])
        return ref_fail(c->err, REF_E_SHAPE, "A [.., M, K] and B [.., K, N] need rank >= 2 and one K (%lld, %lld)",
                        (long long)a->dims[a->rank - 1], (long long)(b->rank >= 2 ? b->dims[b->rank - 2] : -1));
    ref_tensor ab = *a, bb = *b, y = {0};
    ab.rank -= 2;
    bb.rank -= 2;
    const ref_tensor *both[2] = {&ab, &bb};
    int rc = ref_broadcast_shape(2, both, &y, c->err);
    if (rc)
        return rc;
    memcpy(dims, y.dims, sizeof y.dims);
    dims[y.rank] = a->dims[a->rank - 2];
    dims[y.rank + 1] = b->dims[b->rank - 1];
    *rank = y.rank + 2;
    return REF_OK;
}

/* Shared checks; ai and bi are A's and B's input indices, the rest of the parameters named by the caller. */
static int mmf_check(ref_op_ctx *c, int bi, int bsi, int bzi, int biasi)
{
    const ref_tensor *b = in_at(c, bi), *bias = in_at(c, biasi);
    int rc = want8(c, bi, "B", 2);
    if (rc)
        return rc;
    int64_t N = b->dims[b->rank - 1], dims[REF_MAX_RANK];
    int rank = 0;
    if ((rc = want_col(c, bsi, "b_scale", REF_DT_FLOAT, N, true)) ||
        (rc = want_col(c, bzi, "b_zero_point", b->dtype, N, false)) || (rc = batch_shape(c, c->in[0], b, dims, &rank)))
        return rc;
    if (bias && (bias->dtype != REF_DT_FLOAT || bias->rank != 1 || bias->dims[0] != N))
        return ref_fail(c->err, REF_E_SHAPE, "input %d (bias) must be float32 [%lld]", biasi, (long long)N);
    return ref_qms_set_out(c, 0, REF_DT_FLOAT, rank, dims);
}

static int mmif_infer(ref_op_ctx *c)
{
    int rc;
    if ((rc = want8(c, 0, "A", 2)) || (rc = ref_qms_want_scale(c, 2, "a_scale", true)) ||
        (rc = ref_qms_want_zp(c, 4, "a_zero_point", c->in[0]->dtype)))
        return rc;
    return mmf_check(c, 1, 3, 5, 6);
}

static int dqmm_infer(ref_op_ctx *c)
{
    const ref_tensor *a = c->in[0];
    if (!a || a->dtype != REF_DT_FLOAT || a->rank < 2)
        return ref_fail(c->err, REF_E_UNSUPPORTED, "input 0 (A) must be float32 of rank >= 2");
    return mmf_check(c, 1, 2, 3, 4);
}

static size_t mmf_scratch(const ref_op_ctx *c, int bi, bool quantize_a)
{
    const ref_tensor *a = c->in[0], *b = in_at(c, bi);
    if (!a || !b || a->rank < 2 || b->rank < 2)
        return 0;
    int64_t K = b->dims[b->rank - 2], N = b->dims[b->rank - 1];
    return mm_scratch(K, N, quantize_a ? ref_tensor_numel(a) : 0, c->n_threads);
}


static size_t dqmm_scratch(const ref_op_ctx *c) { return mmf_scratch(c, 1, true); }

/* Every batch of y: A's and B's matrices found through broadcast strides of the batch dims. */
static void mmf_batches(ref_op_ctx *c, const ref_tensor *a, const void *adata, int adt, int az, float as, int bi,
                        int bsi, int bzi, int biasi, mm_job *j, float *col, int16_t *bq)
{
    const ref_tensor *b = c->in[bi], *bs = c->in[bsi], *bias = in_at(c, biasi);
    ref_tensor *y = c->out[0], yb = *y, ab = *a, bb = *b;
    int64_t M = y->dims[y->rank - 2], N = y->dims[y->rank - 1], K = a->dims[a->rank - 1];
    for (int64_t n = 0; n < N; n++)
        col[n] = as * ((const float *)bs->data)[ref_tensor_numel(bs) == 1 ? 0 : n];
    yb.rank -= 2;
    ab.rank -= 2;
    bb.rank -= 2;
    int64_t sa[REF_MAX_RANK], sb[REF_MAX_RANK], batches = ref_dims_prod(yb.dims, 0, yb.rank);
    ref_broadcast_strides(&ab, &yb, sa);
    ref_broadcast_strides(&bb, &yb, sb);
    for (int64_t t = 0; t < batches; t++) {
        int64_t oa, ob;
        ref_broadcast_offsets2(yb.dims, yb.rank, sa, sb, t, &oa, &ob);
        j->M = M, j->N = N, j->K = K;
        j->a = (const char *)adata + oa * M * K, j->adt = adt, j->az = az, j->a_sm = K, j->a_sk = 1;
        j->b = (const char *)b->data + ob * K * N, j->bdt = b->dtype, j->b_sk = N, j->b_sn = 1;
        j->bz = in_at(c, bzi), j->col = col, j->bias = bias ? bias->data : NULL;
        j->y = (float *)y->data + t * M * N, j->ydt = REF_DT_FLOAT;
        mm_run(j, c->state, bq, c->pool); /* a prepared B is 2-D: the same for every batch */
    }
}

/* A quantized to uint8 as ORT's dynamic quantization does: the range widened to hold 0, scale (max - min) / 255
 * (1 when the range is empty), zero point round(-min / scale) saturated; each value rint(a / scale) + zp saturated. */
static int dqmm_run(ref_op_ctx *c)
{
    const ref_tensor *a = c->in[0], *b = c->in[1];
    int64_t K = b->dims[b->rank - 2], N = b->dims[b->rank - 1], na = ref_tensor_numel(a);
    if (c->scratch_bytes < mm_scratch(K, N, na, c->n_threads))
        return ref_fail(c->err, REF_E_STATE, "scratch too small");
    mm_job j = {0};
    float *col;
    uint8_t *aq;
    int16_t *bq;
    mm_carve(c->scratch, K, N, c->n_threads, &j, &col, &bq, &aq);
    const float *av = a->data;
    float lo = 0, hi = 0;
    for (int64_t i = 0; i < na; i++) {
        lo = av[i] < lo ? av[i] : lo;
        hi = av[i] > hi ? av[i] : hi;
    }
    float scale = hi == lo ? 1.0f : (hi - lo) / 255.0f;
    int zp = ref_qms_requant(-lo / scale, 0, REF_DT_UINT8);
    for (int64_t i = 0; i < na; i++)
        aq[i] = (uint8_t)ref_qms_requant(av[i] / scale, zp, REF_DT_UINT8);
    mmf_batches(c, a, aq, REF_DT_UINT8, zp, scale, 1, 2, 3, 4, &j, col, bq);
    return REF_OK;
}

const ref_op ref_ops_quant_ms_gemm[] = {
    {.name = "QGemm", .infer = qgemm_infer, .run = qgemm_run, .scratch_bytes = qgemm_scratch,
     .prepare = qgemm_prepare, .state_free = mm_state_free, .state_bytes = mm_state_bytes},
    {.name = "MatMulIntegerToFloat", .infer = mmif_infer, .run = ref_quant_mmif_run,
     .scratch_bytes = ref_quant_mmif_scratch, .prepare = ref_quant_mmif_prepare, .state_free = ref_quant_mm_state_free,
     .state_bytes = ref_quant_mm_state_bytes},
    {.name = "DynamicQuantizeMatMul", .infer = dqmm_infer, .run = dqmm_run, .scratch_bytes = dqmm_scratch,
     .prepare = dqmm_prepare, .state_free = mm_state_free, .state_bytes = mm_state_bytes},
    {.name = NULL},
};
