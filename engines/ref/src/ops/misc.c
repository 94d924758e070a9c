/* misc.c: small operators with no family of their own: Det (LU with partial pivoting, in double), ReverseSequence
 * (reverse the first seq_len[b] steps of each batch entry) and MaxUnpool (scatter values back to MaxPool's flat
 * indices). It must never write outside the output: every index is checked against it. */
#include <math.h>
#include <string.h>

#include "op.h"
#include "reduce_elem.h"

/* ---- Det ---------------------------------------------------------------------------------------- */

static int det_infer(ref_op_ctx *c)
{
    const ref_tensor *x = c->in[0];
    if (x->dtype != REF_DT_FLOAT && x->dtype != REF_DT_DOUBLE)
        return ref_fail(c->err, REF_E_UNSUPPORTED, "Det of %s (float and double only)", ref_dtype_name(x->dtype));
    if (x->rank < 2 || x->dims[x->rank - 1] != x->dims[x->rank - 2])
        return ref_fail(c->err, REF_E_SHAPE, "Det needs square matrices in the last two dims");
    c->out[0]->dtype = x->dtype;
    ref_tensor_set_shape(c->out[0], x->rank - 2, x->dims);
    return REF_OK;
}

static size_t det_scratch_bytes(const ref_op_ctx *c)
{
    const ref_tensor *x = c->in[0];
    int64_t n = x->rank >= 2 ? x->dims[x->rank - 1] : 1;
    return sizeof(double) * (size_t)(n * n + 1);
}

static int det_run(ref_op_ctx *c)
{
    const ref_tensor *x = c->in[0];
    int64_t n = x->dims[x->rank - 1], count = ref_dims_prod(x->dims, 0, x->rank - 2);
    double *a = c->scratch;
    if (c->scratch_bytes < sizeof(double) * (size_t)(n * n))
        return ref_fail(c->err, REF_E_INVALID, "Det: scratch of %zu bytes", c->scratch_bytes);
    for (int64_t m = 0; m < count; m++) {
        for (int64_t i = 0; i < n * n; i++)
            a[i] = ref_elem_ld(x->data, x->dtype, m * n * n + i);
        double det = 1.0;
        for (int64_t k = 0; k < n && det != 0.0; k++) {
            int64_t p = k;
            for (int64_t i = k + 1; i < n; i++)
                if (fabs(a[i * n + k]) > fabs(a[p * n + k]))
                    p = i;
            if (a[p * n + k] == 0.0) {
                det = 0.0;
                break;
            }
            if (p != k) {
                for (int64_t j = 0; j < n; j++) {
                    double t = a[k * n + j];
                    a[k * n + j] = a[p * n + j];
                    a[p * n + j] = t;
                }
                det = -det;
            }
            det *= a[k * n + k];
            for (int64_t i = k + 1; i < n; i++) {
                double f = a[i * n + k] / a[k * n + k];
                for (int64_t j = k; j < n; j++)
                    a[i * n + j] -= f * a[k * n + j];
            }
        }
        ref_elem_st(c->out[0]->data, c->out[0]->dtype, m, det);
    }
    return REF_OK;
}

/* ---- ReverseSequence ---------------------------------------------------------------------------- */

static int revseq_axes(ref_op_ctx *c, int *batch, int *time)
{
    const ref_tensor *x = c->in[0], *lens = c->n_in > 1 ? c->in[1] : NULL;
    *batch = (int)ref_attr_int_or(c->node, "batch_axis", 1);
    *time = (int)ref_attr_int_or(c->node, "time_axis", 0);
    if (x->rank < 2 || !((*batch == 0 && *time == 1) || (*batch == 1 && *time == 0)))
        return ref_fail(c->err, REF_E_SHAPE, "ReverseSequence: batch_axis and time_axis must be 0 and 1");
    if (!lens || lens->rank != 1 || lens->dims[0] != x->dims[*batch] ||
        (lens->dtype != REF_DT_INT64 && lens->dtype != REF_DT_INT32))
        return ref_fail(c->err, REF_E_SHAPE, "ReverseSequence: sequence_lens must be int [batch]");
    return REF_OK;
}

static int revseq_infer(ref_op_ctx *c)
{
    int b, t, rc = revseq_axes(c, &b, &t);
    if (rc)
        return rc;
    c->out[0]->dtype = c->in[0]->dtype;
    ref_tensor_set_shape(c->out[0], c->in[0]->rank, c->in[0]->dims);
    return ref_dtype_size(c->in[0]->dtype) ? REF_OK : ref_fail(c->err, REF_E_UNSUPPORTED, "ReverseSequence of strings");
}

