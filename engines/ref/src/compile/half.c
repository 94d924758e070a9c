/* half.c: float16 graphs run in float32: float16 constants become float32 copies the compiled model owns, and a
 * Cast to float16 keeps float32 storage rounded to float16. A Conv's, ConvTranspose's, Gemm's or MatMul's weight
 * stays float16 (mapped, with mmap=on, at any offset) until pre-packing widens it, one layer at a time: no whole
 * float32 copy of the weights.
 * It must never change what a graph without float16 in its interface computes (there it only gives float16
 * constants the reader left unaligned an aligned copy), nor modify the model. */
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

/* Who reads each value: rd[v] the one node reading it (explicitly, at slot[v]), -1 none, -2 several, a subgraph
 * or the caller (a graph output). One block: rd, then slot. */
static int *one_readers(const ref_compiled *c)
{
    int *rd = ref_malloc(2 * ((size_t)c->n_vals + 1) * sizeof *rd);
    if (!rd)
        return NULL;
    int *slot = rd + c->n_vals + 1;
    for (int v = 0; v < c->n_vals; v++)
        rd[v] = c->vals[v].graph_output ? -2 : -1;
    for (int k = 0; k < c->n_nodes; k++) {
        const ref_exec_node *e = &c->nodes[k];
        for (int j = 0; j < e->n_in + e->n_implicit; j++) {
            int v = e->in[j];
            if (v < 0)
                continue;
            rd[v] = rd[v] == -1 && j < e->n_in ? k : -2;
            slot[v] = j;
        }
    }
    return rd;
}

/* Read only as a Conv's, ConvTranspose's, Gemm's or MatMul's weight (input 1): pre-packing widens such a constant
 * straight before packing it and frees the copy once packed (release.c). Any other reader (a second read, a subgraph,
 * a graph output) gets it now. */
static bool packed_alone(const ref_compiled *c, const int *rd, int v)
{
    const int *slot = rd + c->n_vals + 1;
    if (rd[v] < 0 || slot[v] != 1)
        return false;
    const ref_exec_node *e = &c->nodes[rd[v]];
    return ref_exec_is_op(e, "Conv") || ref_exec_is_op(e, "ConvTranspose") || ref_exec_is_op(e, "Gemm") ||
           ref_exec_is_op(e, "MatMul");
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

static bool casts_to(const ref_exec_node *e, int dtype, const char *name)
{
    if (!ref_exec_is_op(e, "Cast"))
        return false;
    const ref_attr *a = ref_node_attr(e->node, "to");
    if (!a)
        return false;
    return a->type == REF_ATTR_STRING ? a->s && !strcmp(a->s, name) : a->i == dtype;
}

/* A float16 weight stored as such and Cast to float in the graph (mixed-precision exports): the Cast's output takes
 * the float16 bytes itself, to be widened once (later, when only a Conv, ConvTranspose, Gemm or MatMul packs it),
 * instead of a float32 copy of the input and then the Cast's folded float32 copy of that. The input, read by nothing
 * else, keeps its shape and no data. */
static int fold_weight_cast(ref_compiled *c, int k, const int *rd, ref_error *err)
{
    ref_exec_node *e = &c->nodes[k];
    if (e->folded || !casts_to(e, REF_DT_FLOAT, "FLOAT") || e->n_in < 1 || e->n_out < 1)
        return REF_OK;
    int v = e->in[0], o = e->out[0];
    if (v < 0 || o < 0 || rd[v] != k || c->vals[v].kind != REF_VAL_CONST || c->vals[v].t.dtype != REF_DT_FLOAT16 ||
        !c->vals[v].t.data || ref_tensor_numel(&c->vals[v].t) <= 0)
        return REF_OK;
    ref_value *src = &c->vals[v], *dst = &c->vals[o];
    dst->kind = REF_VAL_CONST;
    dst->t = src->t;
    src->t.data = NULL;
    src->t.dtype = REF_DT_FLOAT;
    e->folded = true;
    if (packed_alone(c, rd, o)) {
        widen_later(c, o);
        return REF_OK;
    }
    return convert_const(c, o, err);
}

/* A graph that does not run in float32 (a subgraph whose parent has no float16) hands its float16 constants to
 * kernels as they are, which load them as uint16_t: give an aligned copy to any the reader left at an odd address
 * (onnx/read.c maps float16 at any offset, since in a float32 run only ref_half_to_float_n reads it). */
static int align_half_consts(ref_compiled *c, ref_error *err)
{
    for (int v = 0; v < c->n_vals; v++) {
        ref_value *val = &c->vals[v];
        if (val->kind != REF_VAL_CONST || val->t.dtype != REF_DT_FLOAT16 || !val->t.data ||
            (uintptr_t)val->t.data % sizeof(uint16_t) == 0)
            continue;
        size_t bytes = (size_t)ref_tensor_numel(&val->t) * sizeof(uint16_t);
        void *p = ref_aligned_alloc(bytes ? bytes : 1);
        if (!p)
            return ref_fail(err, REF_E_NOMEM, "compile: out of memory aligning float16 constant '%s' (%zu bytes)",
                            val->name, bytes);
        memcpy(p, val->t.data, bytes);
        ref_free(val->owned);
        val->owned = p;
        val->t.data = p;
    }
    return REF_OK;
}

int ref_half_graph(ref_compiled *c, ref_error *err)
{
    if (!c->half && !(c->half = has_half(c)))
        return align_half_consts(c, err);
    int rc = REF_OK, *rd = one_readers(c);
    if (!rd)
        return ref_fail(err, REF_E_NOMEM, "compile: out of memory indexing %d values", c->n_vals);
    for (int k = 0; k < c->n_nodes && !rc; k++)
        if ((rc = fold_weight_cast(c, k, rd, err)))
            rc = ref_node_fail(c, k, err);
    for (int v = 0; v < c->n_vals && !rc; v++) {
        if (c->vals[v].kind != REF_VAL_CONST || c->vals[v].t.dtype != REF_DT_FLOAT16)
            continue;
        if (packed_alone(c, rd, v) && c->vals[v].t.data && ref_tensor_numel(&c->vals[v].t) > 0)
            widen_later(c, v);
        else
            rc = convert_const(c, v, err);
    }
    ref_free(rd);
    if (rc)
        return rc;
    for (int k = 0; k < c->n_nodes; k++) {
        if ((rc = fold_half_constant(c, &c->nodes[k], err)))
            return ref_node_fail(c, k, err);
        if (!c->nodes[k].folded && casts_to(&c->nodes[k], REF_DT_FLOAT16, "FLOAT16"))
            c->nodes[k].op = &ref_op_cast_round_half;
    }
    return REF_OK;
}
