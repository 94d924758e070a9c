/* attention_ms.c: ONNX Runtime's com.microsoft Attention and MultiHeadAttention, as its transformer optimizer writes
 * them into published float32 and float16 models, and QAttention, what quantize_dynamic makes of Attention (8-bit
 * input and weights with their scales and zero points, dequantized to float first). Attention: input [B, S, D] times weights [D, Hq + Hk + Hv] (+ bias)
 * gives Q, K and V; MultiHeadAttention takes query [B, S, Hq], key [B, T, Hq] and value [B, T, Hv] (+ bias). Both split
 * them into num_heads heads; softmax(scale Q K^T + mask) V per head, the heads side by side in [B, S, Hv]. Masks:
 * none, key lengths [B], raw 0/1 [B, T] or (Attention) [B, S, T] (int32), unidirectional (causal), an additive
 * attention_bias [B or 1, N or 1, S, T]; a masked score gets mask_filter_value added, as ORT does. Float only (float16
 * graphs reach it as float). It must never allocate at run time (the products and scores live in planned scratch),
 * and it refuses what it does not compute (past / present state, packed or BNSH key and value, other mask layouts)
 * naming the input. */
#include <math.h>
#include <string.h>

#include "../alloc.h"
#include "op.h"
#include "rows.h"
#include "sgemm.h"

typedef struct {
    int64_t B, S, T, D, N, hq, hv, Hq, Hv, Htot;
    float scale, filter;
    bool causal;
    const ref_tensor *mask, *abias;
    /* where the heads read Q, K and V: base pointers, row strides, batch strides (set by each op's run) */
    const float *q, *k, *v;
    int64_t ldq, ldk, ldv, bq, bk, bv;
} att_geom;

static const ref_tensor *in_at(const ref_op_ctx *c, int i) { return i < c->n_in ? c->in[i] : NULL; }

/* What both ops share once B, S, T, N, Hq and Hv are known: scale, mask (input mi) and attention bias (input bi). */
static int masks(ref_op_ctx *c, att_geom *g, int mi, const char *mname, int bi)
{
    const char *op = c->node->op_type;
    g->hq = g->Hq / g->N, g->hv = g->Hv / g->N;
    float s = ref_attr_float_or(c->node, "scale", 0.0f);
    g->scale = s != 0.0f ? s : 1.0f / sqrtf((float)g->hq);
    g->filter = ref_attr_float_or(c->node, "mask_filter_value", -10000.0f);
    g->causal = ref_attr_int_or(c->node, "unidirectional", 0) != 0;
    const ref_tensor *m = g->mask = in_at(c, mi);
    if (m && (m->dtype != REF_DT_INT32 || !((m->rank == 1 && m->dims[0] == g->B) ||
                                           (m->rank == 2 && m->dims[0] == g->B && m->dims[1] == g->T) ||
                                           (m->rank == 3 && mi == 3 && m->dims[0] == g->B && m->dims[1] == g->S &&
                                            m->dims[2] == g->T)))) {
        char s1[96];
        return ref_fail(c->err, REF_E_UNSUPPORTED, "%s: input %d (%s) %s %s: only int32 [B] lengths or [B, T]%s 0/1",
                        op, mi, mname, ref_dtype_name(m->dtype), ref_shape_str(m, s1, sizeof s1),
                        mi == 3 ? " or [B, S, T]" : "");
    }
    const ref_tensor *ab = g->abias = bi >= 0 ? in_at(c, bi) : NULL;
    if (ab && (ab->dtype != REF_DT_FLOAT || ab->rank != 4 || (ab->dims[0] != 1 && ab->dims[0] != g->B) ||
               (ab->dims[1] != 1 && ab->dims[1] != g->N) || ab->dims[2] != g->S || ab->dims[3] != g->T))
        return ref_fail(c->err, REF_E_SHAPE, "%s: input %d (attention_bias) must be float [B or 1, N or 1, S, T]", op, bi);
    return REF_OK;
}

