/* fuse_qdq.c: the QDQ forms quantize_static writes, run on 8-bit values as ONNX Runtime fuses them: MatMul reading
 * DequantizeLinear of an 8-bit activation and the constant-folded DequantizeLinear of 8-bit weights becomes
 * com.microsoft MatMulIntegerToFloat (integer GEMM, scaled once); Conv reading the same, with its bias dequantized
 * from int32 at the input's times the weights' scale, and read only by a QuantizeLinear (through a Relu that the
 * output's zero point at the type's minimum makes redundant) becomes QLinearConv writing the QuantizeLinear's output.
 * The activation's DequantizeLinear is elided when nothing else reads it and the float copies of weights and bias
 * freed. Results differ from the float Q/DQ arithmetic only by those roundings, as ORT's do (fuse_qdq=off keeps it).
 * It must never fuse what the integer operators cannot compute: per-axis scales other than B's columns or the output
 * channels, blocked scales, non-constant weights or parameters, a bias at another scale, a DequantizeLinear or
 * a Conv output the graph returns or another node reads. */
#include <string.h>

#include "../alloc.h"
#include "../ops/quant.h"
#include "compiled.h"

static const ref_value *cval(const ref_compiled *c, int v)
{
    return v >= 0 && c->vals[v].kind == REF_VAL_CONST && c->vals[v].t.data ? &c->vals[v] : NULL;
}

/* The DequantizeLinear producing v, when it has a constant float scale of at most n_scale values and a constant
 * 8-bit zero point of the scale's size (x's type), and no block size; else NULL. */
static const ref_exec_node *dq_of(const ref_compiled *c, int v, int64_t n_scale)
{
    int p = v >= 0 ? c->vals[v].producer : -1;
    const ref_exec_node *d = p >= 0 ? &c->nodes[p] : NULL;
    if (!d || !ref_exec_is_op(d, "DequantizeLinear") || d->elided || d->n_in < 3 || d->n_out != 1 ||
        ref_attr_int_or(d->node, "block_size", 0) != 0)
        return NULL;
    const ref_value *s = cval(c, d->in[1]), *z = cval(c, d->in[2]);
    if (!s || s->t.dtype != REF_DT_FLOAT || !z || !ref_quant_int8(z->t.dtype))
        return NULL;
    int64_t ns = ref_tensor_numel(&s->t);
    return (ns == 1 || ns == n_scale) && ref_tensor_numel(&z->t) == ns ? d : NULL;
}

/* Node k elided: nothing it reads counts as read by it, nothing runs it. */
static void elide(ref_compiled *c, int k)
{
    ref_readers_node(c, k, -1);
    c->nodes[k].elided = true;
}

/* Value v (an activation produced by running node p, or a folded constant when p < 0) once nothing reads it: its
 * producer elided, or its float data freed. */
static void drop_unread(ref_compiled *c, int v, int p)
{
    if (v < 0 || c->readers[v] != 0 || c->vals[v].graph_output)
        return;
    ref_value *f = &c->vals[v];
    if (p >= 0 && !c->nodes[p].folded && !c->nodes[p].elided) { /* the activation's float copy */
        elide(c, p);
        c->only_reader[v] = -1;
    } else if (p < 0 && f->kind == REF_VAL_CONST && f->owned && !f->half_copy) { /* folded float weights or bias */
        ref_free(f->owned);
        f->owned = NULL;
        f->t.data = NULL;
        c->only_reader[v] = -1;
    }
}

