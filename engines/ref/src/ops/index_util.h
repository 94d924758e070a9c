/* index_util.h: helpers and kernel entry points shared by the indexing operators (index*.c).
 * It must never allocate or read past a tensor: every index is checked before it addresses memory. */
#ifndef REF_INDEX_UTIL_H
#define REF_INDEX_UTIL_H

#include <string.h>

#include "op.h"

/* in[i] or NULL when absent (also for i past the node's inputs). */
static inline const ref_tensor *ix_in(const ref_op_ctx *c, int i)
{
    return i < c->n_in ? c->in[i] : NULL;
}

/* Element k of an int32 or int64 tensor (the caller checked the dtype). */
static inline int64_t ix_int_at(const ref_tensor *t, int64_t k)
{
    if (t->dtype == REF_DT_INT64)
        return ((const int64_t *)t->data)[k];
    return ((const int32_t *)t->data)[k];
}

/* Copy one element of es bytes; fixed sizes let the compiler emit a single move. */
static inline void ix_copy_elem(void *dst, const void *src, size_t es)
{
    switch (es) {
    case 1: memcpy(dst, src, 1); break;
    case 2: memcpy(dst, src, 2); break;
    case 4: memcpy(dst, src, 4); break;
    case 8: memcpy(dst, src, 8); break;
    default: memcpy(dst, src, es); break;
    }
}

/* Rows per parallel chunk so a chunk moves about 16 KiB at least. */
static inline int64_t ix_grain(int64_t row_bytes)
{
    if (row_bytes <= 0)
        return 1 << 14;
    int64_t g = (16384 + row_bytes - 1) / row_bytes;
    return g < 1 ? 1 : g;
}

/* Require input i to exist with a fixed-size dtype (any of them; strings are refused). */
int ix_want_sized(ref_op_ctx *c, int i);
/* Require input i to exist with dtype int32 or int64. */
int ix_want_index(ref_op_ctx *c, int i);
/* When idx has data, check every value lies in [-dim, dim); REF_E_RANGE naming the position and
 * value otherwise. what names the axis ("axis 1 of size 4"). No-op when idx->data is NULL. */
int ix_check_range(ref_op_ctx *c, const ref_tensor *idx, int64_t dim, int axis);
/* Read an integer scalar-or-1-element input (int32/int64) into *v; REF_E_DYNAMIC when its value is
 * unknown, REF_E_SHAPE when it holds more than one element. */
int ix_read_scalar(ref_op_ctx *c, int i, const char *what, int64_t *v);

/* Operator entry points, one group per file; the table lives in index.c. */
int ix_gather_infer(ref_op_ctx *c);
int ix_gather_run(ref_op_ctx *c);
int ix_gather_elements_infer(ref_op_ctx *c);
int ix_gather_elements_run(ref_op_ctx *c);
int ix_gather_nd_infer(ref_op_ctx *c);
int ix_gather_nd_run(ref_op_ctx *c);

int ix_slice_infer(ref_op_ctx *c);
int ix_slice_run(ref_op_ctx *c);

int ix_scatter_elements_infer(ref_op_ctx *c);
int ix_scatter_elements_run(ref_op_ctx *c);
int ix_scatter_nd_infer(ref_op_ctx *c);
int ix_scatter_nd_run(ref_op_ctx *c);

int ix_cumsum_infer(ref_op_ctx *c);
int ix_cumsum_run(ref_op_ctx *c);
int ix_onehot_infer(ref_op_ctx *c);
int ix_onehot_run(ref_op_ctx *c);
int ix_eyelike_infer(ref_op_ctx *c);
int ix_eyelike_run(ref_op_ctx *c);

int ix_compress_infer(ref_op_ctx *c);
int ix_compress_run(ref_op_ctx *c);
int ix_nonzero_infer(ref_op_ctx *c);
int ix_nonzero_run(ref_op_ctx *c);

int ix_topk_infer(ref_op_ctx *c);
size_t ix_topk_scratch_bytes(const ref_op_ctx *c);
int ix_topk_run(ref_op_ctx *c);

#endif
