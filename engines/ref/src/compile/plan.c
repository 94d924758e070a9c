/* plan.c: builds a plan for one set of input shapes: shape inference node by node, folding of subgraphs that
 * depend only on shapes (Shape → Gather → Concat → Reshape), then the memory plan. It must never keep a
 * value folded from input shapes beyond the plan that owns it: another input shape gives another value. */
#include <stdio.h>
#include <string.h>

#include "../alloc.h"
#include "compiled.h"

/* The option naming input v, or NULL. */
static int shape_option(const ref_compiled *c, const char *name)
{
    for (int o = 0; o < c->opts.n_shapes; o++)
        if (!strcmp(c->opts.shapes[o].name, name))
            return o;
    return -1;
}

static int input_default_shape(const ref_compiled *c, int i, ref_tensor *out, bool *guessed, ref_error *err);

int ref_input_default_shape(const ref_compiled *c, int i, ref_tensor *out, bool *guessed, ref_error *err)
{
    int rc = input_default_shape(c, i, out, guessed, err);
    if (rc)
        return rc;
    /* the declared dims and the dim./shape. options are only bounded one by one: their product is checked here */
    char what[160];
    snprintf(what, sizeof what, "graph input '%.128s'", c->vals[c->inputs[i]].name);
    return ref_shape_check(out, (size_t)c->opts.max_tensor_bytes, what, err);
}

static int input_default_shape(const ref_compiled *c, int i, ref_tensor *out, bool *guessed, ref_error *err)
{
    const ref_value *v = &c->vals[c->inputs[i]];
    const ref_value_info *d = v->declared;
    memset(out, 0, sizeof *out);
    out->dtype = d ? d->elem_type : v->t.dtype;
    int o = shape_option(c, v->name);
    if (o >= 0) {
        out->rank = c->opts.shapes[o].rank;
        memcpy(out->dims, c->opts.shapes[o].dims, sizeof out->dims);
        if (d && d->rank >= 0 && d->rank != out->rank)
            return ref_fail(err, REF_E_SHAPE, "option shape.%s: rank %d, the model declares rank %d", v->name,
                            out->rank, d->rank);
        for (int j = 0; d && j < d->rank; j++)
            if (!d->dims[j].param && d->dims[j].value >= 0 && d->dims[j].value != out->dims[j])
                return ref_fail(err, REF_E_SHAPE, "option shape.%s: dim %d is %lld, the model declares %lld",
                                v->name, j, (long long)out->dims[j], (long long)d->dims[j].value);
        return REF_OK;
    }
    if (!d || d->rank < 0)
        return ref_fail(err, REF_E_DYNAMIC, "graph input '%s' declares no shape", v->name);
    if (d->rank > REF_MAX_RANK)
        return ref_fail(err, REF_E_UNSUPPORTED, "graph input '%s' has rank %d (at most %d)", v->name, d->rank,
                        REF_MAX_RANK);
    out->rank = d->rank;
    for (int j = 0; j < d->rank; j++) {
        int64_t val = d->dims[j].value;
        bool named = false;
        for (int k = 0; d->dims[j].param && k < c->opts.n_dims; k++)
            if (!strcmp(c->opts.dims[k].name, d->dims[j].param)) {
                val = c->opts.dims[k].value;
                named = true;
            }
        if ((d->dims[j].param && !named) || (!d->dims[j].param && val < 0)) {
            val = 1; /* a dimension nothing names is guessed as 1 */
            if (guessed)
                *guessed = true;
        }
        out->dims[j] = val;
    }
    return REF_OK;
}

void ref_plan_free(const ref_compiled *c, ref_plan *p)
{
    if (!p)
        return;
    if (p->folded)
        for (int v = 0; v < c->n_vals; v++)
            ref_free(p->folded[v]);
    ref_free(p->folded);
    ref_free(p->in_shapes);
    ref_free(p->shapes);
    ref_free(p->skip);
    ref_free(p->offset);
    ref_free(p->scratch_off);
    ref_free(p->scratch_bytes);
    ref_free(p);
}

bool ref_plan_matches(const ref_compiled *c, const ref_plan *p, const ref_tensor *in_shapes)
{
    for (int i = 0; i < c->n_inputs; i++)
        if (p->in_shapes[i].dtype != in_shapes[i].dtype || !ref_shape_equal(&p->in_shapes[i], &in_shapes[i]))
            return false;
    return true;
}

static ref_plan *plan_alloc(const ref_compiled *c)
{
    ref_plan *p = ref_calloc(1, sizeof *p);
    if (!p)
        return NULL;
    size_t nv = (size_t)(c->n_vals ? c->n_vals : 1), nn = (size_t)(c->n_nodes ? c->n_nodes : 1);
    p->in_shapes = ref_calloc((size_t)c->n_inputs + 1, sizeof *p->in_shapes);
    p->shapes = ref_calloc(nv, sizeof *p->shapes);
    p->folded = ref_calloc(nv, sizeof *p->folded);
    p->offset = ref_calloc(nv, sizeof *p->offset);
    p->skip = ref_calloc(nn, sizeof *p->skip);
    p->scratch_off = ref_calloc(nn, sizeof *p->scratch_off);
    p->scratch_bytes = ref_calloc(nn, sizeof *p->scratch_bytes);
    if (!p->in_shapes || !p->shapes || !p->folded || !p->offset || !p->skip || !p->scratch_off ||
        !p->scratch_bytes) {
        ref_plan_free(c, p);
        return NULL;
    }
    return p;
}

