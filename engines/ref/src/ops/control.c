/* control.c: control flow: If (and the helpers Loop and Scan share). A subgraph runs as a compiled model of its
 * own through a sub-request the node keeps per request, so it is planned like the main graph and, once its plan
 * is cached, runs without allocating. It must never run a subgraph with outer-scope values it did not bind. */
#include <string.h>

#include "../alloc.h"
#include "control_util.h"

/* ================================================================================================
 * Shared helpers
 * ============================================================================================== */

int ctl_rt_get(ref_op_ctx *c, int n_bufs, ctl_rt **out)
{
    if (*c->rt) {
        *out = *c->rt;
        return REF_OK;
    }
    ctl_rt *rt = ref_calloc(1, sizeof *rt);
    if (rt) {
        rt->req = ref_calloc((size_t)c->n_subs + 1, sizeof *rt->req);
        rt->bufs = ref_calloc((size_t)n_bufs + 1, sizeof *rt->bufs);
    }
    if (!rt || !rt->req || !rt->bufs) {
        ctl_rt_free(rt);
        return ref_fail(c->err, REF_E_NOMEM, "out of memory for the state of a %s", c->node->op_type);
    }
    rt->n_req = c->n_subs;
    rt->n_bufs = n_bufs;
    *c->rt = rt;
    *out = rt;
    return REF_OK;
}

void ctl_rt_free(void *p)
{
    ctl_rt *rt = p;
    if (!rt)
        return;
    for (int i = 0; rt->req && i < rt->n_req; i++)
        ref_request_free_sub(rt->req[i]);
    for (int i = 0; rt->bufs && i < rt->n_bufs; i++)
        ref_free(rt->bufs[i].t.data);
    ref_free(rt->req);
    ref_free(rt->bufs);
    ref_free(rt);
}

int ctl_request(ref_op_ctx *c, ctl_rt *rt, int s, ref_request **out)
{
    if (!rt->req[s]) {
        int rc = ref_request_new_sub(c->subs[s], c->pool, &rt->req[s], c->err);
        if (rc)
            return rc;
    }
    *out = rt->req[s];
    return REF_OK;
}

int ctl_bind_captures(ref_op_ctx *c, int s, ref_request *r)
{
    const ref_compiled *sub = c->subs[s];
    for (int j = 0; j < sub->n_captures; j++) {
        if (sub->capture_input[j] < 0)
            continue;
        const ref_tensor *t = c->in[c->n_in + sub->capture_slot[j]];
        int rc = ref_request_bind_input(r, (size_t)sub->capture_input[j], t, c->err);
        if (rc)
            return rc;
    }
    return REF_OK;
}

int ctl_sub_index(const ref_op_ctx *c, const char *name)
{
    int s = 0;
    for (int a = 0; a < c->node->n_attrs; a++) {
        if (!c->node->attrs[a].g)
            continue;
        if (!strcmp(c->node->attrs[a].name, name))
            return s < c->n_subs ? s : -1;
        s++;
    }
    return -1;
}

int ctl_sub_shapes(ref_op_ctx *c, int s, const ref_tensor *formal, ref_tensor *outs, bool *known)
{
    const ref_compiled *sub = c->subs[s];
    ref_tensor *shapes = ref_calloc((size_t)sub->n_inputs + 1, sizeof *shapes);
    if (!shapes)
        return ref_fail(c->err, REF_E_NOMEM, "out of memory for the input shapes of a subgraph");
    for (int i = 0; i < sub->n_formal; i++)
        shapes[i] = formal[i];
    for (int j = 0; j < sub->n_captures; j++)
        if (sub->capture_input[j] >= 0)
            shapes[sub->capture_input[j]] = *c->in[c->n_in + sub->capture_slot[j]];
    for (int i = 0; i < sub->n_inputs; i++)
        shapes[i].data = NULL;
    ref_plan *p = NULL;
    int rc = ref_plan_build(sub, shapes, &p, c->err);
    ref_free(shapes);
    if (rc)
        return ctl_fail_sub(c, s, rc);
    *known = true;
    for (int i = 0; i < sub->n_outputs; i++) {
        const ref_value *v = &sub->vals[sub->outputs[i]];
        if (v->kind == REF_VAL_ACT && v->producer >= p->dynamic_from)
            *known = false;
        outs[i] = p->shapes[sub->outputs[i]];
        outs[i].data = NULL;
    }
    ref_plan_free(sub, p);
    return REF_OK;
}

int ctl_buf_reserve(ctl_buf *b, const ref_tensor *t, ref_error *err)
{
    size_t need = ref_tensor_nbytes(t);
    if (need > b->cap) {
        size_t cap = b->cap ? b->cap : 64;
        while (cap < need)
            cap *= 2;
        void *p = ref_aligned_alloc(cap);
        if (!p)
            return ref_fail(err, REF_E_NOMEM, "out of memory for %zu bytes of loop state", cap);
        if (b->t.data)
            memcpy(p, b->t.data, ref_tensor_nbytes(&b->t) < cap ? ref_tensor_nbytes(&b->t) : cap);
        ref_free(b->t.data);
        b->t.data = p;
        b->cap = cap;
    }
    void *data = b->t.data;
    b->t = *t;
    b->t.data = data;
    return REF_OK;
}

