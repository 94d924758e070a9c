/* gemm_matmul.c: MatMul with numpy semantics (1-D promotion, batch broadcasting): float on the blocked
 * SGEMM with a constant B pre-packed per batch matrix; double and integers by plain loops (integers wrap).
 * It must never allocate at run time. */
#include <stdatomic.h>
#include <string.h>

#include "../alloc.h"
#include "gemm_ops.h"

typedef struct mm_shape {
    int64_t M, N, K;
    bool a_vec, b_vec; /* 1-D operands, promoted then squeezed out of the result */
    int brank;         /* rank of the broadcast batch */
    int64_t bdims[REF_MAX_RANK];
    int64_t a_stride[REF_MAX_RANK], b_stride[REF_MAX_RANK]; /* in matrices; 0 along broadcast dims */
    int64_t n_batch, a_mats, b_mats;
    bool flatten; /* B is one matrix and A covers the whole batch: one GEMM of n_batch*M rows */
} mm_shape;

static const int mm_types[] = {REF_DT_FLOAT, REF_DT_DOUBLE, REF_DT_INT32, REF_DT_INT64, REF_DT_UINT32,
                               REF_DT_UINT64};

/* Batch dims of operand t (a matrix when rank >= 2) aligned right into s->bdims, with matrix strides. */
static void operand_strides(const ref_tensor *t, const mm_shape *s, int64_t *stride)
{
    int tb = t->rank >= 2 ? t->rank - 2 : 0;
    int64_t st = 1;
    for (int i = s->brank - 1; i >= 0; i--) {
        int ti = i - (s->brank - tb);
        int64_t d = ti >= 0 ? t->dims[ti] : 1;
        stride[i] = d == 1 ? 0 : st;
        st *= d;
    }
}

static int mm_shape_of(ref_op_ctx *c, mm_shape *s)
{
    memset(s, 0, sizeof *s);
    const ref_tensor *a = c->in[0], *b = c->n_in > 1 ? c->in[1] : NULL;
    int rc = ref_op_want_dtype(c, 0, 6, mm_types);
    if (rc || (rc = ref_op_want_dtype(c, 1, 6, mm_types)))
        return rc;
    if (a->dtype != b->dtype)
        return ref_fail(c->err, REF_E_SHAPE, "A is %s but B is %s", ref_dtype_name(a->dtype), ref_dtype_name(b->dtype));
    if (a->rank < 1 || b->rank < 1)
        return ref_fail(c->err, REF_E_SHAPE, "MatMul operands must have rank >= 1 (got %d and %d)", a->rank, b->rank);
    s->a_vec = a->rank == 1;
    s->b_vec = b->rank == 1;
    s->M = s->a_vec ? 1 : a->dims[a->rank - 2];
    s->K = a->dims[a->rank - 1];
    int64_t kb = s->b_vec ? b->dims[0] : b->dims[b->rank - 2];
    s->N = s->b_vec ? 1 : b->dims[b->rank - 1];
    if (kb != s->K)
        return ref_fail(c->err, REF_E_SHAPE, "A's last dim %lld does not match B's %s dim %lld", (long long)s->K,
                        s->b_vec ? "only" : "second-to-last", (long long)kb);
    int ab = s->a_vec ? 0 : a->rank - 2, bb = s->b_vec ? 0 : b->rank - 2;
    s->brank = ab > bb ? ab : bb;
    s->n_batch = s->a_mats = s->b_mats = 1;
    for (int i = 0; i < s->brank; i++) {
        int ai = i - (s->brank - ab), bi = i - (s->brank - bb);
        int64_t da = ai >= 0 ? a->dims[ai] : 1, db = bi >= 0 ? b->dims[bi] : 1;
        if (da != db && da != 1 && db != 1)
            return ref_fail(c->err, REF_E_SHAPE, "batch dim %d: %lld and %lld do not broadcast", i, (long long)da,
                            (long long)db);
        s->bdims[i] = da == 1 ? db : da;
        s->n_batch *= s->bdims[i];
        s->a_mats *= da;
        s->b_mats *= db;
    }
    operand_strides(a, s, s->a_stride);
    operand_strides(b, s, s->b_stride);
    s->flatten = s->b_mats == 1 && s->a_mats == s->n_batch;
    return REF_OK;
}

