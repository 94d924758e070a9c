/* reduce_plan.c: the kept/reduced dim split behind every reduction (Reduce*, MeanVarianceNormalization).
 * It must never allocate or touch tensor data: it is shape arithmetic only. */
#include "reduce_plan.h"

#include "../tensor.h"

void ref_rplan_init(ref_rplan *p, const ref_tensor *x, const bool *reduce)
{
    int64_t strides[REF_MAX_RANK];
    ref_contiguous_strides(x, strides);
    p->n_kd = p->n_rd = 0;
    int64_t n_out = 1, n_red = 1;
    int last = -1; /* kind of the previous group: 0 kept, 1 reduced */
    for (int d = 0; d < x->rank; d++) {
        int64_t n = x->dims[d];
        int kind = reduce[d] ? 1 : 0;
        if (kind)
            n_red *= n;
        else
            n_out *= n;
        if (n == 1)
            continue; /* a unit dim walks nowhere, in either role */
        int64_t *dims = kind ? p->red_dims : p->keep_dims;
        int64_t *st = kind ? p->red_strides : p->keep_strides;
        int *cnt = kind ? &p->n_rd : &p->n_kd;
        if (last == kind && *cnt > 0) {
            /* adjacent dims of one kind in a contiguous tensor fold into one */
            dims[*cnt - 1] *= n;
            st[*cnt - 1] = strides[d];
        } else {
            dims[*cnt] = n;
            st[*cnt] = strides[d];
            (*cnt)++;
        }
        last = kind;
    }
    p->n_out = n_out;
    p->n_red = n_red;
}

int64_t ref_rplan_base(const ref_rplan *p, int64_t j)
{
    int64_t off = 0;
    for (int k = p->n_kd - 1; k >= 0; k--) {
        off += (j % p->keep_dims[k]) * p->keep_strides[k];
        j /= p->keep_dims[k];
    }
    return off;
}
