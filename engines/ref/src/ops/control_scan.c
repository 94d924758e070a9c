/* control_scan.c: Scan (opset 8 with its batch axis and sequence_lens, and 9 on): runs its body once per slice of
 * the scan inputs along their axes, carrying N state values and stacking K scan outputs along theirs, in either
 * direction. It must never read a slice past the scan length or write an output slot twice in one run. */
#include <stdint.h>
#include <string.h>

#include "../alloc.h"
#include "control_util.h"

#define SCAN_MAX 64 /* scan inputs and outputs a node may have */

typedef struct {
    int body, n_state, n_in, n_out; /* N states, M scan inputs, K scan outputs */
    int first;                      /* input index of the first state (1 in opset 8: sequence_lens first) */
    bool batched;                   /* opset 8: every input has a batch axis 0 */
    int64_t in_axis[SCAN_MAX], out_axis[SCAN_MAX];
    bool in_rev[SCAN_MAX], out_rev[SCAN_MAX];
    int64_t len, batch;
} scan_p;

static int read_list(ref_op_ctx *c, const char *name, int n, int64_t *out, bool *rev)
{
    const int64_t *v;
    size_t k = ref_attr_ints(c->node, name, &v);
    if (k && (int)k != n)
        return ref_fail(c->err, REF_E_PARSE, "Scan: %s has %zu entries for %d values", name, k, n);
    for (int i = 0; i < n; i++) {
        int64_t x = k ? v[i] : 0;
        if (rev)
            rev[i] = x != 0;
        else
            out[i] = x;
    }
    return REF_OK;
}

static int scan_params(ref_op_ctx *c, scan_p *sp)
{
    memset(sp, 0, sizeof *sp);
    sp->body = ctl_sub_index(c, "body");
    sp->n_in = (int)ref_attr_int_or(c->node, "num_scan_inputs", -1);
    sp->batched = c->opset < 9;
    sp->first = sp->batched ? 1 : 0;
    sp->n_state = c->n_in - sp->first - sp->n_in;
    sp->n_out = c->n_out - sp->n_state;
    if (sp->body < 0 || sp->n_in < 1 || sp->n_state < 0 || sp->n_out < 0)
        return ref_fail(c->err, REF_E_PARSE, "Scan needs a body, num_scan_inputs >= 1 and inputs for it");
    if (sp->n_in > SCAN_MAX || sp->n_out > SCAN_MAX)
        return ref_fail(c->err, REF_E_UNSUPPORTED, "Scan with more than %d scan inputs or outputs", SCAN_MAX);
    const ref_compiled *b = c->subs[sp->body];
    if (b->n_formal != sp->n_state + sp->n_in || b->n_outputs != sp->n_state + sp->n_out)
        return ref_fail(c->err, REF_E_PARSE, "Scan body has %d inputs and %d outputs, expected %d and %d", b->n_formal,
                        b->n_outputs, sp->n_state + sp->n_in, sp->n_state + sp->n_out);
    int rc = read_list(c, sp->batched ? "directions" : "scan_input_directions", sp->n_in, NULL, sp->in_rev);
    if (!rc && !sp->batched)
        rc = read_list(c, "scan_input_axes", sp->n_in, sp->in_axis, NULL);
    if (!rc && !sp->batched)
        rc = read_list(c, "scan_output_directions", sp->n_out, NULL, sp->out_rev);
    if (!rc && !sp->batched)
        rc = read_list(c, "scan_output_axes", sp->n_out, sp->out_axis, NULL);
    return rc;
}

static int scan_infer(ref_op_ctx *c)
{
    scan_p sp;
    int rc = scan_params(c, &sp);
    return rc ? rc : ref_fail(c->err, REF_E_DYNAMIC, "Scan: output shapes are known when it runs");
}

/* Where slice t of x (one batch row when batched) lies: shape without the axis; copied when not contiguous. */
static int slice_in(ref_op_ctx *c, const ref_tensor *x, int64_t axis, int64_t idx, ctl_buf *tmp, ref_tensor *out)
{
    size_t es = ref_dtype_size(x->dtype);
    int64_t outer = 1, inner = 1;
    ref_tensor s = {.dtype = x->dtype, .rank = x->rank - 1};
    for (int d = 0, k = 0; d < x->rank; d++) {
        if (d == axis)
            continue;
        s.dims[k++] = x->dims[d];
        if (d < axis)
            outer *= x->dims[d];
        else
            inner *= x->dims[d];
    }
    size_t block = (size_t)inner * es;
    const char *base = (const char *)x->data + (size_t)idx * block;
    if (outer == 1) {
        *out = s;
        out->data = (void *)base;
        return REF_OK;
    }
    int rc = ctl_buf_reserve(tmp, &s, c->err);
    if (rc)
        return rc;
    for (int64_t o = 0; o < outer; o++)
        memcpy((char *)tmp->t.data + (size_t)o * block, base + (size_t)o * (size_t)x->dims[axis] * block, block);
    *out = tmp->t;
    return REF_OK;
}

