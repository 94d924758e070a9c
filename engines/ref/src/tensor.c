/* tensor.c: dtype lookups (over common/onnx's one table) and shape arithmetic (broadcasting, strides, axes).
 * It must never allocate: shapes live in fixed arrays inside ref_tensor. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

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

/* Saturates like ref_dims_prod: an unchecked shape asks for SIZE_MAX bytes, which no allocator grants. */
size_t ref_tensor_nbytes(const ref_tensor *t)
{
    int64_t n = ref_tensor_numel(t);
    size_t bytes;
    if (n < 0 || !ref_size_mul((size_t)n, ref_dtype_size(t->dtype), &bytes))
        return SIZE_MAX;
    return bytes;
}

int64_t ref_dims_prod(const int64_t *dims, int begin, int end)
{
    for (int i = begin; i < end; i++)
        if (dims[i] == 0)
            return 0;
    int64_t p = 1;
    for (int i = begin; i < end; i++)
        if (!ref_dim_mul(p, dims[i], &p))
            return INT64_MAX;
    return p;
}

bool ref_dim_mul(int64_t a, int64_t b, int64_t *out)
{
    int64_t r;
    if (a < 0 || b < 0 || __builtin_mul_overflow(a, b, &r))
        return false;
    *out = r;
    return true;
}

bool ref_dim_add(int64_t a, int64_t b, int64_t *out)
{
    int64_t r;
    if (a < 0 || b < 0 || __builtin_add_overflow(a, b, &r))
        return false;
    *out = r;
    return true;
}

bool ref_size_mul(size_t a, size_t b, size_t *out) { return !__builtin_mul_overflow(a, b, out); }

bool ref_size_add(size_t a, size_t b, size_t *out) { return !__builtin_add_overflow(a, b, out); }

int64_t ref_i64_add(int64_t a, int64_t b, bool *ovf)
{
    int64_t r;
    if (__builtin_add_overflow(a, b, &r)) {
        *ovf = true;
        return 0;
    }
    return r;
}

int64_t ref_i64_sub(int64_t a, int64_t b, bool *ovf)
{
    int64_t r;
    if (__builtin_sub_overflow(a, b, &r)) {
        *ovf = true;
        return 0;
    }
    return r;
}

int64_t ref_i64_mul(int64_t a, int64_t b, bool *ovf)
{
    int64_t r;
    if (__builtin_mul_overflow(a, b, &r)) {
        *ovf = true;
        return 0;
    }
    return r;
}

bool ref_dim_from_double(double v, int64_t *out)
{
    /* 2^63 is exact in a double; every double below it converts to an int64 */
    if (!(v >= 0.0) || !(v < 9223372036854775808.0))
        return false;
    *out = (int64_t)v;
    return true;
}

int ref_shape_check(const ref_tensor *t, size_t max_bytes, const char *what, ref_error *err)
{
    char s[160];
    if (t->rank < 0 || t->rank > REF_MAX_RANK)
        return ref_fail(err, REF_E_RANGE, "%s has rank %d (0 to %d)", what, t->rank, REF_MAX_RANK);
    int64_t extent = 1;
    bool empty = false;
    for (int d = 0; d < t->rank; d++) {
        if (t->dims[d] < 0)
            return ref_fail(err, REF_E_RANGE, "%s has a negative dim: %s", what, ref_shape_str(t, s, sizeof s));
        empty |= t->dims[d] == 0;
        if (!ref_dim_mul(extent, t->dims[d] ? t->dims[d] : 1, &extent))
            return ref_fail(err, REF_E_RANGE, "%s: the element count of %s %s overflows 64 bits", what,
                            ref_dtype_name(t->dtype), ref_shape_str(t, s, sizeof s));
    }
    size_t es = ref_dtype_size(t->dtype), bytes;
    if (!ref_size_mul((size_t)extent, es ? es : 1, &bytes) || bytes > max_bytes)
        return ref_fail(err, REF_E_RANGE, "%s: %s %s %s %lld elements of %zu bytes, more than the %zu-byte limit "
                        "on one tensor (option max_tensor_bytes)", what, ref_dtype_name(t->dtype),
                        ref_shape_str(t, s, sizeof s), empty ? "is empty, but its nonzero dims span" : "holds",
                        (long long)extent, es ? es : 1, max_bytes);
    return REF_OK;
}

size_t ref_default_max_tensor_bytes(void)
{
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    size_t lim = SIZE_MAX / 2;
    if (pages > 0 && page > 0 && (uint64_t)pages <= SIZE_MAX / 2 / (uint64_t)page)
        lim = (size_t)pages * (size_t)page;
    int which[2] = {RLIMIT_AS, RLIMIT_DATA};
    for (int i = 0; i < 2; i++) {
        struct rlimit rl;
        if (!getrlimit(which[i], &rl) && rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < lim)
            lim = (size_t)rl.rlim_cur;
    }
    return lim;
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
    /* strides of a checked shape (ref_shape_check) never overflow; others saturate rather than wrap */
    int64_t s = 1;
    for (int d = t->rank - 1; d >= 0; d--) {
        strides[d] = s;
        if (!ref_dim_mul(s, t->dims[d] ? t->dims[d] : 1, &s))
            s = INT64_MAX;
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

void ref_broadcast_offsets2(const int64_t *dims, int rank, const int64_t *sa, const int64_t *sb, int64_t t,
                            int64_t *oa, int64_t *ob)
{
    *oa = *ob = 0;
    for (int d = rank - 1; d >= 0; d--) {
        int64_t q = t % dims[d];
        t /= dims[d];
        *oa += q * sa[d];
        *ob += q * sb[d];
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