static bool is_q(const ref_op_ctx *c) { return !strcmp(c->node->op_type, "QAttention"); }

static bool is8(const ref_tensor *t) { return t && (t->dtype == REF_DT_UINT8 || t->dtype == REF_DT_INT8); }

/* QAttention's scales and zero points (inputs 3, 4, 6, 7): x's one of each, w's one or one per column. */
static int qparams(ref_op_ctx *c, const att_geom *g)
{
    const ref_tensor *xs = in_at(c, 3), *ws = in_at(c, 4), *xz = in_at(c, 6), *wz = in_at(c, 7);
    if (!xs || xs->dtype != REF_DT_FLOAT || ref_tensor_numel(xs) != 1 || !ws || ws->dtype != REF_DT_FLOAT ||
        (ref_tensor_numel(ws) != 1 && ref_tensor_numel(ws) != g->Htot) ||
        (xz && (xz->dtype != c->in[0]->dtype || ref_tensor_numel(xz) != 1)) ||
        (wz && (wz->dtype != c->in[1]->dtype || (ref_tensor_numel(wz) != 1 && ref_tensor_numel(wz) != g->Htot))))
        return ref_fail(c->err, REF_E_SHAPE, "QAttention: input_scale and input_zero_point one value of x's type, "
                        "weight_scale and weight_zero_point one or %lld of w's", (long long)g->Htot);
    return REF_OK;
}

static int geom(ref_op_ctx *c, att_geom *g)
{
    const ref_tensor *x = in_at(c, 0), *w = in_at(c, 1), *b = in_at(c, 2);
    bool q = is_q(c);
    memset(g, 0, sizeof *g);
    if (!x || !w || x->rank != 3 || w->rank != 2 || (q ? !is8(x) || !is8(w) : x->dtype != REF_DT_FLOAT ||
                                                                           w->dtype != REF_DT_FLOAT))
        return ref_fail(c->err, REF_E_UNSUPPORTED, "%s: input [B, S, D] and weights [D, 3H] must be %s",
                        c->node->op_type, q ? "8-bit" : "float");
    g->B = x->dims[0], g->S = g->T = x->dims[1], g->D = x->dims[2], g->N = ref_attr_int_or(c->node, "num_heads", 0);
    g->Htot = w->dims[1];
    const int64_t *qkv = NULL;
    if (ref_attr_ints(c->node, "qkv_hidden_sizes", &qkv) == 3) {
        if (qkv[0] != qkv[1] || qkv[0] + qkv[1] + qkv[2] != g->Htot)
            return ref_fail(c->err, REF_E_SHAPE, "Attention: qkv_hidden_sizes (%lld, %lld, %lld) against weights' %lld",
                            (long long)qkv[0], (long long)qkv[1], (long long)qkv[2], (long long)g->Htot);
        g->Hq = qkv[0], g->Hv = qkv[2];
    } else {
        g->Hq = g->Hv = g->Htot / 3;
    }
    if (w->dims[0] != g->D || g->N <= 0 || g->Hq % g->N || g->Hv % g->N || g->Hq * 2 + g->Hv != g->Htot)
        return ref_fail(c->err, REF_E_SHAPE, "Attention: weights [%lld, %lld] for input width %lld and %lld heads",
                        (long long)w->dims[0], (long long)g->Htot, (long long)g->D, (long long)g->N);
    if (b && (b->dtype != REF_DT_FLOAT || ref_tensor_numel(b) != g->Htot))
        return ref_fail(c->err, REF_E_SHAPE, "Attention: input 2 (bias) must be float [%lld]", (long long)g->Htot);
    if (in_at(c, q ? 8 : 4) || (c->n_out > 1 && c->out[1]))
        return ref_fail(c->err, REF_E_UNSUPPORTED, "%s: input %d (past) and output 1 (present) are not supported",
                        c->node->op_type, q ? 8 : 4);
    int rc = q ? qparams(c, g) : REF_OK;
    return rc ? rc : masks(c, g, q ? 5 : 3, "mask_index", q ? -1 : 5);
}

