/* affine.c: folds a per-channel affine map that follows a Conv or Gemm into its weights at compile time:
 * BatchNormalization (y*s + t with s = scale/sqrt(var + eps), t = B - mean*s), Mul by a constant (s) and Add of a
 * constant (t). W' = W*s per output channel, bias' = bias*s + t; the Conv or Gemm then writes the affine node's
 * output and that node is elided. It must never change what the model computes beyond float rounding, nor touch
 * the model: new weights are constants the compiled model owns, and the originals stay for other readers. */
#include <math.h>
#include <string.h>

#include "../alloc.h"
#include "../ops/half_convert.h"
#include "compiled.h"

/* The folding of one consumer: s and t per output channel. */
typedef struct {
    int node;      /* the affine node */
    float *s, *t;  /* n_ch each, heap */
} affine_map;

bool ref_exec_is_op(const ref_exec_node *e, const char *op)
{
    return !e->node->domain[0] && !strcmp(e->node->op_type, op);
}

/* A float32 constant with values: its data, or float16 bytes still to widen (half.c; only a Conv's weight). */
static bool is_float_const(const ref_compiled *c, int v)
{
    return v >= 0 && c->vals[v].kind == REF_VAL_CONST && c->vals[v].t.dtype == REF_DT_FLOAT &&
           (c->vals[v].t.data || c->vals[v].half_later);
}

/* The only node reading v, or -1 when none or several read it (or it is a graph output). */
int ref_only_consumer(const ref_compiled *c, int v)
{
    if (v < 0 || v >= c->n_vals || c->vals[v].kind != REF_VAL_ACT || c->vals[v].graph_output)
        return -1;
    return c->only_reader[v] >= 0 ? c->only_reader[v] : -1;
}

/* Does constant shape t broadcast against [*, n_ch, 1...] (output rank out_rank, channel axis 1) per channel
 * only? Then *per_ch tells whether it varies with the channel (else it is one value). */
static bool channel_const(const ref_tensor *t, int out_rank, int64_t n_ch, bool *per_ch)
{
    int64_t n = ref_tensor_numel(t);
    *per_ch = n != 1;
    if (n == 1)
        return t->rank <= out_rank;
    if (t->rank > out_rank || t->rank < out_rank - 1 || n != n_ch)
        return false;
    int ch_dim = t->rank - (out_rank - 1); /* which of t's dims lines up with axis 1 */
    return t->dims[ch_dim] == n_ch;
}

static int new_map(affine_map *m, int node, int64_t n_ch, ref_error *err)
{
    m->node = node;
    m->s = ref_malloc(sizeof(float) * (size_t)n_ch);
    m->t = ref_malloc(sizeof(float) * (size_t)n_ch);
    if (!m->s || !m->t) {
        ref_free(m->s);
        ref_free(m->t);
        return ref_fail(err, REF_E_NOMEM, "compile: out of memory folding %lld channels", (long long)n_ch);
    }
    return REF_OK;
}

/* BatchNormalization in inference mode, every parameter a float constant of n_ch values. */
static int map_bn(const ref_compiled *c, int m, int64_t n_ch, affine_map *out, ref_error *err)
{
    const ref_exec_node *e = &c->nodes[m];
    if (ref_attr_int_or(e->node, "training_mode", 0) || (c->opset < 9 && !ref_attr_int_or(e->node, "spatial", 1)))
        return 0;
    for (int j = 1; j < e->n_out; j++)
        if (e->out[j] >= 0)
            return 0;
    if (e->n_in != 5)
        return 0;
    for (int j = 1; j < 5; j++)
        if (!is_float_const(c, e->in[j]) || ref_tensor_numel(&c->vals[e->in[j]].t) != n_ch)
            return 0;
    const float *sc = c->vals[e->in[1]].t.data, *b = c->vals[e->in[2]].t.data;
    const float *mean = c->vals[e->in[3]].t.data, *var = c->vals[e->in[4]].t.data;
    double eps = ref_attr_float_or(e->node, "epsilon", 1e-5f);
    if (new_map(out, m, n_ch, err))
        return -1;
    for (int64_t i = 0; i < n_ch; i++) {
        double s = sc[i] / sqrt((double)var[i] + eps);
        out->s[i] = (float)s;
        out->t[i] = (float)(b[i] - mean[i] * s);
    }
    return 1;
}

