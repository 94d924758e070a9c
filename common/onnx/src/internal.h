/* internal.h: what the files of common/onnx share and no user sees.
 * It must never be included from outside common/onnx/src. */
#ifndef ONNX_INTERNAL_H
#define ONNX_INTERNAL_H

#include "onnx/base.h"

/* a, or the table of libc's realloc and free when a is NULL. */
const onnx_alloc *onnx_alloc_or_libc(const onnx_alloc *a);

#endif