static int att_infer(ref_op_ctx *c)
{
    att_geom g;
    int rc = geom(c, &g);
    if (rc)
        return rc;
    c->out[0]->dtype = REF_DT_FLOAT;
    ref_tensor_set_shape(c->out[0], 3, (int64_t[]){g.B, g.S, g.Hv});
    return REF_OK;
}

/* Scratch: Q, K and V for every token, the projection's GEMM scratch, then per thread a score matrix and the GEMM
 * scratch of the larger of the two per-head products. */
static size_t per_thread(const att_geom *g)
{
    size_t a = ref_sgemm_scratch_bytes(g->S, g->T, g->hq, false, false, 1);
    size_t b = ref_sgemm_scratch_bytes(g->S, g->hv, g->T, false, false, 1);
    return ((size_t)(g->S * g->T) * sizeof(float) + 63) / 64 * 64 + ((a > b ? a : b) + 63) / 64 * 64;
}

static size_t qkv_bytes(const att_geom *g) { return ((size_t)(g->B * g->S * g->Htot) * sizeof(float) + 63) / 64 * 64; }

/* QAttention: the float input and (unless prepare dequantized them once) weights before the same products. */
static size_t deq_bytes(const ref_op_ctx *c, const att_geom *g)
{
    int64_t w = c->state ? 0 : g->D * g->Htot;
    return is_q(c) ? ((size_t)(g->B * g->S * g->D + w) * sizeof(float) + 127) / 64 * 64 : 0;
}

static size_t att_scratch(const ref_op_ctx *c)
{
    att_geom g;
    ref_error quiet = {0};
    ref_op_ctx q = *c;
    q.err = &quiet;
    if (geom(&q, &g))
        return 0;
    size_t proj = ref_sgemm_scratch_bytes(g.B * g.S, g.Htot, g.D, false, false, c->n_threads);
    size_t heads = per_thread(&g) * (size_t)(c->n_threads > 0 ? c->n_threads : 1);
    return deq_bytes(c, &g) + qkv_bytes(&g) + (proj > heads ? proj : heads);
}

typedef struct {
    const att_geom *g;
    float *y;
    char *scratch; /* per thread */
    int rc;
} att_task;

/* Score row i of batch b, head n, after scale Q K^T: the mask's and the bias's terms. */
static void mask_row(const att_geom *g, int64_t b, int64_t n, int64_t i, float *row)
{
    const ref_tensor *m = g->mask, *ab = g->abias;
    const int32_t *md = m ? m->data : NULL;
    for (int64_t j = 0; j < g->T; j++) {
        bool off = g->causal && j > i;
        if (m && m->rank == 1)
            off |= j >= md[b];
        else if (m && m->rank == 2)
            off |= md[b * g->T + j] == 0;
        else if (m)
            off |= md[(b * g->S + i) * g->T + j] == 0;
        if (off)
            row[j] += g->filter;
    }
    if (ab) {
        const float *a = (const float *)ab->data +
                         (((ab->dims[0] == 1 ? 0 : b) * ab->dims[1] + (ab->dims[1] == 1 ? 0 : n)) * g->S + i) * g->T;
        for (int64_t j = 0; j < g->T; j++)
            row[j] += a[j];
    }
}

