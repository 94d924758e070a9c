/* sequence_map.c: SequenceMap: runs its body once per element of the input sequences (sequence inputs give their
 * i-th element, tensor inputs themselves), and each body output becomes a sequence of the per-element results.
 * It must never keep a view into the body's arena past the iteration: results are copied into the node's own
 * growing blobs. */
#include <string.h>

#include "../seq.h"
#include "control_util.h"

static int smap_params(ref_op_ctx *c, int *body, int *n)
{
    *body = ctl_sub_index(c, "body");
    if (*body < 0)
        return ref_fail(c->err, REF_E_PARSE, "SequenceMap needs a body graph");
    const ref_compiled *b = c->subs[*body];
    if (b->n_formal != c->n_in || b->n_outputs != c->n_out)
        return ref_fail(c->err, REF_E_PARSE, "SequenceMap body has %d inputs and %d outputs, the node %d and %d",
                        b->n_formal, b->n_outputs, c->n_in, c->n_out);
    ref_seq_info s;
    if (!c->in[0] || c->in[0]->dtype != REF_DT_SEQUENCE)
        return ref_fail(c->err, REF_E_SHAPE, "SequenceMap: input 0 must be a sequence");
    if (!c->in[0]->data)
        return ref_fail(c->err, REF_E_DYNAMIC, "SequenceMap: its outputs' sizes are known when it runs");
    int rc = ref_seq_read(c->in[0], &s, c->err);
    *n = s.n;
    for (int j = 1; !rc && j < c->n_in; j++) {
        ref_seq_info o;
        if (c->in[j] && c->in[j]->dtype == REF_DT_SEQUENCE && !(rc = ref_seq_read(c->in[j], &o, c->err)) &&
            o.n != s.n)
            rc = ref_fail(c->err, REF_E_SHAPE, "SequenceMap: input %d has %d elements, input 0 has %d", j, o.n, s.n);
    }
    return rc;
}

static int smap_infer(ref_op_ctx *c)
{
    int body, n, rc = smap_params(c, &body, &n);
    return rc ? rc : ref_fail(c->err, REF_E_DYNAMIC, "SequenceMap: its outputs' sizes are known when it runs");
}

/* Append result t as element i of the blob growing in b (header for n elements already counted in b's size). */
static int append(ref_op_ctx *c, ctl_buf *b, int i, int n, const ref_tensor *t)
{
    size_t at = i == 0 ? ref_seq_header_bytes(n) : (size_t)b->t.dims[0];
    ref_tensor grown = ref_seq_shape(REF_DT_SEQUENCE, ref_seq_next(at, t));
    int rc = ctl_buf_reserve(b, &grown, c->err);
    if (rc)
        return rc;
    if (i == 0)
        ref_seq_header(b->t.data, REF_DT_SEQUENCE, true, 0, t->dtype, n);
    ref_seq_put(b->t.data, i, at, t);
    return REF_OK;
}

static int smap_run(ref_op_ctx *c)
{
    int body, n, rc = smap_params(c, &body, &n);
    ctl_rt *rt;
    ref_request *r;
    if (!rc)
        rc = ctl_rt_get(c, c->n_out, &rt);
    if (!rc)
        rc = ctl_request(c, rt, body, &r);
    for (int i = 0; i < n && !rc; i++) {
        for (int j = 0; j < c->n_in && !rc; j++) {
            ref_tensor e = c->in[j]->dtype == REF_DT_SEQUENCE ? ref_seq_at(c->in[j], i) : *c->in[j];
            rc = ref_request_bind_input(r, (size_t)j, &e, c->err);
        }
        if (!rc)
            rc = ctl_bind_captures(c, body, r);
        if (!rc)
            rc = ref_infer_run(r, c->err);
        for (int k = 0; k < c->n_out && !rc; k++) {
            ref_tensor o;
            if (!(rc = ref_request_output(r, (size_t)k, &o, c->err)))
                rc = append(c, &rt->bufs[k], i, n, &o);
        }
    }
    if (rc)
        return ctl_fail_sub(c, body, rc);
    for (int k = 0; k < c->n_out && !rc; k++) {
        if (n == 0) { /* no element ran the body: empty sequences */
            ref_tensor empty = ref_seq_shape(REF_DT_SEQUENCE, ref_seq_header_bytes(0));
            if ((rc = ctl_buf_reserve(&rt->bufs[k], &empty, c->err)))
                return rc;
            ref_seq_header(rt->bufs[k].t.data, REF_DT_SEQUENCE, true, 0, 0, 0);
        }
        rc = ctl_output_copy(c, k, &rt->bufs[k].t);
    }
    return rc;
}

const ref_op ref_ops_sequence_map[] = {
    {.name = "SequenceMap", .infer = smap_infer, .run = smap_run, .sets_outputs = true, .rt_free = ctl_rt_free},
    {.name = NULL},
};