/* Rewrite MatMul k when it has the QDQ form; *done says whether it did. */
static int fuse_one(ref_compiled *c, int k, const ref_op *mmif, bool *done, ref_error *err)
{
    ref_exec_node *e = &c->nodes[k];
    *done = false;
    if (!ref_exec_is_op(e, "MatMul") || e->folded || e->elided || e->n_in != 2 || e->n_out != 1)
        return REF_OK;
    const ref_value *w = cval(c, e->in[1]);
    if (!w || w->t.rank != 2 || w->t.dtype != REF_DT_FLOAT || w->graph_output)
        return REF_OK;
    int64_t N = w->t.dims[1];
    const ref_exec_node *da = dq_of(c, e->in[0], 1), *dw = dq_of(c, e->in[1], N);
    if (!da || da->folded || !dw || !dw->folded)
        return REF_OK;
    const ref_value *wq = cval(c, dw->in[0]);
    int64_t axis = ref_attr_int_or(dw->node, "axis", 1);
    if (!wq || !ref_quant_int8(wq->t.dtype) || wq->t.rank != 2 ||
        (ref_tensor_numel(&c->vals[dw->in[1]].t) > 1 && axis != 1 && axis != -1))
        return REF_OK;
    int *in = ref_malloc(sizeof *in * 6);
    if (!in)
        return ref_fail(err, REF_E_NOMEM, "compile: out of memory fusing MatMul '%s'", e->node->name);
    int rc = ref_compile_keep(c, in, err);
    if (rc)
        return rc;
    int a = e->in[0], wf = e->in[1], da_k = c->vals[a].producer;
    in[0] = da->in[0], in[1] = dw->in[0], in[2] = da->in[1], in[3] = dw->in[1], in[4] = da->in[2], in[5] = dw->in[2];
    ref_readers_node(c, k, -1);
    e->in = in;
    e->n_in = 6;
    e->op = mmif;
    if (c->max_in < 6) /* argument arrays are sized by it */
        c->max_in = 6;
    ref_readers_node(c, k, +1);
    for (int j = 0; j < 6; j++) {
        c->only_reader[in[j]] = -2; /* read by the DequantizeLinear nodes too */
        if (c->vals[in[j]].last_use < k) /* the 8-bit activation now lives until k (the planner reads this) */
            c->vals[in[j]].last_use = k;
    }
    drop_unread(c, a, da_k);
    drop_unread(c, wf, -1);
    *done = true;
    return REF_OK;
}

/* The folded DequantizeLinear's int32 bias behind Conv input v, when its scale is x's times w's (per channel) and its
 * zero point absent or 0; else -1. */
static int bias_q(const ref_compiled *c, int v, float sx, const ref_value *sw, int64_t cout)
{
    int p = v >= 0 && c->vals[v].kind == REF_VAL_CONST ? c->vals[v].producer : -1;
    const ref_exec_node *d = p >= 0 ? &c->nodes[p] : NULL;
    if (!d || !ref_exec_is_op(d, "DequantizeLinear") || !d->folded || d->n_in < 2)
        return -1;
    const ref_value *b = cval(c, d->in[0]), *s = cval(c, d->in[1]), *z = d->n_in > 2 ? cval(c, d->in[2]) : NULL;
    if (!b || b->t.dtype != REF_DT_INT32 || ref_tensor_numel(&b->t) != cout || !s || s->t.dtype != REF_DT_FLOAT ||
        (d->n_in > 2 && d->in[2] >= 0 && !z))
        return -1;
    int64_t ns = ref_tensor_numel(&s->t), nw = ref_tensor_numel(&sw->t);
    for (int64_t i = 0; z && i < ref_tensor_numel(&z->t); i++)
        if (ref_quant_at(&z->t, i) != 0)
            return -1;
    for (int64_t ch = 0; ch < cout; ch++)
        if (((const float *)s->t.data)[ns == 1 ? 0 : ch] != sx * ((const float *)sw->t.data)[nw == 1 ? 0 : ch])
            return -1;
    return d->in[0];
}

/* The QuantizeLinear reading Conv output y (directly, or through a Relu its zero point makes redundant), with a
 * constant float scalar scale and 8-bit scalar zero point; its node index, and the Relu's (or -1) in *relu. */
static int q_after(const ref_compiled *c, int y, int *relu)
{
    int m = ref_only_consumer(c, y);
    *relu = -1;
    if (m >= 0 && ref_exec_is_op(&c->nodes[m], "Relu") && c->nodes[m].n_out == 1) {
        *relu = m;
        m = c->nodes[m].out[0] >= 0 ? ref_only_consumer(c, c->nodes[m].out[0]) : -1;
    }
    const ref_exec_node *q = m >= 0 ? &c->nodes[m] : NULL;
    if (!q || !ref_exec_is_op(q, "QuantizeLinear") || q->elided || q->n_in < 3 || q->n_out != 1 || q->out[0] < 0)
        return -1;
    const ref_value *s = cval(c, q->in[1]), *z = cval(c, q->in[2]);
    if (!s || s->t.dtype != REF_DT_FLOAT || ref_tensor_numel(&s->t) != 1 || !z || !ref_quant_int8(z->t.dtype) ||
        ref_tensor_numel(&z->t) != 1)
        return -1;
    int zmin = z->t.dtype == REF_DT_UINT8 ? 0 : -128;
    return *relu < 0 || (int)ref_quant_at(&z->t, 0) == zmin ? m : -1;
}

