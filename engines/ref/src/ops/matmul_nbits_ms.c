/* matmul_nbits_ms.c: ONNX Runtime's com.microsoft MatMulNBits, the weight format of published int4 (and int8) LLM and
 * transformer models: Y [.., N] = A [.., K] times B^T, B given as N rows of K / block_size blocks of `bits`-bit values
 * (low nibble first), each block with a scale and a zero point (packed the same way, uint8, or of the scales' type;
 * absent: 2^(bits-1)), plus an optional bias. B is dequantized once at compile into a float [N, K] the GEMM reads
 * transposed (memory: 4 bytes a weight, measured by the packed bytes), or per run into scratch when not constant.
 * Float only (float16 graphs reach it as float). It must never read past a block or a row: shapes are checked
 * against K, N, bits and block_size first; g_idx (act-order) is refused by name. */
#include <string.h>

#include "../alloc.h"
#include "op.h"
#include "sgemm.h"

typedef struct {
    int64_t K, N, bits, bs, nb, blob; /* blocks a row, bytes a block */
} nb_geom;

static const ref_tensor *in_at(const ref_op_ctx *c, int i) { return i < c->n_in ? c->in[i] : NULL; }

static int nb_check(ref_op_ctx *c, nb_geom *g)
{
    const ref_tensor *a = in_at(c, 0), *b = in_at(c, 1), *s = in_at(c, 2), *z = in_at(c, 3), *bias = in_at(c, 5);
    g->K = ref_attr_int_or(c->node, "K", 0), g->N = ref_attr_int_or(c->node, "N", 0);
    g->bits = ref_attr_int_or(c->node, "bits", 4), g->bs = ref_attr_int_or(c->node, "block_size", 0);
    if ((g->bits != 4 && g->bits != 8) || g->bs < 2 || g->K <= 0 || g->N <= 0)
        return ref_fail(c->err, REF_E_UNSUPPORTED, "MatMulNBits: bits %lld (4 or 8), block_size %lld, K %lld, N %lld",
                        (long long)g->bits, (long long)g->bs, (long long)g->K, (long long)g->N);
    g->nb = (g->K + g->bs - 1) / g->bs, g->blob = g->bs * g->bits / 8;
    if (!a || a->dtype != REF_DT_FLOAT || a->rank < 1 || a->dims[a->rank - 1] != g->K)
        return ref_fail(c->err, REF_E_SHAPE, "MatMulNBits: input 0 (A) must be float [.., %lld]", (long long)g->K);
    if (!b || b->dtype != REF_DT_UINT8 || ref_tensor_numel(b) != g->N * g->nb * g->blob)
        return ref_fail(c->err, REF_E_SHAPE, "MatMulNBits: input 1 (B) must be uint8 [%lld, %lld, %lld]",
                        (long long)g->N, (long long)g->nb, (long long)g->blob);
    if (!s || s->dtype != REF_DT_FLOAT || ref_tensor_numel(s) != g->N * g->nb)
        return ref_fail(c->err, REF_E_SHAPE, "MatMulNBits: input 2 (scales) must be float, %lld values",
                        (long long)(g->N * g->nb));
    int64_t zpacked = g->N * ((g->nb * g->bits + 7) / 8);
    if (z && !((z->dtype == REF_DT_UINT8 && ref_tensor_numel(z) == zpacked) ||
               (z->dtype == REF_DT_FLOAT && ref_tensor_numel(z) == g->N * g->nb)))
        return ref_fail(c->err, REF_E_SHAPE, "MatMulNBits: input 3 (zero_points) must be uint8 packed (%lld values) or "
                        "float like the scales", (long long)zpacked);
    if (in_at(c, 4))
        return ref_fail(c->err, REF_E_UNSUPPORTED, "MatMulNBits: input 4 (g_idx) is not supported");
    if (bias && (bias->dtype != REF_DT_FLOAT || ref_tensor_numel(bias) != g->N))
        return ref_fail(c->err, REF_E_SHAPE, "MatMulNBits: input 5 (bias) must be float [%lld]", (long long)g->N);
    return REF_OK;
}

