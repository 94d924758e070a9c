/* tensor.h: shape arithmetic shared by compile, planner and operators: sizes, broadcasting, strides.
 * It must never allocate or touch tensor data; it works on shapes only. */
#ifndef REF_TENSOR_H
#define REF_TENSOR_H

#include <stdbool.h>
#include "refengine.h"

/* True when a and b have the same rank and dims (dtype and data ignored). */
bool ref_shape_equal(const ref_tensor *a, const ref_tensor *b);

/* Set rank and dims; data and dtype untouched. rank must be <= REF_MAX_RANK. */
void ref_tensor_set_shape(ref_tensor *t, int rank, const int64_t *dims);

/* Numpy (multidirectional) broadcasting of n shapes into out's rank/dims.
 * Fails with REF_E_SHAPE naming both dims when they are incompatible. */
int ref_broadcast_shape(int n, const ref_tensor *const *in, ref_tensor *out, ref_error *err);

/* Element strides of `in` viewed in `out`'s broadcast shape: 0 along broadcast (size-1 or missing)
 * dims. strides has out->rank entries. */
void ref_broadcast_strides(const ref_tensor *in, const ref_tensor *out, int64_t *strides);

/* Row-major contiguous strides of t (in elements). */
void ref_contiguous_strides(const ref_tensor *t, int64_t *strides);

/* Normalize an axis in [-rank, rank) (or [-rank-1, rank] when inclusive) to [0, rank).
 * Returns -1 when out of range. */
int ref_norm_axis(int64_t axis, int rank);

/* Product of dims[begin..end). */
int64_t ref_dims_prod(const int64_t *dims, int begin, int end);

/* Format "[2,3,4]" into buf; returns buf. */
const char *ref_shape_str(const ref_tensor *t, char *buf, size_t len);

#endif