int ref_matmul_infer(ref_op_ctx *c)
{
    mm_shape s;
    int rc = mm_shape_of(c, &s);
    if (rc)
        return rc;
    int rank = s.brank + !s.a_vec + !s.b_vec;
    if (rank > REF_MAX_RANK)
        return ref_fail(c->err, REF_E_UNSUPPORTED, "result rank %d exceeds %d", rank, REF_MAX_RANK);
    int64_t dims[REF_MAX_RANK];
    memcpy(dims, s.bdims, sizeof(int64_t) * (size_t)s.brank);
    int r = s.brank;
    if (!s.a_vec)
        dims[r++] = s.M;
    if (!s.b_vec)
        dims[r++] = s.N;
    c->out[0]->dtype = c->in[0]->dtype;
    ref_tensor_set_shape(c->out[0], rank, dims);
    return REF_OK;
}

/* ---- prepare: pack a constant float B, one packed matrix per B batch matrix ---- */

static bool mm_const_b(const ref_op_ctx *c)
{
    const ref_tensor *b = c->n_in > 1 ? c->in[1] : NULL;
    return b && b->data && b->dtype == REF_DT_FLOAT && c->in[0] && c->in[0]->dtype == REF_DT_FLOAT &&
           ref_tensor_numel(b) > 0;
}

static void b_matrix(const ref_tensor *b, int64_t *k, int64_t *n, int64_t *mats)
{
    *k = b->rank == 1 ? b->dims[0] : b->dims[b->rank - 2];
    *n = b->rank == 1 ? 1 : b->dims[b->rank - 1];
    *mats = b->rank <= 2 ? 1 : ref_dims_prod(b->dims, 0, b->rank - 2);
}

size_t ref_matmul_prepare_scratch_bytes(const ref_op_ctx *c)
{
    if (!mm_const_b(c))
        return 0;
    int64_t k, n, mats;
    b_matrix(c->in[1], &k, &n, &mats);
    return sizeof(float) * (size_t)(k * n);
}

int ref_matmul_prepare(ref_op_ctx *c, void **state)
{
    ref_gemm_state *s = ref_gemm_state_new(c);
    if (!s)
        return REF_E_NOMEM;
    int rc = REF_OK;
    if (mm_const_b(c)) {
        int64_t k, n, mats;
        b_matrix(c->in[1], &k, &n, &mats);
        rc = ref_gemm_state_pack(c, s, c->in[1]->data, mats, k, n, false, false);
    }
    if (rc) {
        ref_gemm_state_free(s);
        return rc;
    }
    *state = s;
    return REF_OK;
}

static bool mm_b_packed(const ref_op_ctx *c)
{
    const ref_gemm_state *s = c->state;
    return s ? s->packed != NULL : mm_const_b(c);
}

size_t ref_matmul_scratch_bytes(const ref_op_ctx *c)
{
    mm_shape s;
    ref_error e;
    ref_op_ctx cc = *c;
    cc.err = &e;
    if (mm_shape_of(&cc, &s) || c->in[0]->dtype != REF_DT_FLOAT)
        return 0;
    int64_t rows = s.flatten ? s.n_batch * s.M : s.M;
    return ref_sgemm_scratch_bytes(rows, s.N, s.K, false, mm_b_packed(c), c->n_threads);
}

/* ---- run ---- */

static void batch_offsets(const mm_shape *s, int64_t o, int64_t *ai, int64_t *bi)
{
    *ai = *bi = 0;
    for (int i = s->brank - 1; i >= 0; i--) {
        int64_t idx = o % s->bdims[i];
        o /= s->bdims[i];
        *ai += idx * s->a_stride[i];
        *bi += idx * s->b_stride[i];
    }
}

typedef struct mm_job {
    const mm_shape *s;
    const float *a, *b;
    const ref_gemm_state *st; /* packed B, or NULL */
    float *y;
    char *scratch;
    size_t slice;
    atomic_int rc;
} mm_job;

static int mm_one(const mm_job *j, ref_pool *pool, int64_t o, void *scratch, size_t bytes, ref_error *err)
{
    const mm_shape *s = j->s;
    int64_t ai, bi;
    batch_offsets(s, o, &ai, &bi);
    ref_sgemm_operand A = {.data = j->a + ai * s->M * s->K, .ld = s->K};
    /* packed: B's own data is never touched, and compile may have released it (compile/release.c) */
    ref_sgemm_operand B = j->st ? (ref_sgemm_operand){.data = j->st->packed + (size_t)bi * j->st->mat_floats,
                                                      .packed = true}
                                : (ref_sgemm_operand){.data = j->b + bi * s->K * s->N, .ld = s->N};
    return ref_sgemm(pool, s->M, s->N, s->K, 1.0f, &A, &B, 0.0f, j->y + o * s->M * s->N, s->N, scratch, bytes,
                     err);
}

