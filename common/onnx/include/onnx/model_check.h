/* model_check.h: whether a buffer is a well-formed ONNX ModelProto at the wire level: every field ONNX's schema
 * defines has its wire type, every nested message (graph, node, attribute, tensor, value info, type, function)
 * parses to its end, and the model has a graph. It must never judge operators, shapes or values: engines do. */
#ifndef ONNX_MODEL_CHECK_H
#define ONNX_MODEL_CHECK_H

#include <stddef.h>

#include "onnx/base.h"

/* Walk buf[0..len) as a ModelProto, recursing into every message field of ONNX's schema (fields it does not know are
 * stepped over by their wire type, as protobuf does). Nothing is allocated. Fails with ONNX_E_PARSE naming the field
 * path and byte ("graph.node[3].attribute[0].t.dims @ byte 1204: truncated varint"), or "model has no graph". */
int onnx_model_check(const void *buf, size_t len, onnx_error *err);

#endif
