/* compile.c: ref_compile and the compiled model's public getters: order, fold, plan, pre-pack.
 * It must never modify the model it compiles: the model may be shared by several compiled models. */
#include <stdio.h>
#include <string.h>

#include "../alloc.h"
#include "../inject.h"
#include "compiled.h"

static void compiled_destroy(ref_compiled *c);

static int check_ops(ref_compiled *c, ref_error *err)
{
    for (int k = 0; k < c->n_nodes; k++) {
        ref_exec_node *e = &c->nodes[k];
        e->op = ref_op_find(e->node->domain, e->node->op_type);
        /* every ONNX operator has an output; kernels write out[0] without asking */
        if (e->op && e->n_out < 1) {
            ref_fail(err, REF_E_PARSE, "the node has no outputs");
            return ref_node_fail(c, k, err);
        }
        if (!e->op) {
            const char *d = e->node->domain[0] ? e->node->domain : "ai.onnx";
            ref_fail(err, REF_E_UNSUPPORTED, "operator %s (domain %s) is not supported", e->node->op_type, d);
            return ref_node_fail(c, k, err);
        }
    }
    return REF_OK;
}

/* The reader bounds an initializer's element count, but an empty one may still name dims whose product (zeros
 * counted as one) kernels would walk: every constant meets the same check as any other tensor. */
static int check_constants(const ref_compiled *c, ref_error *err)
{
    for (int v = 0; v < c->n_vals; v++) {
        if (c->vals[v].kind != REF_VAL_CONST)
            continue;
        char what[160];
        snprintf(what, sizeof what, "initializer '%.128s'", c->vals[v].name);
        int rc = ref_shape_check(&c->vals[v].t, (size_t)c->opts.max_tensor_bytes, what, err);
        if (rc)
            return rc;
    }
    return REF_OK;
}

/* The default plan: for the shapes options give, else the declared ones. None (and no error) when a shape is
 * undeclared, or when planning fails for dims guessed as 1: the inputs will bring the real shapes. With
 * for_prepack, a plan that stopped at a failing node is kept too: the nodes before it can be pre-packed. */
static int default_plan(ref_compiled *c, bool for_prepack, ref_error *err)
{
    /* A model may declare any number of graph inputs: their shapes go on the heap. */
    ref_tensor *shapes = ref_calloc((size_t)c->n_inputs + 1, sizeof *shapes);
    if (!shapes)
        return ref_fail(err, REF_E_NOMEM, "compile: out of memory for the shapes of %d inputs", c->n_inputs);
    int rc = REF_OK;
    bool guessed = false;
    for (int i = 0; i < c->n_inputs; i++) {
        rc = ref_input_default_shape(c, i, &shapes[i], &guessed, err);
        if (rc == REF_E_DYNAMIC) {
            snprintf(c->no_plan_why, sizeof c->no_plan_why, "%.300s", err ? err->msg : "an input declares no shape");
            ref_error_clear(err);
            rc = REF_OK;
            goto out;
        }
        if (rc)
            goto out;
        if (c->half && shapes[i].dtype == REF_DT_FLOAT16)
            shapes[i].dtype = REF_DT_FLOAT; /* half.c: set_input converts it */
    }
    c->guessed_dims = guessed;
    if (!guessed) {
        rc = ref_plan_build(c, shapes, &c->default_plan, err);
        goto out;
    }
    ref_error why = {0};
    if ((rc = ref_plan_build_tolerant(c, shapes, &c->default_plan, &why))) {
        if (err)
            *err = why;
        goto out;
    }
    if (c->default_plan->incomplete) {
        snprintf(c->no_plan_why, sizeof c->no_plan_why, "planning for symbolic dims guessed as 1 failed (%.200s); "
                 "give the input shapes (shape.NAME or dim.NAME)", why.msg);
        if (!for_prepack) {
            ref_plan_free(c, c->default_plan);
            c->default_plan = NULL;
        }
    }
out:
    ref_free(shapes);
    return rc;
}