static void head_fn(void *arg, int64_t begin, int64_t end, int tid)
{
    att_task *t = arg;
    const att_geom *g = t->g;
    size_t pt = per_thread(g), sc = ((size_t)(g->S * g->T) * sizeof(float) + 63) / 64 * 64;
    float *scores = (float *)(t->scratch + pt * (size_t)tid);
    void *gs = (char *)scores + sc;
    ref_rows_softmax_fn softmax = ref_rows_softmax();
    for (int64_t p = begin; p < end; p++) {
        int64_t b = p / g->N, n = p % g->N;
        const float *q = g->q + b * g->bq + n * g->hq, *k = g->k + b * g->bk + n * g->hq, *v = g->v + b * g->bv + n * g->hv;
        ref_sgemm_operand A = {.data = q, .ld = g->ldq}, Bk = {.data = k, .ld = g->ldk, .trans = true};
        ref_error err = {0};
        int rc = ref_sgemm(NULL, g->S, g->T, g->hq, g->scale, &A, &Bk, 0.0f, scores, g->T, gs, pt - sc, &err);
        for (int64_t i = 0; !rc && i < g->S; i++) {
            mask_row(g, b, n, i, scores + i * g->T);
            softmax(scores + i * g->T, scores + i * g->T, g->T);
        }
        ref_sgemm_operand P = {.data = scores, .ld = g->T}, V = {.data = v, .ld = g->ldv};
        if (!rc)
            rc = ref_sgemm(NULL, g->S, g->hv, g->T, 1.0f, &P, &V, 0.0f, t->y + b * g->S * g->Hv + n * g->hv, g->Hv, gs,
                           pt - sc, &err);
        if (rc)
            t->rc = rc; /* only a scratch mis-sizing: every thread would see the same */
    }
}

/* f = (t - z) * s over t's elements, z and s one value or one per column of `cols` columns. */
static void deq(const ref_tensor *t, const ref_tensor *s, const ref_tensor *z, int64_t cols, float *f)
{
    const float *sd = s->data;
    int64_t n = ref_tensor_numel(t), ns = ref_tensor_numel(s), nz = z ? ref_tensor_numel(z) : 0;
    bool s8 = t->dtype == REF_DT_INT8;
    for (int64_t i = 0; i < n; i++) {
        int64_t col = i % cols;
        int v = s8 ? ((const int8_t *)t->data)[i] : ((const uint8_t *)t->data)[i];
        int zv = !z ? 0 : s8 ? ((const int8_t *)z->data)[nz == 1 ? 0 : col] : ((const uint8_t *)z->data)[nz == 1 ? 0 : col];
        f[i] = (float)(v - zv) * sd[ns == 1 ? 0 : col];
    }
}

/* QAttention with constant weights, scales and zero points: the float weights once. */
typedef struct {
    float *w;
    size_t bytes;
} qatt_state;

static void qatt_state_free(void *s)
{
    if (s)
        ref_free(((qatt_state *)s)->w);
    ref_free(s);
}

static size_t qatt_state_bytes(const void *s) { return s ? ((const qatt_state *)s)->bytes : 0; }

static int qatt_prepare(ref_op_ctx *c, void **state)
{
    const ref_tensor *w = in_at(c, 1), *ws = in_at(c, 4), *wz = in_at(c, 7);
    att_geom g;
    ref_error quiet = {0};
    ref_op_ctx q = *c;
    q.err = &quiet;
    if (geom(&q, &g) || !w->data || !ws->data || (wz && !wz->data))
        return REF_OK; /* infer says what is wrong; or dequantized per run */
    qatt_state *st = ref_calloc(1, sizeof *st);
    if (st) {
        st->bytes = (size_t)(g.D * g.Htot) * sizeof(float);
        st->w = ref_aligned_alloc(st->bytes);
    }
    if (!st || !st->w) {
        qatt_state_free(st);
        return ref_fail(c->err, REF_E_NOMEM, "QAttention: out of memory for %lld x %lld float weights", (long long)g.D,
                        (long long)g.Htot);
    }
    deq(w, ws, wz, g.Htot, st->w);
    *state = st;
    return REF_OK;
}