static int revseq_run(ref_op_ctx *c)
{
    int ba, ta, rc = revseq_axes(c, &ba, &ta);
    if (rc)
        return rc;
    const ref_tensor *x = c->in[0], *lens = c->in[1];
    size_t inner = (size_t)ref_dims_prod(x->dims, 2, x->rank) * ref_dtype_size(x->dtype);
    int64_t nb = x->dims[ba], nt = x->dims[ta];
    for (int64_t b = 0; b < nb; b++) {
        int64_t len = ref_elem_ldi(lens->data, lens->dtype, b);
        if (len < 0 || len > nt)
            return ref_fail(c->err, REF_E_RANGE, "ReverseSequence: sequence_lens[%lld] = %lld of %lld steps",
                            (long long)b, (long long)len, (long long)nt);
        for (int64_t t = 0; t < nt; t++) {
            int64_t src = t < len ? len - 1 - t : t;
            int64_t di = ba == 0 ? b * nt + t : t * nb + b, si = ba == 0 ? b * nt + src : src * nb + b;
            memcpy((char *)c->out[0]->data + (size_t)di * inner, (const char *)x->data + (size_t)si * inner, inner);
        }
    }
    return REF_OK;
}

/* ---- MaxUnpool ---------------------------------------------------------------------------------- */

/* The unpooled shape the indices refer to (from kernel, strides and pads). */
static int unpool_default(ref_op_ctx *c, ref_tensor *y)
{
    const ref_tensor *x = c->in[0];
    const int64_t *k, *s, *p;
    int sp = x->rank - 2;
    size_t nk = ref_attr_ints(c->node, "kernel_shape", &k), ns = ref_attr_ints(c->node, "strides", &s);
    size_t np = ref_attr_ints(c->node, "pads", &p);
    if ((int)nk != sp || (ns && (int)ns != sp) || (np && (int)np != 2 * sp))
        return ref_fail(c->err, REF_E_SHAPE, "MaxUnpool: kernel_shape, strides and pads must match %d dims", sp);
    ref_tensor_set_shape(y, x->rank, x->dims);
    for (int d = 0; d < sp; d++)
        y->dims[2 + d] = (x->dims[2 + d] - 1) * (ns ? s[d] : 1) + k[d] - (np ? p[d] + p[sp + d] : 0);
    return REF_OK;
}

static int unpool_infer(ref_op_ctx *c)
{
    const ref_tensor *x = c->in[0], *ix = c->n_in > 1 ? c->in[1] : NULL, *os = c->n_in > 2 ? c->in[2] : NULL;
    if (!ix || ix->dtype != REF_DT_INT64 || !ref_shape_equal(x, ix) || x->rank < 3 || !ref_dtype_size(x->dtype))
        return ref_fail(c->err, REF_E_SHAPE, "MaxUnpool needs X and int64 indices of one shape, rank >= 3");
    ref_tensor *y = c->out[0];
    y->dtype = x->dtype;
    int rc = unpool_default(c, y);
    if (rc || !os)
        return rc;
    /* An explicit output_shape pads (or crops) the default one at the end of each dim. */
    int64_t d[REF_MAX_RANK];
    if (ref_op_read_ints(c, 2, d, REF_MAX_RANK) != x->rank)
        return os->data ? ref_fail(c->err, REF_E_SHAPE, "MaxUnpool: output_shape must have rank %d", x->rank)
                        : ref_fail(c->err, REF_E_DYNAMIC, "MaxUnpool: output_shape known at run time");
    ref_tensor_set_shape(y, x->rank, d);
    return REF_OK;
}

static int unpool_run(ref_op_ctx *c)
{
    const ref_tensor *x = c->in[0], *ix = c->in[1];
    ref_tensor *y = c->out[0], def = {.dtype = x->dtype};
    int rc = unpool_default(c, &def);
    if (rc)
        return rc;
    size_t es = ref_dtype_size(x->dtype);
    int64_t n = ref_tensor_numel(&def), m = ref_tensor_numel(x);
    memset(y->data, 0, ref_tensor_nbytes(y));
    for (int64_t i = 0; i < m; i++) {
        int64_t at = ((const int64_t *)ix->data)[i], rest = at, to = 0, stride = 1;
        if (at < 0 || at >= n)
            return ref_fail(c->err, REF_E_RANGE, "MaxUnpool: index %lld outside %lld outputs", (long long)at,
                            (long long)n);
        bool inside = true;
        for (int d = def.rank - 1; d >= 0; d--) {
            int64_t q = rest % def.dims[d];
            rest /= def.dims[d];
            inside = inside && q < y->dims[d];
            to += q * stride;
            stride *= y->dims[d];
        }
        if (inside)
            memcpy((char *)y->data + (size_t)to * es, (const char *)x->data + (size_t)i * es, es);
    }
    return REF_OK;
}

const ref_op ref_ops_misc[] = {
    {.name = "Det", .infer = det_infer, .scratch_bytes = det_scratch_bytes, .run = det_run},
    {.name = "ReverseSequence", .infer = revseq_infer, .run = revseq_run},
    {.name = "MaxUnpool", .infer = unpool_infer, .run = unpool_run},
    {.name = NULL},
};