/* Everything after reading the graph: order, fold, subgraphs, pre-pack, default plan. */
static int compile_graph(ref_compiled *c, ref_error *err)
{
    int rc;
    if ((rc = ref_graph_build(c, err)) || (rc = check_ops(c, err)) || (rc = check_constants(c, err)) ||
        (rc = ref_half_graph(c, err)))
        return rc;
    bool uses_default = false;
    for (int k = 0; k < c->n_nodes && !uses_default; k++)
        uses_default = !c->nodes[k].node->domain[0] || !strcmp(c->nodes[k].node->domain, "ai.onnx");
    if (c->opset <= 0 && uses_default)
        return ref_fail(err, REF_E_PARSE, "compile: the model imports no default-domain (ai.onnx) opset");
    /* The first plan gives pre-packing its shapes; the second sizes scratch for what was packed. */
    if ((rc = ref_fold_constants(c, err)) || (rc = ref_readers_build(c, err)) ||
        (c->opts.fold_bn && (rc = ref_fold_affine(c, err))) ||
        (c->opts.fuse_qdq && (rc = ref_fuse_qdq(c, err))) || /* before fuse_act: a Relu before a Q is its to drop */
        (c->opts.fold_bn && (rc = ref_fuse_activations(c, err))))
        return rc;
    ref_release_unread_mapped(c); /* weights folded into new ones: their pages need not stay resident */
    if ((rc = default_plan(c, true, err)) || (rc = ref_prepack(c, c->default_plan, err)) ||
        (rc = ref_half_finish(c, err)))
        return rc;
    c->prepacked = true;
    ref_plan_free(c, c->default_plan);
    c->default_plan = NULL;
    return default_plan(c, false, err);
}

static ref_compiled *compiled_alloc(ref_model *m, const ref_graph *g, const ref_options *o)
{
    ref_compiled *c = ref_calloc(1, sizeof *c);
    if (!c)
        return NULL;
    pthread_mutex_init(&c->prep_mu, NULL);
    ref_model_ref(m);
    c->model = m;
    c->graph = g;
    c->opts = *o;
    if (c->opts.max_tensor_bytes <= 0)
        c->opts.max_tensor_bytes = (int64_t)ref_default_max_tensor_bytes();
    c->opset = (int)ref_model_opset(m);
    return c;
}

int ref_compile(ref_model *m, const ref_options *o, ref_compiled **out, ref_error *err)
{
    if (!m || !out)
        return ref_fail(err, REF_E_INVALID, "compile: model and out are required");
    ref_options defaults;
    if (!o) {
        ref_options_init(&defaults);
        o = &defaults;
    }
    int rc = ref_inject_step(o, REF_STEP_COMPILE_MODEL, err);
    if (rc)
        return rc;
    ref_compiled *c = compiled_alloc(m, &m->graph, o);
    if (!c)
        return ref_fail(err, REF_E_NOMEM, "compile: out of memory");
    if ((rc = compile_graph(c, err))) {
        compiled_destroy(c);
        return rc;
    }
    *out = c;
    return REF_OK;
}

int ref_compile_sub(const ref_compiled *parent, int k, const ref_graph *g, ref_compiled **out, ref_error *err)
{
    /* A subgraph runs inside its parent's steps: no fault injection of its own, and shapes come from its inputs. */
    ref_options o;
    ref_options_init(&o);
    o.mmap = parent->opts.mmap;
    o.threads = parent->opts.threads;
    o.planner = parent->opts.planner;
    o.arena = parent->opts.arena;
    o.arena_growth = parent->opts.arena_growth;
    o.mem_pattern = parent->opts.mem_pattern;
    o.plan_cache = parent->opts.plan_cache;
    o.fold_bn = parent->opts.fold_bn;
    o.fuse_qdq = parent->opts.fuse_qdq;
    o.max_tensor_bytes = parent->opts.max_tensor_bytes;
    ref_compiled *c = compiled_alloc(parent->model, g, &o);
    if (!c)
        return ref_fail(err, REF_E_NOMEM, "compile: out of memory for a subgraph");
    c->parent = parent;
    c->parent_node = k;
    c->opset = parent->opset;
    int rc = compile_graph(c, err);
    if (rc) {
        compiled_destroy(c);
        return rc;
    }
    *out = c;
    return REF_OK;
}

void ref_compiled_free(ref_compiled *c)
{
    if (!c)
        return;
    ref_inject_step(&c->opts, REF_STEP_RELEASE_COMPILED, NULL);
    compiled_destroy(c);
}