static void mm_task(void *arg, int64_t begin, int64_t end, int tid)
{
    mm_job *j = arg;
    for (int64_t o = begin; o < end; o++)
        if (mm_one(j, NULL, o, j->scratch + (size_t)tid * j->slice, j->slice, NULL))
            atomic_store(&j->rc, REF_E_INVALID); /* only a sizing bug gets here; reported after the loop */
}

static int mm_run_float(ref_op_ctx *c, const mm_shape *s)
{
    mm_job j = {.s = s, .a = c->in[0]->data, .b = c->in[1]->data, .y = c->out[0]->data,
                .scratch = c->scratch};
    const ref_gemm_state *st = c->state;
    if (st && st->packed) {
        if (st->rows != s->K || st->cols != s->N || st->n_mats != s->b_mats)
            return ref_fail(c->err, REF_E_STATE, "packed B is %lld x %lldx%lld, the node needs %lld x %lldx%lld",
                            (long long)st->n_mats, (long long)st->rows, (long long)st->cols, (long long)s->b_mats,
                            (long long)s->K, (long long)s->N);
        j.st = st;
    }
    if (s->flatten) {
        mm_shape one = *s;
        one.M = s->n_batch * s->M;
        one.brank = 0;
        j.s = &one;
        return mm_one(&j, c->pool, 0, c->scratch, c->scratch_bytes, c->err);
    }
    int threads = c->n_threads < 1 ? 1 : c->n_threads;
    double flops = 2.0 * (double)s->M * (double)s->N * (double)s->K;
    if (s->n_batch >= threads && threads > 1 && flops < 4e6) {
        /* many small products: one whole product per task, each thread on its scratch slice */
        j.slice = c->scratch_bytes / (size_t)threads / REF_ALIGN * REF_ALIGN;
        int64_t grain = flops >= 4e6 ? 1 : (int64_t)(4e6 / (flops + 1)) + 1;
        ref_parallel_for(c->pool, s->n_batch, grain, mm_task, &j);
        if (atomic_load(&j.rc))
            return ref_fail(c->err, REF_E_INVALID, "matmul: scratch slice of %zu bytes too small", j.slice);
        return REF_OK;
    }
    for (int64_t o = 0; o < s->n_batch; o++) {
        int rc = mm_one(&j, c->pool, o, c->scratch, c->scratch_bytes, c->err);
        if (rc)
            return rc;
    }
    return REF_OK;
}

/* Plain loops for the other types; integer products and sums wrap (computed unsigned). */
#define MM_NAIVE(name, T, ACC)                                                                          \
    static void name(const mm_shape *s, const T *a, const T *b, T *y)                                  \
    {                                                                                                   \
        for (int64_t o = 0; o < s->n_batch; o++) {                                                      \
            int64_t ai, bi;                                                                             \
            batch_offsets(s, o, &ai, &bi);                                                              \
            const T *am = a + ai * s->M * s->K, *bm = b + bi * s->K * s->N;                             \
            T *ym = y + o * s->M * s->N;                                                                \
            for (int64_t i = 0; i < s->M; i++)                                                          \
                for (int64_t jn = 0; jn < s->N; jn++) {                                                 \
                    ACC acc = 0;                                                                        \
                    for (int64_t k = 0; k < s->K; k++)                                                  \
                        acc += (ACC)am[i * s->K + k] * (ACC)bm[k * s->N + jn];                          \
                    ym[i * s->N + jn] = (T)acc;                                                         \
                }                                                                                       \
        }                                                                                               \
    }

MM_NAIVE(mm_double, double, double)
MM_NAIVE(mm_i32, int32_t, uint32_t)
MM_NAIVE(mm_i64, int64_t, uint64_t)
MM_NAIVE(mm_u32, uint32_t, uint32_t)
MM_NAIVE(mm_u64, uint64_t, uint64_t)

int ref_matmul_run(ref_op_ctx *c)
{
    mm_shape s;
    int rc = mm_shape_of(c, &s);
    if (rc)
        return rc;
    if (s.n_batch == 0 || s.M == 0 || s.N == 0)
        return REF_OK;
    const void *a = c->in[0]->data, *b = c->in[1]->data;
    void *y = c->out[0]->data;
    switch (c->in[0]->dtype) {
    case REF_DT_FLOAT:
        return mm_run_float(c, &s);
    case REF_DT_DOUBLE:
        mm_double(&s, a, b, y);
        break;
    case REF_DT_INT32:
        mm_i32(&s, a, b, y);
        break;
    case REF_DT_INT64:
        mm_i64(&s, a, b, y);
        break;
    case REF_DT_UINT32:
        mm_u32(&s, a, b, y);
        break;
    default:
        mm_u64(&s, a, b, y);
        break;
    }
    return REF_OK;
}
