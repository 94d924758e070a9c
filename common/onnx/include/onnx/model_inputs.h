/* model_inputs.h: the graph inputs of a ModelProto that are not initializers, with their element type and dims
 * (a size, a named symbolic dim, or neither), for a harness that must say which shapes a model will run with.
 * It must never allocate per dim nor follow a length it has not checked. */
#ifndef ONNX_MODEL_INPUTS_H
#define ONNX_MODEL_INPUTS_H

#include <stddef.h>
#include <stdint.h>

#include "onnx/base.h"

#define ONNX_INPUT_MAX_RANK 8

typedef struct onnx_input_dim {
    int64_t value;   /* the size, or -1 when the dim is symbolic or unknown */
    char param[64];  /* the symbolic name (dim_param), "" when none */
} onnx_input_dim;

typedef struct onnx_input {
    char name[128];
    int elem_type;   /* TensorProto.DataType, 0 when not given */
    int rank;        /* -1 when the input has no shape at all; dims beyond ONNX_INPUT_MAX_RANK are not kept */
    onnx_input_dim dims[ONNX_INPUT_MAX_RANK];
} onnx_input;

/* The inputs of graph (field 11) whose names no initializer (field 5) has, in order, into *out (malloc'd, free with
 * free; non-NULL on success) and *n. Fails with ONNX_E_PARSE (field path and byte offset), ONNX_E_NOMEM or
 * ONNX_E_INVALID (NULL arguments); out and n untouched on failure. */
int onnx_model_inputs(const void *buf, size_t len, onnx_input **out, size_t *n, onnx_error *err);

#endif
