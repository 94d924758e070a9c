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

/* Where flat index t of out (rank dims) falls in two inputs broadcast into it with strides sa and sb (from
 * ref_broadcast_strides): a batched matrix product's a and b matrices for output matrix t. */
void ref_broadcast_offsets2(const int64_t *dims, int rank, const int64_t *sa, const int64_t *sb, int64_t t,
                            int64_t *oa, int64_t *ob);

/* Row-major contiguous strides of t (in elements). */
void ref_contiguous_strides(const ref_tensor *t, int64_t *strides);

/* Normalize an axis in [-rank, rank) (or [-rank-1, rank] when inclusive) to [0, rank).
 * Returns -1 when out of range. */
int ref_norm_axis(int64_t axis, int rank);

/* Product of dims[begin..end); INT64_MAX when it overflows (so a buffer sized from it fails to allocate rather
 * than coming out small). Code that sizes or walks memory checks shapes with ref_shape_check first. */
int64_t ref_dims_prod(const int64_t *dims, int begin, int end);

/* Checked arithmetic for dims, strides, element and byte counts: the one place every product or sum of them is
 * made when its operands come from a model or an input. Each returns false, leaving *out untouched, when the
 * result leaves [0, INT64_MAX] (dims) or [0, SIZE_MAX] (sizes), or an operand is negative. */
bool ref_dim_mul(int64_t a, int64_t b, int64_t *out);
bool ref_dim_add(int64_t a, int64_t b, int64_t *out);
bool ref_size_mul(size_t a, size_t b, size_t *out);
bool ref_size_add(size_t a, size_t b, size_t *out);

/* The same for signed geometry (pads and crops may be negative): a op b, or 0 with *ovf set when it overflows,
 * so a chain of them is checked once at its end. */
int64_t ref_i64_add(int64_t a, int64_t b, bool *ovf);
int64_t ref_i64_sub(int64_t a, int64_t b, bool *ovf);
int64_t ref_i64_mul(int64_t a, int64_t b, bool *ovf);

/* A dim computed in floating point (Range's count, Resize's scaled size): false when v is NaN, infinite or
 * outside [0, INT64_MAX], so a cast never meets a value it cannot hold. */
bool ref_dim_from_double(double v, int64_t *out);

/* Check that a tensor of t's dtype, rank and dims can exist: rank in [0, REF_MAX_RANK], no negative dim, and
 * its extent (the product of its dims, zero dims counted as one, because kernels still walk the others) times
 * the element size within max_bytes. Fails with REF_E_RANGE: the message gives the shape, the dtype and the
 * limit (its caller adds the node or input). what names the tensor ("output 0"). */
int ref_shape_check(const ref_tensor *t, size_t max_bytes, const char *what, ref_error *err);

/* The default for max_tensor_bytes: the machine's physical memory, lower when RLIMIT_AS or RLIMIT_DATA is
 * lower; a tensor larger than that can never be made, only tried until the OOM killer ends the process. */
size_t ref_default_max_tensor_bytes(void);

/* Format "[2,3,4]" into buf; returns buf. */
const char *ref_shape_str(const ref_tensor *t, char *buf, size_t len);

#endif