static int att_run(ref_op_ctx *c)
{
    att_geom g;
    int rc = geom(c, &g);
    if (rc)
        return rc;
    if (c->scratch_bytes < att_scratch(c))
        return ref_fail(c->err, REF_E_STATE, "Attention: scratch too small");
    size_t dq = deq_bytes(c, &g);
    float *qkv = (float *)((char *)c->scratch + dq);
    char *rest = (char *)qkv + qkv_bytes(&g);
    size_t rest_bytes = c->scratch_bytes - dq - qkv_bytes(&g);
    const ref_tensor *b = in_at(c, 2);
    ref_sgemm_operand X = {.data = c->in[0]->data, .ld = g.D}, W = {.data = c->in[1]->data, .ld = g.Htot};
    if (dq) { /* QAttention: x and w dequantized (products of integers below 2^24 are exact in float) */
        float *xf = c->scratch, *wf = c->state ? ((const qatt_state *)c->state)->w : xf + g.B * g.S * g.D;
        deq(c->in[0], in_at(c, 3), in_at(c, 6), 1, xf);
        if (!c->state)
            deq(c->in[1], in_at(c, 4), in_at(c, 7), g.Htot, wf);
        X.data = xf, W.data = wf;
    }
    int64_t M = g.B * g.S;
    if (b) /* the bias seeds every row, then beta 1 adds the product */
        for (int64_t r = 0; r < M; r++)
            memcpy(qkv + r * g.Htot, b->data, sizeof(float) * (size_t)g.Htot);
    if ((rc = ref_sgemm(c->pool, M, g.Htot, g.D, 1.0f, &X, &W, b ? 1.0f : 0.0f, qkv, g.Htot, rest, rest_bytes, c->err)))
        return rc;
    g.q = qkv, g.k = qkv + g.Hq, g.v = qkv + 2 * g.Hq, g.ldq = g.ldk = g.ldv = g.Htot;
    g.bq = g.bk = g.bv = g.S * g.Htot;
    att_task t = {.g = &g, .y = c->out[0]->data, .scratch = rest};
    ref_parallel_for(c->pool, g.B * g.N, 1, head_fn, &t);
    return t.rc ? ref_fail(c->err, REF_E_STATE, "Attention: scratch too small for a head") : REF_OK;
}

/* ---- MultiHeadAttention: query, key, value, bias, key_padding_mask, attention_bias (past_key, past_value: refused) */

static int mha_geom(ref_op_ctx *c, att_geom *g)
{
    const ref_tensor *q = in_at(c, 0), *k = in_at(c, 1), *v = in_at(c, 2), *b = in_at(c, 3);
    memset(g, 0, sizeof *g);
    if (!q || !k || !v || q->rank != 3 || k->rank != 3 || v->rank != 3 || q->dtype != REF_DT_FLOAT ||
        k->dtype != REF_DT_FLOAT || v->dtype != REF_DT_FLOAT)
        return ref_fail(c->err, REF_E_UNSUPPORTED,
                        "MultiHeadAttention: only float query [B, S, D], key [B, T, D] and value [B, T, Dv]");
    g->B = q->dims[0], g->S = q->dims[1], g->T = k->dims[1], g->Hq = q->dims[2], g->Hv = v->dims[2];
    g->N = ref_attr_int_or(c->node, "num_heads", 0), g->Htot = 2 * g->Hq + g->Hv;
    if (k->dims[0] != g->B || v->dims[0] != g->B || v->dims[1] != g->T || k->dims[2] != g->Hq || g->N <= 0 ||
        g->Hq % g->N || g->Hv % g->N)
        return ref_fail(c->err, REF_E_SHAPE, "MultiHeadAttention: query, key and value do not fit %lld heads",
                        (long long)g->N);
    if (b && (b->dtype != REF_DT_FLOAT || ref_tensor_numel(b) != g->Htot))
        return ref_fail(c->err, REF_E_SHAPE, "MultiHeadAttention: input 3 (bias) must be float [%lld]",
                        (long long)g->Htot);
    if (in_at(c, 6) || in_at(c, 7) || (c->n_out > 1 && c->out[1]) || (c->n_out > 2 && c->out[2]))
        return ref_fail(c->err, REF_E_UNSUPPORTED,
                        "MultiHeadAttention: inputs 6, 7 (past_key, past_value) and present outputs are not supported");
    return masks(c, g, 4, "key_padding_mask", 5);
}

