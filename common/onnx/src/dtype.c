/* dtype.c: lookups in ONNX_DTYPE_LIST.
 * It must never keep a table of its own: every answer comes from the one list in dtype.h. */
#include "onnx/dtype.h"

size_t onnx_dtype_size(int dtype)
{
    switch (dtype) {
#define ONNX_X_DT_SIZE(sym, num, name, size, field) \
    case num:                                       \
        return size;
        ONNX_DTYPE_LIST(ONNX_X_DT_SIZE)
#undef ONNX_X_DT_SIZE
    default:
        return 0;
    }
}

const char *onnx_dtype_name(int dtype)
{
    switch (dtype) {
#define ONNX_X_DT_NAME(sym, num, name, size, field) \
    case num:                                       \
        return name;
        ONNX_DTYPE_LIST(ONNX_X_DT_NAME)
#undef ONNX_X_DT_NAME
    default:
        return "?";
    }
}

uint32_t onnx_dtype_field(int dtype)
{
    switch (dtype) {
#define ONNX_X_DT_FIELD(sym, num, name, size, field) \
    case num:                                        \
        return field;
        ONNX_DTYPE_LIST(ONNX_X_DT_FIELD)
#undef ONNX_X_DT_FIELD
    default:
        return 0;
    }
}
