/* seq.h: sequences and optionals as self-contained blobs (dtype REF_DT_SEQUENCE or REF_DT_OPTIONAL, rank 1, dims[0]
 * bytes): a header, one entry per element (dtype, shape, offset), then the elements' bytes, 16-byte aligned. A
 * blob holds offsets, never pointers, so plans may place it and copies stay valid. It must never trust a blob it
 * reads: every count, offset and size is checked against the blob's own length. */
#ifndef REF_SEQ_H
#define REF_SEQ_H

#include <stdbool.h>

#include "refengine.h"

/* Building a blob piece by piece: the header and entry table of n elements take ref_seq_header_bytes(n); element
 * i written at offset at (ref_seq_put, which returns where the next one goes) takes up to ref_seq_next(at, t). */
size_t ref_seq_header_bytes(int n);
size_t ref_seq_next(size_t at, const ref_tensor *t);
void ref_seq_header(void *blob, int kind, bool has_value, int inner, int elem_dtype, int n);
size_t ref_seq_put(void *blob, int i, size_t at, const ref_tensor *t);
/* Bytes of a blob holding n tensors of these shapes (their data is not read). */
size_t ref_seq_bytes(int n, const ref_tensor *const *elems);
/* Write a blob of kind REF_DT_SEQUENCE or REF_DT_OPTIONAL into blob (ref_seq_bytes of room): has_value and inner
 * (REF_DT_SEQUENCE when an optional holds a sequence, 0 for a tensor) only mean something for an optional;
 * elem_dtype is the sequence's element type (0 unknown). Copies each element's bytes. */
void ref_seq_write(void *blob, int kind, bool has_value, int inner, int elem_dtype, int n,
                   const ref_tensor *const *elems);
/* The blob's shape for ref_seq_bytes(n, elems) bytes. */
ref_tensor ref_seq_shape(int kind, size_t bytes);

typedef struct ref_seq_info {
    int n;
    bool has_value; /* always true for a sequence */
    int inner;      /* optional: REF_DT_SEQUENCE when it holds a sequence, else 0 */
    int elem_dtype;
} ref_seq_info;
/* Check blob t and read its header. REF_E_PARSE (damaged) or REF_E_SHAPE (not a blob) with a message. */
int ref_seq_read(const ref_tensor *t, ref_seq_info *out, ref_error *err);
/* Turn a sequence blob (a copy the caller owns) into an optional holding that sequence, in place: the layouts are
 * the same but for the header. */
void ref_seq_mark_optional(ref_tensor *t);
/* Element i of a checked blob (data points into it). */
ref_tensor ref_seq_at(const ref_tensor *t, int i);

#endif
