/* tensor_pb.h: one TensorProto, scanned and validated in place, then decoded into a buffer the caller picks.
 * It must never allocate: where the bytes go (mapping, heap, external file) is the caller's decision. */
#ifndef ONNX_TENSOR_PB_H
#define ONNX_TENSOR_PB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "onnx/dtype.h"
#include "onnx/pb.h"

/* Deepest rank a scanned tensor may have (the engines' limit as well). */
#define ONNX_MAX_RANK 8

/* TensorProto.external_data as found: strings point into the buffer. offset and length were decimal
 * strings there; they are checked to be plain digits that fit 64 bits, not against any file. */
typedef struct onnx_ext_ref {
    const uint8_t *loc; /* not NUL-terminated; may contain anything, the loader checks it */
    size_t loc_len;
    bool has_loc, has_offset, has_length;
    uint64_t offset, length;
} onnx_ext_ref;

/* A scanned TensorProto. Every pointer borrows the buffer the cursor was made over. */
typedef struct onnx_tensor_pb {
    int32_t dtype;          /* ONNX_DT_* */
    int32_t rank;
    int64_t dims[ONNX_MAX_RANK];
    const uint8_t *name;    /* into the buffer, not NUL-terminated ("" when absent) */
    size_t name_len;
    const uint8_t *raw;     /* raw_data, little-endian */
    size_t raw_len;
    uint32_t typed_field;   /* the ONNX_TP_* field holding the values, 0 if none */
    size_t n_typed;         /* values it holds */
    bool external;          /* data_location = EXTERNAL */
    onnx_ext_ref ext;
    size_t nbytes;          /* numel * element size; 0 for strings */
    size_t at;              /* offset of the message, for errors found later */
    onnx_pb msg;            /* the message again, for onnx_tensor_pb_decode */
} onnx_tensor_pb;

/* Scan msg (the TensorProto's own cursor, read to its end) into tp and validate it: a data type this
 * library decodes (onnx_dtype_field != 0), dims >= 0, rank <= ONNX_MAX_RANK, no element-count overflow,
 * one data source whose byte count is numel * element size (not checked for external data, whose length
 * the loader checks). String tensors are accepted with nbytes 0 and no values decoded.
 * Fails with ONNX_E_PARSE or ONNX_E_UNSUPPORTED, the message from msg's trace naming field and byte. */
int onnx_tensor_pb_scan(onnx_pb *msg, onnx_tensor_pb *tp);

/* Write the embedded values (raw_data or the typed field) into dst, which holds tp->nbytes bytes, in
 * little-endian element order. Only for a scanned, non-external, non-string tensor whose buffer has not
 * changed since the scan; ONNX_E_PARSE otherwise. */
int onnx_tensor_pb_decode(const onnx_tensor_pb *tp, void *dst);

/* "[2,3,4]" ("[]" for rank 0) into buf, cut to len; returns buf. */
const char *onnx_shape_str(const int64_t *dims, int rank, char *buf, size_t len);

/* Printable tensor name for messages; at most 64 characters are shown. */
#define ONNX_TPB_NAME_FMT "'%.*s'"
#define ONNX_TPB_NAME_ARG(tp) (int)((tp)->name_len > 64 ? 64 : (tp)->name_len), (const char *)(tp)->name

#endif