static int mha_infer(ref_op_ctx *c)
{
    att_geom g;
    int rc = mha_geom(c, &g);
    if (rc)
        return rc;
    c->out[0]->dtype = REF_DT_FLOAT;
    ref_tensor_set_shape(c->out[0], 3, (int64_t[]){g.B, g.S, g.Hv});
    return REF_OK;
}

/* Scratch: biased copies of query, key and value when there is a bias, then the per-thread head buffers. */
static size_t mha_copy_bytes(const att_geom *g, bool bias)
{
    return bias ? ((size_t)(g->B * (g->S * g->Hq + g->T * (g->Hq + g->Hv))) * sizeof(float) + 63) / 64 * 64 : 0;
}

static size_t mha_scratch(const ref_op_ctx *c)
{
    att_geom g;
    ref_error quiet = {0};
    ref_op_ctx q = *c;
    q.err = &quiet;
    if (mha_geom(&q, &g))
        return 0;
    return mha_copy_bytes(&g, in_at(c, 3) != NULL) + per_thread(&g) * (size_t)(c->n_threads > 0 ? c->n_threads : 1);
}

/* dst[r][h] = src[r][h] + bias[h] for rows r < n of width w. */
static void add_rows(float *dst, const float *src, const float *bias, int64_t n, int64_t w)
{
    for (int64_t r = 0; r < n; r++)
        for (int64_t h = 0; h < w; h++)
            dst[r * w + h] = src[r * w + h] + bias[h];
}

static int mha_run(ref_op_ctx *c)
{
    att_geom g;
    int rc = mha_geom(c, &g);
    if (rc)
        return rc;
    if (c->scratch_bytes < mha_scratch(c))
        return ref_fail(c->err, REF_E_STATE, "MultiHeadAttention: scratch too small");
    const ref_tensor *b = in_at(c, 3);
    g.q = c->in[0]->data, g.k = c->in[1]->data, g.v = c->in[2]->data;
    if (b) { /* ORT adds the bias to each before the heads split */
        float *q = c->scratch, *k = q + g.B * g.S * g.Hq, *v = k + g.B * g.T * g.Hq;
        const float *bd = b->data;
        add_rows(q, g.q, bd, g.B * g.S, g.Hq);
        add_rows(k, g.k, bd + g.Hq, g.B * g.T, g.Hq);
        add_rows(v, g.v, bd + 2 * g.Hq, g.B * g.T, g.Hv);
        g.q = q, g.k = k, g.v = v;
    }
    g.ldq = g.ldk = g.Hq, g.ldv = g.Hv, g.bq = g.S * g.Hq, g.bk = g.T * g.Hq, g.bv = g.T * g.Hv;
    att_task t = {.g = &g, .y = c->out[0]->data, .scratch = (char *)c->scratch + mha_copy_bytes(&g, b != NULL)};
    ref_parallel_for(c->pool, g.B * g.N, 1, head_fn, &t);
    return t.rc ? ref_fail(c->err, REF_E_STATE, "MultiHeadAttention: scratch too small for a head") : REF_OK;
}

const ref_op ref_ops_attention_ms[] = {
    {.name = "Attention", .infer = att_infer, .run = att_run, .scratch_bytes = att_scratch},
    {.name = "QAttention", .infer = att_infer, .run = att_run, .scratch_bytes = att_scratch, .prepare = qatt_prepare,
     .state_free = qatt_state_free, .state_bytes = qatt_state_bytes},
    {.name = "MultiHeadAttention", .infer = mha_infer, .run = mha_run, .scratch_bytes = mha_scratch},
    {.name = NULL},
};
