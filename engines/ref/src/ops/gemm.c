/* gemm.c: operator family "gemm": Gemm (transA/transB, alpha, beta, C broadcast to [M,N]) on the blocked
 * SGEMM with its constant operand pre-packed, the shared packed-operand state, and the table holding
 * MatMul (gemm_matmul.c). It must never allocate at run time. */
#include <string.h>

#include "../alloc.h"
#include "gemm_ops.h"

/* ---- shared state ------------------------------------------------------------------------------ */

ref_gemm_state *ref_gemm_state_new(ref_op_ctx *c)
{
    ref_gemm_state *s = ref_calloc(1, sizeof *s);
    if (!s)
        ref_fail(c->err, REF_E_NOMEM, "out of memory for the node state");
    return s;
}

int ref_gemm_state_pack(ref_op_ctx *c, ref_gemm_state *s, const float *x, int64_t n_mats, int64_t rows,
                        int64_t cols, bool trans, bool is_a)
{
    size_t stage = sizeof(float) * (size_t)(rows * cols);
    if (c->scratch_bytes < stage)
        return ref_fail(c->err, REF_E_INVALID, "prepare scratch of %zu bytes, %zu needed", c->scratch_bytes, stage);
    size_t per = is_a ? ref_sgemm_packed_a_floats(rows, cols) : ref_sgemm_packed_b_floats(rows, cols);
    if (!(s->packed = ref_aligned_alloc(sizeof(float) * per * (size_t)n_mats)))
        return ref_fail(c->err, REF_E_NOMEM, "out of memory packing %lld matrices of %lld x %lld",
                        (long long)n_mats, (long long)rows, (long long)cols);
    s->is_a = is_a;
    s->n_mats = n_mats;
    s->mat_floats = per;
    s->rows = rows;
    s->cols = cols;
    float *st = c->scratch;
    for (int64_t m = 0; m < n_mats; m++) {
        const float *xm = x + m * rows * cols;
        if (trans) /* stored cols x rows */
            for (int64_t i = 0; i < rows; i++)
                for (int64_t j = 0; j < cols; j++)
                    st[i * cols + j] = xm[j * rows + i];
        else
            memcpy(st, xm, stage);
        ref_sgemm_operand op = {.data = st, .ld = cols};
        if (is_a)
            ref_sgemm_pack_a(rows, cols, &op, s->packed + (size_t)m * per);
        else
            ref_sgemm_pack_b(rows, cols, &op, s->packed + (size_t)m * per);
    }
    return REF_OK;
}

void ref_gemm_state_free(void *state)
{
    ref_gemm_state *s = state;
    if (!s)
        return;
    ref_free(s->packed);
    ref_free(s);
}

size_t ref_gemm_state_bytes(const void *state)
{
    const ref_gemm_state *s = state;
    return s && s->packed ? sizeof(float) * s->mat_floats * (size_t)s->n_mats : 0;
}

/* ---- Gemm --------------------------------------------------------------------------------------- */

typedef struct gemm_dims {
    int64_t M, N, K;
    bool ta, tb;
} gemm_dims;

static int gemm_dims_of(ref_op_ctx *c, gemm_dims *d)
{
    const ref_tensor *a = c->in[0], *b = c->n_in > 1 ? c->in[1] : NULL;
    if (!a || !b)
        return ref_fail(c->err, REF_E_INVALID, "A and B are required");
    if (a->dtype != REF_DT_FLOAT || b->dtype != REF_DT_FLOAT)
        return ref_fail(c->err, REF_E_UNSUPPORTED, "A is %s and B is %s; only float is supported",
                        ref_dtype_name(a->dtype), ref_dtype_name(b->dtype));
    if (a->rank != 2 || b->rank != 2)
        return ref_fail(c->err, REF_E_SHAPE, "A and B must be 2-D (ranks %d and %d)", a->rank, b->rank);
    d->ta = ref_attr_int_or(c->node, "transA", 0) != 0;
    d->tb = ref_attr_int_or(c->node, "transB", 0) != 0;
    d->M = a->dims[d->ta ? 1 : 0];
    d->K = a->dims[d->ta ? 0 : 1];
    d->N = b->dims[d->tb ? 0 : 1];
    int64_t kb = b->dims[d->tb ? 1 : 0];
    if (kb != d->K)
        return ref_fail(c->err, REF_E_SHAPE, "op(A) is %lldx%lld but op(B) is %lldx%lld", (long long)d->M,
                        (long long)d->K, (long long)kb, (long long)d->N);
    return REF_OK;
}

static int gemm_infer(ref_op_ctx *c)
{
    gemm_dims d;
    int rc = gemm_dims_of(c, &d);
    if (rc)
        return rc;
    const ref_tensor *cc = c->n_in > 2 ? c->in[2] : NULL;
    if (cc) {
        bool ok = cc->dtype == REF_DT_FLOAT && cc->rank <= 2;
        int64_t want[2] = {d.M, d.N};
        for (int i = 0; ok && i < cc->rank; i++) {
            int64_t dim = cc->dims[cc->rank - 1 - i];
            ok = dim == 1 || dim == want[1 - i];
        }
        if (!ok)
            return ref_fail(c->err, REF_E_SHAPE, "C (%s, rank %d) does not broadcast to [%lld,%lld]",
                            ref_dtype_name(cc->dtype), cc->rank, (long long)d.M, (long long)d.N);
    }
    int64_t dims[2] = {d.M, d.N};
    c->out[0]->dtype = REF_DT_FLOAT;
    ref_tensor_set_shape(c->out[0], 2, dims);
    return REF_OK;
}

