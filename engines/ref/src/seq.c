/* seq.c: the sequence and optional blobs (seq.h) and the public readers over them. It must never follow an offset
 * or size it has not checked against the blob's length. */
#include <string.h>

#include "alloc.h"
#include "seq.h"
#include "status.h"

#define SEQ_MAGIC 0x51455352u /* "RSEQ" */

typedef struct {
    uint32_t magic;
    int32_t n, has_value, inner, elem_dtype, pad[3];
} seq_hdr;

typedef struct {
    int32_t dtype, rank;
    int64_t dims[REF_MAX_RANK];
    uint64_t offset;
} seq_entry;

static size_t align16(size_t n) { return (n + 15) & ~(size_t)15; }

size_t ref_seq_header_bytes(int n) { return align16(sizeof(seq_hdr) + sizeof(seq_entry) * (size_t)n); }

size_t ref_seq_next(size_t at, const ref_tensor *t) { return align16(at + ref_tensor_nbytes(t)); }

size_t ref_seq_bytes(int n, const ref_tensor *const *elems)
{
    size_t at = ref_seq_header_bytes(n);
    for (int i = 0; i < n; i++)
        at = ref_seq_next(at, elems[i]);
    return at;
}

void ref_seq_header(void *blob, int kind, bool has_value, int inner, int elem_dtype, int n)
{
    seq_hdr h = {.magic = SEQ_MAGIC, .n = n, .has_value = kind == REF_DT_SEQUENCE || has_value,
                 .inner = kind == REF_DT_OPTIONAL ? inner : 0, .elem_dtype = elem_dtype};
    memcpy(blob, &h, sizeof h);
}

size_t ref_seq_put(void *blob, int i, size_t at, const ref_tensor *t)
{
    seq_entry e = {.dtype = t->dtype, .rank = t->rank, .offset = at};
    memcpy(e.dims, t->dims, sizeof e.dims);
    memcpy((char *)blob + sizeof(seq_hdr) + sizeof e * (size_t)i, &e, sizeof e);
    size_t bytes = ref_tensor_nbytes(t);
    if (bytes)
        memmove((char *)blob + at, t->data, bytes);
    return align16(at + bytes);
}

ref_tensor ref_seq_shape(int kind, size_t bytes)
{
    ref_tensor t = {.dtype = kind, .rank = 1, .dims = {(int64_t)bytes}};
    return t;
}

void ref_seq_write(void *blob, int kind, bool has_value, int inner, int elem_dtype, int n,
                   const ref_tensor *const *elems)
{
    ref_seq_header(blob, kind, has_value, inner, elem_dtype, n);
    size_t at = ref_seq_header_bytes(n);
    for (int i = 0; i < n; i++)
        at = ref_seq_put(blob, i, at, elems[i]);
}

void ref_seq_mark_optional(ref_tensor *t)
{
    seq_hdr h;
    memcpy(&h, t->data, sizeof h);
    h.has_value = 1;
    h.inner = REF_DT_SEQUENCE;
    memcpy(t->data, &h, sizeof h);
    t->dtype = REF_DT_OPTIONAL;
}

int ref_seq_read(const ref_tensor *t, ref_seq_info *out, ref_error *err)
{
    if (!t || (t->dtype != REF_DT_SEQUENCE && t->dtype != REF_DT_OPTIONAL) || t->rank != 1 || !t->data)
        return ref_fail(err, REF_E_SHAPE, "not a sequence or optional value");
    size_t len = (size_t)t->dims[0];
    seq_hdr h;
    if (len < sizeof h)
        return ref_fail(err, REF_E_PARSE, "a %zu-byte sequence blob is too short", len);
    memcpy(&h, t->data, sizeof h);
    if (h.magic != SEQ_MAGIC || h.n < 0 || (size_t)h.n > (len - sizeof h) / sizeof(seq_entry))
        return ref_fail(err, REF_E_PARSE, "damaged sequence blob (%d entries in %zu bytes)", h.n, len);
    for (int i = 0; i < h.n; i++) {
        seq_entry e;
        memcpy(&e, (const char *)t->data + sizeof h + sizeof e * (size_t)i, sizeof e);
        ref_tensor x = {.dtype = e.dtype, .rank = e.rank};
        if (e.rank < 0 || e.rank > REF_MAX_RANK)
            return ref_fail(err, REF_E_PARSE, "sequence element %d has rank %d", i, e.rank);
        memcpy(x.dims, e.dims, sizeof x.dims);
        for (int d = 0; d < e.rank; d++)
            if (e.dims[d] < 0)
                return ref_fail(err, REF_E_PARSE, "sequence element %d has a negative dim", i);
        size_t bytes = ref_tensor_nbytes(&x);
        if (!ref_dtype_size(e.dtype) || e.offset > len || bytes > len - e.offset)
            return ref_fail(err, REF_E_PARSE, "sequence element %d lies outside its blob", i);
    }
    out->n = h.n;
    out->has_value = h.has_value != 0;
    out->inner = h.inner;
    out->elem_dtype = h.elem_dtype;
    return REF_OK;
}

ref_tensor ref_seq_at(const ref_tensor *t, int i)
{
    seq_entry e;
    memcpy(&e, (const char *)t->data + sizeof(seq_hdr) + sizeof e * (size_t)i, sizeof e);
    ref_tensor x = {.dtype = e.dtype, .rank = e.rank, .data = (char *)t->data + e.offset};
    memcpy(x.dims, e.dims, sizeof x.dims);
    return x;
}

int ref_value_count(const ref_tensor *blob, int *count, int *has_value, ref_error *err)
{
    ref_seq_info s;
    int rc = ref_seq_read(blob, &s, err);
    if (rc)
        return rc;
    *count = s.n;
    *has_value = s.has_value;
    return REF_OK;
}

int ref_value_element(const ref_tensor *blob, int i, ref_tensor *out, ref_error *err)
{
    ref_seq_info s;
    int rc = ref_seq_read(blob, &s, err);
    if (rc)
        return rc;
    if (i < 0 || i >= s.n)
        return ref_fail(err, REF_E_RANGE, "element %d of %d", i, s.n);
    *out = ref_seq_at(blob, i);
    return REF_OK;
}
