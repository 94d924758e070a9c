/* control_loop.c: Loop: runs its body subgraph while the trip count and the condition allow, carrying N values from
 * one iteration to the next and stacking K scan outputs. Its output shapes are known only after running it, so it
 * gives them through ref_op_output. It must never let a carried value alias the body's arena: every carried
 * value is copied out after each iteration and copied in (set_input) before the next. */
#include <stdint.h>
#include <string.h>

#include "../alloc.h"
#include "../seq.h"
#include "control_util.h"

typedef struct {
    int body;       /* subgraph index */
    int n_carried;  /* N */
    int n_scan;     /* K */
} loop_p;

static int loop_params(ref_op_ctx *c, loop_p *lp)
{
    lp->body = ctl_sub_index(c, "body");
    if (lp->body < 0)
        return ref_fail(c->err, REF_E_PARSE, "Loop needs a body graph");
    lp->n_carried = c->n_in - 2;
    lp->n_scan = c->n_out - lp->n_carried;
    const ref_compiled *b = c->subs[lp->body];
    if (lp->n_carried < 0 || lp->n_scan < 0)
        return ref_fail(c->err, REF_E_PARSE, "Loop has %d inputs and %d outputs (inputs: M, cond, then the %s)",
                        c->n_in, c->n_out, "carried values");
    if (b->n_formal != 2 + lp->n_carried || b->n_outputs != 1 + lp->n_carried + lp->n_scan)
        return ref_fail(c->err, REF_E_PARSE, "Loop body has %d inputs and %d outputs, expected %d and %d",
                        b->n_formal, b->n_outputs, 2 + lp->n_carried, 1 + lp->n_carried + lp->n_scan);
    return REF_OK;
}

static int loop_infer(ref_op_ctx *c)
{
    loop_p lp;
    int rc = loop_params(c, &lp);
    if (rc)
        return rc;
    /* The trip count and the condition decide the scan outputs' length, and the carried values may change
     * shape between iterations: only running it tells. */
    return ref_fail(c->err, REF_E_DYNAMIC, "Loop: output shapes are known only after running it");
}

static bool nonzero(const ref_tensor *t)
{
    size_t n = ref_dtype_size(t->dtype);
    for (size_t i = 0; t->data && i < n && ref_tensor_numel(t) > 0; i++)
        if (((const unsigned char *)t->data)[i])
            return true;
    return false;
}

/* Append iteration it's scan output o to b (shape [it + 1] + o's shape). */
static int append_scan(ref_op_ctx *c, ctl_buf *b, const ref_tensor *o, int64_t it)
{
    if (o->rank >= REF_MAX_RANK)
        return ref_fail(c->err, REF_E_UNSUPPORTED, "Loop: scan output of rank %d (at most %d)", o->rank,
                        REF_MAX_RANK - 1);
    ref_tensor t = {.dtype = o->dtype, .rank = o->rank + 1};
    t.dims[0] = it + 1;
    memcpy(&t.dims[1], o->dims, sizeof(int64_t) * (size_t)o->rank);
    if (it > 0) {
        ref_tensor prev = b->t;
        prev.rank--;
        memmove(prev.dims, &prev.dims[1], sizeof(int64_t) * (size_t)prev.rank);
        if (prev.dtype != o->dtype || !ref_shape_equal(&prev, o))
            return ref_fail(c->err, REF_E_SHAPE, "Loop: a scan output changes shape at iteration %lld",
                            (long long)it);
    }
    int rc = ctl_buf_reserve(b, &t, c->err);
    size_t n = ref_tensor_nbytes(o);
    if (!rc && n)
        memcpy((char *)b->t.data + (size_t)it * n, o->data, n);
    return rc;
}