/* Store iteration output o at position idx along axis of the stacked output in b (batch row row of n_rows). */
static int stack_out(ref_op_ctx *c, const scan_p *sp, ctl_buf *b, const ref_tensor *o, int k, int64_t idx,
                     int64_t row, bool first)
{
    int64_t axis = sp->out_axis[k] < 0 ? sp->out_axis[k] + o->rank + 1 : sp->out_axis[k];
    if (axis < 0 || axis > o->rank || o->rank + 1 + sp->batched > REF_MAX_RANK)
        return ref_fail(c->err, REF_E_UNSUPPORTED, "Scan: output %d axis %lld for rank %d", k, (long long)axis, o->rank);
    ref_tensor t = {.dtype = o->dtype, .rank = o->rank + 1 + sp->batched};
    int64_t outer = 1, inner = 1;
    int d = 0;
    if (sp->batched)
        t.dims[d++] = sp->batch;
    for (int i = 0; i <= o->rank; i++) {
        if (i == axis)
            t.dims[d++] = sp->len;
        if (i < o->rank) {
            t.dims[d++] = o->dims[i];
            *(i < axis ? &outer : &inner) *= o->dims[i];
        }
    }
    if (first) {
        int rc = ctl_buf_reserve(b, &t, c->err);
        if (rc)
            return rc;
    } else if (!ref_shape_equal(&b->t, &t) || b->t.dtype != t.dtype) {
        return ref_fail(c->err, REF_E_SHAPE, "Scan: scan output %d changes shape between iterations", k);
    }
    size_t block = (size_t)inner * ref_dtype_size(o->dtype);
    char *base = (char *)b->t.data + (size_t)row * (size_t)sp->len * (size_t)outer * block;
    for (int64_t q = 0; q < outer; q++)
        memcpy(base + ((size_t)q * (size_t)sp->len + (size_t)idx) * block, (const char *)o->data + (size_t)q * block,
               block);
    return REF_OK;
}

/* A batch row of t (opset 8), or t itself. */
static ref_tensor row_of(const scan_p *sp, const ref_tensor *t, int64_t row)
{
    if (!sp->batched)
        return *t;
    ref_tensor r = {.dtype = t->dtype, .rank = t->rank - 1};
    memcpy(r.dims, &t->dims[1], sizeof(int64_t) * (size_t)r.rank);
    r.data = (char *)t->data + (size_t)row * ref_tensor_nbytes(&r);
    return r;
}

/* Buffers: [0, N) states, [N, N+K) stacked outputs, [N+K, N+K+M) slices, [N+K+M, 2N+K+M) stacked states. */
static int scan_row(ref_op_ctx *c, const scan_p *sp, ctl_rt *rt, ref_request *r, int64_t row)
{
    int N = sp->n_state, K = sp->n_out, M = sp->n_in, rc = REF_OK;
    for (int i = 0; i < N && !rc; i++) {
        ref_tensor s = row_of(sp, c->in[sp->first + i], row);
        rc = ctl_buf_set(&rt->bufs[i], &s, c->err);
    }
    for (int64_t t = 0; t < sp->len && !rc; t++) {
        for (int i = 0; i < N && !rc; i++)
            rc = ref_request_set_input(r, (size_t)i, &rt->bufs[i].t, c->err);
        for (int m = 0; m < M && !rc; m++) {
            ref_tensor x = row_of(sp, c->in[sp->first + N + m], row), s;
            int64_t axis = sp->in_axis[m] < 0 ? sp->in_axis[m] + x.rank : sp->in_axis[m];
            if (!(rc = slice_in(c, &x, axis, sp->in_rev[m] ? sp->len - 1 - t : t, &rt->bufs[N + K + m], &s)))
                rc = ref_request_bind_input(r, (size_t)(N + m), &s, c->err);
        }
        if (!rc)
            rc = ctl_bind_captures(c, sp->body, r);
        if (!rc)
            rc = ref_infer_run(r, c->err);
        ref_tensor o;
        for (int i = 0; i < N && !rc; i++)
            if (!(rc = ref_request_output(r, (size_t)i, &o, c->err)))
                rc = ctl_buf_set(&rt->bufs[i], &o, c->err);
        for (int k = 0; k < K && !rc; k++)
            if (!(rc = ref_request_output(r, (size_t)(N + k), &o, c->err)))
                rc = stack_out(c, sp, &rt->bufs[N + k], &o, k, sp->out_rev[k] ? sp->len - 1 - t : t, row,
                               t == 0 && row == 0);
    }
    return rc;
}

