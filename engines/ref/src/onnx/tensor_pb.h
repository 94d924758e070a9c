/* tensor_pb.h: one TensorProto, scanned and validated in place, then decoded into a buffer the caller picks.
 * It must never allocate: where the bytes go (mapping, heap, external file) is the caller's decision. */
#ifndef REF_ONNX_TENSOR_PB_H
#define REF_ONNX_TENSOR_PB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "pb.h"

/* TensorProto.external_data as found: strings point into the buffer. */
typedef struct ref_ext_ref {
    const uint8_t *loc;
    size_t loc_len;
    bool has_loc, has_offset, has_length;
    uint64_t offset, length;
} ref_ext_ref;

typedef struct ref_tensor_pb {
    ref_tensor t;           /* dtype, rank, dims; data NULL */
    const uint8_t *name;    /* into the buffer, not NUL-terminated */
    size_t name_len;
    const uint8_t *raw;     /* raw_data, little-endian */
    size_t raw_len;
    uint32_t typed_field;   /* the *_data field holding the values (4,5,7,10,11), 0 if none */
    size_t n_typed;         /* values it holds */
    bool external;          /* data_location = EXTERNAL */
    ref_ext_ref ext;
    size_t nbytes;          /* numel * element size; 0 for strings */
    size_t at;              /* offset of the message, for errors found later */
    ref_pb msg;             /* the message again, for ref_tensor_pb_decode */
} ref_tensor_pb;

/* Scan msg (the TensorProto's own cursor) into tp and validate it: a known data type, dims >= 0, rank
 * <= REF_MAX_RANK, no numel overflow, one data source whose byte count is numel * element size (not
 * checked for external data, whose length the loader checks). String tensors are accepted with
 * nbytes 0. Fails with REF_E_PARSE or REF_E_UNSUPPORTED, message from the trace. */
int ref_tensor_pb_scan(ref_pb *msg, ref_tensor_pb *tp);

/* Write the embedded values (raw_data or the typed field) into dst, which holds tp->nbytes bytes.
 * Only for a scanned, non-external, non-string tensor. */
int ref_tensor_pb_decode(const ref_tensor_pb *tp, void *dst);

/* Printable tensor name for messages ("" when it has none); at most 64 characters are shown. */
#define REF_TPB_NAME_FMT "'%.*s'"
#define REF_TPB_NAME_ARG(tp) (int)((tp)->name_len > 64 ? 64 : (tp)->name_len), (const char *)(tp)->name

#endif