/* Mul by, or Add of, a float constant varying at most along the channel axis. */
static int map_mul_add(const ref_compiled *c, int m, int y, int out_rank, int64_t n_ch, affine_map *out,
                       ref_error *err)
{
    const ref_exec_node *e = &c->nodes[m];
    bool mul = ref_exec_is_op(e, "Mul");
    if (e->n_in != 2 || e->n_out != 1)
        return 0;
    int k = e->in[0] == y ? e->in[1] : e->in[0];
    bool per_ch;
    if (k == y || !is_float_const(c, k) || !channel_const(&c->vals[k].t, out_rank, n_ch, &per_ch))
        return 0;
    const float *v = c->vals[k].t.data;
    if (new_map(out, m, n_ch, err))
        return -1;
    for (int64_t i = 0; i < n_ch; i++) {
        float x = v[per_ch ? i : 0];
        out->s[i] = mul ? x : 1.0f;
        out->t[i] = mul ? 0.0f : x;
    }
    return 1;
}

/* Append a constant value owning data (ref_malloc'd, taken even on failure). */
static int add_const(ref_compiled *c, int like, const ref_tensor *shape, void *data, int *id, ref_error *err)
{
    if (ref_vals_grow(c, err)) {
        ref_free(data);
        return err ? err->code : REF_E_NOMEM;
    }
    ref_value *v = &c->vals[c->n_vals];
    memset(v, 0, sizeof *v);
    v->name = c->vals[like].name;
    v->kind = REF_VAL_CONST;
    v->t = *shape;
    v->t.data = data;
    v->owned = data;
    v->producer = -1;
    *id = c->n_vals++;
    return REF_OK;
}

/* Keep a buffer until the compiled model is freed. */
int ref_compile_keep(ref_compiled *c, void *p, ref_error *err)
{
    if (c->n_extra == c->cap_extra) {
        int cap = c->cap_extra ? 2 * c->cap_extra : 8;
        void **x = ref_realloc(c->extra, sizeof *x * (size_t)cap);
        if (!x) {
            ref_free(p);
            return ref_fail(err, REF_E_NOMEM, "compile: out of memory folding a node");
        }
        c->extra = x;
        c->cap_extra = cap;
    }
    c->extra[c->n_extra++] = p;
    return REF_OK;
}

/* New weight and bias for producer k under map m, then k writes m's output and m is elided. */
static int apply(ref_compiled *c, int k, bool gemm, int64_t n_ch, const affine_map *m, ref_error *err)
{
    ref_exec_node *e = &c->nodes[k];
    const ref_tensor wt = c->vals[e->in[1]].t, *w = &wt; /* a copy: add_const moves c->vals */
    int64_t n = ref_tensor_numel(w);
    bool tb = gemm && ref_attr_int_or(e->node, "transB", 0);
    float beta = gemm ? ref_attr_float_or(e->node, "beta", 1.0f) : 1.0f;
    int has_b = e->n_in > 2 && e->in[2] >= 0;
    float *nw = ref_aligned_alloc(sizeof(float) * (size_t)(n ? n : 1));
    float *nb = ref_aligned_alloc(sizeof(float) * (size_t)n_ch);
    int *in = ref_malloc(sizeof(int) * 3);
    if (!nw || !nb || !in) {
        ref_free(nw);
        ref_free(nb);
        ref_free(in);
        return ref_fail(err, REF_E_NOMEM, "compile: out of memory folding into a %s", e->node->op_type);
    }
    const float *x = w->data, *b = has_b ? c->vals[e->in[2]].t.data : NULL;
    if (c->vals[e->in[1]].half_later) { /* float16 weights: widened into nw and scaled there, no copy between */
        ref_half_to_float_n(c->vals[e->in[1]].half, nw, n);
        x = nw;
    }
    int64_t inner = n / n_ch;
    for (int64_t i = 0; i < n; i++) /* Conv and Gemm with transB: channel-major; Gemm [K, N]: channel last */
        nw[i] = x[i] * m->s[gemm && !tb ? i % n_ch : i / inner];
    bool b_per_ch = has_b && ref_tensor_numel(&c->vals[e->in[2]].t) != 1;
    for (int64_t i = 0; i < n_ch; i++) {
        double bi = has_b ? (double)b[b_per_ch ? i : 0] * beta : 0.0;
        nb[i] = (float)((bi * m->s[i] + m->t[i]) / beta);
    }
    ref_tensor bshape = {.dtype = REF_DT_FLOAT, .rank = 1, .dims = {n_ch}};
    int wid, bid, rc;
    memcpy(in, e->in, sizeof(int) * (size_t)(e->n_in < 3 ? e->n_in : 3));
    if ((rc = ref_compile_keep(c, in, err))) {
        ref_free(nw);
        ref_free(nb);
        return rc;
    }
    if ((rc = add_const(c, e->in[1], w, nw, &wid, err))) {
        ref_free(nb);
        return rc;
    }
    if ((rc = add_const(c, e->in[1], &bshape, nb, &bid, err)))
        return rc;
    ref_exec_node *a = &c->nodes[m->node];
    int y = e->out[0], z = a->out[0];
    in[1] = wid;
    in[2] = bid;
    ref_readers_node(c, k, -1);
    ref_readers_node(c, m->node, -1);
    e->in = in;
    e->n_in = 3;
    ref_readers_node(c, k, 1);
    c->only_reader[wid] = c->only_reader[bid] = k;
    if (c->max_in < 3)
        c->max_in = 3;
    e->out[0] = z;
    c->vals[z].producer = k;
    c->vals[y].producer = m->node; /* dead: produced by an elided node, never planned */
    a->elided = true;
    return REF_OK;
}

