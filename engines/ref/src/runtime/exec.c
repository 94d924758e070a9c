/* exec.c: runs the nodes of a plan, either inside the request's arena (arena=on, static shapes) or with one
 * allocation per tensor freed after its last use (arena=off, or shapes that need run-time values).
 * The arena path must never allocate; the per-tensor path must never keep a buffer past its last use. */
#include <string.h>

#include "../alloc.h"
#include "request.h"

/* Values every run starts from: constants, graph inputs, and what the plan folded. */
static void bind_sources(ref_request *r, const ref_plan *p)
{
    const ref_compiled *c = r->c;
    for (int v = 0; v < c->n_vals; v++) {
        if (c->vals[v].kind == REF_VAL_CONST)
            r->vals[v] = c->vals[v].t;
        else if (p->folded[v])
            r->vals[v] = p->shapes[v];
    }
    for (int i = 0; i < c->n_inputs; i++)
        r->vals[c->inputs[i]] = r->in[i];
}

/* Output index of value v if it is bound to a caller buffer, else -1. */
static int bound_output(const ref_request *r, int v)
{
    for (int i = 0; i < r->c->n_outputs; i++)
        if (r->c->outputs[i] == v && r->out_bind[i])
            return i;
    return -1;
}

static int place_bound(ref_request *r, int v, ref_tensor *t, ref_error *err)
{
    int i = bound_output(r, v);
    if (i < 0)
        return 0;
    size_t need = ref_tensor_nbytes(t);
    if (need > r->out_bind_bytes[i])
        return ref_fail(err, REF_E_RANGE, "output '%s' needs %zu bytes, its bound buffer has %zu",
                        r->c->vals[v].name, need, r->out_bind_bytes[i]);
    t->data = r->out_bind[i];
    return 1;
}

/* Graph outputs that no node wrote (inputs, constants, folded values) are copied into bound buffers. */
static int copy_unwritten_outputs(ref_request *r, ref_error *err)
{
    const ref_compiled *c = r->c;
    for (int i = 0; i < c->n_outputs; i++) {
        int v = c->outputs[i];
        if (!r->out_bind[i] || r->vals[v].data == r->out_bind[i])
            continue;
        size_t need = ref_tensor_nbytes(&r->vals[v]);
        if (need > r->out_bind_bytes[i])
            return ref_fail(err, REF_E_RANGE, "output '%s' needs %zu bytes, its bound buffer has %zu",
                            c->vals[v].name, need, r->out_bind_bytes[i]);
        if (need)
            memcpy(r->out_bind[i], r->vals[v].data, need);
        r->vals[v].data = r->out_bind[i];
    }
    return REF_OK;
}

/* alloc_out of a sets_outputs op on the per-tensor path: a bound buffer, or one freed after its last use. */
static int exec_alloc_out(ref_op_ctx *ctx, int j)
{
    ref_request *r = ctx->alloc_arg;
    const ref_exec_node *e = &r->c->nodes[r->running];
    ref_tensor *t = ctx->out[j];
    int v = e->out[j];
    int rc = v >= 0 ? place_bound(r, v, t, ctx->err) : 0;
    if (rc)
        return rc < 0 ? rc : REF_OK;
    size_t bytes = ref_tensor_nbytes(t);
    void *buf = ref_aligned_alloc(bytes);
    if (!buf)
        return ref_fail(ctx->err, REF_E_NOMEM, "out of memory for %zu bytes of output %d", bytes, j);
    t->data = buf;
    if (v >= 0)
        r->dyn[v] = buf;
    else
        r->dummy_bufs[j] = buf;
    return REF_OK;
}

static int run_node(ref_request *r, int k, void *scratch, size_t scratch_bytes, ref_error *err)
{
    ref_compiled *c = r->c;
    const ref_exec_node *e = &c->nodes[k];
    for (int j = 0; j < e->n_in + e->n_implicit; j++)
        r->in_ptrs[j] = e->in[j] >= 0 ? &r->vals[e->in[j]] : NULL;
    int rc;
    if (!e->prepared && (rc = ref_prepare_lazy(c, k, r->in_ptrs, err)))
        return ref_node_fail(c, k, err);
    ref_op_ctx ctx;
    ref_node_ctx(c, k, r->in_ptrs, r->out_ptrs, &ctx, err);
    ctx.pool = r->pool;
    ctx.n_threads = ref_pool_threads(r->pool);
    ctx.scratch = scratch;
    ctx.scratch_bytes = scratch_bytes;
    ctx.rt = &r->node_rt[k];
    ctx.alloc_out = exec_alloc_out;
    ctx.alloc_arg = r;
    r->running = k;
    if ((rc = e->op->run(&ctx)))
        return ref_node_fail(c, k, err);
    return REF_OK;
}

int ref_exec_arena(ref_request *r, const ref_plan *p, ref_error *err)
{
    const ref_compiled *c = r->c;
    char *base = r->arena;
    bind_sources(r, p);
    for (int v = 0; v < c->n_vals; v++) {
        if (c->vals[v].kind != REF_VAL_ACT || p->folded[v])
            continue;
        r->vals[v] = p->shapes[v];
        r->vals[v].data = base && p->offset[v] >= 0 ? base + p->offset[v] : base;
        int rc = place_bound(r, v, &r->vals[v], err);
        if (rc < 0)
            return rc;
    }
    for (int k = 0; k < c->n_nodes; k++) {
        if (p->skip[k])
            continue;
        const ref_exec_node *e = &c->nodes[k];
        for (int j = 0; j < e->n_out; j++)
            r->out_ptrs[j] = e->out[j] >= 0 ? &r->vals[e->out[j]] : &r->dummies[j];
        /* an empty arena (every tensor empty) has no base: no offset is taken from NULL */
        int rc = run_node(r, k, base ? base + p->scratch_off[k] : NULL, p->scratch_bytes[k], err);
        if (rc)
            return rc;
    }
    return copy_unwritten_outputs(r, err);
}

