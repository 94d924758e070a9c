/* norm_impl.h: what the norm family's files share: dtype checks, the per-row statistics helper and the
 * LayerNormalization / MeanVarianceNormalization entry points norm.c lists in its table.
 * It must never hold state: declarations only. */
#ifndef REF_NORM_IMPL_H
#define REF_NORM_IMPL_H

#include <math.h>

#include "op.h"
#include "reduce_elem.h"

/* Fail unless input i exists and is float or double; `what` names it in the message. */
int ref_norm_want_float(ref_op_ctx *c, int i, const char *what);

/* Mean and 1/sqrt(population variance + eps) of x[base .. base+n), two-pass in double: the sum of squared
 * deviations does not cancel the way E[x^2] - E[x]^2 does. Inline, for callers passing a constant dt. */
REF_ELEM_INLINE void ref_norm_stats(const void *x, const int dt, int64_t base, int64_t n, double *mean,
                                    double *inv_std, double eps)
{
    double sum = 0.0, ss = 0.0;
    for (int64_t i = 0; i < n; i++)
        sum += ref_elem_ld(x, dt, base + i);
    double m = n ? sum / (double)n : 0.0;
    for (int64_t i = 0; i < n; i++) {
        double d = ref_elem_ld(x, dt, base + i) - m;
        ss += d * d;
    }
    *mean = m;
    *inv_std = 1.0 / sqrt((n ? ss / (double)n : 0.0) + eps);
}

int ref_norm_layer_infer(ref_op_ctx *c);
int ref_norm_layer_run(ref_op_ctx *c);
int ref_norm_mvn_infer(ref_op_ctx *c);
int ref_norm_mvn_run(ref_op_ctx *c);

#endif
