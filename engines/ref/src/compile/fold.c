/* fold.c: evaluates nodes whose inputs are all constants once, at compile time (constant folding), with the
 * node-evaluation helpers planning shares (argument arrays on the heap, op context, one-shot evaluation).
 * It must never fold a node whose value could change between runs: only true constants qualify here. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "../alloc.h"
#include "compiled.h"

int ref_node_io_init(ref_node_io *io, const ref_compiled *c, ref_error *err)
{
    size_t n_in = (size_t)c->max_in + 1, n_out = (size_t)c->max_out + 1;
    size_t per_out = sizeof(ref_tensor) + sizeof(ref_tensor *);
    memset(io, 0, sizeof *io);
    /* The tensors come first: the block's alignment suits them, and the pointer arrays follow whole. */
    char *block = NULL;
    if (n_out <= SIZE_MAX / 2 / per_out && n_in <= SIZE_MAX / 2 / sizeof *io->in)
        block = ref_malloc(n_out * per_out + n_in * sizeof *io->in);
    if (!block)
        return ref_fail(err, REF_E_NOMEM, "out of memory for the arguments of a node with %d inputs and %d "
                        "outputs", c->max_in, c->max_out);
    io->out = (ref_tensor *)block;
    io->outp = (ref_tensor **)(block + n_out * sizeof(ref_tensor));
    io->in = (const ref_tensor **)(block + n_out * per_out);
    return REF_OK;
}

void ref_node_io_deinit(ref_node_io *io)
{
    ref_free(io->out); /* the base of the one block */
    memset(io, 0, sizeof *io);
}

void ref_node_ctx(const ref_compiled *c, int k, const ref_tensor *const *in, ref_tensor *const *out,
                  ref_op_ctx *ctx, ref_error *err)
{
    const ref_exec_node *e = &c->nodes[k];
    memset(ctx, 0, sizeof *ctx);
    ctx->node = e->node;
    ctx->opset = c->opset;
    ctx->n_in = e->n_in;
    ctx->n_out = e->n_out;
    ctx->in = in;
    ctx->out = out;
    ctx->state = e->state;
    ctx->n_threads = 1;
    ctx->err = err;
    ctx->n_implicit = e->n_implicit;
    ctx->subs = e->subs;
    ctx->n_subs = e->n_subs;
    ctx->act = e->act;
    ctx->act_lo = e->act_lo;
    ctx->act_hi = e->act_hi;
    ctx->max_tensor_bytes = (size_t)c->opts.max_tensor_bytes;
}

int ref_check_outputs(const ref_op_ctx *ctx, ref_error *err)
{
    for (int j = 0; j < ctx->n_out; j++) {
        char what[32];
        snprintf(what, sizeof what, "output %d", j);
        int rc = ref_shape_check(ctx->out[j], ctx->max_tensor_bytes, what, err);
        if (rc)
            return rc;
    }
    return REF_OK;
}

/* alloc_out for one-shot evaluation: heap data the caller of ref_node_eval owns. */
static int eval_alloc_out(ref_op_ctx *ctx, int j)
{
    ref_tensor *t = ctx->out[j];
    size_t bytes = ref_tensor_nbytes(t);
    t->data = ref_aligned_alloc(bytes);
    if (!t->data)
        return ref_fail(ctx->err, REF_E_NOMEM, "out of memory for a %zu-byte folded output", bytes);
    return REF_OK;
}

static bool all_inputs_known(const ref_exec_node *e, const ref_tensor *const *in)
{
    for (int j = 0; j < e->n_in + e->n_implicit; j++)
        if (in[j] && !in[j]->data && ref_tensor_nbytes(in[j]))
            return false;
    return true;
}

int ref_node_fail(const ref_compiled *c, int k, ref_error *err)
{
    const ref_node *n = c->nodes[k].node;
    if (n->name[0])
        return ref_fail_prefix(err, "node '%s' (%s): ", n->name, n->op_type);
    return ref_fail_prefix(err, "node #%d (%s): ", k, n->op_type);
}

