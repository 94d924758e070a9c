/* tensor_file.h: one serialized TensorProto (a .pb test-data or model-input file) loaded whole: type, shape,
 * name and a heap copy of its values. It must never read past the file's size or trust a length in it. */
#ifndef ONNX_TENSOR_FILE_H
#define ONNX_TENSOR_FILE_H

#include <stddef.h>
#include <stdint.h>

#include "onnx/base.h"
#include "onnx/tensor_pb.h"

/* A loaded tensor: one allocation holding the struct, its values and its name. */
typedef struct onnx_tensor {
    int32_t dtype;               /* ONNX_DT_*, one this library decodes, never STRING */
    int32_t rank;
    int64_t dims[ONNX_MAX_RANK];
    int64_t numel;               /* product of dims (1 for rank 0) */
    size_t nbytes;               /* numel * onnx_dtype_size(dtype) */
    void *data;                  /* nbytes of little-endian row-major values, 64-byte aligned; owned */
    char *name;                  /* NUL-terminated; "" when the proto names none; owned */
} onnx_tensor;

/* Decode the TensorProto in buf[0..len) into a new malloc'd tensor (*out, free with onnx_tensor_free).
 * Fails with ONNX_E_PARSE (message "tensor.FIELD @ byte N: ..."), ONNX_E_UNSUPPORTED (string values,
 * external data, a type or rank this library does not decode) or ONNX_E_NOMEM; *out is untouched. */
int onnx_tensor_parse(const void *buf, size_t len, onnx_tensor **out, onnx_error *err);

/* Read the file at path (a regular file; anything else is refused with a message saying so) and decode
 * it as onnx_tensor_parse does; every message starts with the path. Fails like onnx_file_read and
 * onnx_tensor_parse; *out is untouched on failure. */
int onnx_tensor_load(const char *path, onnx_tensor **out, onnx_error *err);

/* Release a tensor from onnx_tensor_parse or onnx_tensor_load; NULL is fine. */
void onnx_tensor_free(onnx_tensor *t);

#endif
