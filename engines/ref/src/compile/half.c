/* half.c: float16 graphs run in float32: float16 constants become float32 copies the compiled model owns (so Conv
 * and Gemm pre-pack them like any float weight), and a Cast to float16 keeps float32 storage rounded to float16.
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

static int convert_const(ref_compiled *c, int v, ref_error *err)
{
    ref_value *val = &c->vals[v];
    int64_t n = ref_tensor_numel(&val->t);
    float *f = ref_aligned_alloc((size_t)(n > 0 ? n : 1) * sizeof *f);
    if (!f)
        return ref_fail(err, REF_E_NOMEM, "compile: out of memory converting float16 constant '%s' (%lld values)",
                        val->name, (long long)n);
    if (n > 0 && val->t.data)
        ref_half_to_float_n(val->t.data, f, n);
    ref_free(val->owned);
    val->owned = f;
    val->t.data = f;
    val->t.dtype = REF_DT_FLOAT;
    val->half_copy = true;
    return REF_OK;
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
    int rc;
    for (int v = 0; v < c->n_vals; v++)
        if (c->vals[v].kind == REF_VAL_CONST && c->vals[v].t.dtype == REF_DT_FLOAT16 &&
            (rc = convert_const(c, v, err)))
            return rc;
    for (int k = 0; k < c->n_nodes; k++) {
        if ((rc = fold_half_constant(c, &c->nodes[k], err)))
            return ref_node_fail(c, k, err);
        if (!c->nodes[k].folded && casts_to_half(&c->nodes[k]))
            c->nodes[k].op = &ref_op_cast_round_half;
    }
    return REF_OK;
}