/* W [N, K] in float from the blocks: (q - zp) * scale. */
static void dequant(const ref_op_ctx *c, const nb_geom *g, float *w)
{
    const uint8_t *b = c->in[1]->data;
    const float *s = c->in[2]->data;
    const ref_tensor *z = in_at(c, 3);
    int64_t zrow = (g->nb * g->bits + 7) / 8, half = (int64_t)1 << (g->bits - 1);
    for (int64_t n = 0; n < g->N; n++)
        for (int64_t blk = 0; blk < g->nb; blk++) {
            float scale = s[n * g->nb + blk], zf;
            if (!z)
                zf = (float)half;
            else if (z->dtype == REF_DT_FLOAT)
                zf = ((const float *)z->data)[n * g->nb + blk];
            else if (g->bits == 8)
                zf = ((const uint8_t *)z->data)[n * zrow + blk];
            else
                zf = (float)((((const uint8_t *)z->data)[n * zrow + blk / 2] >> (4 * (blk & 1))) & 15);
            const uint8_t *q = b + (n * g->nb + blk) * g->blob;
            for (int64_t i = 0; i < g->bs && blk * g->bs + i < g->K; i++) {
                int v = g->bits == 8 ? q[i] : (q[i / 2] >> (4 * (i & 1))) & 15;
                w[n * g->K + blk * g->bs + i] = ((float)v - zf) * scale;
            }
        }
}

typedef struct {
    float *w;
    size_t bytes;
} nb_state;

static void nb_state_free(void *p)
{
    if (p)
        ref_free(((nb_state *)p)->w);
    ref_free(p);
}

static size_t nb_state_bytes(const void *p) { return p ? ((const nb_state *)p)->bytes : 0; }

static int nb_infer(ref_op_ctx *c)
{
    nb_geom g;
    int rc = nb_check(c, &g);
    if (rc)
        return rc;
    const ref_tensor *a = c->in[0];
    c->out[0]->dtype = REF_DT_FLOAT;
    ref_tensor_set_shape(c->out[0], a->rank, a->dims);
    c->out[0]->dims[a->rank - 1] = g.N;
    return REF_OK;
}

/* Constant B, scales and zero points: dequantized once. */
static int nb_prepare(ref_op_ctx *c, void **state)
{
    nb_geom g;
    const ref_tensor *z = in_at(c, 3);
    if (nb_check(c, &g) || !c->in[1]->data || !c->in[2]->data || (z && !z->data))
        return REF_OK; /* infer says what is wrong; or dequantized per run */
    nb_state *s = ref_calloc(1, sizeof *s);
    if (s) {
        s->bytes = (size_t)(g.N * g.K) * sizeof(float);
        s->w = ref_aligned_alloc(s->bytes);
    }
    if (!s || !s->w) {
        nb_state_free(s);
        return ref_fail(c->err, REF_E_NOMEM, "MatMulNBits: out of memory for %lld x %lld float weights",
                        (long long)g.N, (long long)g.K);
    }
    dequant(c, &g, s->w);
    *state = s;
    return REF_OK;
}

static size_t nb_scratch(const ref_op_ctx *c)
{
    nb_geom g;
    ref_error quiet = {0};
    ref_op_ctx q = *c;
    q.err = &quiet;
    if (nb_check(&q, &g))
        return 0;
    int64_t M = ref_tensor_numel(c->in[0]) / g.K;
    size_t w = c->state ? 0 : ((size_t)(g.N * g.K) * sizeof(float) + 63) / 64 * 64;
    return w + ref_sgemm_scratch_bytes(M, g.N, g.K, false, false, c->n_threads);
}

static int nb_run(ref_op_ctx *c)
{
    nb_geom g;
    int rc = nb_check(c, &g);
    if (rc)
        return rc;
    if (c->scratch_bytes < nb_scratch(c))
        return ref_fail(c->err, REF_E_STATE, "MatMulNBits: scratch too small");
    const float *w = c->state ? ((const nb_state *)c->state)->w : c->scratch;
    size_t used = c->state ? 0 : ((size_t)(g.N * g.K) * sizeof(float) + 63) / 64 * 64;
    if (!c->state)
        dequant(c, &g, c->scratch);
    int64_t M = ref_tensor_numel(c->in[0]) / g.K;
    const ref_tensor *bias = in_at(c, 5);
    float *y = c->out[0]->data;
    if (bias) /* the bias seeds every row, then beta 1 adds the product */
        for (int64_t r = 0; r < M; r++)
            memcpy(y + r * g.N, bias->data, sizeof(float) * (size_t)g.N);
    ref_sgemm_operand A = {.data = c->in[0]->data, .ld = g.K}, B = {.data = w, .ld = g.K, .trans = true};
    return ref_sgemm(c->pool, M, g.N, g.K, 1.0f, &A, &B, bias ? 1.0f : 0.0f, y, g.N, (char *)c->scratch + used,
                     c->scratch_bytes - used, c->err);
}

const ref_op ref_ops_matmul_nbits_ms[] = {
    {.name = "MatMulNBits", .infer = nb_infer, .prepare = nb_prepare, .state_free = nb_state_free,
     .state_bytes = nb_state_bytes, .scratch_bytes = nb_scratch, .run = nb_run},
    {.name = NULL},
};
