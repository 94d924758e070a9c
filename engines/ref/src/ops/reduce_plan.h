/* reduce_plan.h: splits a contiguous tensor's dims into kept and reduced groups (adjacent dims of one kind
 * merged) so reductions over any axis set walk the input with a fixed, thread-independent order.
 * It must never allocate or touch tensor data: it is shape arithmetic only. */
#ifndef REF_REDUCE_PLAN_H
#define REF_REDUCE_PLAN_H

#include <stdbool.h>
#include <stdint.h>

#include "refengine.h"

typedef struct ref_rplan {
    int n_kd, n_rd; /* groups of kept and of reduced dims */
    int64_t keep_dims[REF_MAX_RANK], keep_strides[REF_MAX_RANK]; /* element strides in the input */
    int64_t red_dims[REF_MAX_RANK], red_strides[REF_MAX_RANK];
    int64_t n_out; /* outputs: product of kept dims, in the input's (row-major) order */
    int64_t n_red; /* elements folded into each output */
} ref_rplan;

/* Plan a reduction of x's shape over the dims with reduce[d] set. */
void ref_rplan_init(ref_rplan *p, const ref_tensor *x, const bool *reduce);

/* Input offset of the first element folded into output j (0 <= j < n_out). */
int64_t ref_rplan_base(const ref_rplan *p, int64_t j);

/* Walks the reduced elements of one output in a fixed order: start with ref_rplan_walk_init, read
 * x[w.off], then ref_rplan_walk_next until n_red elements have been visited. */
typedef struct ref_rwalk {
    int64_t off;
    int64_t idx[REF_MAX_RANK];
} ref_rwalk;

static inline void ref_rplan_walk_init(const ref_rplan *p, int64_t base, ref_rwalk *w)
{
    w->off = base;
    for (int k = 0; k < p->n_rd; k++)
        w->idx[k] = 0;
}

static inline void ref_rplan_walk_next(const ref_rplan *p, ref_rwalk *w)
{
    for (int k = p->n_rd - 1; k >= 0; k--) {
        w->off += p->red_strides[k];
        if (++w->idx[k] < p->red_dims[k])
            return;
        w->off -= p->red_strides[k] * p->red_dims[k];
        w->idx[k] = 0;
    }
}

#endif