/* Evaluate node k now when its outputs are knowable without run-time data. Returns 1 if folded. */
static int try_fold(const ref_compiled *c, ref_plan *p, int k, ref_node_io *io, ref_error *err)
{
    const ref_exec_node *e = &c->nodes[k];
    bool known = true;
    for (int j = 0; j < e->n_in + e->n_implicit; j++)
        if (io->in[j] && !io->in[j]->data)
            known = false;
    if (!known && !e->op->value_from_shape)
        return 0;
    int rc = ref_node_eval(c, k, io, err);
    if (rc)
        return rc == REF_E_DYNAMIC || rc == REF_E_UNSUPPORTED ? 0 : rc;
    for (int j = 0; j < e->n_out; j++) {
        if (e->out[j] < 0) {
            ref_free(io->out[j].data);
            continue;
        }
        p->shapes[e->out[j]] = io->out[j];
        p->folded[e->out[j]] = io->out[j].data;
    }
    p->skip[k] = true;
    return 1;
}

/* Shapes of node k's outputs from op->infer, and its scratch size. Omitted outputs land in io->out. */
static int infer_node(const ref_compiled *c, ref_plan *p, int k, ref_node_io *io, ref_error *err)
{
    const ref_exec_node *e = &c->nodes[k];
    const ref_tensor *const *in = io->in;
    ref_tensor **outp = io->outp;
    for (int j = 0; j < e->n_out; j++) {
        outp[j] = e->out[j] >= 0 ? &p->shapes[e->out[j]] : &io->out[j];
        memset(outp[j], 0, sizeof *outp[j]);
    }
    ref_op_ctx ctx;
    ref_node_ctx(c, k, in, outp, &ctx, err);
    ctx.n_threads = c->opts.threads;
    int rc = e->op->infer(&ctx);
    if (!rc)
        rc = ref_check_outputs(&ctx, err);
    if (rc)
        return rc;
    for (int j = 0; j < e->n_out; j++) {
        outp[j]->data = NULL;
        if (outp[j]->rank > REF_MAX_RANK || ref_dtype_size(outp[j]->dtype) == 0)
            return ref_fail(err, REF_E_UNSUPPORTED, "output %d has unsupported type %s or rank %d", j,
                            ref_dtype_name(outp[j]->dtype), outp[j]->rank);
    }
    /* Scratch may depend on what prepare packed, so a node whose shapes were unknown at compile time (no
     * declared input shapes) is prepared now. The compiled model is shared, but lazy preparation is its one
     * guarded mutable part. */
    if (c->prepacked && !e->prepared && (rc = ref_prepare_lazy((ref_compiled *)c, k, in, err)))
        return rc;
    ctx.state = e->state;
    /* A run may split its loops for one thread however many the pool has (pool.h, ref_pool_run_begin), and an
     * operator's tiles, so its scratch, can be larger so split: room for both. */
    p->scratch_bytes[k] = 0;
    if (e->op->scratch_bytes) {
        size_t many = e->op->scratch_bytes(&ctx);
        ctx.n_threads = 1;
        size_t one = c->opts.threads > 1 ? e->op->scratch_bytes(&ctx) : many;
        p->scratch_bytes[k] = one > many ? one : many;
    }
    return REF_OK;
}

static int plan_build(const ref_compiled *c, const ref_tensor *in_shapes, bool tolerant, ref_plan **out,
                      ref_error *err)
{
    ref_plan *p = plan_alloc(c);
    if (!p)
        return ref_fail(err, REF_E_NOMEM, "plan: out of memory for %d values", c->n_vals);
    ref_node_io io;
    int rc = ref_node_io_init(&io, c, err);
    if (rc)
        goto fail;
    for (int i = 0; i < c->n_inputs; i++) {
        p->in_shapes[i] = in_shapes[i];
        p->in_shapes[i].data = NULL;
        p->shapes[c->inputs[i]] = p->in_shapes[i];
    }
    for (int v = 0; v < c->n_vals; v++)
        if (c->vals[v].kind == REF_VAL_CONST)
            p->shapes[v] = c->vals[v].t;
    p->dynamic_from = c->n_nodes;
    for (int k = 0; k < c->n_nodes; k++) {
        const ref_exec_node *e = &c->nodes[k];
        if (e->folded || e->elided) {
            p->skip[k] = true;
            continue;
        }
        for (int j = 0; j < e->n_in + e->n_implicit; j++)
            io.in[j] = e->in[j] >= 0 ? &p->shapes[e->in[j]] : NULL;
        rc = try_fold(c, p, k, &io, err);
        if (rc == 1)
            continue;
        if (rc == 0)
            rc = infer_node(c, p, k, &io, err);
        if (rc == REF_E_DYNAMIC) {
            ref_error_clear(err);
            p->dynamic_from = k;
            rc = REF_OK;
            break;
        }
        if (rc) {
            ref_node_fail(c, k, err);
            if (!tolerant || rc == REF_E_NOMEM)
                goto fail;
            p->incomplete = true;
            p->dynamic_from = k;
            rc = REF_OK;
            break;
        }
    }
    if (p->dynamic_from == c->n_nodes && (rc = ref_plan_memory(c, p, c->opts.planner, err)))
        goto fail;
    ref_node_io_deinit(&io);
    *out = p;
    return REF_OK;
fail:
    ref_node_io_deinit(&io);
    ref_plan_free(c, p);
    return rc;
}

int ref_plan_build(const ref_compiled *c, const ref_tensor *in_shapes, ref_plan **out, ref_error *err)
{
    return plan_build(c, in_shapes, false, out, err);
}

int ref_plan_build_tolerant(const ref_compiled *c, const ref_tensor *in_shapes, ref_plan **out, ref_error *err)
{
    return plan_build(c, in_shapes, true, out, err);
}