/* The channel count and output rank of producer k when its weights can take a fold; 0 when they cannot. */
static int64_t foldable(const ref_compiled *c, int k, bool *gemm, int *out_rank)
{
    const ref_exec_node *e = &c->nodes[k];
    *gemm = ref_exec_is_op(e, "Gemm");
    if ((!*gemm && !ref_exec_is_op(e, "Conv")) || e->folded || e->elided || e->n_out != 1 || e->out[0] < 0 ||
        e->n_in < 2)
        return 0;
    if (!is_float_const(c, e->in[1]) || (e->n_in > 2 && e->in[2] >= 0 && !is_float_const(c, e->in[2])))
        return 0;
    const ref_tensor *w = &c->vals[e->in[1]].t;
    int64_t n_ch = *gemm ? w->dims[ref_attr_int_or(e->node, "transB", 0) ? 0 : 1] : w->dims[0];
    if (w->rank < (*gemm ? 2 : 3) || (*gemm && w->rank != 2) || n_ch <= 0)
        return 0;
    if (*gemm && ref_attr_float_or(e->node, "beta", 1.0f) == 0.0f)
        return 0; /* the bias would be ignored */
    if (e->n_in > 2 && e->in[2] >= 0) {
        const ref_tensor *b = &c->vals[e->in[2]].t;
        int64_t nb = ref_tensor_numel(b);
        if (!(nb == n_ch && (b->rank == 1 || (b->rank == 2 && b->dims[0] == 1))) && !(nb == 1 && *gemm))
            return 0;
    }
    *out_rank = *gemm ? 2 : w->rank;
    return n_ch;
}

int ref_fold_affine(ref_compiled *c, ref_error *err)
{
    for (int k = 0; k < c->n_nodes; k++) {
        for (;;) {
            bool gemm;
            int out_rank, rc = 0;
            int64_t n_ch = foldable(c, k, &gemm, &out_rank);
            int y = c->nodes[k].out[0], m = n_ch ? ref_only_consumer(c, y) : -1;
            if (m < 0 || c->nodes[m].elided || c->nodes[m].folded)
                break;
            affine_map map = {0};
            const ref_exec_node *a = &c->nodes[m];
            if (a->out[0] < 0)
                break;
            if (ref_exec_is_op(a, "BatchNormalization") && a->in[0] == y)
                rc = map_bn(c, m, n_ch, &map, err);
            else if (ref_exec_is_op(a, "Mul") || ref_exec_is_op(a, "Add"))
                rc = map_mul_add(c, m, y, out_rank, n_ch, &map, err);
            if (rc < 0)
                return err ? err->code : REF_E_NOMEM;
            if (rc == 0)
                break;
            int old_w = c->nodes[k].in[1];
            rc = apply(c, k, gemm, n_ch, &map, err);
            ref_free(map.s);
            ref_free(map.t);
            if (rc)
                return rc;
            /* one layer at a time: the raw and folded copies of every weight never coexist */
            ref_release_unread(c, old_w);
        }
    }
    return REF_OK;
}