/* One iteration: feed iteration number, condition and carried values, run, take them back. */
static int loop_step(ref_op_ctx *c, const loop_p *lp, ctl_rt *rt, ref_request *r, int64_t it, bool *cond)
{
    int64_t iter = it;
    uint8_t cb = *cond;
    ref_tensor ti = {.dtype = REF_DT_INT64, .rank = 0, .data = &iter};
    ref_tensor tc = {.dtype = REF_DT_BOOL, .rank = 0, .data = &cb};
    int rc = ref_request_set_input(r, 0, &ti, c->err);
    if (!rc)
        rc = ref_request_set_input(r, 1, &tc, c->err);
    const ref_compiled *body = c->subs[lp->body];
    for (int j = 0; !rc && j < lp->n_carried; j++) {
        const ref_tensor *v = &rt->bufs[j].t;
        const ref_value_info *d = body->vals[body->inputs[2 + j]].declared;
        /* A body that declares an optional input while its output carries the sequence itself (ONNX's
         * test_loop16_seq_none): the next iteration gets the sequence wrapped as a present optional. */
        if (d && d->elem_type == REF_DT_OPTIONAL && v->dtype == REF_DT_SEQUENCE) {
            ctl_buf *w = &rt->bufs[lp->n_carried + lp->n_scan + j];
            if ((rc = ctl_buf_set(w, v, c->err)))
                break;
            ref_seq_mark_optional(&w->t);
            v = &w->t;
        }
        rc = ref_request_set_input(r, (size_t)(2 + j), v, c->err);
    }
    if (!rc)
        rc = ctl_bind_captures(c, lp->body, r);
    if (!rc)
        rc = ref_infer_run(r, c->err);
    ref_tensor o;
    if (!rc && !(rc = ref_request_output(r, 0, &o, c->err)))
        *cond = nonzero(&o);
    for (int j = 0; !rc && j < lp->n_carried; j++)
        if (!(rc = ref_request_output(r, (size_t)(1 + j), &o, c->err)))
            rc = ctl_buf_set(&rt->bufs[j], &o, c->err);
    for (int s = 0; !rc && s < lp->n_scan; s++)
        if (!(rc = ref_request_output(r, (size_t)(1 + lp->n_carried + s), &o, c->err)))
            rc = append_scan(c, &rt->bufs[lp->n_carried + s], &o, it);
    return rc;
}

/* A scan output of a loop that never ran: length 0, the body's declared shape for the rest when it has one. */
static void empty_scan(const ref_compiled *body, int out, ref_tensor *t)
{
    const ref_value_info *d = &body->graph->outputs[out];
    memset(t, 0, sizeof *t);
    t->dtype = d->elem_type ? d->elem_type : REF_DT_FLOAT;
    t->rank = 1;
    if (d->rank < 0 || d->rank >= REF_MAX_RANK)
        return;
    for (int i = 0; i < d->rank; i++)
        t->dims[1 + i] = d->dims[i].value > 0 ? d->dims[i].value : 0;
    t->rank = d->rank + 1;
}

static int loop_run(ref_op_ctx *c)
{
    loop_p lp;
    ctl_rt *rt;
    ref_request *r;
    int rc = loop_params(c, &lp);
    if (!rc)
        rc = ctl_rt_get(c, 2 * lp.n_carried + lp.n_scan, &rt);
    if (!rc)
        rc = ctl_request(c, rt, lp.body, &r);
    if (rc)
        return rc;
    int64_t trips = INT64_MAX;
    if (c->in[0] && ref_tensor_numel(c->in[0]) > 0) {
        if (c->in[0]->dtype != REF_DT_INT64)
            return ref_fail(c->err, REF_E_UNSUPPORTED, "Loop: trip count of type %s", ref_dtype_name(c->in[0]->dtype));
        trips = *(const int64_t *)c->in[0]->data;
    }
    bool cond = !c->in[1] || nonzero(c->in[1]);
    for (int j = 0; j < lp.n_carried; j++)
        if ((rc = ctl_buf_set(&rt->bufs[j], c->in[2 + j], c->err)))
            return rc;
    int64_t it = 0;
    for (; it < trips && cond; it++)
        if ((rc = loop_step(c, &lp, rt, r, it, &cond)))
            return ctl_fail_sub(c, lp.body, rc);
    for (int j = 0; j < lp.n_carried; j++)
        if ((rc = ctl_output_copy(c, j, &rt->bufs[j].t)))
            return rc;
    for (int s = 0; s < lp.n_scan; s++) {
        ref_tensor empty;
        if (!it)
            empty_scan(c->subs[lp.body], 1 + lp.n_carried + s, &empty);
        if ((rc = ctl_output_copy(c, lp.n_carried + s, it ? &rt->bufs[lp.n_carried + s].t : &empty)))
            return rc;
    }
    return REF_OK;
}

const ref_op ref_ops_loop[] = {
    {.name = "Loop", .infer = loop_infer, .run = loop_run, .sets_outputs = true, .rt_free = ctl_rt_free},
    {.name = NULL},
};
