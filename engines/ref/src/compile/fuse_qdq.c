/* fuse_qdq.c: the QDQ form of a quantized MatMul (quantize_static's: MatMul reading DequantizeLinear of an 8-bit
 * activation and the constant-folded DequantizeLinear of 8-bit weights) becomes com.microsoft MatMulIntegerToFloat on
 * the 8-bit values, whose integer GEMM sums exactly and scales once, as ONNX Runtime fuses it; the activation's
 * DequantizeLinear is elided when nothing else reads it and the weights' float copy freed. Results then differ from
 * the float Q/DQ arithmetic only by that one rounding, as ORT's do (options: fuse_qdq=off keeps the float path).
 * It must never fuse what MatMulIntegerToFloat cannot compute: per-axis scales other than B's columns, blocked
 * scales, non-constant weights or parameters, or a DequantizeLinear whose output the graph returns. */
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
    if (c->readers[a] == 0 && !c->vals[a].graph_output) { /* the activation's float copy: nothing reads it now */
        ref_readers_node(c, da_k, -1);
        c->nodes[da_k].elided = true;
        c->only_reader[a] = -1;
    }
    ref_value *f = &c->vals[wf];
    if (c->readers[wf] == 0 && !f->graph_output && f->owned && !f->half_copy) { /* the folded float weights */
        ref_free(f->owned);
        f->owned = NULL;
        f->t.data = NULL;
        c->only_reader[wf] = -1;
    }
    *done = true;
    return REF_OK;
}

int ref_fuse_qdq(ref_compiled *c, ref_error *err)
{
    const ref_op *mmif = ref_op_find("com.microsoft", "MatMulIntegerToFloat");
    for (int k = 0; mmif && k < c->n_nodes; k++) {
        bool done;
        int rc = fuse_one(c, k, mmif, &done, err);
        if (rc)
            return rc;
    }
    return REF_OK;
}