int ref_node_eval(const ref_compiled *c, int k, ref_node_io *io, ref_error *err)
{
    const ref_exec_node *e = &c->nodes[k];
    const ref_op *op = e->op;
    ref_tensor *out = io->out;
    for (int j = 0; j < e->n_out; j++) {
        memset(&out[j], 0, sizeof out[j]);
        io->outp[j] = &out[j];
    }
    ref_op_ctx ctx;
    ref_node_ctx(c, k, io->in, io->outp, &ctx, err);
    void *state = NULL, *scratch = NULL, *rt = NULL;
    ctx.rt = &rt;
    int rc = op->infer(&ctx);
    if (!rc)
        rc = ref_check_outputs(&ctx, err);
    /* An op that only learns its output shapes by running (Loop) runs now when every input is known. */
    bool self_alloc = rc == REF_E_DYNAMIC && op->sets_outputs && all_inputs_known(e, io->in);
    if (self_alloc) {
        ref_error_clear(err);
        rc = REF_OK;
        ctx.alloc_out = eval_alloc_out;
        for (int j = 0; j < e->n_out; j++)
            memset(&out[j], 0, sizeof out[j]);
    }
    if (rc)
        goto fail;
    for (int j = 0; j < e->n_out && !self_alloc; j++) {
        out[j].data = ref_aligned_alloc(ref_tensor_nbytes(&out[j]));
        if (!out[j].data) {
            rc = ref_fail(err, REF_E_NOMEM, "out of memory for a %zu-byte folded output",
                          ref_tensor_nbytes(&out[j]));
            goto fail;
        }
    }
    if (op->prepare && !e->state) {
        size_t ws = op->prepare_scratch_bytes ? op->prepare_scratch_bytes(&ctx) : 0;
        void *wscratch = ws ? ref_aligned_alloc(ws) : NULL;
        if (ws && !wscratch) {
            rc = ref_fail(err, REF_E_NOMEM, "out of memory for %zu bytes of prepare scratch", ws);
            goto fail;
        }
        ctx.scratch = wscratch;
        ctx.scratch_bytes = ws;
        rc = op->prepare(&ctx, &state);
        ref_free(wscratch);
        if (rc)
            goto fail;
        ctx.state = state;
    }
    ctx.scratch = NULL;
    ctx.scratch_bytes = op->scratch_bytes ? op->scratch_bytes(&ctx) : 0;
    if (ctx.scratch_bytes) {
        scratch = ref_aligned_alloc(ctx.scratch_bytes);
        if (!scratch) {
            rc = ref_fail(err, REF_E_NOMEM, "out of memory for %zu bytes of scratch", ctx.scratch_bytes);
            goto fail;
        }
        ctx.scratch = scratch;
    }
    rc = op->run(&ctx);
    if (rc)
        goto fail;
    if (state)
        op->state_free(state);
    if (rt)
        op->rt_free(rt);
    ref_free(scratch);
    return REF_OK;
fail:
    if (state)
        op->state_free(state);
    if (rt)
        op->rt_free(rt);
    ref_free(scratch);
    for (int j = 0; j < e->n_out; j++) {
        ref_free(out[j].data);
        out[j].data = NULL;
    }
    return rc;
}

static bool all_inputs_const(const ref_compiled *c, const ref_exec_node *e)
{
    for (int j = 0; j < e->n_in + e->n_implicit; j++)
        if (e->in[j] >= 0 && c->vals[e->in[j]].kind != REF_VAL_CONST)
            return false;
    return true;
}

int ref_fold_constants(ref_compiled *c, ref_error *err)
{
    ref_node_io io;
    int rc = ref_node_io_init(&io, c, err);
    if (rc)
        return rc;
    for (int k = 0; k < c->n_nodes; k++) {
        ref_exec_node *e = &c->nodes[k];
        /* Subgraphs compile here, when every value before node k is final: the parent's constants are theirs. */
        if ((rc = ref_compile_node_subs(c, k, err))) {
            rc = ref_node_fail(c, k, err);
            goto out;
        }
        if (e->folded || !all_inputs_const(c, e))
            continue; /* folded: half.c made its outputs constants already (float16 Constant, Cast of a weight) */
        for (int j = 0; j < e->n_in + e->n_implicit; j++) {
            if ((rc = ref_half_widen(c, e->in[j], err))) { /* a float16 weight (half.c): folding reads it now */
                rc = ref_node_fail(c, k, err);
                goto out;
            }
            io.in[j] = e->in[j] >= 0 ? &c->vals[e->in[j]].t : NULL;
        }
        rc = ref_node_eval(c, k, &io, err);
        if (rc == REF_E_DYNAMIC || rc == REF_E_UNSUPPORTED) {
            rc = REF_OK;
            continue; /* left to run time, which reports it if it still fails */
        }
        if (rc) {
            rc = ref_node_fail(c, k, err);
            goto out;
        }
        for (int j = 0; j < e->n_out; j++) {
            if (e->out[j] < 0) {
                ref_free(io.out[j].data);
                continue;
            }
            ref_value *v = &c->vals[e->out[j]];
            v->kind = REF_VAL_CONST;
            v->t = io.out[j];
            v->owned = io.out[j].data;
        }
        e->folded = true;
    }
out:
    ref_node_io_deinit(&io);
    return rc;
}
