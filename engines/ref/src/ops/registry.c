/* registry.c: finds an operator by op_type across the per-family tables, plus helpers for infer code.
 * It must never own state: the tables are static and read-only. */
#include <stdio.h>
#include <string.h>

#include "op.h"
#include "rnn.h"

static const ref_op *const families[] = {
    ref_ops_elementwise, ref_ops_unary, ref_ops_activation, ref_ops_cast,   ref_ops_gemm,
    ref_ops_conv,        ref_ops_pool,  ref_ops_norm,       ref_ops_reduce, ref_ops_softmax,
    ref_ops_shape,       ref_ops_layout, ref_ops_index,     ref_ops_resize, ref_ops_control,
    ref_ops_loop,        ref_ops_scan,  ref_ops_signal,     ref_ops_misc,
    ref_ops_quant,       ref_ops_einsum, ref_ops_select,     ref_ops_sample,
    ref_ops_tfidf,       ref_ops_sequence, ref_ops_sequence_map, ref_ops_string,
    ref_ops_rnn,         ref_ops_gelu,   ref_ops_norm_rms,
};

const ref_op *ref_op_find(const char *domain, const char *op_type)
{
    if (domain && !strcmp(domain, "ai.onnx.preview.training")) {
        for (const ref_op *op = ref_ops_training; op->name; op++)
            if (!strcmp(op->name, op_type))
                return op;
        return NULL;
    }
    if (domain && !strcmp(domain, "com.microsoft")) {
        static const ref_op *const ms[] = {ref_ops_quant_ms, ref_ops_quant_ms_gemm, ref_ops_quant_ms_pool,
                                           ref_ops_gelu_ms,  ref_ops_norm_ms,       ref_ops_attention_ms,
                                           ref_ops_embed_ms, ref_ops_fused_ms,      ref_ops_matmul_nbits_ms};
        for (size_t f = 0; f < sizeof ms / sizeof ms[0]; f++)
            for (const ref_op *op = ms[f]; op->name; op++)
                if (!strcmp(op->name, op_type))
                    return op;
        return NULL;
    }
    if (domain && domain[0] && strcmp(domain, "ai.onnx"))
        return NULL;
    for (size_t f = 0; f < sizeof families / sizeof families[0]; f++)
        for (const ref_op *op = families[f]; op->name; op++)
            if (!strcmp(op->name, op_type))
                return op;
    return NULL;
}

int ref_op_want_dtype(ref_op_ctx *c, int i, int n_types, const int *types)
{
    const ref_tensor *t = i < c->n_in ? c->in[i] : NULL;
    if (!t)
        return ref_fail(c->err, REF_E_INVALID, "input %d is required", i);
    for (int k = 0; k < n_types; k++)
        if (t->dtype == types[k])
            return REF_OK;
    return ref_fail(c->err, REF_E_UNSUPPORTED, "input %d has unsupported type %s", i,
                    ref_dtype_name(t->dtype));
}

int ref_op_output(ref_op_ctx *c, int j, const ref_tensor *t)
{
    ref_tensor *o = c->out[j];
    if (o->data) {
        char a[96], b[96];
        if (o->dtype != t->dtype || !ref_shape_equal(o, t))
            return ref_fail(c->err, REF_E_SHAPE, "output %d is %s %s at run time, planned as %s %s", j,
                            ref_dtype_name(t->dtype), ref_shape_str(t, a, sizeof a), ref_dtype_name(o->dtype),
                            ref_shape_str(o, b, sizeof b));
        return REF_OK;
    }
    char what[32];
    snprintf(what, sizeof what, "output %d", j);
    int rc = ref_shape_check(t, ref_op_max_tensor_bytes(c), what, c->err);
    if (rc)
        return rc;
    o->dtype = t->dtype;
    o->rank = t->rank;
    memcpy(o->dims, t->dims, sizeof o->dims);
    if (!c->alloc_out)
        return ref_fail(c->err, REF_E_DYNAMIC, "output %d: its shape is only known at run time", j);
    return c->alloc_out(c, j);
}

size_t ref_op_max_tensor_bytes(const ref_op_ctx *c)
{
    return c->max_tensor_bytes ? c->max_tensor_bytes : ref_default_max_tensor_bytes();
}

int ref_op_n_present(const ref_op_ctx *c)
{
    int n = c->n_in;
    while (n > 0 && !c->in[n - 1])
        n--;
    return n;
}

int ref_op_read_ints(const ref_op_ctx *c, int i, int64_t *out, int max)
{
    const ref_tensor *t = i < c->n_in ? c->in[i] : NULL;
    if (!t || !t->data)
        return -1;
    int64_t n = ref_tensor_numel(t);
    if (n > max)
        return -1;
    for (int64_t k = 0; k < n; k++) {
        if (t->dtype == REF_DT_INT64)
            out[k] = ((const int64_t *)t->data)[k];
        else if (t->dtype == REF_DT_INT32)
            out[k] = ((const int32_t *)t->data)[k];
        else
            return -1;
    }
    return (int)n;
}
