/* dtype.h: ONNX's TensorProto.DataType numbers, names and element sizes: the one table every user reads.
 * It must never grow a second list elsewhere: a type is added here, in one line, or nowhere. */
#ifndef ONNX_DTYPE_H
#define ONNX_DTYPE_H

#include <stddef.h>
#include <stdint.h>

/* The TensorProto fields that hold values in typed form (the rest come as raw_data). */
enum {
    ONNX_TP_FLOAT_DATA = 4,
    ONNX_TP_INT32_DATA = 5,
    ONNX_TP_STRING_DATA = 6,
    ONNX_TP_INT64_DATA = 7,
    ONNX_TP_DOUBLE_DATA = 10,
    ONNX_TP_UINT64_DATA = 11
};

/* X(SYM, number, name, size, field): size is bytes per element, 0 where an element has no whole-byte size
 * (string, the 4-bit types); field is the typed *_data field this library decodes the type from, 0 for
 * the types it does not decode (complex, float8, 4-bit): a TensorProto of those is refused as unsupported,
 * and engines use the column to say which types they handle at all. */
#define ONNX_DTYPE_LIST(X)                                             \
    X(FLOAT, 1, "float", 4, ONNX_TP_FLOAT_DATA)                        \
    X(UINT8, 2, "uint8", 1, ONNX_TP_INT32_DATA)                        \
    X(INT8, 3, "int8", 1, ONNX_TP_INT32_DATA)                          \
    X(UINT16, 4, "uint16", 2, ONNX_TP_INT32_DATA)                      \
    X(INT16, 5, "int16", 2, ONNX_TP_INT32_DATA)                        \
    X(INT32, 6, "int32", 4, ONNX_TP_INT32_DATA)                        \
    X(INT64, 7, "int64", 8, ONNX_TP_INT64_DATA)                        \
    X(STRING, 8, "string", 0, ONNX_TP_STRING_DATA)                     \
    X(BOOL, 9, "bool", 1, ONNX_TP_INT32_DATA)                          \
    X(FLOAT16, 10, "float16", 2, ONNX_TP_INT32_DATA)                   \
    X(DOUBLE, 11, "double", 8, ONNX_TP_DOUBLE_DATA)                    \
    X(UINT32, 12, "uint32", 4, ONNX_TP_UINT64_DATA)                    \
    X(UINT64, 13, "uint64", 8, ONNX_TP_UINT64_DATA)                    \
    X(COMPLEX64, 14, "complex64", 8, 0)                                \
    X(COMPLEX128, 15, "complex128", 16, 0)                             \
    X(BFLOAT16, 16, "bfloat16", 2, ONNX_TP_INT32_DATA)                 \
    X(FLOAT8E4M3FN, 17, "float8e4m3fn", 1, 0)                          \
    X(FLOAT8E4M3FNUZ, 18, "float8e4m3fnuz", 1, 0)                      \
    X(FLOAT8E5M2, 19, "float8e5m2", 1, 0)                              \
    X(FLOAT8E5M2FNUZ, 20, "float8e5m2fnuz", 1, 0)                      \
    X(UINT4, 21, "uint4", 0, 0)                                        \
    X(INT4, 22, "int4", 0, 0)                                          \
    X(FLOAT4E2M1, 23, "float4e2m1", 0, 0)

enum {
    ONNX_DT_UNDEFINED = 0,
#define ONNX_X_DT_ENUM(sym, num, name, size, field) ONNX_DT_##sym = (num),
    ONNX_DTYPE_LIST(ONNX_X_DT_ENUM)
#undef ONNX_X_DT_ENUM
};

/* Bytes per element of dtype; 0 for string, the 4-bit types, UNDEFINED and numbers not in the list. */
size_t onnx_dtype_size(int dtype);
/* ONNX's lower-case name ("float", "bfloat16"); "?" for UNDEFINED and unknown numbers. Static storage. */
const char *onnx_dtype_name(int dtype);
/* The typed field the decoder reads dtype from (ONNX_TP_*), 0 when this library does not decode it. */
uint32_t onnx_dtype_field(int dtype);

#endif
