/* fuse_act.c: a Relu or Clip with constant bounds that alone reads a Conv's output becomes part of the Conv, which
 * clamps each output tile while it is still in cache (likewise an inference BatchNormalization, in its one pass); the activation node is elided and its buffer never planned. It
 * must never fuse what it cannot reproduce exactly: bounds that are not constants, a shared or graph-output tensor. */
#include <float.h>
#include <math.h>
#include <string.h>

#include "compiled.h"

/* Optional bound input j of Clip (opset 11+): absent, or a constant float scalar into *v. False when it is there but
 * not a constant one-element float. */
static bool const_bound(const ref_compiled *c, const ref_exec_node *a, int j, float *v)
{
    if (j >= a->n_in || a->in[j] < 0)
        return true;
    const ref_value *b = &c->vals[a->in[j]];
    if (b->kind != REF_VAL_CONST || b->t.dtype != REF_DT_FLOAT || !b->t.data || ref_tensor_numel(&b->t) != 1)
        return false;
    memcpy(v, b->t.data, sizeof *v);
    return true;
}

/* The bounds activation a applies, or false when it is not one this pass fuses. */
static bool bounds_of(const ref_compiled *c, const ref_exec_node *a, float *lo, float *hi)
{
    if (ref_exec_is_op(a, "Relu")) {
        *lo = 0.0f;
        *hi = INFINITY;
        return true;
    }
    if (!ref_exec_is_op(a, "Clip"))
        return false;
    if (c->opset < 11) {
        *lo = ref_attr_float_or(a->node, "min", -FLT_MAX);
        *hi = ref_attr_float_or(a->node, "max", FLT_MAX);
        return true;
    }
    *lo = -INFINITY;
    *hi = INFINITY;
    return const_bound(c, a, 1, lo) && const_bound(c, a, 2, hi) && !isnan(*lo) && !isnan(*hi);
}

int ref_fuse_activations(ref_compiled *c, ref_error *err)
{
    (void)err;
    for (int k = 0; k < c->n_nodes; k++) {
        ref_exec_node *e = &c->nodes[k];
        bool bn = ref_exec_is_op(e, "BatchNormalization") && !ref_attr_int_or(e->node, "training_mode", 0);
        if (!(ref_exec_is_op(e, "Conv") || bn) || e->folded || e->elided || e->act || e->n_out != 1 || e->out[0] < 0)
            continue;
        int y = e->out[0], m = ref_only_consumer(c, y);
        if (m < 0)
            continue;
        ref_exec_node *a = &c->nodes[m];
        float lo, hi;
        if (a->elided || a->folded || a->n_out != 1 || a->out[0] < 0 || a->in[0] != y || !bounds_of(c, a, &lo, &hi))
            continue;
        int z = a->out[0];
        e->out[0] = z;
        c->vals[z].producer = k;
        c->vals[y].producer = m; /* dead: produced by an elided node, never planned */
        ref_readers_node(c, m, -1);
        a->elided = true;
        e->act = true;
        e->act_lo = lo;
        e->act_hi = hi;
    }
    return REF_OK;
}
