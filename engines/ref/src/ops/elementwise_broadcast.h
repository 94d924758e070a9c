/* elementwise_broadcast.h: the strided broadcast iterator every elementwise kernel runs on: it collapses
 * the output shape to the fewest dims, then hands out contiguous output rows with 0-or-1 input steps.
 * It must never allocate, and never hand a kernel a row that crosses the [begin, end) it was given. */
#ifndef REF_ELEMENTWISE_BROADCAST_H
#define REF_ELEMENTWISE_BROADCAST_H

#include <stddef.h>
#include <stdint.h>

#include "op.h"

#define REF_EW_MAX_IN 3

/* One row: out[0..n) from in[k] read with step[k] elements per output element, step 0 (broadcast: the
 * same element every time) or 1 (contiguous). arg is the kernel's own parameters (may be NULL). */
typedef void (*ref_ew_row_fn)(const void *arg, void *out, const void *const *in, const int *step, int64_t n);

typedef struct ref_ew_iter {
    int rank; /* collapsed; >= 1 */
    int n_in;
    int64_t numel;
    int64_t dims[REF_MAX_RANK];
    int64_t strides[REF_EW_MAX_IN][REF_MAX_RANK]; /* in elements; 0 along broadcast dims */
    char *out;
    size_t out_size;
    const char *in[REF_EW_MAX_IN];
    size_t in_size[REF_EW_MAX_IN];
} ref_ew_iter;

/* Plan out = f(in[0..n_in)) where every in[k]'s shape broadcasts (numpy rules) to out's shape, which the
 * caller has already checked. Element sizes come from each tensor's dtype. */
void ref_ew_iter_init(ref_ew_iter *it, const ref_tensor *out, int n_in, const ref_tensor *const *in);

/* Call fn on every row of output elements [begin, end) (flat, row-major). */
void ref_ew_iter_range(const ref_ew_iter *it, int64_t begin, int64_t end, ref_ew_row_fn fn, const void *arg);

/* Outputs at or above this many elements are split across the pool's threads, in chunks of at least
 * REF_EW_GRAIN elements; below it the loop is not worth waking workers for. */
#define REF_EW_PARALLEL_MIN 65536
#define REF_EW_GRAIN 16384

/* Run task over [0, n) on pool, serially when n is small. Every element is computed by the same code
 * whatever the split, so results never depend on the thread count. */
void ref_ew_parallel(ref_pool *pool, int64_t n, ref_task_fn task, void *arg);

/* The whole iterator through ref_ew_parallel. */
void ref_ew_run(ref_pool *pool, const ref_ew_iter *it, ref_ew_row_fn fn, const void *arg);

/* Adapter for half-precision tensors (float16 or bfloat16): converts each row to float in stack chunks,
 * calls the float kernel, and converts the output back (or passes it through when the kernel's output is
 * not half, e.g. a comparison's bool). Inputs whose bit in in_half is clear are passed through as they are
 * (with the element size in in_size). Use ref_ew_half_row as the row fn and a ref_ew_half as its arg. */
typedef struct ref_ew_half {
    ref_ew_row_fn fn; /* the float kernel */
    const void *arg;
    int dtype;        /* REF_DT_FLOAT16 or REF_DT_BFLOAT16 */
    int n_in;
    unsigned in_half; /* bit k: in[k] is half */
    size_t in_size[REF_EW_MAX_IN];
    int out_half;     /* 1: out is half; 0: out passes through with out_size bytes per element */
    size_t out_size;
} ref_ew_half;

void ref_ew_half_row(const void *arg, void *out, const void *const *in, const int *step, int64_t n);

/* Fill h for the common case: every input and (if out_half) the output are dtype. */
void ref_ew_half_init(ref_ew_half *h, int dtype, ref_ew_row_fn fn, const void *arg, int n_in, int out_half,
                      size_t out_size);

/* Run fn over out = f(in[0..n_in)) (shapes already broadcast-compatible) on c's pool. When any operand is
 * float16/bfloat16, fn must be the float kernel: half inputs and a half output are converted around it. */
void ref_ew_apply(ref_op_ctx *c, const ref_tensor *out, int n_in, const ref_tensor *const *in, ref_ew_row_fn fn,
                  const void *arg);

/* The second operand of a binary op as kernels see it: in[1] itself, or before opset 7 with broadcast=1,
 * in[1] reshaped so its dims line up with in[0]'s from `axis` on (default: in[0]'s trailing dims). Then
 * out's dims (dtype untouched) become the numpy broadcast of in[0] and *b_view, which the legacy rule
 * requires to be in[0]'s shape. Fails with REF_E_SHAPE naming both shapes. */
int ref_ew_binary_shape(ref_op_ctx *c, ref_tensor *b_view, ref_tensor *out);

static inline int ref_ew_is_half(int dtype) { return dtype == REF_DT_FLOAT16 || dtype == REF_DT_BFLOAT16; }

#endif
