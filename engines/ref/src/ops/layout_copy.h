/* layout_copy.h: data-movement kernels shared by the shape and layout families: copies, strided gathers, fills.
 * They must never allocate nor look at element values, so they serve every fixed-size dtype alike. */
#ifndef REF_LAYOUT_COPY_H
#define REF_LAYOUT_COPY_H

#include <stddef.h>
#include <stdint.h>

#include "op.h"

/* Views may have up to twice the tensor rank: Tile splits every dim into (repeat, original). */
#define REF_LAYOUT_MAX_RANK (2 * REF_MAX_RANK)

/* Copy n bytes from src to dst (non-overlapping), cut into independent chunks over pool (NULL: serial). */
void ref_layout_copy(ref_pool *pool, void *dst, const void *src, size_t n);

/* Fill the contiguous output of shape dims[0..rank) (rank <= REF_LAYOUT_MAX_RANK) with
 * dst[i_0,..,i_r-1] = src[sum_d i_d * strides[d]] (strides in elements, 0 repeats an element). Adjacent dims
 * are merged first; a view whose second-last dim is contiguous in src runs as cache-blocked 2-D transposes.
 * Splits work over independent output rows, so results do not depend on the thread count. */
void ref_layout_gather(ref_pool *pool, void *dst, const void *src, size_t esize, int rank, const int64_t *dims,
                       const int64_t *strides);

/* Write n copies of the esize-byte element at elem to dst. */
void ref_layout_fill(void *dst, const void *elem, size_t esize, int64_t n);

/* Copy n elements of esize bytes read at src with a stride of `stride` elements to contiguous dst. */
void ref_layout_copy_strided(char *dst, const char *src, int64_t n, int64_t stride, size_t esize);

/* REF_E_INVALID when input i is missing, REF_E_UNSUPPORTED (naming op) when its dtype has no fixed size
 * (string) or is unknown; else 0. Data-movement ops accept every fixed-size dtype through this. */
int ref_layout_want_sized(ref_op_ctx *c, int i, const char *op);

/* Output i, or NULL when the node omits it (an optional output like Dropout's mask). */
static inline ref_tensor *ref_layout_out(const ref_op_ctx *c, int i)
{
    return i < c->n_out ? c->out[i] : NULL;
}

/* Input i, or NULL when omitted. */
static inline const ref_tensor *ref_layout_in(const ref_op_ctx *c, int i)
{
    return i < c->n_in ? c->in[i] : NULL;
}

#endif