/* Rewrite Conv k into QLinearConv when it has the QDQ form; *done says whether it did. */
static int fuse_conv(ref_compiled *c, int k, const ref_op *qconv, bool *done, ref_error *err)
{
    ref_exec_node *e = &c->nodes[k];
    *done = false;
    if (!ref_exec_is_op(e, "Conv") || e->folded || e->elided || e->act || e->n_in < 2 || e->n_out != 1 ||
        e->out[0] < 0 || c->vals[e->out[0]].graph_output)
        return REF_OK;
    const ref_value *w = cval(c, e->in[1]);
    if (!w || w->t.dtype != REF_DT_FLOAT || w->t.rank < 3 || w->graph_output)
        return REF_OK;
    int64_t cout = w->t.dims[0];
    const ref_exec_node *da = dq_of(c, e->in[0], 1), *dw = dq_of(c, e->in[1], cout);
    if (!da || da->folded || !dw || !dw->folded)
        return REF_OK;
    const ref_value *wq = cval(c, dw->in[0]), *sw = &c->vals[dw->in[1]];
    if (!wq || !ref_quant_int8(wq->t.dtype) || (ref_tensor_numel(&sw->t) > 1 && ref_attr_int_or(dw->node, "axis", 1)))
        return REF_OK;
    bool has_b = e->n_in > 2 && e->in[2] >= 0;
    int bq = has_b ? bias_q(c, e->in[2], (float)ref_quant_at(&c->vals[da->in[1]].t, 0), sw, cout) : -1;
    int relu, qk = q_after(c, e->out[0], &relu);
    if ((has_b && bq < 0) || qk < 0)
        return REF_OK;
    int *in = ref_malloc(sizeof *in * 9);
    if (!in)
        return ref_fail(err, REF_E_NOMEM, "compile: out of memory fusing Conv '%s'", e->node->name);
    int rc = ref_compile_keep(c, in, err);
    if (rc)
        return rc;
    const ref_exec_node *q = &c->nodes[qk];
    int a = e->in[0], wf = e->in[1], bf = has_b ? e->in[2] : -1, y = e->out[0], z = q->out[0];
    int ins[9] = {da->in[0], da->in[1], da->in[2], dw->in[0], dw->in[1], dw->in[2], q->in[1], q->in[2], bq};
    memcpy(in, ins, sizeof ins);
    ref_readers_node(c, k, -1);
    e->in = in;
    e->n_in = has_b ? 9 : 8;
    e->op = qconv;
    e->out[0] = z;
    ref_readers_node(c, k, +1);
    c->vals[z].producer = k;
    c->vals[y].producer = qk; /* dead: produced by an elided node, never planned */
    if (relu >= 0)
        elide(c, relu);
    elide(c, qk);
    if (c->max_in < 9)
        c->max_in = 9;
    for (int j = 0; j < e->n_in; j++) {
        c->only_reader[in[j]] = -2;
        if (c->vals[in[j]].last_use < k)
            c->vals[in[j]].last_use = k;
    }
    drop_unread(c, a, c->vals[a].producer);
    drop_unread(c, wf, -1);
    drop_unread(c, bf, -1);
    *done = true;
    return REF_OK;
}

int ref_fuse_qdq(ref_compiled *c, ref_error *err)
{
    const ref_op *mmif = ref_op_find("com.microsoft", "MatMulIntegerToFloat"), *qconv = ref_op_find("", "QLinearConv");
    for (int k = 0; mmif && qconv && k < c->n_nodes; k++) {
        bool done;
        int rc = fuse_one(c, k, mmif, &done, err);
        if (!rc && !done)
            rc = fuse_conv(c, k, qconv, &done, err);
        if (rc)
            return rc;
    }
    return REF_OK;
}
