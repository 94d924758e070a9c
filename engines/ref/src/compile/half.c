/* half.c: float16 graphs run in float32: float16 constants become float32 copies the compiled model owns, and a
 * Cast to float16 keeps float32 storage rounded to float16. A Conv's weight stays float16 (mapped, with mmap=on)
 * until pre-packing widens it, one layer at a time, so no whole float32 copy of the weights ever exists.
 * It must never touch a graph without float16 in its interface or constants, nor modify the model. */
#include <string.h>

#include "../alloc.h"
#include "../ops/half_convert.h"
#include "compiled.h"

static bool has_half(const ref_compiled *c)
{
    if (c->parent)
        return c->parent->half;
    for (int i = 0; i < c->n_inputs; i++) {
        const ref_value *v = &c->vals[c->inputs[i]];
        if ((v->declared ? v->declared->elem_type : v->t.dtype) == REF_DT_FLOAT16)
            return true;
    }
    for (size_t i = 0; i < c->graph->n_outputs; i++)
        if (c->graph->outputs[i].elem_type == REF_DT_FLOAT16)
            return true;
    for (int v = 0; v < c->n_vals; v++)
        if (c->vals[v].kind == REF_VAL_CONST && c->vals[v].t.dtype == REF_DT_FLOAT16)
            return true;
    return false;
}

/* The float32 copy of v's float16 bytes (val->half), owned by v. Fails with REF_E_NOMEM, v unchanged. */
static int widen(ref_compiled *c, int v, ref_error *err)
{
    ref_value *val = &c->vals[v];
    int64_t n = ref_tensor_numel(&val->t);
    float *f = ref_aligned_alloc((size_t)(n > 0 ? n : 1) * sizeof *f);
    if (!f)
        return ref_fail(err, REF_E_NOMEM, "compile: out of memory converting float16 constant '%s' (%lld values)",
                        val->name, (long long)n);
    if (n > 0 && val->half)
        ref_half_to_float_n(val->half, f, n);
    ref_free(val->owned);
    val->owned = f;
    val->t.data = f;
    val->t.dtype = REF_DT_FLOAT;
    val->half_copy = true;
    val->half_later = false;
    return REF_OK;
}

static int convert_const(ref_compiled *c, int v, ref_error *err)
{
    c->vals[v].half = c->vals[v].t.data;
    return widen(c, v, err);
}

int ref_half_widen(ref_compiled *c, int v, ref_error *err)
{
    return v >= 0 && c->vals[v].half_later ? widen(c, v, err) : REF_OK;
}

int ref_half_finish(ref_compiled *c, ref_error *err)
{
    int rc;
    for (int v = 0; v < c->n_vals; v++)
        if ((rc = ref_half_widen(c, v, err)))
            return rc;
    return REF_OK;
}

/* Per value: the one node that reads it, and only as a Conv's or Gemm's weight (input 1), or -1. Pre-packing
 * widens such a constant straight before packing it; any other reader (a second read, a subgraph, a graph output)
 * gets it now. MatMul keeps reading its raw B after packing (release.c), so for it waiting would save nothing. */
static int *conv_weight_readers(const ref_compiled *c)
{
    int *r = ref_malloc(((size_t)c->n_vals + 1) * sizeof *r);
    if (!r)
        return NULL;
    for (int v = 0; v < c->n_vals; v++)
        r[v] = c->vals[v].graph_output ? -2 : -1;
    for (int k = 0; k < c->n_nodes; k++) {
        const ref_exec_node *e = &c->nodes[k];
        bool packs = ref_exec_is_op(e, "Conv") || ref_exec_is_op(e, "Gemm");
        for (int j = 0; j < e->n_in + e->n_implicit; j++) {
            int v = e->in[j];
            if (v >= 0)
                r[v] = r[v] == -1 && packs && j == 1 ? k : -2;
        }
    }
    return r;
}

/* Keep v float16 for now: float32 to everything that plans and folds, no data until ref_half_widen. */
static void widen_later(ref_compiled *c, int v)
{
    ref_value *val = &c->vals[v];
    val->half = val->t.data;
    val->t.data = NULL;
    val->t.dtype = REF_DT_FLOAT;
    val->half_later = true;
}

/* A Constant holding a float16 tensor: its output becomes a float32 constant here, before folding, so the nodes
 * that fold over it see float32 like every other value. */
static int fold_half_constant(ref_compiled *c, ref_exec_node *e, ref_error *err)
{
    const ref_attr *a = ref_node_attr(e->node, "value");
    if (!ref_exec_is_op(e, "Constant") || e->n_out < 1 || e->out[0] < 0 || !a || a->type != REF_ATTR_TENSOR ||
        !a->t || a->t->dtype != REF_DT_FLOAT16)
        return REF_OK;
    ref_value *v = &c->vals[e->out[0]];
    v->kind = REF_VAL_CONST;
    v->t = *a->t;
    e->folded = true;
    return convert_const(c, e->out[0], err);
}

static bool casts_to_half(const ref_exec_node *e)
{
    if (!ref_exec_is_op(e, "Cast"))
        return false;
    const ref_attr *a = ref_node_attr(e->node, "to");
    if (!a)
        return false;
    return a->type == REF_ATTR_STRING ? a->s && !strcmp(a->s, "FLOAT16") : a->i == REF_DT_FLOAT16;
}

int ref_half_graph(ref_compiled *c, ref_error *err)
{
    if (!c->half && !(c->half = has_half(c)))
        return REF_OK;
    int rc = REF_OK, *conv_w = conv_weight_readers(c);
    if (!conv_w)
        return ref_fail(err, REF_E_NOMEM, "compile: out of memory indexing %d values", c->n_vals);
    for (int v = 0; v < c->n_vals && !rc; v++) {
        if (c->vals[v].kind != REF_VAL_CONST || c->vals[v].t.dtype != REF_DT_FLOAT16)
            continue;
        if (conv_w[v] >= 0 && c->vals[v].t.data && ref_tensor_numel(&c->vals[v].t) > 0)
            widen_later(c, v);
        else
            rc = convert_const(c, v, err);
    }
    ref_free(conv_w);
    if (rc)
        return rc;
    for (int k = 0; k < c->n_nodes; k++) {
        if ((rc = fold_half_constant(c, &c->nodes[k], err)))
            return ref_node_fail(c, k, err);
        if (!c->nodes[k].folded && casts_to_half(&c->nodes[k]))
            c->nodes[k].op = &ref_op_cast_round_half;
    }
    return REF_OK;
}
