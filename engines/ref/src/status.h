/* status.h: the reference engine's status codes and the error record every fallible call fills.
 * It must never allocate: an error has to be reportable after an out-of-memory failure. */
#ifndef REF_STATUS_H
#define REF_STATUS_H

#include <stdarg.h>
#include "refengine.h"

/* Set err (if non-NULL) to code and a printf-style message; returns code so callers can
 * `return ref_fail(err, REF_E_PARSE, "...")`. A message longer than the buffer is cut. */
int ref_fail(ref_error *err, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* Prefix an existing message with context ("node 'conv1' (Conv): "), keeping its code.
 * Returns err->code (or REF_E_INVALID when err is NULL, so the status survives). */
int ref_fail_prefix(ref_error *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Reset to success. */
void ref_error_clear(ref_error *err);

/* ------------------------------------------------------------------------------------------------
 * Statuses from common/onnx, where the engine calls in (reading models and tensors, writing models).
 * ---------------------------------------------------------------------------------------------- */
struct onnx_error;

/* The ref status for a common/onnx one: its codes map one to one (ONNX_E_PARSE -> REF_E_PARSE, ...),
 * -errno from a system call becomes REF_E_IO, 0 stays 0, and anything else is passed through. */
int ref_status_from_onnx(int code);

/* Fill err (if non-NULL) from a common/onnx failure: the code as ref_status_from_onnx maps it, and
 * oe's message (the status's name when oe is NULL or says nothing). Returns the mapped code. */
int ref_fail_onnx(ref_error *err, int code, const struct onnx_error *oe);

#endif
