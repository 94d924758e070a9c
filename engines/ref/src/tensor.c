/* tensor.c: dtype lookups (over common/onnx's one table) and shape arithmetic (broadcasting, strides, axes).
 * It must never allocate: shapes live in fixed arrays inside ref_tensor. */
#include <stdio.h>
#include <string.h>

#include "onnx/dtype.h"
#include "status.h"
#include "tensor.h"

/* The engine handles exactly the types common/onnx decodes (the table's field column), with sizes and names from
 * that one table. REF_DT_* (public, refengine.h) must be the same ONNX numbers. */
#define SAME_NUMBER(t) ((int)REF_DT_##t == (int)ONNX_DT_##t)
_Static_assert(SAME_NUMBER(FLOAT) && SAME_NUMBER(UINT8) && SAME_NUMBER(INT8) && SAME_NUMBER(UINT16) &&
                   SAME_NUMBER(INT16) && SAME_NUMBER(INT32) && SAME_NUMBER(INT64) && SAME_NUMBER(STRING) &&
                   SAME_NUMBER(BOOL) && SAME_NUMBER(FLOAT16) && SAME_NUMBER(DOUBLE) && SAME_NUMBER(UINT32) &&
                   SAME_NUMBER(UINT64) && SAME_NUMBER(BFLOAT16),
               "ref_dtype must use ONNX's TensorProto.DataType numbers");
#undef SAME_NUMBER

size_t ref_dtype_size(int dtype)
{
    if (dtype == REF_DT_SEQUENCE || dtype == REF_DT_OPTIONAL)
        return 1; /* blobs: dims[0] counts bytes */
    if (dtype == REF_DT_STRING)
        return REF_STRING_BYTES;
    return onnx_dtype_field(dtype) ? onnx_dtype_size(dtype) : 0;
}

const char *ref_dtype_name(int dtype)
{
    return dtype == REF_DT_SEQUENCE ? "sequence" : dtype == REF_DT_OPTIONAL ? "optional" : onnx_dtype_name(dtype);
}

int64_t ref_tensor_numel(const ref_tensor *t) { return ref_dims_prod(t->dims, 0, t->rank); }

size_t ref_tensor_nbytes(const ref_tensor *t)
{
    return (size_t)ref_tensor_numel(t) * ref_dtype_size(t->dtype);
}

int64_t ref_dims_prod(const int64_t *dims, int begin, int end)
{
    int64_t p = 1;
    for (int i = begin; i < end; i++)
        p *= dims[i];
    return p;
}

bool ref_shape_equal(const ref_tensor *a, const ref_tensor *b)
{
    if (a->rank != b->rank)
        return false;
    for (int i = 0; i < a->rank; i++)
        if (a->dims[i] != b->dims[i])
            return false;
    return true;
}

void ref_tensor_set_shape(ref_tensor *t, int rank, const int64_t *dims)
{
    t->rank = rank;
    for (int i = 0; i < rank; i++)
        t->dims[i] = dims[i];
}

int ref_broadcast_shape(int n, const ref_tensor *const *in, ref_tensor *out, ref_error *err)
{
    int rank = 0;
    for (int k = 0; k < n; k++)
        if (in[k]->rank > rank)
            rank = in[k]->rank;
    int64_t dims[REF_MAX_RANK];
    for (int d = 0; d < rank; d++)
        dims[d] = 1;
    for (int k = 0; k < n; k++) {
        int off = rank - in[k]->rank;
        for (int d = 0; d < in[k]->rank; d++) {
            int64_t v = in[k]->dims[d];
            int64_t *o = &dims[off + d];
            if (v == *o || v == 1)
                continue;
            if (*o == 1) {
                *o = v;
                continue;
            }
            char a[96], b[96];
            return ref_fail(err, REF_E_SHAPE, "cannot broadcast %s with %s (dim %d: %lld vs %lld)",
                            ref_shape_str(in[0], a, sizeof a), ref_shape_str(in[k], b, sizeof b),
                            off + d, (long long)*o, (long long)v);
        }
    }
    ref_tensor_set_shape(out, rank, dims);
    return REF_OK;
}

void ref_contiguous_strides(const ref_tensor *t, int64_t *strides)
{
    int64_t s = 1;
    for (int d = t->rank - 1; d >= 0; d--) {
        strides[d] = s;
        s *= t->dims[d];
    }
}

void ref_broadcast_strides(const ref_tensor *in, const ref_tensor *out, int64_t *strides)
{
    int64_t own[REF_MAX_RANK];
    ref_contiguous_strides(in, own);
    int off = out->rank - in->rank;
    for (int d = 0; d < out->rank; d++) {
        int id = d - off;
        strides[d] = (id < 0 || in->dims[id] == 1) ? 0 : own[id];
    }
}

int ref_norm_axis(int64_t axis, int rank)
{
    if (axis < -rank || axis >= rank)
        return -1;
    return (int)(axis < 0 ? axis + rank : axis);
}

const char *ref_shape_str(const ref_tensor *t, char *buf, size_t len)
{
    size_t used = 0;
    used += (size_t)snprintf(buf + used, len - used, "[");
    for (int i = 0; i < t->rank && used < len; i++)
        used += (size_t)snprintf(buf + used, len - used, i ? ",%lld" : "%lld", (long long)t->dims[i]);
    if (used < len)
        snprintf(buf + used, len - used, "]");
    return buf;
}