/* Which operand prepare packs: B when constant, else A when constant; 0 none, 1 A, 2 B. */
static int gemm_const_operand(const ref_op_ctx *c)
{
    const ref_tensor *a = c->in[0], *b = c->n_in > 1 ? c->in[1] : NULL;
    if (b && b->data && b->dtype == REF_DT_FLOAT && b->rank == 2 && ref_tensor_numel(b) > 0)
        return 2;
    if (a && a->data && a->dtype == REF_DT_FLOAT && a->rank == 2 && ref_tensor_numel(a) > 0)
        return 1;
    return 0;
}

/* The packed operand run will find: the state's, once prepare ran; predicted before. */
static int gemm_packed_operand(const ref_op_ctx *c)
{
    const ref_gemm_state *s = c->state;
    if (s)
        return !s->packed ? 0 : s->is_a ? 1 : 2;
    return gemm_const_operand(c);
}

static size_t gemm_prepare_scratch_bytes(const ref_op_ctx *c)
{
    int which = gemm_const_operand(c);
    return which ? ref_tensor_nbytes(c->in[which == 1 ? 0 : 1]) : 0;
}

static int gemm_prepare(ref_op_ctx *c, void **state)
{
    ref_gemm_state *s = ref_gemm_state_new(c);
    if (!s)
        return REF_E_NOMEM;
    int which = gemm_const_operand(c), rc = REF_OK;
    if (which) {
        bool ta = ref_attr_int_or(c->node, "transA", 0) != 0, tb = ref_attr_int_or(c->node, "transB", 0) != 0;
        const ref_tensor *x = c->in[which == 1 ? 0 : 1];
        bool tr = which == 1 ? ta : tb;
        int64_t rows = x->dims[tr ? 1 : 0], cols = x->dims[tr ? 0 : 1];
        rc = ref_gemm_state_pack(c, s, x->data, 1, rows, cols, tr, which == 1);
    }
    if (rc) {
        ref_gemm_state_free(s);
        return rc;
    }
    *state = s;
    return REF_OK;
}

static size_t gemm_scratch_bytes(const ref_op_ctx *c)
{
    gemm_dims d;
    ref_error e;
    ref_op_ctx cc = *c;
    cc.err = &e;
    if (gemm_dims_of(&cc, &d))
        return 0;
    int p = gemm_packed_operand(c);
    return ref_sgemm_scratch_bytes(d.M, d.N, d.K, p == 1, p == 2, c->n_threads);
}

/* Y = broadcast C, the starting value beta scales. */
static void fill_c(const ref_tensor *cc, int64_t M, int64_t N, float *y)
{
    const float *cv = cc->data;
    int64_t rows = cc->rank == 2 ? cc->dims[0] : 1, cols = cc->rank >= 1 ? cc->dims[cc->rank - 1] : 1;
    for (int64_t i = 0; i < M; i++) {
        const float *row = cv + (rows == 1 ? 0 : i) * cols;
        for (int64_t j = 0; j < N; j++)
            y[i * N + j] = row[cols == 1 ? 0 : j];
    }
}

static int gemm_run(ref_op_ctx *c)
{
    gemm_dims d;
    int rc = gemm_dims_of(c, &d);
    if (rc)
        return rc;
    const ref_tensor *a = c->in[0], *b = c->in[1], *cc = c->n_in > 2 ? c->in[2] : NULL;
    float alpha = ref_attr_float_or(c->node, "alpha", 1.0f), beta = ref_attr_float_or(c->node, "beta", 1.0f);
    float *y = c->out[0]->data;
    ref_sgemm_operand A = {.data = a->data, .ld = a->dims[1], .trans = d.ta};
    ref_sgemm_operand B = {.data = b->data, .ld = b->dims[1], .trans = d.tb};
    const ref_gemm_state *s = c->state;
    if (s && s->packed) {
        if ((s->is_a && (s->rows != d.M || s->cols != d.K)) || (!s->is_a && (s->rows != d.K || s->cols != d.N)))
            return ref_fail(c->err, REF_E_STATE, "packed operand is %lldx%lld, the node needs another shape",
                            (long long)s->rows, (long long)s->cols);
        ref_sgemm_operand p = {.data = s->packed, .packed = true};
        if (s->is_a)
            A = p;
        else
            B = p;
    }
    float beta_eff = 0.0f;
    if (cc && beta != 0.0f && d.M && d.N) {
        fill_c(cc, d.M, d.N, y);
        beta_eff = beta;
    }
    return ref_sgemm(c->pool, d.M, d.N, d.K, alpha, &A, &B, beta_eff, y, d.N, c->scratch, c->scratch_bytes,
                     c->err);
}

const ref_op ref_ops_gemm[] = {
    {.name = "Gemm",
     .infer = gemm_infer,
     .prepare = gemm_prepare,
     .prepare_scratch_bytes = gemm_prepare_scratch_bytes,
     .state_free = ref_gemm_state_free,
     .state_bytes = ref_gemm_state_bytes,
     .scratch_bytes = gemm_scratch_bytes,
     .run = gemm_run},
    {.name = "MatMul",
     .infer = ref_matmul_infer,
     .prepare = ref_matmul_prepare,
     .prepare_scratch_bytes = ref_matmul_prepare_scratch_bytes,
     .state_free = ref_gemm_state_free,
     .state_bytes = ref_gemm_state_bytes,
     .scratch_bytes = ref_matmul_scratch_bytes,
     .run = ref_matmul_run},
    {.name = NULL},
};