void ref_exec_release(ref_request *r)
{
    for (int v = 0; v < r->c->n_vals; v++) {
        ref_free(r->dyn[v]);
        r->dyn[v] = NULL;
    }
}

/* Shapes of node k's outputs: from the plan, or from infer with real values past the dynamic point. */
static int output_shapes(ref_request *r, const ref_plan *p, int k, ref_error *err)
{
    const ref_compiled *c = r->c;
    const ref_exec_node *e = &c->nodes[k];
    for (int j = 0; j < e->n_out; j++) {
        r->out_ptrs[j] = e->out[j] >= 0 ? &r->vals[e->out[j]] : &r->dummies[j];
        memset(r->out_ptrs[j], 0, sizeof(ref_tensor));
        if (k < p->dynamic_from && e->out[j] >= 0)
            *r->out_ptrs[j] = p->shapes[e->out[j]];
    }
    if (k < p->dynamic_from || e->op->sets_outputs)
        return REF_OK; /* planned, or shaped by the op itself when it runs */
    for (int j = 0; j < e->n_in + e->n_implicit; j++)
        r->in_ptrs[j] = e->in[j] >= 0 ? &r->vals[e->in[j]] : NULL;
    ref_op_ctx ctx;
    ref_node_ctx(c, k, r->in_ptrs, r->out_ptrs, &ctx, err);
    int rc = e->op->infer(&ctx);
    if (!rc)
        rc = ref_check_outputs(&ctx, err);
    if (rc)
        return ref_node_fail(c, k, err);
    return REF_OK;
}

/* Buffers for node k's outputs; an omitted output's goes to dummy_bufs[j], freed after the node runs. */
static int alloc_outputs(ref_request *r, const ref_plan *p, int k, ref_error *err)
{
    const ref_exec_node *e = &r->c->nodes[k];
    if (k >= p->dynamic_from && e->op->sets_outputs)
        return REF_OK;
    for (int j = 0; j < e->n_out; j++) {
        ref_tensor *t = r->out_ptrs[j];
        int v = e->out[j];
        int rc = v >= 0 ? place_bound(r, v, t, err) : 0;
        if (rc < 0)
            return rc;
        if (rc)
            continue;
        size_t bytes = ref_tensor_nbytes(t);
        void *buf = ref_aligned_alloc(bytes);
        if (!buf)
            return ref_fail(err, REF_E_NOMEM, "infer: out of memory for %zu bytes of output %d of node '%s'",
                            bytes, j, e->node->name);
        t->data = buf;
        if (v >= 0)
            r->dyn[v] = buf;
        else
            r->dummy_bufs[j] = buf;
    }
    return REF_OK;
}

static void free_dead(ref_request *r, int k)
{
    const ref_exec_node *e = &r->c->nodes[k];
    for (int j = 0; j < e->n_in + e->n_implicit; j++) {
        int v = e->in[j];
        if (v >= 0 && r->c->vals[v].last_use == k && r->dyn[v]) {
            ref_free(r->dyn[v]);
            r->dyn[v] = NULL;
        }
    }
}

int ref_exec_per_tensor(ref_request *r, const ref_plan *p, ref_error *err)
{
    const ref_compiled *c = r->c;
    bind_sources(r, p);
    for (int k = 0; k < c->n_nodes; k++) {
        const ref_exec_node *e = &c->nodes[k];
        if (e->folded || e->elided || (k < p->dynamic_from && p->skip[k]))
            continue;
        memset(r->dummy_bufs, 0, sizeof *r->dummy_bufs * (size_t)e->n_out);
        int rc = output_shapes(r, p, k, err);
        if (!rc)
            rc = alloc_outputs(r, p, k, err);
        void *scratch = NULL;
        size_t sb = 0;
        for (int j = 0; j < e->n_in + e->n_implicit; j++)
            r->in_ptrs[j] = e->in[j] >= 0 ? &r->vals[e->in[j]] : NULL;
        /* Prepare before sizing scratch: an op's scratch may depend on what it pre-packed. */
        if (!rc && !e->prepared && (rc = ref_prepare_lazy(r->c, k, r->in_ptrs, err)))
            rc = ref_node_fail(c, k, err);
        if (!rc && e->op->scratch_bytes) {
            ref_op_ctx ctx;
            ref_node_ctx(c, k, r->in_ptrs, r->out_ptrs, &ctx, err);
            ctx.n_threads = ref_pool_threads(r->pool);
            sb = e->op->scratch_bytes(&ctx);
            if (sb && !(scratch = ref_aligned_alloc(sb)))
                rc = ref_fail(err, REF_E_NOMEM, "infer: out of memory for %zu bytes of scratch", sb);
        }
        if (!rc)
            rc = run_node(r, k, scratch, sb, err);
        ref_free(scratch);
        for (int j = 0; j < e->n_out; j++) {
            ref_free(r->dummy_bufs[j]);
            r->dummy_bufs[j] = NULL;
        }
        if (rc)
            return rc;
        free_dead(r, k);
    }
    return copy_unwritten_outputs(r, err);
}
