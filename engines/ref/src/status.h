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

#endif