/* Scan length (and batch size): every scan input must agree. */
static int scan_len(ref_op_ctx *c, scan_p *sp)
{
    sp->batch = 1;
    for (int m = 0; m < sp->n_in; m++) {
        const ref_tensor *x = c->in[sp->first + sp->n_state + m];
        if (!x)
            return ref_fail(c->err, REF_E_PARSE, "Scan: scan input %d is missing", m);
        int64_t axis = sp->batched ? 1 : (sp->in_axis[m] < 0 ? sp->in_axis[m] + x->rank : sp->in_axis[m]);
        if (axis < 0 || axis >= x->rank)
            return ref_fail(c->err, REF_E_SHAPE, "Scan: scan input %d has no axis %lld", m, (long long)axis);
        if (sp->batched)
            sp->in_axis[m] = 0;
        if (m == 0) {
            sp->len = x->dims[axis];
            sp->batch = sp->batched ? x->dims[0] : 1;
        } else if (x->dims[axis] != sp->len || (sp->batched && x->dims[0] != sp->batch)) {
            return ref_fail(c->err, REF_E_SHAPE, "Scan: scan inputs disagree on the scan length");
        }
    }
    const ref_tensor *lens = sp->batched && c->n_in > 0 ? c->in[0] : NULL;
    for (int64_t b = 0; lens && b < ref_tensor_numel(lens); b++) {
        int64_t v = lens->dtype == REF_DT_INT64 ? ((const int64_t *)lens->data)[b] : ((const int32_t *)lens->data)[b];
        if (v != sp->len)
            return ref_fail(c->err, REF_E_UNSUPPORTED, "Scan: sequence_lens shorter than the scan length");
    }
    return REF_OK;
}

static int scan_run(ref_op_ctx *c)
{
    scan_p sp;
    ctl_rt *rt;
    ref_request *r;
    int rc = scan_params(c, &sp);
    if (!rc)
        rc = scan_len(c, &sp);
    int N = sp.n_state, K = sp.n_out, M = sp.n_in;
    if (!rc)
        rc = ctl_rt_get(c, 2 * N + K + M, &rt);
    if (!rc)
        rc = ctl_request(c, rt, sp.body, &r);
    if (sp.len == 0 && !rc)
        return ref_fail(c->err, REF_E_UNSUPPORTED, "Scan over an empty sequence");
    for (int64_t row = 0; row < sp.batch && !rc; row++) {
        if ((rc = scan_row(c, &sp, rt, r, row)))
            return ctl_fail_sub(c, sp.body, rc);
        for (int i = 0; i < N && sp.batched && !rc; i++) {
            ctl_buf *st = &rt->bufs[2 * N + K + M - N + i], *cur = &rt->bufs[i];
            ref_tensor all = {.dtype = cur->t.dtype, .rank = cur->t.rank + 1};
            all.dims[0] = sp.batch;
            memcpy(&all.dims[1], cur->t.dims, sizeof(int64_t) * (size_t)cur->t.rank);
            size_t n = ref_tensor_nbytes(&cur->t);
            if (!(rc = row ? REF_OK : ctl_buf_reserve(st, &all, c->err)) && n)
                memcpy((char *)st->t.data + (size_t)row * n, cur->t.data, n);
        }
    }
    for (int i = 0; i < N && !rc; i++)
        rc = ctl_output_copy(c, i, sp.batched ? &rt->bufs[N + K + M + i].t : &rt->bufs[i].t);
    for (int k = 0; k < K && !rc; k++)
        rc = ctl_output_copy(c, N + k, &rt->bufs[N + k].t);
    return rc;
}

const ref_op ref_ops_scan[] = {
    {.name = "Scan", .infer = scan_infer, .run = scan_run, .sets_outputs = true, .rt_free = ctl_rt_free},
    {.name = NULL},
};