int ctl_buf_set(ctl_buf *b, const ref_tensor *t, ref_error *err)
{
    int rc = ctl_buf_reserve(b, t, err);
    size_t n = ref_tensor_nbytes(t);
    if (!rc && n)
        memmove(b->t.data, t->data, n);
    return rc;
}

int ctl_output_copy(ref_op_ctx *c, int j, const ref_tensor *t)
{
    if (j >= c->n_out || !c->out[j])
        return REF_OK;
    int rc = ref_op_output(c, j, t);
    size_t n = ref_tensor_nbytes(t);
    if (!rc && n && c->out[j]->data != t->data)
        memcpy(c->out[j]->data, t->data, n);
    return rc;
}

int ctl_fail_sub(ref_op_ctx *c, int s, int rc)
{
    int k = 0;
    for (int a = 0; a < c->node->n_attrs; a++)
        if (c->node->attrs[a].g && k++ == s)
            return ref_fail_prefix(c->err, "%s: ", c->node->attrs[a].name);
    (void)rc;
    return c->err ? c->err->code : rc;
}

/* ================================================================================================
 * If
 * ============================================================================================== */

static int if_branches(ref_op_ctx *c, int *then_s, int *else_s)
{
    *then_s = ctl_sub_index(c, "then_branch");
    *else_s = ctl_sub_index(c, "else_branch");
    if (*then_s < 0 || *else_s < 0)
        return ref_fail(c->err, REF_E_PARSE, "If needs then_branch and else_branch graphs");
    if (!c->n_in || !c->in[0])
        return ref_fail(c->err, REF_E_PARSE, "If needs its condition input");
    for (int s = 0; s < 2; s++)
        if (c->subs[s ? *else_s : *then_s]->n_outputs != c->n_out)
            return ref_fail(c->err, REF_E_SHAPE, "%s has %d outputs, If has %d", s ? "else_branch" : "then_branch",
                            c->subs[s ? *else_s : *then_s]->n_outputs, c->n_out);
    return REF_OK;
}

static bool if_cond(const ref_tensor *t)
{
    size_t es = ref_dtype_size(t->dtype), n = ref_tensor_nbytes(t);
    for (size_t i = 0; i < n && i < es; i++)
        if (((const unsigned char *)t->data)[i])
            return true;
    return false;
}

static int if_infer(ref_op_ctx *c)
{
    int ts, es;
    int rc = if_branches(c, &ts, &es);
    if (rc)
        return rc;
    if (ref_tensor_numel(c->in[0]) != 1)
        return ref_fail(c->err, REF_E_SHAPE, "If's condition has %lld elements, not 1",
                        (long long)ref_tensor_numel(c->in[0]));
    ref_tensor *a = ref_calloc(2 * (size_t)c->n_out + 1, sizeof *a), *b = a ? a + c->n_out : NULL;
    if (!a)
        return ref_fail(c->err, REF_E_NOMEM, "out of memory for %d output shapes", c->n_out);
    bool ka = false, kb = true;
    int first = c->in[0]->data ? (if_cond(c->in[0]) ? ts : es) : ts;
    rc = ctl_sub_shapes(c, first, NULL, a, &ka);
    /* With the condition unknown, a branch that cannot take these shapes may be the one never taken (a model's
     * branch for another sample rate): the condition decides at run time, where the branch taken is planned. */
    if (rc == REF_E_SHAPE && !c->in[0]->data)
        rc = 0, ka = false;
    if (!rc && !c->in[0]->data) {
        rc = ctl_sub_shapes(c, es, NULL, b, &kb);
        if (rc == REF_E_SHAPE)
            rc = 0, kb = false;
    }
    for (int j = 0; !rc && ka && kb && !c->in[0]->data && j < c->n_out; j++)
        if (a[j].dtype != b[j].dtype || !ref_shape_equal(&a[j], &b[j]))
            kb = false; /* the branches disagree: the condition decides at run time */
    for (int j = 0; !rc && ka && kb && j < c->n_out; j++)
        if (c->out[j])
            *c->out[j] = a[j];
    ref_free(a);
    if (!rc && !(ka && kb))
        rc = ref_fail(c->err, REF_E_DYNAMIC, "If: output shapes depend on the condition's run-time value");
    return rc;
}

static int if_run(ref_op_ctx *c)
{
    int ts, es;
    ctl_rt *rt;
    ref_request *r;
    int rc = if_branches(c, &ts, &es);
    if (!rc)
        rc = ctl_rt_get(c, 0, &rt);
    if (rc)
        return rc;
    int s = if_cond(c->in[0]) ? ts : es;
    if ((rc = ctl_request(c, rt, s, &r)) || (rc = ctl_bind_captures(c, s, r)) || (rc = ref_infer_run(r, c->err)))
        return ctl_fail_sub(c, s, rc);
    for (int j = 0; j < c->n_out; j++) {
        ref_tensor t;
        if ((rc = ref_request_output(r, (size_t)j, &t, c->err)) || (rc = ctl_output_copy(c, j, &t)))
            return rc;
    }
    return REF_OK;
}

const ref_op ref_ops_control[] = {
    {.name = "If", .infer = if_infer, .run = if_run, .sets_outputs = true, .rt_free = ctl_rt_free},
    {.name = NULL},
};
