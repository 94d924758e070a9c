/* fold.c: evaluates nodes whose inputs are all constants once, at compile time (constant folding).
 * It must never fold a node whose value could change between runs: only true constants qualify here. */
#include <string.h>

#include "../alloc.h"
#include "compiled.h"

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
}

int ref_node_fail(const ref_compiled *c, int k, ref_error *err)
{
    const ref_node *n = c->nodes[k].node;
    if (n->name[0])
        return ref_fail_prefix(err, "node '%s' (%s): ", n->name, n->op_type);
    return ref_fail_prefix(err, "node #%d (%s): ", k, n->op_type);
}

int ref_node_eval(const ref_compiled *c, int k, const ref_tensor *const *in, ref_tensor *out, ref_error *err)
{
    const ref_exec_node *e = &c->nodes[k];
    const ref_op *op = e->op;
    ref_tensor *outp[e->n_out > 0 ? e->n_out : 1];
    for (int j = 0; j < e->n_out; j++) {
        memset(&out[j], 0, sizeof out[j]);
        outp[j] = &out[j];
    }
    ref_op_ctx ctx;
    ref_node_ctx(c, k, in, outp, &ctx, err);
    void *state = NULL, *scratch = NULL;
    int rc = op->infer(&ctx);
    if (rc)
        goto fail;
    for (int j = 0; j < e->n_out; j++) {
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
    ref_free(scratch);
    return REF_OK;
fail:
    if (state)
        op->state_free(state);
    ref_free(scratch);
    for (int j = 0; j < e->n_out; j++) {
        ref_free(out[j].data);
        out[j].data = NULL;
    }
    return rc;
}

static bool all_inputs_const(const ref_compiled *c, const ref_exec_node *e)
{
    for (int j = 0; j < e->n_in; j++)
        if (e->in[j] >= 0 && c->vals[e->in[j]].kind != REF_VAL_CONST)
            return false;
    return true;
}

int ref_fold_constants(ref_compiled *c, ref_error *err)
{
    const ref_tensor *in[c->max_io > 0 ? c->max_io : 1];
    ref_tensor out[c->max_io > 0 ? c->max_io : 1];
    for (int k = 0; k < c->n_nodes; k++) {
        ref_exec_node *e = &c->nodes[k];
        if (!all_inputs_const(c, e))
            continue;
        for (int j = 0; j < e->n_in; j++)
            in[j] = e->in[j] >= 0 ? &c->vals[e->in[j]].t : NULL;
        int rc = ref_node_eval(c, k, in, out, err);
        if (rc == REF_E_DYNAMIC || rc == REF_E_UNSUPPORTED)
            continue; /* left to run time, which reports it if it still fails */
        if (rc)
            return ref_node_fail(c, k, err);
        for (int j = 0; j < e->n_out; j++) {
            if (e->out[j] < 0) {
                ref_free(out[j].data);
                continue;
            }
            ref_value *v = &c->vals[e->out[j]];
            v->kind = REF_VAL_CONST;
            v->t = out[j];
            v->owned = out[j].data;
        }
        e->folded = true;
    }
    return REF_OK;
}