static void compiled_destroy(ref_compiled *c)
{
    ref_plan_free(c, c->default_plan);
    for (int k = 0; k < c->n_nodes; k++) {
        if (c->nodes[k].state)
            c->nodes[k].op->state_free(c->nodes[k].state);
        for (int s = 0; s < c->nodes[k].n_subs; s++)
            compiled_destroy(c->nodes[k].subs[s]);
        ref_free(c->nodes[k].subs);
    }
    for (int i = 0; i < c->n_extra; i++)
        ref_free(c->extra[i]);
    ref_free(c->extra);
    ref_free(c->capture_slot);
    ref_free(c->capture_input);
    for (int v = 0; v < c->n_vals; v++)
        ref_free(c->vals[v].owned);
    ref_free(c->vals);
    ref_free(c->readers);
    ref_free(c->only_reader);
    ref_free(c->mapped);
    ref_free(c->nodes);
    ref_free(c->node_ids);
    ref_free(c->inputs);
    ref_free(c->outputs);
    pthread_mutex_destroy(&c->prep_mu);
    ref_model_unref(c->model);
    ref_free(c);
}

size_t ref_compiled_n_inputs(const ref_compiled *c) { return c ? (size_t)c->n_inputs : 0; }

size_t ref_compiled_n_outputs(const ref_compiled *c) { return c ? (size_t)c->n_outputs : 0; }

int ref_compiled_input(const ref_compiled *c, size_t i, ref_value_desc *out)
{
    if (!c || i >= (size_t)c->n_inputs)
        return REF_E_RANGE;
    out->name = c->vals[c->inputs[i]].name;
    if (ref_input_default_shape(c, (int)i, &out->shape, NULL, NULL)) {
        out->shape.rank = -1; /* undeclared shape */
    }
    return REF_OK;
}

const char *ref_compiled_input_dim_param(const ref_compiled *c, size_t i, int axis)
{
    if (!c || i >= (size_t)c->n_inputs)
        return NULL;
    const ref_value_info *d = c->vals[c->inputs[i]].declared;
    if (!d || axis < 0 || axis >= d->rank)
        return NULL;
    const char *p = d->dims[axis].param;
    return p && p[0] ? p : NULL;
}

int ref_compiled_output(const ref_compiled *c, size_t i, ref_value_desc *out)
{
    if (!c || i >= (size_t)c->n_outputs)
        return REF_E_RANGE;
    int v = c->outputs[i];
    out->name = c->vals[v].name;
    memset(&out->shape, 0, sizeof out->shape);
    if (c->default_plan && (c->vals[v].producer < c->default_plan->dynamic_from || c->vals[v].producer < 0)) {
        out->shape = c->default_plan->shapes[v];
        if (c->half && i < c->graph->n_outputs && c->graph->outputs[i].elem_type == REF_DT_FLOAT16)
            out->shape.dtype = REF_DT_FLOAT16; /* run as float32, handed out as float16 (request.c) */
    } else {
        out->shape.rank = -1;
        out->shape.dtype = i < c->graph->n_outputs ? c->graph->outputs[i].elem_type : 0; /* as declared, if at all */
    }
    out->shape.data = NULL;
    return REF_OK;
}

int ref_compiled_plan_stats(const ref_compiled *c, ref_plan_stats *out, ref_error *err)
{
    if (!c || !out)
        return ref_fail(err, REF_E_INVALID, "plan stats: compiled model and out are required");
    memset(out, 0, sizeof *out);
    out->guessed_dims = c->guessed_dims;
    const ref_plan *p = c->default_plan;
    if (!p)
        return ref_fail(err, REF_E_DYNAMIC, "no plan: %s", c->no_plan_why[0] ? c->no_plan_why : "no input shapes");
    out->is_static = p->dynamic_from == c->n_nodes;
    if (!out->is_static)
        return ref_fail(err, REF_E_DYNAMIC, "no static plan: node '%s' (%s) needs a run-time value",
                        c->nodes[p->dynamic_from].node->name, c->nodes[p->dynamic_from].node->op_type);
    out->naive_bytes = p->naive_bytes;
    out->planned_bytes = p->arena_bytes;
    out->lower_bound_bytes = p->lower_bound_bytes;
    out->n_tensors = p->n_tensors;
    return REF_OK;
}

size_t ref_compiled_packed_bytes(const ref_compiled *c) { return c ? c->packed_bytes : 0; }
