/* model_ext.h: what a ModelProto says without being read into any engine's IR: the external-data files its
 * initializers name. It must never open those files nor judge the locations: that is the caller's policy. */
#ifndef ONNX_MODEL_EXT_H
#define ONNX_MODEL_EXT_H

#include <stddef.h>

#include "onnx/base.h"

/* Distinct external_data locations, in order of first appearance. Caller-owned storage. */
typedef struct onnx_ext_locations {
    size_t n;
    char **loc; /* n malloc'd NUL-terminated strings, exactly as the model spells them; owned */
} onnx_ext_locations;

/* List the "location" of every external_data entry of the main graph's initializers (ModelProto.graph
 * .initializer[].external_data, whatever their data_location says), each once. Only those fields are
 * walked and checked; every other field is stepped over by its length.
 * Fails with ONNX_E_PARSE naming field path and byte ("graph.initializer[2].external_data[0].value @ byte 90:
 * ...", also for a location holding a NUL byte) or ONNX_E_NOMEM; *out is untouched on failure. */
int onnx_model_ext_locations(const void *buf, size_t len, onnx_ext_locations *out, onnx_error *err);

/* Release the strings and the array; l is left empty. NULL is fine. */
void onnx_ext_locations_deinit(onnx_ext_locations *l);

#endif
